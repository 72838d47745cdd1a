/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "packaging/notify_sock.h"

int notify_sock_open(struct notify_sock *ns)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int one = 1;

	memset(ns, 0, sizeof(*ns));
	ns->fd = -1;
	snprintf(ns->dir, sizeof(ns->dir), "/tmp/tmemd-notify.XXXXXX");
	if (!mkdtemp(ns->dir)) {
		ns->dir[0] = '\0';
		return -errno;
	}
	snprintf(ns->path, sizeof(ns->path), "%s/notify", ns->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", ns->path);
	ns->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ns->fd < 0)
		return -errno;
	if (setsockopt(ns->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    bind(ns->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

void notify_sock_close(struct notify_sock *ns)
{
	if (!ns)
		return;
	if (ns->fd >= 0)
		close(ns->fd);
	ns->fd = -1;
	if (ns->path[0])
		unlink(ns->path);
	if (ns->dir[0])
		rmdir(ns->dir);
	ns->path[0] = ns->dir[0] = '\0';
}

int notify_sock_recv(struct notify_sock *ns, char *buf, size_t len,
		     int timeout_ms, pid_t *pid)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len - 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct pollfd pfd = { .fd = ns->fd, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t n;
	int rc;

	rc = poll(&pfd, 1, timeout_ms);
	if (rc < 0)
		return -errno;
	if (rc == 0)
		return -ETIMEDOUT;
	n = recvmsg(ns->fd, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (pid)
		*pid = 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && pid) {
			struct ucred uc;

			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			*pid = uc.pid;
		}
		/* FDSTORE=1 carries fds: this fake manager keeps none. */
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
				close(fd);
			}
	}
	return (int)n;
}

int notify_has_line(const char *msg, const char *line)
{
	size_t len = strlen(line);
	int prefix = len && line[len - 1] == '=';

	for (const char *p = msg; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		const char *end = strchrnul(p, '\n');

		if (prefix ? (size_t)(end - p) >= len && !strncmp(p, line, len)
			   : (size_t)(end - p) == len && !strncmp(p, line, len))
			return 1;
	}
	return 0;
}
