/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "migrate/mig_files.h"
#include "tmem_names.h"

int mig_dir_make(const char *dir)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s", dir);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int mig_file_write(const char *dir, const char *name, const char *text)
{
	char tmp[600], path[600];
	size_t n = strlen(text);
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		rc = -EIO;
	close(fd);
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

int mig_file_read(const char *dir, const char *name, char *buf, size_t len)
{
	char path[600];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

void mig_file_remove(const char *dir, const char *name)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

int mig_dir_each(const char *dir, int (*fn)(const char *name, const char *text, void *ctx),
		 void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char text[256];
	int rc = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!rc && (e = readdir(d))) {
		if (!tmem_name_valid(e->d_name) || e->d_name[0] == '.')
			continue;
		if (mig_file_read(dir, e->d_name, text, sizeof(text)) == 0)
			rc = fn(e->d_name, text, ctx);
	}
	closedir(d);
	return rc;
}
