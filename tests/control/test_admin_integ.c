/* SPDX-License-Identifier: MIT */
/*
 * Integration tests for what a new administrator runs into (issue 14):
 * the real tmemctl against a real tmemd (local transport), each test
 * named after the bug it guards against.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/test_main.h"
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
	host_teardown(&H);
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

/* Writes text as the host's tmemd.conf (host_start() reads <dir>/tmemd.conf). */
static void write_host_conf(const char *text)
{
	write_text_file(H.dir, "tmemd.conf", text);
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
	ck_assert_msg(strstr(r.out, "evictions 0  admin flushes 0\n") &&
		      strstr(r.out, "stored: DATA 60.0K (ephemeral 40.0K, persistent 20.0K)  "
			     "COMPR 0.0K"), "status: %s", r.out);
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

/* ---- reloads ----------------------------------------------------------- */

#define UUID1 "00112233-4455-6677-8899-aabbccddeeff"

/* The bug: a grant made with tmemctl shared-auth was revoked by a reload
 * whose file no longer had it, although stored settings take precedence
 * (and a restart brought it back). */
START_TEST(test_reload_keeps_tmemctl_shared_auth)
{
	struct run r;

	start();
	write_host_conf("[client vm1]\nshared-auth = " UUID1 "\n");
	host_reload(&H);
	r = ctl(&H, "shared-auth", UUID1, "vm1", NULL);
	ck_assert_msg(r.status == 0, "shared-auth: %s", r.err);
	run_free(&r);
	write_host_conf("[client vm2]\nweight = 50\n");
	host_reload(&H);
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_ge(host_cmd(&H, "pool vm1 shared " UUID1), 0);
	/* A grant only the file made does go with the file. */
	ck_assert_int_eq(host_cmd(&H, "add vm2"), 0);
	write_host_conf("[client vm2]\nshared-auth = " UUID1 "\n");
	host_reload(&H);
	ck_assert_int_ge(host_cmd(&H, "pool vm2 shared " UUID1), 0);
	ck_assert_int_eq(host_cmd(&H, "remove vm2"), 0);
	write_host_conf("");
	host_reload(&H);
	ck_assert_int_eq(host_cmd(&H, "add vm2"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm2 shared " UUID1), -EPERM);
}
END_TEST

/* vm1's field at path in `tmemctl list vm1 --json`; the caller frees doc. */
static json_t *listed(json_t **doc, const char *path)
{
	*doc = ctl_json(&H, "list", "vm1", NULL);
	ck_assert_ptr_nonnull(*doc);
	return jpath(json_array_get(json_object_get(*doc, "clients"), 0), path);
}

/* The same precedence for a setting: a reload whose file says otherwise
 * leaves what tmemctl set, and still applies the file's other keys. */
START_TEST(test_reload_keeps_tmemctl_settings)
{
	json_t *doc;
	struct run r;

	start();
	write_host_conf("[client vm1]\nweight = 50\n");
	host_reload(&H);
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(json_integer_value(listed(&doc, "weight")), 50);
	json_decref(doc);
	r = ctl(&H, "set", "vm1", "--weight", "300", NULL);
	ck_assert_msg(r.status == 0, "set: %s", r.err);
	run_free(&r);
	write_host_conf("[client vm1]\nweight = 70\npersistent-max = 8M\n");
	host_reload(&H);
	ck_assert_int_eq(json_integer_value(listed(&doc, "weight")), 300);
	json_decref(doc);
	ck_assert_int_eq(json_integer_value(listed(&doc, "caps.persistent_max_pages")), 2048);
	json_decref(doc);
}
END_TEST

START_TEST(test_reload_says_memory_needs_restart)
{
	start();
	write_host_conf("[tmemd]\nmemory = 8M\n");
	host_reload(&H);
	ck_assert_msg(host_logged(&H, "memory", "needs a restart"), "see %s/host.err", H.dir);
}
END_TEST

START_TEST(test_status_shows_last_reload)
{
	json_t *doc;
	struct run r;

	start();
	r = ctl(&H, "status", NULL);
	ck_assert_msg(strstr(r.out, "last reload: none"), "%s", r.out);
	run_free(&r);
	write_host_conf("[defaults]\nweight = 0\n");
	host_reload(&H);
	r = ctl(&H, "status", NULL);
	ck_assert_msg(strstr(r.out, "last reload: failed") && strstr(r.out, "weight"),
		      "%s", r.out);
	run_free(&r);
	write_host_conf("[defaults]\nweight = 10\n");
	host_reload(&H);
	doc = ctl_json(&H, "status", NULL);
	ck_assert_str_eq(json_string_value(jpath(doc, "daemon.last_reload.result")), "ok");
	ck_assert_ptr_nonnull(strstr(json_string_value(jpath(doc, "daemon.last_reload.message")),
				     "reloaded"));
	json_decref(doc);
}
END_TEST

/* ---- pool-size: the limit is the host's RAM, as tmemctl(8) says -------- */

START_TEST(test_pool_size_grows_to_ram_not_start_size)
{
	unsigned long long ram = (unsigned long long)sysconf(_SC_PHYS_PAGES) *
				 (unsigned long long)sysconf(_SC_PAGESIZE);
	char beyond[32];
	json_t *doc;
	struct run r;

	start();  /* with --memory 4M */
	doc = ctl_json(&H, "pool-size", "16M", NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "total_pages")), 4096);
	json_decref(doc);
	snprintf(beyond, sizeof(beyond), "%lluM", (ram >> 20) + 64);
	r = ctl(&H, "pool-size", beyond, NULL);
	ck_assert_msg(r.status == 1 && strstr(r.err, "host's RAM"), "%d %s", r.status, r.err);
	run_free(&r);
}
END_TEST

/* ---- exit codes and messages ------------------------------------------ */

static void expect(struct run r, int status, const char *in_err)
{
	ck_assert_msg(r.status == status, "exit %d, wanted %d; stderr: %s", r.status, status,
		      r.err);
	ck_assert_msg(!in_err || strstr(r.err, in_err), "stderr lacks \"%s\": %s", in_err,
		      r.err);
	run_free(&r);
}

/* The bug: these reached tmemd, which refused them: exit 1, and a
 * message ("printable") that did not match tmemd.conf's name rule. */
START_TEST(test_malformed_args_exit_2)
{
	start();
	expect(ctl(&H, "shared-auth", "not-a-uuid", "vm1", NULL), 2, "bad UUID");
	expect(ctl(&H, "shared-auth", UUID1, "bad name!", NULL), 2, "[A-Za-z0-9._:-]");
	expect(ctl(&H, "set", "bad name!", "--weight", "5", NULL), 2, "[A-Za-z0-9._:-]");
	expect(ctl(&H, "freeze", "x/y", NULL), 2, "[A-Za-z0-9._:-]");
	/* A valid name is still fine, and "domid:5" reaches tmemd, which
	 * refuses it while no domain 5 is attached (issue 25): exit 1. */
	expect(ctl(&H, "set", "web1", "--weight", "5", NULL), 0, NULL);
	expect(ctl(&H, "set", "domid:5", "--weight", "5", NULL), 1, "no Xen domain 5");
}
END_TEST

/* tmemd's own reply, for a client that skips tmemctl: the same rule. */
START_TEST(test_server_name_rule_message)
{
	static const char req[] = "{\"version\":1,\"cmd\":\"freeze\",\"args\":"
				  "{\"client\":\"vm!\"}}\n";
	json_t *reply;
	int fd;

	start();
	fd = raw_connect(&H);
	raw_send(fd, req, sizeof(req) - 1);
	reply = raw_reply(fd);
	ck_assert_int_eq(reply_errno(reply), EINVAL);
	ck_assert_ptr_nonnull(strstr(json_string_value(jpath(reply, "error.message")),
				     "[A-Za-z0-9._:-]"));
	json_decref(reply);
	close(fd);
}
END_TEST

/* The bug: getopt printed "set: unrecognized option", without tmemctl. */
START_TEST(test_option_errors_name_the_program)
{
	struct run r;

	start();
	r = ctl(&H, "set", "vm1", "--colour", "red", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(!strncmp(r.err, "tmemctl: set: unrecognized option '--colour'", 44),
		      "%s", r.err);
	run_free(&r);
	r = ctl(&H, "set", "vm1", "--weight", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(!strncmp(r.err, "tmemctl: set: option needs a value: '--weight'", 46),
		      "%s", r.err);
	run_free(&r);
}
END_TEST

/* ---- stats.json: readable by whoever may read control.sock ------------- */

/* SIGUSR1, then the stat of <run>/stats.json once it is there. */
static struct stat stats_json_stat(void)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof(path), "%s/stats.json", H.run);
	unlink(path);
	ck_assert_int_eq(kill(H.pid, SIGUSR1), 0);
	for (int i = 0; i < 500 && stat(path, &st) != 0; i++)
		usleep(10000);
	ck_assert_int_eq(stat(path, &st), 0);
	return st;
}

/* The bug: stats.json was 0644 whatever control.sock's mode. */
START_TEST(test_stats_json_has_socket_mode)
{
	struct stat st;

	ck_assert_int_eq(host_start(&H, "--socket-mode", "0640", NULL), 0);
	st = stats_json_stat();
	ck_assert_uint_eq(st.st_mode & 0777, 0640);
}
END_TEST

START_TEST(test_stats_json_has_socket_group)
{
	struct stat st;

	ck_assert_int_eq(host_start(&H, "--admin-group", "adm", NULL), 0);
	st = stats_json_stat();
	ck_assert_uint_eq(st.st_mode & 0777, 0660);
	ck_assert_uint_eq(st.st_gid, 4);
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
	tcase_add_test(tc, test_reload_keeps_tmemctl_shared_auth);
	tcase_add_test(tc, test_reload_keeps_tmemctl_settings);
	tcase_add_test(tc, test_reload_says_memory_needs_restart);
	tcase_add_test(tc, test_status_shows_last_reload);
	tcase_add_test(tc, test_pool_size_grows_to_ram_not_start_size);
	tcase_add_test(tc, test_malformed_args_exit_2);
	tcase_add_test(tc, test_server_name_rule_message);
	tcase_add_test(tc, test_option_errors_name_the_program);
	tcase_add_test(tc, test_stats_json_has_socket_mode);
	if (tmem_test_have_root("test_stats_json_has_socket_group", "chgrp to adm"))
		tcase_add_test(tc, test_stats_json_has_socket_group);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(admin_suite(), 0);
}
