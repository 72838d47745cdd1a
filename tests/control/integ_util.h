/* SPDX-License-Identifier: MIT */
/*
 * Integration-test plumbing: start the real tmemd (local transport) on a
 * temporary runtime and state dir, be its guests through libtmem, run
 * the real tmemctl (optionally as another uid) and talk raw JSON to the
 * control socket.
 *
 * Binaries: $TMEMCTL_BIN (default $(BUILD)/tmemctl) and $TMEMD_BIN
 * (default $(BUILD)/tmemd).
 */
#ifndef TESTS_CONTROL_INTEG_UTIL_H
#define TESTS_CONTROL_INTEG_UTIL_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "tmem.h"

#define HOST_MAX_GUESTS 16

/* One libtmem connection: a local client of the tmemd under test. */
struct guest {
	char name[64];
	struct tmem_conn *conn;  /* NULL: slot free */
};

struct host {
	char dir[64];       /* the temp dir holding run/ and state/ */
	char run[96];
	char state[96];
	char sock[128];     /* control.sock */
	char guest_sock[128];
	pid_t pid;          /* tmemd's */
	int exit_status;    /* after host_stop() */
	struct guest guests[HOST_MAX_GUESTS];
};

/* Makes the temp dirs (run/ is 0755 so another uid can reach the socket). */
void host_init(struct host *h);
/*
 * Starts tmemd --foreground --transport local on the temp dirs, with
 * extra options (NULL-terminated): --admin-group G, --socket-mode OCTAL
 * and --max-per-uid N become tmemd.conf's control-* keys, --arena PATH
 * its arena key.  0 once both
 * sockets answer, or -1 if tmemd exited first (exit status in
 * h->exit_status, stderr in <dir>/host.err).
 */
int host_start(struct host *h, ...);
/*
 * One guest operation through libtmem; returns its count (pool id for
 * "pool") or the negative errno:
 *   add NAME                connect as client NAME; 0 (retried while tmemd
 *                           still holds a just-removed NAME)
 *   remove NAME             disconnect; 0
 *   pool NAME KIND [UUID]   new pool, KIND eph|pers|shared; the pool id
 *   puts NAME POOL OID N    N puts (indexes 0..N-1) of same-filled pages; how
 *                           many were stored
 *   textputs NAME POOL OID N  the same with text pages (they compress, and
 *                           are not same-filled)
 *   gets NAME POOL OID N    N gets; how many hit
 *   flush NAME POOL OID N   N page flushes; how many were there
 */
long host_cmd(struct host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Disconnects the guests, stops tmemd (SIGTERM), waits for its exit. */
void host_stop(struct host *h);
/* host_stop if running, removes the temp dirs. */
void host_cleanup(struct host *h);
/* A checked fixture's teardown: a tmemd still running must stop with
 * status 0 (asserted), then host_cleanup. */
void host_teardown(struct host *h);
/* True when tmemd's stderr so far (<dir>/host.err) has a line holding
 * both a and b. */
bool host_logged(struct host *h, const char *a, const char *b);
/* SIGHUP, then waits until tmemd has logged the reload, good or bad
 * (asserted). */
void host_reload(struct host *h);
/* Writes text as dir/name (asserted), e.g. a tmemd.conf or state.json
 * for the next host_start(). */
void write_text_file(const char *dir, const char *name, const char *text);

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
const char *tmemd_bin(void);

#endif /* TESTS_CONTROL_INTEG_UTIL_H */
