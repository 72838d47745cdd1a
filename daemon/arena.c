/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "arena.h"
#include "systemd/sd.h"

static int fail(char *why, size_t n, int err, const char *what, const char *path)
{
	snprintf(why, n, "%s: %s", path, what);
	return err;
}

/* Shared file pages of a disk file would be written back: tmem is RAM. */
static int check_fs(int fd, const char *path, char *why, size_t n)
{
	struct statfs sf;
	struct stat st;

	if (fstatfs(fd, &sf) < 0 || fstat(fd, &st) < 0)
		return fail(why, n, -errno, strerror(errno), path);
	if (!S_ISREG(st.st_mode))
		return fail(why, n, -EINVAL, "not a regular file", path);
	if (sf.f_type != TMPFS_MAGIC && sf.f_type != HUGETLBFS_MAGIC)
		return fail(why, n, -EINVAL, "not on tmpfs or hugetlbfs (the arena is memory, "
			    "not a disk file)", path);
	return 0;
}

static int open_file(const char *path, struct tmemd_arena *a, char *why, size_t n)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	int rc;

	if (fd < 0)
		return fail(why, n, -errno, strerror(errno), path);
	rc = check_fs(fd, path, why, n);
	if (rc == 0 && flock(fd, LOCK_EX | LOCK_NB) < 0)
		rc = fail(why, n, errno == EWOULDBLOCK ? -EBUSY : -errno,
			  errno == EWOULDBLOCK ? "another tmemd is using it" : strerror(errno),
			  path);
	if (rc) {
		close(fd);
		return rc;
	}
	a->fd = fd;
	snprintf(a->where, sizeof(a->where), "file %s", path);
	return 0;
}

/* Under systemd: the stored memfd, or a new one handed to the store
 * before a single page goes in. */
static int open_fdstore(struct tmemd_arena *a, char *why, size_t n)
{
	int fd = tmemd_sd_fdstore_take(TMEMD_ARENA_FDNAME), rc;

	if (fd >= 0) {
		a->fd = fd;
		a->from_fdstore = true;
		snprintf(a->where, sizeof(a->where), "memfd from systemd's fd store");
		return 0;
	}
	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	fd = memfd_create(TMEMD_ARENA_FDNAME, MFD_CLOEXEC);
	if (fd < 0)
		return fail(why, n, -errno, strerror(errno), "memfd_create");
	rc = tmemd_sd_fdstore_put(fd, TMEMD_ARENA_FDNAME);
	if (rc < 0) {
		close(fd);
		return fail(why, n, rc, strerror(-rc), "FDSTORE=1");
	}
	a->fd = fd;
	a->to_fdstore = true;
	snprintf(a->where, sizeof(a->where),
		 "memfd in systemd's fd store (needs FileDescriptorStoreMax=)");
	return 0;
}

int tmemd_arena_open(const char *path, bool discard, struct tmemd_arena *a,
		     char *why, size_t why_len)
{
	int rc;

	a->fd = -1;
	a->from_fdstore = a->to_fdstore = false;
	snprintf(a->where, sizeof(a->where), "process memory");
	why[0] = '\0';
	rc = path && path[0] ? open_file(path, a, why, why_len)
			     : open_fdstore(a, why, why_len);
	if (rc == 0 && discard && a->fd >= 0 && ftruncate(a->fd, 0) < 0) {
		rc = fail(why, why_len, -errno, strerror(errno), a->where);
		tmemd_arena_close(a);
	}
	return rc;
}

void tmemd_arena_close(struct tmemd_arena *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
}
