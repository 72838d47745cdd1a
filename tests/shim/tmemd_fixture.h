/* SPDX-License-Identifier: MIT */
/*
 * A real tmemd on a temporary runtime dir, for the shim's integration
 * tests: started with --foreground --transport local and an optional
 * config, killed and restarted on the same dir for the reconnect test.
 * The binary is $TMEMD if set, else the one this build made.
 */
#ifndef TMEMD_FIXTURE_H
#define TMEMD_FIXTURE_H

#include <sys/types.h>

struct tmemd_fixture {
	char dir[256];		/* runtime dir */
	char sock[300];		/* dir/guest.sock */
	char conf[300];		/* dir/tmemd.conf, or "" */
	pid_t pid;
};

/*
 * Makes the dir, writes conf_text (if not NULL) to tmemd.conf and starts
 * tmemd.  Returns 0 once guest.sock accepts, -errno otherwise.
 */
int tmemd_fixture_start(struct tmemd_fixture *f, const char *conf_text);
/* Starts tmemd again on the same dir and config. */
int tmemd_fixture_restart(struct tmemd_fixture *f);
/* Sends sig (SIGKILL, SIGTERM...) and reaps it. */
void tmemd_fixture_kill(struct tmemd_fixture *f, int sig);
/*
 * SIGSTOP, and returns once every thread of tmemd has stopped (kill()
 * returns before that: a worker on another CPU may serve a few more
 * requests).  0, or -errno (-ECHILD: it exited instead).
 */
int tmemd_fixture_freeze(struct tmemd_fixture *f);
/* Kills tmemd and removes the dir. */
void tmemd_fixture_stop(struct tmemd_fixture *f);

#endif /* TMEMD_FIXTURE_H */
