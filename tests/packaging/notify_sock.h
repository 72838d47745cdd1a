/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for systemd's notify socket: a unix datagram socket in a
 * temporary directory that tests point $NOTIFY_SOCKET at, reading each
 * message with its sender's pid (SO_PASSCRED), as systemd does.
 */
#ifndef TESTS_NOTIFY_SOCK_H
#define TESTS_NOTIFY_SOCK_H

#include <sys/types.h>

struct notify_sock {
	int fd;
	char dir[64];   /* mkdtemp'd directory holding the socket */
	char path[96];  /* dir/notify */
};

/* Binds the socket; 0 or -errno.  Does not touch the environment. */
int notify_sock_open(struct notify_sock *ns);
/* Accepts a half-opened or zeroed ns; removes the directory. */
void notify_sock_close(struct notify_sock *ns);
/*
 * Reads one message into buf (NUL-terminated), waiting up to timeout_ms.
 * Returns its length, -ETIMEDOUT, or -errno; *pid gets the sender (may be
 * NULL).
 */
int notify_sock_recv(struct notify_sock *ns, char *buf, size_t len,
		     int timeout_ms, pid_t *pid);
/* True when msg has a line exactly equal to line, or starting with it
 * when line ends in '='. */
int notify_has_line(const char *msg, const char *line);

#endif /* TESTS_NOTIFY_SOCK_H */
