/* SPDX-License-Identifier: MIT */
/*
 * Issue 32: a bounded start.
 *
 *  - test_state_at_cap_starts: a state.json of exactly its cap (4 MiB)
 *    loads, and tmemd is ready within 1 s.
 *  - test_state_over_cap_refused: 10x over the cap (garbage) and 100 MB
 *    (the file) are refused within 1 s, with one message naming
 *    the file, the cap and what to do.
 *  - test_conf_over_cap_refused: the same for tmemd.conf (1 MiB).
 *  - test_sigterm_during_start: a 1 GiB arena full of persistent pages;
 *    SIGTERM at several points of the start (from before the signal mask
 *    to the prefault, the rebuild and the sockets) stops tmemd within 1 s
 *    each time, and the next start has every page: 0 lost.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/test_main.h"
#include "harness.h"
#include "restart_harness.h"
#include "start_files.h"
#include "tmem.h"

#define STATE_CAP (4u << 20)   /* CTL_STATE_MAX_BYTES */
#define CONF_CAP (1u << 20)    /* TMEMD_CONFIG_MAX_BYTES */
#define START_LIMIT_MS 1000.0

static void state_path(struct rdaemon *d, char *path, size_t len)
{
	char dir[300];

	snprintf(dir, sizeof(dir), "%s/state", d->dir);
	ck_assert(mkdir(dir, 0700) == 0 || errno == EEXIST);
	snprintf(path, len, "%s/state.json", dir);
}

START_TEST(test_state_at_cap_starts)
{
	struct rdaemon d;
	char path[400];
	double t0, ms;

	rdaemon_init(&d, KEEP_ARENA_FILE, NULL);
	state_path(&d, path, sizeof(path));
	start_write_state(path, STATE_CAP);
	t0 = start_now_ms();
	rdaemon_spawn(&d);
	ck_assert(rdaemon_wait_ready(&d, 5000, NULL));
	ms = start_now_ms() - t0;
	ck_assert_msg(ms < START_LIMIT_MS, "start with a state file at its cap: %.0f ms", ms);
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	rdaemon_fini(&d);
}
END_TEST

/* tmemd refuses to start, within 1 s, saying each of what. */
static void expect_refused(struct rdaemon *d, const char *const *what)
{
	double t0 = start_now_ms(), ms;
	int st = 0;

	rdaemon_spawn(d);
	ck_assert(!rdaemon_wait_ready(d, 5000, &st));
	ms = start_now_ms() - t0;
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %#x", st);
	ck_assert_msg(ms < START_LIMIT_MS, "refusal took %.0f ms", ms);
	for (; *what; what++) {
		if (!rdaemon_log_has(d, *what))
			rdaemon_dump_log(d);
		ck_assert_msg(rdaemon_log_has(d, *what), "the log does not say \"%s\"", *what);
	}
}

START_TEST(test_state_over_cap_refused)
{
	struct rdaemon d;
	char path[400];
	const char *what[] = { path, "over the 4 MiB cap", "move it aside", NULL };
	int fd;

	rdaemon_init(&d, KEEP_ARENA_FILE, NULL);
	state_path(&d, path, sizeof(path));
	start_write_garbage(path, 10 * (size_t)STATE_CAP);
	expect_refused(&d, what);
	/* The 100 MB file (sparse here: its size is what counts). */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 100 << 20), 0);
	close(fd);
	expect_refused(&d, what);
	rdaemon_fini(&d);
}
END_TEST

START_TEST(test_conf_over_cap_refused)
{
	struct rdaemon d;
	char path[400];
	const char *what[] = { path, "over the 1 MiB cap", NULL };

	rdaemon_init(&d, KEEP_ARENA_FILE, NULL);
	snprintf(path, sizeof(path), "%s/tmemd.conf", d.dir);
	start_write_garbage(path, 2 * (size_t)CONF_CAP);
	expect_refused(&d, what);
	rdaemon_fini(&d);
}
END_TEST

/* ---- SIGTERM during the start ---- */

/* Fills the pool with persistent pages until it refuses one, writes the
 * count to fd and waits to be killed (a client that goes would take its
 * pages with it; a stop keeps them). */
static void filler(const char *sock, int fd)
{
	static char page[4096];
	struct tmem_conn *c;
	uint32_t n = 0;
	int32_t pool;

	if (tmem_connect(sock, "filler", &c))
		_exit(100);
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	if (pool < 0)
		_exit(101);
	for (;; n++) {
		struct tmem_oid o = { .oid = { n / 1024, 7, 7 } };

		test_page(page, n);
		if (tmem_put(c, pool, &o, n % 1024, page) != 1)
			break;
	}
	if (write(fd, &n, sizeof(n)) != sizeof(n))
		_exit(102);
	pause();
	_exit(0);
}

/* SIGUSR1, then the stats document tmemd writes. */
static json_t *rstats(struct rdaemon *d)
{
	char path[400];
	json_t *doc = NULL;

	snprintf(path, sizeof(path), "%s/stats.json", d->dir);
	unlink(path);
	kill(d->pid, SIGUSR1);
	for (int i = 0; i < 500 && !doc; i++) {
		harness_msleep(10);
		doc = json_load_file(path, 0, NULL);
	}
	ck_assert_ptr_nonnull(doc);
	return doc;
}

static long long jint_at(json_t *doc, const char *obj, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(doc, obj), key));
}

static unsigned count_in_log(struct rdaemon *d, const char *s)
{
	FILE *f = fopen(d->log, "r");
	char line[1024];
	unsigned n = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, s) != NULL;
	fclose(f);
	return n;
}

START_TEST(test_sigterm_during_start)
{
	/* From at once (before tmemd blocks its signals) to past ready.  The
	 * start has no prefault since issue 28 (the rebuild of a full 1 GiB
	 * arena takes some tens of ms), so most delays are short. */
	static const unsigned delays_ms[] = { 0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30,
					      40, 50, 80, 120, 250, 400 };
	const unsigned rounds = sizeof(delays_ms) / sizeof(delays_ms[0]);
	int p[2], st;
	uint32_t stored;
	struct rdaemon d;
	json_t *stats;
	pid_t kid;

	rdaemon_init(&d, KEEP_ARENA_FILE, "[defaults]\ncompress = off\n");
	d.memory = "1G";
	ck_assert(rdaemon_start(&d, NULL));
	ck_assert_int_eq(pipe(p), 0);
	kid = fork();
	ck_assert_int_ge(kid, 0);
	if (kid == 0)
		filler(d.sock, p[1]);
	ck_assert_int_eq(read(p[0], &stored, sizeof(stored)), sizeof(stored));
	ck_assert_uint_gt(stored, 250000); /* nearly all of 262,144 frames */
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	kill(kid, SIGKILL);
	waitpid(kid, &st, 0);
	close(p[0]);
	close(p[1]);

	for (unsigned i = 0; i < rounds; i++) {
		double t0, ms;

		rdaemon_spawn(&d);
		harness_msleep(delays_ms[i]);
		kill(d.pid, SIGTERM);
		t0 = start_now_ms();
		st = rdaemon_wait_exit(&d, 5000);
		ms = start_now_ms() - t0;
		ck_assert_msg(st != -1, "SIGTERM %u ms into the start: tmemd still runs after 5 s",
			      delays_ms[i]);
		fprintf(stderr, "SIGTERM %u ms into the start: stopped %.1f ms later (%s %d)\n",
			delays_ms[i], ms, WIFEXITED(st) ? "exit" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		ck_assert_msg(ms < START_LIMIT_MS, "SIGTERM %u ms into the start: stopped after "
			      "%.0f ms", delays_ms[i], ms);
		/* Exit 0, or killed by it before tmemd blocked the signal. */
		ck_assert_msg((WIFEXITED(st) && WEXITSTATUS(st) == 0) ||
			      (WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM),
			      "SIGTERM %u ms into the start: status %#x", delays_ms[i], st);
	}
	/* Several of the rounds came during the start, not after it. */
	ck_assert_uint_ge(count_in_log(&d, "stopped during the start"), 3);

	ck_assert(rdaemon_start(&d, NULL));
	stats = rstats(&d);
	ck_assert_int_eq(jint_at(stats, "restart", "persistent_pages_recovered"), stored);
	ck_assert_int_eq(jint_at(stats, "restart", "pages_dropped"), 0);
	ck_assert_int_eq(jint_at(stats, "pool", "persistent_pages"), stored);
	json_decref(stats);
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	rdaemon_fini(&d);
}
END_TEST

static Suite *start_suite(void)
{
	Suite *s = suite_create("start-stop");
	TCase *tc = tcase_create("bounded");

	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_state_at_cap_starts);
	tcase_add_test(tc, test_state_over_cap_refused);
	tcase_add_test(tc, test_conf_over_cap_refused);
	tcase_add_test(tc, test_sigterm_during_start);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(start_suite(), 0);
}
