/* SPDX-License-Identifier: MIT */
/*
 * start-bench (make bench-start): how long tmemd takes to start, or to
 * refuse, with state.json at its cap (4 MiB, every client tmemd holds
 * with every setting, then blanks), with no state file, and with one 10x
 * over the cap (garbage) and the 100 MB: from fork to guest.sock
 * answering, or to the exit.  Issue 32's goal: both under 1 s on a
 * 2-core machine.  Uses the daemon tests' harness (a real tmemd).
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/restart_harness.h"
#include "daemon/start_files.h"

#define STATE_CAP (4u << 20)  /* CTL_STATE_MAX_BYTES */
#define ROUNDS 7

enum state_kind { NO_FILE, AT_CAP, TEN_TIMES, HUNDRED_MB };

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void one_case(const char *label, enum state_kind kind)
{
	double ms[ROUNDS];
	struct rdaemon d;
	char dir[300], path[400];
	bool ready = false;
	int st = 0;

	rdaemon_init(&d, KEEP_ARENA_FILE, NULL);
	snprintf(dir, sizeof(dir), "%s/state", d.dir);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/state.json", dir);
	if (kind == AT_CAP)
		start_write_state(path, STATE_CAP);
	else if (kind == TEN_TIMES)
		start_write_garbage(path, 10 * (size_t)STATE_CAP);
	else if (kind == HUNDRED_MB)
		start_write_garbage(path, 100u << 20);
	for (int i = 0; i < ROUNDS; i++) {
		double t0 = start_now_ms();

		rdaemon_spawn(&d);
		ready = rdaemon_wait_ready(&d, 10000, &st);
		ms[i] = start_now_ms() - t0;
		if (ready)
			ck_assert_int_eq(rdaemon_stop(&d), 0);
	}
	qsort(ms, ROUNDS, sizeof(ms[0]), cmp);
	printf("%-34s %-8s min %6.1f  median %6.1f  max %6.1f ms  (%d runs)\n", label,
	       ready ? "ready" : "refused", ms[0], ms[ROUNDS / 2], ms[ROUNDS - 1], ROUNDS);
	rdaemon_fini(&d);
}

START_TEST(start_times)
{
	printf("tmemd start time, from fork to ready or to the refusal's exit:\n");
	one_case("no state file", NO_FILE);
	one_case("state.json at its cap (4 MiB)", AT_CAP);
	one_case("state.json 10x over (40 MiB)", TEN_TIMES);
	one_case("state.json of 100 MB", HUNDRED_MB);
}
END_TEST

/* A Check suite (no fork) only because the harnesses assert with Check. */
int main(void)
{
	Suite *s = suite_create("start-bench");
	TCase *tc = tcase_create("bench");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, start_times);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_SILENT);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
