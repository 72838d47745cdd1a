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
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* The largest read io_read_capped() asks for at once. */
#define IO_READ_CHUNK (1u << 20)

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

/*
 * Reads all of fd (from its current offset) into a new buffer, *out,
 * with a NUL after the *len bytes read: in read(2)s of up to
 * IO_READ_CHUNK, never one per byte, and never more than cap bytes.
 * -EFBIG when fd holds more than cap bytes: fstat(2) says so before
 * anything is read, and a file that is not regular (or grows meanwhile)
 * is caught at its cap + 1st byte.  stop (may be NULL) is asked between
 * reads: when it returns true, -ECANCELED.  Otherwise 0 or -errno; on
 * an error *out is NULL.  The caller frees *out.
 */
static inline int io_read_capped(int fd, size_t cap, char **out, size_t *len,
				 bool (*stop)(void *), void *ctx)
{
	struct stat sb;
	size_t size = 0, room;
	char *buf;
	int rc = 0;

	*out = NULL;
	*len = 0;
	if (fstat(fd, &sb))
		return -errno;
	if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > cap)
		return -EFBIG;
	/* The size fstat gave (plus the byte that shows the end), else a
	 * chunk; grown in chunks up to cap + 1. */
	room = S_ISREG(sb.st_mode) ? (size_t)sb.st_size + 1 : IO_READ_CHUNK;
	if (room > cap + 1)
		room = cap + 1;
	buf = malloc(room + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (stop && stop(ctx)) {
			rc = -ECANCELED;
			break;
		}
		if (size == room) {
			size_t next = room + IO_READ_CHUNK > cap + 1 ? cap + 1 : room + IO_READ_CHUNK;
			char *p = next > room ? realloc(buf, next + 1) : NULL;

			if (!p) {
				rc = next > room ? -ENOMEM : -EFBIG;
				break;
			}
			buf = p;
			room = next;
		}
		n = read(fd, buf + size, room - size > IO_READ_CHUNK ? IO_READ_CHUNK : room - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		size += (size_t)n;
		if (size > cap) {
			rc = -EFBIG;
			break;
		}
	}
	if (rc) {
		free(buf);
		return rc;
	}
	buf[size] = '\0';
	*out = buf;
	*len = size;
	return 0;
}

#endif /* TMEM_COMMON_IO_UTIL_H */
