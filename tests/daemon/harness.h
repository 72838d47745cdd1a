/* SPDX-License-Identifier: MIT */
/*
 * Integration-test harness: a real tmemd on a temporary runtime dir.
 * The binary is $TMEMD_BIN, else $(BUILD)/tmemd of the build the test
 * belongs to (make runs tests from the top of the tree), so a sanitizer
 * build of a test starts the same sanitizer build of tmemd.
 */
#ifndef TMEMD_TEST_HARNESS_H
#define TMEMD_TEST_HARNESS_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

struct daemon {
	pid_t pid;
	char dir[256];
	char sock[300];
	char log[300];
};

/* Starts tmemd with config text (may be NULL) and extra "--memory" size;
 * returns once guest.sock accepts connections.  Aborts the test on failure. */
void daemon_start(struct daemon *d, const char *config, const char *memory);
/* SIGTERM, wait; returns the exit status (0 = clean stop), or -1 if it
 * had died already or did not stop in time. */
int daemon_stop(struct daemon *d);
/* Removes the runtime dir (daemon_stop does it after a clean stop). */
void daemon_remove_dir(struct daemon *d);
/* Is tmemd still running? */
bool daemon_alive(struct daemon *d);
/* SIGUSR1 and read <dir>/stats.json (a new reference). */
json_t *daemon_stats(struct daemon *d);
/* The client called name in a stats document, or NULL. */
json_t *stats_client(json_t *stats, const char *name);
/* Prints tmemd's log to stderr (for failing tests). */
void daemon_dump_log(struct daemon *d);

/* Helpers for harnesses: a unix socket that accepts; sleep; rm -r; cat >&2. */
bool harness_connectable(const char *path);
void harness_msleep(unsigned ms);
void harness_remove_tree(const char *dir);
void harness_dump_file(const char *path);

/* An honest client (libtmem): persistent puts and verified gets until
 * stop_fd is readable.  Returns 0, or the number of errors (at most 99);
 * 100 and up when it could not connect or make its pool. */
int harness_honest(const char *sock, const char *name, int stop_fd);

/* Deterministic test pages. */
void test_page(void *page, unsigned long long seed);

#endif /* TMEMD_TEST_HARNESS_H */
