/* SPDX-License-Identifier: MIT */
/*
 * A tmemd that is killed and started again on the same runtime dir, its
 * pages kept either in an --arena file on /dev/shm or in an fd store the
 * test keeps the way systemd does: NOTIFY_SOCKET receives FDSTORE=1 with
 * the memfd, and the next start gets it back as fd 3 with LISTEN_FDS=1,
 * LISTEN_FDNAMES=tmemd-arena and LISTEN_PID.
 */
#ifndef TMEMD_TEST_RESTART_HARNESS_H
#define TMEMD_TEST_RESTART_HARNESS_H

#include <stdbool.h>
#include <sys/types.h>

enum keep_mode { KEEP_ARENA_FILE, KEEP_FDSTORE };

struct rdaemon {
	pid_t pid;
	enum keep_mode mode;
	char dir[256];
	char sock[300];
	char log[300];
	char arena[300];     /* KEEP_ARENA_FILE */
	char notify[300];    /* KEEP_FDSTORE: our NOTIFY_SOCKET */
	int notify_fd;
	int stored_fd;       /* what tmemd put in the fd store, -1 none */
	const char *extra;   /* one more argument, e.g. "--discard-arena", or NULL */
	const char *memory;  /* --memory; NULL: 16M */
	unsigned starts;
};

/* A runtime dir and the keeping; then rdaemon_start() for the first run. */
void rdaemon_init(struct rdaemon *d, enum keep_mode mode, const char *config);
/* Starts tmemd and waits until guest.sock answers.  false: it exited
 * (its status in *status), e.g. refusing an arena. */
bool rdaemon_start(struct rdaemon *d, int *status);
/* The same in two halves: start tmemd, then wait up to timeout_ms for
 * guest.sock (true) or its exit (false, status in *status; a timeout
 * aborts the test). */
void rdaemon_spawn(struct rdaemon *d);
bool rdaemon_wait_ready(struct rdaemon *d, int timeout_ms, int *status);
/* Waits up to timeout_ms for tmemd to exit: its wait status, or -1
 * (then it is killed). */
int rdaemon_wait_exit(struct rdaemon *d, int timeout_ms);
void rdaemon_kill9(struct rdaemon *d);
/* SIGTERM and wait: the exit status. */
int rdaemon_stop(struct rdaemon *d);
/* Stops anything left, removes the dir and the arena. */
void rdaemon_fini(struct rdaemon *d);
/* The log's text contains s. */
bool rdaemon_log_has(struct rdaemon *d, const char *s);
void rdaemon_dump_log(struct rdaemon *d);

#endif /* TMEMD_TEST_RESTART_HARNESS_H */
