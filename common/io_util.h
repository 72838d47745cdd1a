/* SPDX-License-Identifier: MIT */
/*
 * Small libc helpers that tmemd, tmemctl and tmem-bench share.  They link
 * no library in common, so the helpers are header-only.  common/ is the
 * bottom of the include order beside proto/ (DESIGN.md), but unlike
 * proto/ it is hosted C: the kernel module never includes it.
 */
#ifndef TMEM_COMMON_IO_UTIL_H
#define TMEM_COMMON_IO_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * Writes all len bytes of buf to fd, going on after short writes and
 * EINTR.  A socket (sock) is written with send(MSG_NOSIGNAL), so a peer
 * that went away gives -EPIPE, not SIGPIPE.  0, or -errno (-EIO if a
 * write makes no progress).
 */
static inline int io_write_all(int fd, const void *buf, size_t len, bool sock)
{
	const char *p = buf;

	while (len) {
		ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if (n == 0) {
			return -EIO;
		} else if (errno != EINTR) {
			return -errno;
		}
	}
	return 0;
}

#endif /* TMEM_COMMON_IO_UTIL_H */
