/* SPDX-License-Identifier: MIT */
/*
 * Claiming the state dir and control.sock for one tmemd.
 *
 * Two daemons sharing a state dir would each overwrite the other's
 * state.json, so the first one holds an exclusive flock on the directory
 * itself for its whole life; the kernel drops it when tmemd exits, even
 * on kill -9, so no stale lock file is ever left to clean up.
 *
 * control.sock is only replaced when nobody answers on it: a socket file
 * left by a tmemd that crashed refuses connections (ECONNREFUSED), while a
 * live one accepts them.  Unlinking a live socket would cut its tmemd off
 * from every tmemctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_internal.h"

int ctl_claim_state_dir(const char *dir, int *lock_fd)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*lock_fd = -1;
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int rc = errno == EWOULDBLOCK ? -EBUSY : -errno;

		close(fd);
		return rc;
	}
	*lock_fd = fd;
	return 0;
}

int ctl_socket_in_use(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, rc;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 ? 1 : 0;
	close(fd);
	return rc;
}
