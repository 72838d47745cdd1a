/* SPDX-License-Identifier: MIT */
/*
 * What an administrator coming from "xl tmem-*" expects of tmemctl (issue
 * 14, part 3): stored settings shown and forgotten, one client's list and
 * stats, -a/--all, freeable, --runtime-dir, global options anywhere, an
 * audit line per state change.  The real tmemctl against a real tmemd.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/test_main.h"
#include "integ_util.h"
#include "tmem_store.h"
#include "tmemctl/tmemctl.h"

#define UUID1 "00112233-4455-6677-8899-aabbccddeeff"

static struct host H;

static void setup(void)
{
	host_init(&H);
	ck_assert_msg(host_start(&H, NULL) == 0, "host did not start, see %s/host.err", H.dir);
}

static void teardown(void)
{
	host_teardown(&H);
}

static void expect(struct run r, int status, const char *in_out, const char *in_err)
{
	ck_assert_msg(r.status == status, "exit %d, wanted %d; stderr: %s", r.status, status,
		      r.err);
	ck_assert_msg(!in_out || strstr(r.out, in_out), "stdout lacks \"%s\": %s", in_out,
		      r.out);
	ck_assert_msg(!in_err || strstr(r.err, in_err), "stderr lacks \"%s\": %s", in_err,
		      r.err);
	run_free(&r);
}

/* The stored entry called name in a "list --all --json" document. */
static json_t *stored_entry(json_t *doc, const char *name)
{
	size_t i;
	json_t *e;

	json_array_foreach(json_object_get(doc, "stored"), i, e)
		if (!strcmp(json_string_value(json_object_get(e, "name")), name))
			return e;
	return NULL;
}

START_TEST(test_list_all_shows_stored_and_forget_removes)
{
	json_t *doc, *e;

	expect(ctl(&H, "set", "typo-vm", "--weight", "7", NULL), 0, NULL, NULL);
	expect(ctl(&H, "shared-auth", UUID1, "typo-vm", NULL), 0, NULL, NULL);
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	expect(ctl(&H, "set", "vm1", "--weight", "9", NULL), 0, NULL, NULL);
	/* Plain list: only attached clients, as before. */
	doc = ctl_json(&H, "list", NULL);
	ck_assert_ptr_null(json_object_get(doc, "stored"));
	json_decref(doc);
	doc = ctl_json(&H, "list", "--all", NULL);
	e = stored_entry(doc, "typo-vm");
	ck_assert_ptr_nonnull(e);
	ck_assert(json_is_false(json_object_get(e, "attached")));
	ck_assert_int_eq(json_integer_value(jpath(e, "settings.weight")), 7);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(e, "shared_auth"), 0)),
			 UUID1);
	ck_assert(json_is_true(json_object_get(stored_entry(doc, "vm1"), "attached")));
	json_decref(doc);
	expect(ctl(&H, "list", "-a", NULL), 0, "typo-vm", NULL);

	expect(ctl(&H, "forget", "vm1", NULL), 1, NULL, "attached");
	expect(ctl(&H, "forget", "typo-vm", NULL), 0, "removed", NULL);
	expect(ctl(&H, "forget", "typo-vm", NULL), 1, NULL, "nothing is stored");
	doc = ctl_json(&H, "list", "--all", NULL);
	ck_assert_ptr_null(stored_entry(doc, "typo-vm"));
	json_decref(doc);
	/* Forgotten for good: not back after a restart, and the grant went too. */
	host_stop(&H);
	ck_assert_int_eq(host_start(&H, NULL), 0);
	doc = ctl_json(&H, "list", "--all", NULL);
	ck_assert_ptr_null(stored_entry(doc, "typo-vm"));
	ck_assert_ptr_nonnull(stored_entry(doc, "vm1"));
	json_decref(doc);
	ck_assert_int_eq(host_cmd(&H, "add typo-vm"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool typo-vm shared " UUID1), -EPERM);
}
END_TEST

START_TEST(test_list_and_stats_of_one_client)
{
	json_t *doc;

	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "add vm2"), 0);
	doc = ctl_json(&H, "list", "vm2", NULL);
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "clients")), 1);
	ck_assert_str_eq(json_string_value(jpath(json_array_get(json_object_get(doc, "clients"),
								 0), "name")), "vm2");
	json_decref(doc);
	doc = ctl_json(&H, "stats", "vm1", NULL);
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "clients")), 1);
	json_decref(doc);
	expect(ctl(&H, "stats", "vm1", NULL), 0, "vm1", NULL);
	expect(ctl(&H, "stats", "nosuch", NULL), 1, NULL, "no attached client \"nosuch\"");
}
END_TEST

START_TEST(test_global_options_anywhere_and_runtime_dir)
{
	const char *argv[] = { tmemctl_bin(), "status", "--runtime-dir", H.run, NULL };
	const char *nodir[] = { tmemctl_bin(), "--runtime-dir", "/nonexistent-tmemd",
				"status", NULL };
	struct run r;

	expect(run_argv(argv, NULL), 0, "tmemd", NULL);
	r = run_argv(nodir, NULL);
	expect(r, 1, NULL, "/nonexistent-tmemd/control.sock (--runtime-dir)");
	r = run_argv(nodir, NULL);
	ck_assert_ptr_nonnull(strstr(r.err, "--socket"));
	run_free(&r);
	/* --json and --socket after the command and its arguments. */
	expect(ctl(&H, "set", "vm1", "--weight", "5", "--json", NULL), 0, "\"client\"", NULL);
}
END_TEST

/* Every state change is logged with the peer's uid, done or failed. */
START_TEST(test_audit_log_names_peer_uid)
{
	static const char *const done[][2] = {
		{ "set vm1 weight=5", NULL }, { "freeze vm1", NULL }, { "thaw vm1", NULL },
		{ "shared-auth " UUID1 " vm1", NULL }, { "pool-size pages=2048", NULL },
		{ "forget gone", NULL },
	};
	char uid[32];

	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	expect(ctl(&H, "set", "vm1", "--weight", "5", NULL), 0, NULL, NULL);
	expect(ctl(&H, "freeze", "vm1", NULL), 0, NULL, NULL);
	expect(ctl(&H, "thaw", "vm1", NULL), 0, NULL, NULL);
	expect(ctl(&H, "flush", "vm1", NULL), 0, NULL, NULL);
	expect(ctl(&H, "shared-auth", UUID1, "vm1", NULL), 0, NULL, NULL);
	expect(ctl(&H, "pool-size", "8M", NULL), 0, NULL, NULL);
	expect(ctl(&H, "set", "gone", "--weight", "3", NULL), 0, NULL, NULL);
	expect(ctl(&H, "forget", "gone", NULL), 0, NULL, NULL);
	expect(ctl(&H, "forget", "vm1", NULL), 1, NULL, NULL);
	snprintf(uid, sizeof(uid), "audit: uid %u (pid", (unsigned)geteuid());
	for (size_t i = 0; i < sizeof(done) / sizeof(done[0]); i++)
		ck_assert_msg(host_logged(&H, uid, done[i][0]) && host_logged(&H, done[i][0], "done"),
			      "no audit line for %s, see %s/host.err", done[i][0], H.dir);
	ck_assert(host_logged(&H, "audit: uid", "flush vm1: done"));
	/* The journal fields (stderr here): CLIENT= and PEER_UID=. */
	snprintf(uid, sizeof(uid), "client=vm1 peer_uid=%u", (unsigned)geteuid());
	ck_assert_msg(host_logged(&H, "audit:", uid), "no %s, see %s/host.err", uid, H.dir);
	ck_assert(host_logged(&H, "audit: uid", "forget vm1: failed: "));
	/* Reads are not state changes. */
	expect(ctl(&H, "stats", NULL), 0, NULL, NULL);
	ck_assert(!host_logged(&H, "audit:", "stats"));
}
END_TEST

/* The field of client name in a list/stats document. */
static json_t *field_of(json_t *doc, const char *name, const char *path)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(doc, "clients"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "name")), name))
			return jpath(c, path);
	return NULL;
}

/* xl tmem-freeze -a and friends: every connected client. */
START_TEST(test_all_flag_reaches_every_client)
{
	json_t *doc;

	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "add vm2"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 eph"), 0);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 4"), 4);
	expect(ctl(&H, "freeze", "-a", NULL), 0, "vm2: frozen: ", NULL);
	doc = ctl_json(&H, "list", NULL);
	ck_assert(json_is_true(field_of(doc, "vm1", "frozen")));
	ck_assert(json_is_true(field_of(doc, "vm2", "frozen")));
	json_decref(doc);
	expect(ctl(&H, "thaw", "--all", NULL), 0, "vm1: thawed: ", NULL);
	expect(ctl(&H, "set", "--all", "--weight", "42", NULL), 0, "vm2: settings applied, not stored",
	       NULL);
	doc = ctl_json(&H, "list", NULL);
	ck_assert(json_is_false(field_of(doc, "vm1", "frozen")));
	ck_assert_int_eq(json_integer_value(field_of(doc, "vm1", "weight")), 42);
	ck_assert_int_eq(json_integer_value(field_of(doc, "vm2", "weight")), 42);
	json_decref(doc);
	doc = ctl_json(&H, "flush", "-a", NULL);
	ck_assert_uint_eq(json_array_size(doc), 2);
	json_decref(doc);
	doc = ctl_json(&H, "list", NULL);
	ck_assert_int_eq(json_integer_value(field_of(doc, "vm1", "pages.ephemeral")), 0);
	json_decref(doc);
	expect(ctl(&H, "freeze", "-a", "vm1", NULL), 2, NULL, "not both");
	expect(ctl(&H, "set", "vm1", "-a", "--weight", "3", NULL), 2, NULL, "not both");
}
END_TEST

/* xl tmem-freeable: free pages plus ephemeral ones; persistent stay. */
/*
 * Issue 19 item 11: CLIENT has one syntax.  "4242" is domain 4242 and is
 * answered as domid:4242; what is neither a domid nor a local name is a
 * usage error.  Before, "freeze 05" stored "domid:05", a key no domain's
 * settings were looked up by, and "set domid:x" stored a name no client
 * could have.
 */
START_TEST(test_client_is_one_syntax)
{
	json_t *doc;

	/* Issue 25: a live command on a domain that is not attached fails. */
	expect(ctl(&H, "freeze", "4242", NULL), 1, NULL, "no attached client \"domid:4242\"");
	expect(ctl(&H, "freeze", "uuid:0123456789ABCDEF0123456789abcdef", NULL), 2, NULL,
	       "not a UUID");
	doc = ctl_json(&H, "set", "uuid:01234567-89AB-cdef-0123-456789abcdef", "--weight", "4",
		       NULL);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "client")),
			 "uuid:01234567-89ab-cdef-0123-456789abcdef");
	ck_assert(json_is_false(json_object_get(doc, "connected")));
	json_decref(doc);
	expect(ctl(&H, "freeze", "05", NULL), 2, NULL, "bad client \"05\": not a domid");
	expect(ctl(&H, "set", "domid:05", "--weight", "3", NULL), 2, NULL, "no leading zeros");
	expect(ctl(&H, "set", "domid:x", "--weight", "3", NULL), 2, NULL, "not a domid");
	expect(ctl(&H, "shared-auth", UUID1, "99999", NULL), 2, NULL, "0..32751");
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	doc = ctl_json(&H, "list", NULL);
	ck_assert_str_eq(json_string_value(jpath(json_array_get(json_object_get(doc, "clients"),
								 0), "client")), "vm1");
	json_decref(doc);
	expect(ctl(&H, "list", NULL), 0, "CLIENT", NULL);
}
END_TEST

static void write_state(const char *text)
{
	write_text_file(H.state, "state.json", text);
}

/*
 * Issue 19 item 11: a state file older tmemd wrote still loads, with a
 * notice that its names now mean local clients only; one whose key is
 * not a CLIENT stops tmemd, naming it.  Before, "domid:05" loaded.
 */
START_TEST(test_old_and_bad_state_files)
{
	json_t *doc;

	host_stop(&H);
	write_state("{\"version\":1,\"clients\":{\"domid:5\":{\"weight\":50},"
		    "\"web1\":{\"weight\":60}}}\n");
	ck_assert_int_eq(host_start(&H, NULL), 0);
	ck_assert(host_logged(&H, "written by an older tmemd", "entries by name (1)"));
	doc = ctl_json(&H, "list", "--all", NULL);
	ck_assert_int_eq(json_integer_value(jpath(stored_entry(doc, "domid:5"), "settings.weight")),
			 50);
	json_decref(doc);
	host_stop(&H);
	write_state("{\"version\":2,\"clients\":{\"domid:05\":{\"weight\":50}}}\n");
	ck_assert_int_eq(host_start(&H, NULL), -1);
	ck_assert(host_logged(&H, "bad client \"domid:05\"", "no leading zeros"));
	write_state("{\"version\":2}\n");
	ck_assert_int_eq(host_start(&H, NULL), 0);
}
END_TEST

START_TEST(test_freeable)
{
	json_int_t free_pages = 0, freeable = 0, idle = 0;
	char text[64];
	json_t *doc;

	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	/* Raw pages, a frame each, as in Xen (the harness's pages are
	 * same-filled: compressed they would take no frame at all). */
	expect(ctl(&H, "set", "vm1", "--compress", "off", NULL), 0, NULL, NULL);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 eph"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm1 pers"), 1);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 0 1 10"), 10);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 1 1 6"), 6);
	/* As xl tmem-freeable: the ephemeral pages, and free frames while
	 * they still hold memory: those the first put had warmed ahead of
	 * the next (pools/warm.c), no others (the rest were never touched).
	 * Asked until the warming has settled. */
	for (int i = 0; i < 100; i++) {
		json_int_t warmed;

		doc = ctl_json(&H, "status", NULL);
		warmed = json_integer_value(jpath(doc, "memory.warmed_bytes"));
		idle = json_integer_value(jpath(doc, "memory.resident_bytes")) / 4096 -
		       json_integer_value(jpath(doc, "pool.used_pages"));
		free_pages = json_integer_value(jpath(doc, "pool.free_pages"));
		freeable = json_integer_value(jpath(doc, "pool.freeable_pages"));
		json_decref(doc);
		if (warmed > 0 && freeable == 10 + idle)
			break;
		usleep(50 * 1000);
	}
	ck_assert_int_gt(idle, 0);
	ck_assert_int_le(idle, TMEM_WARM_FRAMES);
	ck_assert_int_eq(freeable, 10 + idle);
	ck_assert_int_gt(free_pages, 1000);
	doc = ctl_json(&H, "freeable", NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "freeable_pages")), freeable);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "freeable_bytes")),
			 freeable * 4096);
	json_decref(doc);
	snprintf(text, sizeof(text), "(%lld pages)", (long long)freeable);
	expect(ctl(&H, "freeable", NULL), 0, text, NULL);
}
END_TEST

/*
 * tmemctl(8)'s node_exporter recipe, read from the page (the lines after
 * its dir= line, up to .EE, unescaped) and run in a test dir, then
 * promtool.
 */
START_TEST(test_prometheus_textfile_recipe)
{
	char cmd[1536];

	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	snprintf(cmd, sizeof(cmd),
		 "dir=%s; tmemctl() { %s --socket %s \"$@\"; }; "
		 "recipe=$(sed -n '/^dir=\\/var\\/lib\\/prometheus/,/^\\.EE/p' man/tmemctl.8 | "
		 "sed -e 1d -e '/^\\.EE/d' -e 's/\\\\-/-/g') && "
		 "case $recipe in *'tmemctl stats --prometheus'*mv*) ;; *) exit 3;; esac && "
		 "eval \"$recipe\"; "
		 "test -s \"$dir/tmem.prom\" && ! ls \"$dir\" | grep -q 'prom\\.' && "
		 "promtool check metrics < \"$dir/tmem.prom\" && "
		 "grep -q '^tmem_build_info{' \"$dir/tmem.prom\"", H.dir, tmemctl_bin(), H.sock);
	ck_assert_msg(system(cmd) == 0, "recipe failed: %s", cmd);
}
END_TEST

/* xentop's -d and sort keys; HIT% over the same interval as PUTS/s. */
START_TEST(test_top_delay_sort_and_interval_hit_rate)
{
	struct timespec a, b;
	const char *frame2;
	double secs;
	struct run r;

	ck_assert_int_eq(host_cmd(&H, "add vm-a"), 0);
	ck_assert_int_eq(host_cmd(&H, "add vm-b"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm-a eph"), 0);
	ck_assert_int_eq(host_cmd(&H, "pool vm-b eph"), 0);
	ck_assert_int_eq(host_cmd(&H, "puts vm-a 0 1 4"), 4);
	ck_assert_int_eq(host_cmd(&H, "puts vm-b 0 1 8"), 8);
	ck_assert_int_eq(host_cmd(&H, "gets vm-a 0 1 8"), 4);  /* 50 % since start */
	clock_gettime(CLOCK_MONOTONIC, &a);
	r = ctl(&H, "top", "--iterations", "2", "--delay", "0.2", "--sort", "eph", NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(secs >= 0.2 && secs < 0.9, "two frames 0.2 s apart took %.2f s", secs);
	/* Sorted by ephemeral pages: vm-b (8 pages) above vm-a (0 left). */
	ck_assert(strstr(r.out, "vm-b") && strstr(r.out, "vm-a") &&
		  strstr(r.out, "vm-b") < strstr(r.out, "vm-a"));
	/* The second frame's interval saw no gets: no hit rate, not 50.0. */
	frame2 = strstr(strstr(r.out, "HIT%") + 1, "HIT%");
	ck_assert_ptr_nonnull(frame2);
	ck_assert_msg(!strstr(frame2, "50.0"), "cumulative hit rate shown: %s", frame2);
	run_free(&r);
	r = ctl(&H, "top", "--iterations", "1", "--sort", "name", NULL);
	ck_assert(strstr(r.out, "vm-a") && strstr(r.out, "vm-a") < strstr(r.out, "vm-b"));
	run_free(&r);
	expect(ctl(&H, "top", "--sort", "bogus", NULL), 2, NULL, "--sort");
	expect(ctl(&H, "top", "--delay", "0", NULL), 2, NULL, "--delay");
}
END_TEST

static Suite *xl_suite(void)
{
	Suite *s = suite_create("xl-habits");
	TCase *tc = tcase_create("tmemctl");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_list_all_shows_stored_and_forget_removes);
	tcase_add_test(tc, test_list_and_stats_of_one_client);
	tcase_add_test(tc, test_global_options_anywhere_and_runtime_dir);
	tcase_add_test(tc, test_audit_log_names_peer_uid);
	tcase_add_test(tc, test_all_flag_reaches_every_client);
	tcase_add_test(tc, test_client_is_one_syntax);
	tcase_add_test(tc, test_old_and_bad_state_files);
	tcase_add_test(tc, test_freeable);
	tcase_add_test(tc, test_prometheus_textfile_recipe);
	tcase_add_test(tc, test_top_delay_sort_and_interval_hit_rate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(xl_suite(), 0);
}
