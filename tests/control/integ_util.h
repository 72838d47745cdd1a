/* SPDX-License-Identifier: MIT */
/*
 * Integration-test plumbing: start the control host (later: tmemd) on a
 * temporary runtime and state dir, drive its guest side over stdin, run
 * the real tmemctl (optionally as another uid) and talk raw JSON to the
 * control socket.
 *
 * Binaries: $TMEMCTL_BIN (default $(BUILD)/tmemctl) and $CONTROL_HOST_BIN
 * (default $(BUILD)/tests/control/control_host).
 */
#ifndef TESTS_CONTROL_INTEG_UTIL_H
#define TESTS_CONTROL_INTEG_UTIL_H

#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

struct host {
	char dir[64];       /* the temp dir holding run/ and state/ */
	char run[96];
	char state[96];
	char sock[128];
	pid_t pid;
	FILE *in, *out;     /* the host's stdin and stdout */
	int exit_status;    /* after host_stop() */
};

/* Makes the temp dirs (run/ is 0755 so another uid can reach the socket). */
void host_init(struct host *h);
/* Starts the host with extra options (NULL-terminated); 0, or -1 if it
 * exited before "ready" (exit status in h->exit_status, stderr in
 * <dir>/host.err). */
int host_start(struct host *h, ...);
/* One stdin command; returns N of "ok N" or the negative errno. */
long host_cmd(struct host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Closes stdin, waits for exit. */
void host_stop(struct host *h);
/* host_stop if running, removes the temp dirs. */
void host_cleanup(struct host *h);

struct run {
	int status;         /* exit code, or 128+signal */
	char *out, *err;    /* captured, NUL-terminated */
};

/* Runs tmemctl --socket <sock> ARGS... (NULL-terminated) as root. */
struct run ctl(struct host *h, ...);
/* The same with a prefix command (e.g. setpriv ... ) before tmemctl. */
struct run ctl_as(struct host *h, const char *const *prefix, ...);
/* Runs any argv (NULL-terminated array); env_socket sets TMEMCTL_SOCKET. */
struct run run_argv(const char *const *argv, const char *env_socket);
void run_free(struct run *r);
/* ctl() with --json; the parsed document (asserts exit 0 and valid JSON). */
json_t *ctl_json(struct host *h, ...);

/* Raw protocol: a connected socket fd; send bytes; read one reply line
 * (NULL on EOF); the reply's error errno (0 for a result). */
int raw_connect(struct host *h);
void raw_send(int fd, const void *buf, size_t len);
json_t *raw_reply(int fd);
int reply_errno(json_t *reply);

const char *tmemctl_bin(void);

#endif /* TESTS_CONTROL_INTEG_UTIL_H */
