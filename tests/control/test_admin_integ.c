/* SPDX-License-Identifier: MIT */
/*
 * Integration tests for what a new administrator runs into (issue 14):
 * the real tmemctl against a real tmemd (local transport), each test
 * named after the bug it guards against.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "integ_util.h"
#include "tmemctl/tmemctl.h"

static struct host H;

static void setup(void)
{
	host_init(&H);
}

/* A tmemd still running must exit cleanly (status 0). */
static void teardown(void)
{
	if (H.pid) {
		host_stop(&H);
		ck_assert_msg(H.exit_status == 0, "host exited %d, see %s/host.err",
			      H.exit_status, H.dir);
	}
	host_cleanup(&H);
}

static void start(void)
{
	ck_assert_msg(host_start(&H, NULL) == 0, "host did not start, see %s/host.err", H.dir);
}

/* Runs a second tmemd on runtime dir RUN and state dir STATE to its exit. */
static struct run second_tmemd(const char *run, const char *state)
{
	const char *argv[] = {
		tmemd_bin(), "--foreground", "--transport", "local", "--runtime-dir", run,
		"--state-dir", state, "--memory", "4M", "--workers", "1", NULL,
	};

	return run_argv(argv, NULL);
}

/* ---- a second tmemd --------------------------------------------------- */

START_TEST(test_second_tmemd_keeps_live_control_socket)
{
	char state2[160];
	struct run r;

	start();
	snprintf(state2, sizeof(state2), "%s/state2", H.dir);
	r = second_tmemd(H.run, state2);
	ck_assert_msg(r.status == 1, "second tmemd exited %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "another tmemd"), "no reason given: %s", r.err);
	run_free(&r);
	r = ctl(&H, "status", NULL);
	ck_assert_msg(r.status == 0, "the first tmemd lost its control socket: %s", r.err);
	run_free(&r);
}
END_TEST

START_TEST(test_second_tmemd_refuses_a_state_dir_in_use)
{
	char run2[160];
	struct run r;

	start();
	snprintf(run2, sizeof(run2), "%s/run2", H.dir);
	r = second_tmemd(run2, H.state);
	ck_assert_msg(r.status == 1, "second tmemd exited %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, H.state) && strstr(r.err, "in use"),
		      "no reason given: %s", r.err);
	run_free(&r);
	r = ctl(&H, "status", NULL);
	ck_assert_int_eq(r.status, 0);
	run_free(&r);
}
END_TEST

/* ---- tmemctl status ---------------------------------------------------- */

/* The bug: status showed "ephemeral 0.0K persistent 0.0K evictions 0"
 * whatever the pool held: its reply lacked those keys. */
START_TEST(test_status_shows_pool_figures)
{
	json_t *doc;
	struct run r;

	start();
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 eph"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 pers"), 1);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 10"), 10);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 1 1 5"), 5);
	r = ctl(&H, "status", NULL);
	ck_assert_msg(r.status == 0, "status exited %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, "ephemeral 40.0K  persistent 20.0K  evictions 0"),
		      "status: %s", r.out);
	run_free(&r);
	doc = ctl_json(&H, "status", NULL);
	ck_assert_int_eq(json_integer_value(jpath(doc, "pool.ephemeral_pages")), 10);
	ck_assert_int_eq(json_integer_value(jpath(doc, "pool.persistent_pages")), 5);
	ck_assert(json_is_integer(jpath(doc, "pool.evictions")));
	json_decref(doc);
}
END_TEST

/* ---- sizes: one grammar and one reason in tmemd.conf and tmemctl ------- */

START_TEST(test_size_not_page_multiple_same_reason_everywhere)
{
	static const char reason[] = "bad size '1000': not a whole number of 4 KiB pages";
	char conf[160], run2[160];
	FILE *f;
	struct run r;

	start();
	r = ctl(&H, "set", "vm1", "--ephemeral-max", "1000", NULL);
	ck_assert_msg(r.status == 2 && strstr(r.err, reason), "tmemctl: %d %s", r.status, r.err);
	run_free(&r);
	r = ctl(&H, "pool-size", "1000", NULL);
	ck_assert_msg(r.status == 2 && strstr(r.err, reason), "tmemctl: %d %s", r.status, r.err);
	run_free(&r);

	snprintf(conf, sizeof(conf), "%s/bad.conf", H.dir);
	snprintf(run2, sizeof(run2), "%s/run2", H.dir);
	f = fopen(conf, "w");
	ck_assert_ptr_nonnull(f);
	fputs("[client vm1]\nephemeral-max = 1000\n", f);
	fclose(f);
	{
		const char *argv[] = { tmemd_bin(), "--check-config", "-c", conf, NULL };

		r = run_argv(argv, NULL);
	}
	ck_assert_msg(r.status == 1 && strstr(r.err, reason), "tmemd: %d %s", r.status, r.err);
	run_free(&r);
}
END_TEST

static Suite *admin_suite(void)
{
	Suite *s = suite_create("admin-integration");
	TCase *tc = tcase_create("admin");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_second_tmemd_keeps_live_control_socket);
	tcase_add_test(tc, test_second_tmemd_refuses_a_state_dir_in_use);
	tcase_add_test(tc, test_status_shows_pool_figures);
	tcase_add_test(tc, test_size_not_page_multiple_same_reason_everywhere);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(admin_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
