/* SPDX-License-Identifier: MIT */
/*
 * Issue 30: what an admin reads is true.  The real tmemd and tmemctl
 * (local transport), one test per claim of the issue, each named after
 * the bug it guards against.
 *
 *  - test_check_config_agrees_with_start: a table of files, one key each,
 *    bad and good; tmemd --check-config and a real start of tmemd on the
 *    same file must both refuse it with the same sentence, or both take
 *    it.
 *  - test_reload_names_every_restart_key: a reload that changes every
 *    restart-only key names each one, in the log and in status.
 *  - test_reload_refuses_what_a_start_refuses, and for item 2's other
 *    points test_stored_value_beats_file_visibly_and_unset and
 *    test_all_flags_store_nothing.
 *  - test_metrics_bytes_mean_what_help_says: each _bytes family's HELP
 *    says logical, compressed or physical, and a known load (text pages
 *    in private and shared pools) shows each is what it says.
 *  - test_admin_flush_leaves_evictions: tmemctl flush is not counted as
 *    evictions, and the pool's op totals outlive the client.
 *  - item 5: test_recovered_clients_visible_and_forgettable,
 *    test_file_grants_visible.
 *  - item 7, the smaller ones: test_tmemd_messages, test_tmemctl_messages,
 *    test_top_reconnects, test_make_builds_demo_guest_and_man_signals.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/test_main.h"
#include "integ_util.h"
#include "tmemctl/tmemctl.h"

static struct host H;

static void setup(void)
{
	host_init(&H);
}

static void teardown(void)
{
	host_teardown(&H);
}

/* ---- item 1: --check-config and the start agree ----------------------- */

/* The first line of text holding "error:", without its newline ("" if none). */
static void first_error(const char *text, char *out, size_t len)
{
	const char *e = strstr(text, "error:");
	size_t n;

	out[0] = '\0';
	if (!e)
		return;
	n = strcspn(e, "\n");
	snprintf(out, len, "%.*s", (int)n, e);
}

/* Runs tmemd on file to its refusal, or to "ready" (then stops it).
 * true when it started; its stderr in err. */
static bool real_start(const char *file, char **err)
{
	char errpath[160], *text;
	size_t n;
	pid_t pid;
	int status = 0;
	bool ready = false;
	FILE *f;

	snprintf(errpath, sizeof(errpath), "%s/start.err", H.dir);
	unlink(errpath);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		FILE *e = freopen(errpath, "w", stderr);

		(void)e;
		execl(tmemd_bin(), "tmemd", "--foreground", "-c", file, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1000; i++) {
		char line[1024];

		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = 0;
			break;
		}
		f = fopen(errpath, "r");
		while (f && fgets(line, sizeof(line), f))
			ready = ready || strstr(line, "info: ready:");
		if (f)
			fclose(f);
		if (ready)
			break;
		usleep(10000);
	}
	if (pid) {
		ck_assert_msg(ready, "tmemd on %s neither started nor exited in 10 s", file);
		kill(pid, SIGTERM);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "stop: %#x", status);
	} else {
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1,
			      "tmemd on %s: status %#x, wanted exit 1", file, status);
	}
	f = fopen(errpath, "r");
	ck_assert_ptr_nonnull(f);
	text = calloc(1, 65536);
	ck_assert_ptr_nonnull(text);
	n = fread(text, 1, 65535, f);
	text[n] = '\0';
	fclose(f);
	*err = text;
	return ready;
}

/* /var/tmp is on disk on most hosts; where it is tmpfs, an arena there is
 * fine, and the case expects that. */
static bool var_tmp_on_disk(void)
{
	struct statfs sf;

	return statfs("/var/tmp", &sf) == 0 && sf.f_type != TMPFS_MAGIC &&
	       sf.f_type != HUGETLBFS_MAGIC;
}

struct conf_case {
	const char *text;  /* lines after the base [tmemd] section */
	bool good;
	const char *says;  /* a piece of the refusal, for bad ones */
};

START_TEST(test_check_config_agrees_with_start)
{
	unsigned long long ram = (unsigned long long)sysconf(_SC_PHYS_PAGES) *
				 (unsigned long long)sysconf(_SC_PAGESIZE);
	char over_ram[64], arena_ok[200], arena_disk[200], rundir_ok[200];
	const struct conf_case cases[] = {
		/* The three. */
		{ "control-admin-group = nosuchgroup\n", false, "no such group" },
		{ "xen-domains = 1-100, web1, -bad\n", false, "xen-domains" },
		{ over_ram, false, "more than this host's RAM" },
		/* Every other [tmemd] key, bad. */
		{ "memory = 1K\n", false, "memory" },
		{ "memory = 12Q\n", false, "memory" },
		{ "workers = 0\n", false, "workers" },
		{ "runtime-dir = relative\n", false, "runtime-dir" },
		{ "runtime-dir = /nonexistent-tmemd/run\n", false, "does not exist" },
		{ "state-dir = relative\n", false, "state-dir" },
		{ "transport = pigeon\n", false, "transport" },
		{ "control-socket-mode = 0007\n", false, "control-socket-mode" },
		{ "control-max-per-uid = 0\n", false, "control-max-per-uid" },
		{ "local-max-clients-per-uid = 0\n", false, "local-max-clients-per-uid" },
		{ "local-max-pools-per-uid = 99999\n", false, "local-max-pools-per-uid" },
		{ "local-max-handshakes-per-uid = x\n", false, "local-max-handshakes-per-uid" },
		{ "arena = relative\n", false, "arena" },
		{ "arena = /nonexistent-tmemd/arena\n", false, "does not exist" },
		{ arena_disk, !var_tmp_on_disk(), "not on tmpfs" },
		{ "reattach-grace = 2d\n", false, "reattach-grace" },
		{ "parked-max-age = 0\n", false, "parked-max-age" },
		{ "compress-threshold = 10\n", false, "compress-threshold" },
		{ "memory = automatic\n", false, "memory" },
		{ "memory-reserve = 101%\n", false, "memory-reserve" },
		{ "memory-grow-delay = 2h\n", false, "memory-grow-delay" },
		{ "xen-reserve = 10%\n", false, "xen-reserve" },
		{ "colour = blue\n", false, "unknown key" },
		/* [defaults] and [client] keys, bad. */
		{ "[defaults]\nweight = 0\n", false, "weight" },
		{ "[defaults]\ncompress = on\n", false, "compress" },
		{ "[defaults]\nephemeral-max = 3X\n", false, "ephemeral-max" },
		{ "[client vm1]\npersistent-max = -1\n", false, "persistent-max" },
		{ "[client bad!]\nweight = 5\n", false, "bad client" },
		{ "[client vm1]\nshared-auth = nope\n", false, "bad UUID" },
		{ "[nosuch]\nx = 1\n", false, "unknown section" },
		/* And good values of the same keys: both take them. */
		{ "control-admin-group = root\n", true, NULL },
		{ "xen-domains = 1-100, web1, db2\n", true, NULL },
		{ "memory = 8M\nworkers = 2\ncompress-threshold = 2048\n", true, NULL },
		{ "control-socket-mode = 0640\ncontrol-max-per-uid = 4\n", true, NULL },
		{ "local-max-clients-per-uid = 8\nlocal-max-pools-per-uid = 64\n"
		  "local-max-handshakes-per-uid = 4\n", true, NULL },
		{ "reattach-grace = 5m\nparked-max-age = 1h\n", true, NULL },
		{ "memory = auto\nmemory-reserve = 5%\nmemory-grow-delay = 90s\n"
		  "xen-reserve = 256M\n", true, NULL },
		{ arena_ok, true, NULL },
		{ rundir_ok, true, NULL },
		{ "[defaults]\nweight = 50\ncompress = zstd:3\nephemeral-max = 8M\n"
		  "[client vm1]\npersistent-max = none\n"
		  "shared-auth = 6ba7b810-9dad-11d1-80b4-00c04fd430c8\n", true, NULL },
	};
	char file[160];

	snprintf(over_ram, sizeof(over_ram), "memory = %lluM\n", (ram >> 20) + 1024);
	/* tmpfs: the arena is memory. */
	snprintf(arena_ok, sizeof(arena_ok), "arena = /dev/shm/tmemd-truth-%d\n", (int)getpid());
	snprintf(arena_disk, sizeof(arena_disk), "arena = /var/tmp/tmemd-truth-%d\n", (int)getpid());
	snprintf(rundir_ok, sizeof(rundir_ok), "runtime-dir = %s/run2\n", H.dir);
	snprintf(file, sizeof(file), "%s/case.conf", H.dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct conf_case *c = &cases[i];
		const char *argv[] = { tmemd_bin(), "--check-config", "-c", file, NULL };
		char check_err[600], start_err[600], *serr = NULL;
		struct run r;
		bool started;
		FILE *f = fopen(file, "w");

		ck_assert_ptr_nonnull(f);
		/* A start that can run here (local transport, small pool, our
		 * dirs); the case's lines come after and win. */
		fprintf(f, "[tmemd]\ntransport = local\nmemory = 4M\nworkers = 1\n"
			"runtime-dir = %s\nstate-dir = %s\n%s", H.run, H.state, c->text);
		ck_assert_int_eq(fclose(f), 0);
		r = run_argv(argv, NULL);
		started = real_start(file, &serr);
		first_error(r.err, check_err, sizeof(check_err));
		first_error(serr, start_err, sizeof(start_err));
		ck_assert_msg(c->good == (r.status == 0),
			      "case %zu (%s): --check-config exit %d: %s", i, c->text, r.status,
			      r.err);
		ck_assert_msg(started == (r.status == 0),
			      "case %zu (%s): --check-config exit %d (%s) but the start %s: %s", i,
			      c->text, r.status, check_err, started ? "ran" : "refused", serr);
		if (!c->good) {
			ck_assert_msg(strstr(check_err, c->says), "case %zu: \"%s\" lacks \"%s\"",
				      i, check_err, c->says);
			ck_assert_msg(!strcmp(check_err, start_err),
				      "case %zu: --check-config says \"%s\", the start \"%s\"", i,
				      check_err, start_err);
		} else {
			ck_assert_msg(strstr(r.out, ": OK"), "case %zu: %s", i, r.out);
		}
		free(serr);
		run_free(&r);
		unlink(file);
	}
	snprintf(file, sizeof(file), "/dev/shm/tmemd-truth-%d", (int)getpid());
	unlink(file);
}
END_TEST

/* ---- item 2: a reload names what waits for a restart ------------------- */

/* The bug: a reload that changed arena, control-admin-group,
 * control-socket-mode, reattach-grace and compress-threshold logged only
 * memory and workers, and status said "last reload: ok". */
START_TEST(test_reload_names_every_restart_key)
{
	static const char *const keys[] = {
		"memory", "workers", "transport", "runtime-dir", "state-dir", "arena",
		"control-admin-group", "control-socket-mode", "control-max-per-uid",
		"reattach-grace", "compress-threshold",
	};
	char text[1024];
	json_t *doc, *pending;
	struct run r;

	ck_assert_int_eq(host_start(&H, NULL), 0);
	snprintf(text, sizeof(text),
		 "[tmemd]\nmemory = 8M\nworkers = 2\ntransport = local\nruntime-dir = %s/r2\n"
		 "state-dir = %s/s2\narena = /dev/shm/tmemd-truth-%d\ncontrol-admin-group = root\n"
		 "control-socket-mode = 0640\ncontrol-max-per-uid = 3\nreattach-grace = 10m\n"
		 "compress-threshold = 2048\n", H.dir, H.dir, (int)getpid());
	write_text_file(H.dir, "tmemd.conf", text);
	host_reload(&H);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char key[64];

		/* transport = local is what runs (xen is not usable here). */
		if (!strcmp(keys[i], "transport"))
			continue;
		snprintf(key, sizeof(key), ": %s = ", keys[i]);
		ck_assert_msg(host_logged(&H, key, "needs a restart"),
			      "the reload did not name %s, see %s/host.err", keys[i], H.dir);
	}
	doc = ctl_json(&H, "status", NULL);
	pending = jpath(doc, "daemon.last_reload.restart_pending");
	ck_assert_msg(json_is_array(pending), "no restart_pending");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		bool found = false;
		json_t *k;
		size_t j;

		json_array_foreach(pending, j, k)
			found = found || !strcmp(json_string_value(k), keys[i]);
		ck_assert_msg(found == !!strcmp(keys[i], "transport"),
			      "restart_pending and %s disagree", keys[i]);
	}
	json_decref(doc);
	r = ctl(&H, "status", NULL);
	ck_assert_msg(strstr(r.out, "restart pending: ") && strstr(r.out, "arena") &&
		      strstr(r.out, "compress-threshold"), "%s", r.out);
	run_free(&r);
	/* A second reload of the same file: still not in force, still said. */
	host_reload(&H);
	doc = ctl_json(&H, "status", NULL);
	ck_assert_uint_eq(json_array_size(jpath(doc, "daemon.last_reload.restart_pending")),
			  sizeof(keys) / sizeof(keys[0]) - 1);
	json_decref(doc);
	/* Back to what runs: nothing pending. */
	write_text_file(H.dir, "tmemd.conf", "[tmemd]\n");
	host_reload(&H);
	doc = ctl_json(&H, "status", NULL);
	ck_assert_uint_eq(json_array_size(jpath(doc, "daemon.last_reload.restart_pending")), 0);
	json_decref(doc);
}
END_TEST

/* A reload of a file the next start would refuse fails, and keeps what
 * is in force: systemctl reload then fails too (ExecReload runs
 * --check-config, which says the same). */
START_TEST(test_reload_refuses_what_a_start_refuses)
{
	json_t *doc;

	ck_assert_int_eq(host_start(&H, NULL), 0);
	write_text_file(H.dir, "tmemd.conf", "[tmemd]\ncontrol-admin-group = nosuchgroup\n");
	host_reload(&H);
	doc = ctl_json(&H, "status", NULL);
	ck_assert_str_eq(json_string_value(jpath(doc, "daemon.last_reload.result")), "failed");
	ck_assert_ptr_nonnull(strstr(json_string_value(jpath(doc, "daemon.last_reload.message")),
				     "no such group"));
	json_decref(doc);
}
END_TEST

/* The client called name in a list document's clients. */
static json_t *listed(json_t *doc, const char *name)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(doc, "clients"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "client")), name))
			return c;
	return NULL;
}

/* The bug: a value stored with tmemctl set silently beat the file (the
 * file said weight = 70, 10 stayed, the reload said "ok"); list did not
 * say where a value came from, and there was no way back: no unset, and
 * forget refuses an attached client. */
START_TEST(test_stored_value_beats_file_visibly_and_unset)
{
	json_t *doc, *c;
	struct run r;

	ck_assert_int_eq(host_start(&H, NULL), 0);
	write_text_file(H.dir, "tmemd.conf", "[client vm1]\nweight = 50\n");
	host_reload(&H);
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	doc = ctl_json(&H, "list", NULL);
	c = listed(doc, "vm1");
	ck_assert_str_eq(json_string_value(jpath(c, "from.weight")), "tmemd.conf");
	ck_assert_str_eq(json_string_value(jpath(c, "from.compress")), "default");
	json_decref(doc);

	r = ctl(&H, "set", "vm1", "--weight", "10", NULL);
	ck_assert_int_eq(r.status, 0);
	run_free(&r);
	write_text_file(H.dir, "tmemd.conf", "[client vm1]\nweight = 70\n");
	host_reload(&H);
	ck_assert_msg(host_logged(&H, "vm1: weight = 70, but 10 set by tmemctl stays in force",
				  "tmemctl unset vm1 --weight"), "see %s/host.err", H.dir);
	doc = ctl_json(&H, "status", NULL);
	ck_assert_str_eq(json_string_value(json_array_get(
		jpath(doc, "daemon.last_reload.overridden"), 0)), "vm1 weight");
	json_decref(doc);
	r = ctl(&H, "status", NULL);
	ck_assert_msg(strstr(r.out, "tmemctl over tmemd.conf: vm1 weight"), "%s", r.out);
	run_free(&r);
	doc = ctl_json(&H, "list", NULL);
	c = listed(doc, "vm1");
	ck_assert_int_eq(json_integer_value(json_object_get(c, "weight")), 10);
	ck_assert_str_eq(json_string_value(jpath(c, "from.weight")), "tmemctl");
	ck_assert_int_eq(json_integer_value(jpath(c, "file.weight")), 70);
	json_decref(doc);
	r = ctl(&H, "list", NULL);
	ck_assert_msg(strstr(r.out, "SET BY TMEMCTL") && strstr(r.out, "weight"), "%s", r.out);
	run_free(&r);

	/* The way back: forget says to use unset, and unset goes back. */
	r = ctl(&H, "forget", "vm1", NULL);
	ck_assert_msg(r.status == 1 && strstr(r.err, "tmemctl unset vm1"), "%s", r.err);
	run_free(&r);
	r = ctl(&H, "unset", "vm1", "--weight", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "vm1: removed weight"), "%s %s", r.out, r.err);
	run_free(&r);
	doc = ctl_json(&H, "list", NULL);
	c = listed(doc, "vm1");
	ck_assert_int_eq(json_integer_value(json_object_get(c, "weight")), 70);
	ck_assert_str_eq(json_string_value(jpath(c, "from.weight")), "tmemd.conf");
	json_decref(doc);
	r = ctl(&H, "unset", "vm1", NULL);
	ck_assert_msg(r.status == 1 && strstr(r.err, "stored none"), "%s", r.err);
	run_free(&r);
}
END_TEST

/* The bug: set -a and thaw -a stored an entry for every transient local
 * client.  -a applies now and stores nothing; thaw removes the frozen
 * flag instead of storing "not frozen". */
START_TEST(test_all_flags_store_nothing)
{
	json_t *doc;
	struct run r;

	ck_assert_int_eq(host_start(&H, NULL), 0);
	ck_assert_int_eq(host_cmd(&H, "add bench-1"), 0);
	ck_assert_int_eq(host_cmd(&H, "add bench-2"), 0);
	r = ctl(&H, "set", "-a", "--weight", "33", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "not stored"), "%s %s", r.out, r.err);
	run_free(&r);
	doc = ctl_json(&H, "list", NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(listed(doc, "bench-2"), "weight")), 33);
	json_decref(doc);
	r = ctl(&H, "freeze", "-a", NULL);
	ck_assert_int_eq(r.status, 0);
	run_free(&r);
	r = ctl(&H, "thaw", "-a", NULL);
	ck_assert_int_eq(r.status, 0);
	run_free(&r);
	doc = ctl_json(&H, "list", "-a", NULL);
	ck_assert_msg(json_array_size(json_object_get(doc, "stored")) == 0,
		      "entries stored: %s", json_dumps(json_object_get(doc, "stored"), 0));
	ck_assert(json_is_false(json_object_get(listed(doc, "bench-1"), "frozen")));
	json_decref(doc);
}
END_TEST

/* ---- items 3 and 4: one meaning per figure ------------------------------ */

#define UUID_S "6ba7b810-9dad-11d1-80b4-00c04fd430c8"

/* The value of the sample series (name plus labels, exactly as printed)
 * in a Prometheus text, asserted present. */
static double prom(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	ck_abort_msg("no sample %s in:\n%s", series, text);
	return 0;
}

static char *prom_text(void)
{
	struct run r = ctl(&H, "stats", "--prometheus", NULL);

	ck_assert_msg(r.status == 0, "stats --prometheus: %s", r.err);
	free(r.err);
	return r.out;
}

/* promtool check metrics, when this host has it (Debian: prometheus). */
static void promtool_clean(const char *text)
{
	char path[160], cmd[256];
	FILE *f;

	if (system("command -v promtool >/dev/null 2>&1") != 0)
		return;
	snprintf(path, sizeof(path), "%s/metrics.txt", H.dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	ck_assert_msg(system(cmd) == 0, "promtool check metrics complains, see %s", path);
}

enum unit { LOGICAL, COMPRESSED, PHYSICAL };

/*
 * Every family with "_bytes" in its name says in its HELP which bytes it
 * counts; returns how many families, and checks each sample of a logical
 * one is whole pages.
 */
static int check_help_units(const char *text)
{
	int families = 0;

	for (const char *p = strstr(text, "# HELP "); p; p = strstr(p + 1, "# HELP ")) {
		char name[128], help[32];
		size_t n = strcspn(p + 7, " ");

		snprintf(name, sizeof(name), "%.*s", (int)n, p + 7);
		snprintf(help, sizeof(help), "%s", p + 8 + n);
		if (!strstr(name, "_bytes"))
			continue;
		families++;
		ck_assert_msg(!strncmp(help, "Logical bytes", 13) ||
			      !strncmp(help, "Compressed bytes", 16) ||
			      !strncmp(help, "Physical bytes", 14),
			      "%s: HELP does not say logical, compressed or physical: %s", name, help);
		if (!strncmp(help, "Logical bytes", 13)) {
			size_t len = strlen(name);

			for (const char *q = strstr(text, name); q; q = strstr(q + 1, name)) {
				if ((q != text && q[-1] != '\n') || (q[len] != ' ' && q[len] != '{'))
					continue;
				q = strchr(q, ' ');
				ck_assert_msg((unsigned long long)strtod(q + 1, NULL) % 4096 == 0,
					      "%s is logical but not whole pages: %s", name, q + 1);
			}
		}
	}
	return families;
}

/* The bug: status showed "used 3.8M ... ephemeral 1.0M persistent 6.0M"
 * (physical beside logical), tmem_pool_stored_bytes was compressed while
 * tmem_client_stored_bytes was logical, two names meant one figure, and
 * shared pages were charged to no one.  Each figure now says which bytes
 * it counts, and the logical ones add up: clients plus shared pools make
 * the pool. */
START_TEST(test_metrics_bytes_mean_what_help_says)
{
	static const char *const gone[] = {
		"tmem_pool_stored_bytes", "tmem_client_stored_bytes", "tmem_pool_orig_data_bytes",
		"tmem_pool_compr_data_bytes", "tmem_pool_mem_used_total_bytes",
		"tmem_shared_pool_stored_bytes", "tmem_pool_ephemeral_bytes",
	};
	const char *vm1e = "{client=\"vm1\",domid=\"\",kind=\"ephemeral\"}";
	const char *vm1p = "{client=\"vm1\",domid=\"\",kind=\"persistent\"}";
	const char *vm2e = "{client=\"vm2\",domid=\"\",kind=\"ephemeral\"}";
	const char *shared = "{uuid=\"" UUID_S "\"}";
	char series[160], *text;
	double eph, pers, ceph, cpers, cshared;
	struct run r;
	long e, p, sp;

	ck_assert_int_eq(host_start(&H, NULL), 0);
	r = ctl(&H, "shared-auth", UUID_S, "vm2", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	run_free(&r);
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	ck_assert_int_eq(host_cmd(&H, "add vm2"), 0);
	e = host_cmd(&H, "pool vm1 eph");
	p = host_cmd(&H, "pool vm1 pers");
	sp = host_cmd(&H, "pool vm2 shared " UUID_S);
	ck_assert(e >= 0 && p >= 0 && sp >= 0);
	ck_assert_int_eq(host_cmd(&H, "textputs vm1 %ld 1 64", e), 64);
	ck_assert_int_eq(host_cmd(&H, "textputs vm1 %ld 2 32", p), 32);
	ck_assert_int_eq(host_cmd(&H, "textputs vm2 %ld 3 16", sp), 16);

	text = prom_text();
	promtool_clean(text);
	ck_assert_int_ge(check_help_units(text), 10);
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		snprintf(series, sizeof(series), "\n%s", gone[i]);
		ck_assert_msg(!strstr(text, series), "%s still there: one name per figure", gone[i]);
	}
	/* Logical: the pages put, 4096 each, wherever they are charged. */
	eph = prom(text, "tmem_pool_logical_bytes{kind=\"ephemeral\"}");
	pers = prom(text, "tmem_pool_logical_bytes{kind=\"persistent\"}");
	ck_assert_uint_eq((unsigned long long)eph, (64 + 16) * 4096);
	ck_assert_uint_eq((unsigned long long)pers, 32 * 4096);
	snprintf(series, sizeof(series), "tmem_client_logical_bytes%s", vm1e);
	ck_assert_uint_eq((unsigned long long)prom(text, series), 64 * 4096);
	snprintf(series, sizeof(series), "tmem_client_logical_bytes%s", vm1p);
	ck_assert_uint_eq((unsigned long long)prom(text, series), 32 * 4096);
	snprintf(series, sizeof(series), "tmem_client_logical_bytes%s", vm2e);
	ck_assert_uint_eq((unsigned long long)prom(text, series), 0);
	snprintf(series, sizeof(series), "tmem_shared_pool_logical_bytes%s", shared);
	ck_assert_uint_eq((unsigned long long)prom(text, series), 16 * 4096);
	/* Compressed: text pages take some bytes, fewer than a page each;
	 * the clients' and the shared pool's make the pool's. */
	snprintf(series, sizeof(series), "tmem_client_compressed_bytes%s", vm1e);
	ceph = prom(text, series);
	snprintf(series, sizeof(series), "tmem_client_compressed_bytes%s", vm1p);
	cpers = prom(text, series);
	snprintf(series, sizeof(series), "tmem_shared_pool_compressed_bytes%s", shared);
	cshared = prom(text, series);
	ck_assert(ceph > 0 && ceph < 64 * 4096 && cpers > 0 && cpers < 32 * 4096);
	ck_assert(cshared > 0 && cshared < 16 * 4096);
	ck_assert_uint_eq((unsigned long long)prom(text,
			  "tmem_pool_compressed_bytes{kind=\"ephemeral\"}"),
			  (unsigned long long)(ceph + cshared));
	ck_assert_uint_eq((unsigned long long)prom(text,
			  "tmem_pool_compressed_bytes{kind=\"persistent\"}"),
			  (unsigned long long)cpers);
	/* Physical: whole frames, fewer than the logical bytes they hold. */
	ck_assert(prom(text, "tmem_pool_used_bytes") > 0 &&
		  prom(text, "tmem_pool_used_bytes") < eph + pers);
	free(text);

	/* The human view says the same, DATA beside COMPR and TOTAL. */
	r = ctl(&H, "status", NULL);
	ck_assert_msg(strstr(r.out, "stored: DATA 448.0K (ephemeral 320.0K, persistent 128.0K)  "
			     "COMPR "), "%s", r.out);
	run_free(&r);

	/* The saved view: hits and swap I/O avoided, and the compression
	 * gain, per client and in total. */
	ck_assert_int_eq(host_cmd(&H, "gets vm1 %ld 1 4", e), 4);
	ck_assert_int_eq(host_cmd(&H, "gets vm1 %ld 2 8", p), 8);
	{
		json_t *doc = ctl_json(&H, "saved", NULL), *vm1 = NULL, *c;
		size_t i;

		json_array_foreach(json_object_get(doc, "clients"), i, c)
			if (!strcmp(json_string_value(json_object_get(c, "client")), "vm1"))
				vm1 = c;
		ck_assert_ptr_nonnull(vm1);
		ck_assert_int_eq(json_integer_value(jpath(vm1, "disk_reads_avoided_pages")), 4);
		ck_assert_int_eq(json_integer_value(jpath(vm1, "swap_writes_avoided_pages")), 32);
		ck_assert_int_eq(json_integer_value(jpath(vm1, "swap_reads_avoided_pages")), 8);
		ck_assert_int_eq(json_integer_value(jpath(vm1, "logical_bytes")), (60 + 32) * 4096);
		ck_assert_int_gt(json_integer_value(jpath(vm1, "compression_saved_bytes")), 0);
		ck_assert_int_eq(json_integer_value(jpath(doc, "total.swap_writes_avoided_pages")), 32);
		ck_assert_int_eq(json_integer_value(jpath(doc, "total.logical_bytes")),
				 (60 + 32 + 16) * 4096);
		ck_assert(json_real_value(json_object_get(doc, "cpu_seconds")) > 0);
		json_decref(doc);
	}
	r = ctl(&H, "saved", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "DISK-READS") &&
		      strstr(r.out, "(total since start)"), "%s %s", r.out, r.err);
	run_free(&r);
}
END_TEST

/* The bug: tmemctl flush counted as evictions (0 -> 2032), the
 * memory-pressure signal; and a client's counters went with it. */
START_TEST(test_admin_flush_leaves_evictions)
{
	const char *vm1 = "{client=\"vm1\",domid=\"\"}";
	char series[160], *text;
	struct run r;
	long e;

	ck_assert_int_eq(host_start(&H, NULL), 0);
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	e = host_cmd(&H, "pool vm1 eph");
	ck_assert_int_ge(e, 0);
	ck_assert_int_eq(host_cmd(&H, "textputs vm1 %ld 1 100", e), 100);
	r = ctl(&H, "flush", "vm1", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	run_free(&r);
	text = prom_text();
	snprintf(series, sizeof(series), "tmem_client_evictions_total%s", vm1);
	ck_assert_uint_eq((unsigned long long)prom(text, series), 0);
	ck_assert_uint_eq((unsigned long long)prom(text, "tmem_pool_evictions_total"), 0);
	snprintf(series, sizeof(series), "tmem_client_admin_flushes_total%s", vm1);
	ck_assert_uint_eq((unsigned long long)prom(text, series), 100);
	ck_assert_uint_eq((unsigned long long)prom(text, "tmem_pool_admin_flushes_total"), 100);
	free(text);
	/* The client goes; the pool's totals stay, for rates over a day. */
	ck_assert_int_eq(host_cmd(&H, "remove vm1"), 0);
	for (int i = 0; i < 200; i++) {
		json_t *doc = ctl_json(&H, "list", NULL);
		size_t n = json_array_size(json_object_get(doc, "clients"));

		json_decref(doc);
		if (!n)
			break;
		usleep(10000);
	}
	text = prom_text();
	ck_assert_msg(!strstr(text, "client=\"vm1\""), "vm1 still listed");
	ck_assert_uint_eq((unsigned long long)prom(text,
			  "tmem_pool_succ_puts_total{kind=\"ephemeral\"}"), 100);
	ck_assert_uint_eq((unsigned long long)prom(text, "tmem_pool_admin_flushes_total"), 100);
	ck_assert(prom(text, "tmem_daemon_cpu_seconds_total") > 0);
	free(text);
}
END_TEST

/* ---- item 5: invisible state --------------------------------------------- */

/* The client in arr (of objects with "client") called name, or NULL. */
static json_t *entry(json_t *arr, const char *key, const char *name)
{
	json_t *e;
	size_t i;

	json_array_foreach(arr, i, e)
		if (!strcmp(json_string_value(json_object_get(e, key)), name))
			return e;
	return NULL;
}

/* The bug: "1 still away" in status, but in neither list -a nor stats,
 * and no way to free it before reattach-grace. */
START_TEST(test_recovered_clients_visible_and_forgettable)
{
	char arena[160];
	json_t *doc, *e;
	struct run r;
	int status;
	long p;

	snprintf(arena, sizeof(arena), "/dev/shm/tmemd-truth-rec-%d", (int)getpid());
	unlink(arena);
	ck_assert_int_eq(host_start(&H, "--arena", arena, NULL), 0);
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	p = host_cmd(&H, "pool vm1 pers");
	ck_assert_int_ge(p, 0);
	ck_assert_int_eq(host_cmd(&H, "textputs vm1 %ld 1 8", p), 8);
	/* tmemd stops with vm1 attached: its pages stay in the arena. */
	ck_assert_int_eq(kill(H.pid, SIGTERM), 0);
	ck_assert_int_eq(waitpid(H.pid, &status, 0), H.pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "stop: %#x", status);
	H.pid = 0;
	ck_assert_int_eq(host_start(&H, "--arena", arena, NULL), 0);

	doc = ctl_json(&H, "list", "-a", NULL);
	e = entry(json_object_get(doc, "recovered"), "client", "vm1");
	ck_assert_msg(e != NULL, "vm1 not in list -a's recovered");
	ck_assert_int_eq(json_integer_value(jpath(e, "pages.persistent")), 8);
	json_decref(doc);
	doc = ctl_json(&H, "stats", NULL);
	ck_assert_ptr_nonnull(entry(json_object_get(doc, "recovered"), "client", "vm1"));
	json_decref(doc);
	r = ctl(&H, "list", "-a", NULL);
	ck_assert_msg(strstr(r.out, "RECOVERED") && strstr(r.out, "vm1"), "%s", r.out);
	run_free(&r);

	/* Freed now, not after reattach-grace. */
	r = ctl(&H, "forget", "vm1", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "vm1: recovered client freed with its 8 "
					      "pages"), "%d %s %s", r.status, r.out, r.err);
	run_free(&r);
	doc = ctl_json(&H, "status", NULL);
	ck_assert_int_eq(json_integer_value(jpath(doc, "restart.clients_detached")), 0);
	ck_assert_int_eq(json_integer_value(jpath(doc, "pool.persistent_pages")), 0);
	json_decref(doc);
	doc = ctl_json(&H, "list", "-a", NULL);
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "recovered")), 0);
	json_decref(doc);
	host_stop(&H);
	unlink(arena);
}
END_TEST

#define UUID_T "00112233-4455-6677-8899-aabbccddeeff"

/* The bug: tmemd.conf's shared-auth grants showed in neither list -a nor
 * the stats' authorised: no command printed the access list in force. */
START_TEST(test_file_grants_visible)
{
	json_t *doc, *g, *pool;
	struct run r;
	long sp;

	ck_assert_int_eq(host_start(&H, NULL), 0);
	write_text_file(H.dir, "tmemd.conf", "[client vm2]\nshared-auth = " UUID_S "\n");
	host_reload(&H);
	r = ctl(&H, "shared-auth", UUID_T, "vm3", NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	run_free(&r);

	doc = ctl_json(&H, "list", "-a", NULL);
	g = NULL;
	{
		json_t *e;
		size_t i;

		json_array_foreach(json_object_get(doc, "grants"), i, e)
			if (!strcmp(json_string_value(json_object_get(e, "client")), "vm2"))
				g = e;
	}
	ck_assert_msg(g != NULL, "the file's grant is not in list -a");
	ck_assert_str_eq(json_string_value(json_object_get(g, "uuid")), UUID_S);
	ck_assert_str_eq(json_string_value(json_object_get(g, "from")), "tmemd.conf");
	g = entry(json_object_get(doc, "grants"), "client", "vm3");
	ck_assert_ptr_nonnull(g);
	ck_assert_str_eq(json_string_value(json_object_get(g, "from")), "tmemctl");
	json_decref(doc);
	r = ctl(&H, "list", "-a", NULL);
	ck_assert_msg(strstr(r.out, "GRANTED BY") && strstr(r.out, "tmemd.conf"), "%s", r.out);
	run_free(&r);

	/* The stats' authorised: whoever granted it. */
	ck_assert_int_eq(host_cmd(&H, "add vm2"), 0);
	sp = host_cmd(&H, "pool vm2 shared " UUID_S);
	ck_assert_int_ge(sp, 0);
	doc = ctl_json(&H, "stats", NULL);
	pool = entry(json_object_get(doc, "shared_pools"), "uuid", UUID_S);
	ck_assert_ptr_nonnull(pool);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(pool, "authorised"), 0)),
			 "vm2");
	json_decref(doc);
}
END_TEST

/* ---- item 7: the smaller items ------------------------------------------ */

static struct run tmemd_run(const char *a, const char *b, const char *c)
{
	char run[160], state[160];
	const char *argv[] = { tmemd_bin(), "--transport", "local", "--runtime-dir", run,
			       "--state-dir", state, a, b, c, NULL };

	snprintf(run, sizeof(run), "%s/run9", H.dir);
	snprintf(state, sizeof(state), "%s/state9", H.dir);
	return run_argv(argv, NULL);
}

static void expect_run(struct run r, int status, const char *in_err)
{
	ck_assert_msg(r.status == status && strstr(r.err, in_err), "exit %d (wanted %d): %s",
		      r.status, status, r.err);
	run_free(&r);
}

/* tmemd's own messages: "tmemd:", a sentence, the right exit code. */
START_TEST(test_tmemd_messages)
{
	struct run r = tmemd_run("--bogus", NULL, NULL);

	/* The bug: getopt's message began with the binary's full path. */
	ck_assert_msg(r.status == 2 && !strncmp(r.err, "tmemd: unrecognized option: '--bogus'", 37),
		      "%d %s", r.status, r.err);
	run_free(&r);
	expect_run(tmemd_run("-c", NULL, NULL), 2, "tmemd: option needs a value: '-c'");
	/* The bug: a byte count and "Invalid argument". */
	r = tmemd_run("--memory", "100T", NULL);
	ck_assert_msg(r.status == 1 && strstr(r.err, "memory = 100.0 TiB is more than this "
					      "host's RAM") && !strstr(r.err, "Invalid argument"),
		      "%d %s", r.status, r.err);
	run_free(&r);
	/* The bug: accepted, and nothing said. */
	expect_run(tmemd_run("--discard-arena", "--memory", "4M"), 1,
		   "--discard-arena: there is no arena to discard");
}
END_TEST

/* tmemctl: usage errors exit 2; list -a shows each stored value;
 * freeze and thaw say what they did; pool-size says its minimum. */
START_TEST(test_tmemctl_messages)
{
	struct run r;
	long p;

	ck_assert_int_eq(host_start(&H, NULL), 0);
	expect_run(ctl(&H, "set", "vm1", "--compress", "zstd:20", NULL), 2, "zstd:LEVEL (1..19)");
	r = ctl(&H, "set", "vm9", "--compress", "zstd:3", "--weight", "7", NULL);
	ck_assert_int_eq(r.status, 0);
	run_free(&r);
	/* The bug: "?" in COMP for every stored value. */
	r = ctl(&H, "list", "-a", NULL);
	ck_assert_msg(strstr(r.out, "zstd:3") && !strstr(r.out, " ? "), "%s", r.out);
	run_free(&r);
	/* The bug: freeze and thaw printed only "done". */
	ck_assert_int_eq(host_cmd(&H, "add vm1"), 0);
	r = ctl(&H, "freeze", "vm1", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "vm1: frozen: its puts are refused"), "%s",
		      r.out);
	run_free(&r);
	r = ctl(&H, "thaw", "vm1", NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "vm1: thawed: its puts are accepted"), "%s",
		      r.out);
	run_free(&r);
	/* The bug: "the persistent pages alone need more", no figure. */
	p = host_cmd(&H, "pool vm1 pers");
	ck_assert_int_ge(p, 0);
	ck_assert_int_eq(host_cmd(&H, "puts vm1 %ld 1 64", p), 64);
	r = ctl(&H, "pool-size", "64K", NULL);
	ck_assert_msg(r.status == 1 && strstr(r.err, "the 64 persistent pages need 64 pages "
					      "(256 KiB), the smallest the pool can be now"),
		      "%s", r.err);
	run_free(&r);
}
END_TEST

/* The bug: top exited when tmemd restarted; xentop keeps going. */
START_TEST(test_top_reconnects)
{
	char out[160], errp[160], cmd[600], line[8192];
	int lines = 0, status;
	pid_t pid;
	FILE *f;

	ck_assert_int_eq(host_start(&H, NULL), 0);
	snprintf(out, sizeof(out), "%s/top.out", H.dir);
	snprintf(errp, sizeof(errp), "%s/top.err", H.dir);
	snprintf(cmd, sizeof(cmd), "exec %s --socket %s top --json --iterations 3 --delay 0.2 "
		 ">%s 2>%s </dev/null", tmemctl_bin(), H.sock, out, errp);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	usleep(100000);  /* the first frame */
	host_stop(&H);
	ck_assert_int_eq(H.exit_status, 0);
	usleep(500000);  /* top finds it gone, and waits */
	ck_assert_int_eq(host_start(&H, NULL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "top: %#x", status);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		lines += line[0] == '{';
	fclose(f);
	ck_assert_int_eq(lines, 3);
	f = fopen(errp, "r");
	ck_assert_ptr_nonnull(f);
	line[fread(line, 1, sizeof(line) - 1, f)] = '\0';
	fclose(f);
	ck_assert_msg(strstr(line, "tmemd went away; connecting again") &&
		      strstr(line, "connected again"), "%s", line);
}
END_TEST

/* The README names build/tmem-demo-guest: make builds it (the bug: only
 * make demo did); and tmemd(8) no longer says SIGTERM frees the pool. */
START_TEST(test_make_builds_demo_guest_and_man_signals)
{
	if (access("Makefile", R_OK) || access("man/tmemd.8", R_OK)) {
		tmem_test_skip("test_make_builds_demo_guest", "not run from the source tree");
		return;
	}
	/* Not a top-level make (MAKELEVEL=1): one would start make check's
	 * tally anew (the Makefile's TEST_RESULTS), even with -n. */
	ck_assert_msg(system("env -u MAKEFLAGS -u MFLAGS MAKELEVEL=1 make -n -W "
			     "tools/tmem-bench/demo/guest.c all 2>/dev/null | "
			     "grep -q 'tmem-demo-guest'") == 0,
		      "make (all) does not build build/tmem-demo-guest");
	ck_assert_msg(system("grep -q 'free the pool' man/tmemd.8") != 0,
		      "tmemd(8) still says SIGTERM frees the pool");
}
END_TEST

static Suite *truth_suite(void)
{
	Suite *s = suite_create("admin-truth");
	TCase *tc = tcase_create("truth");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_check_config_agrees_with_start);
	tcase_add_test(tc, test_reload_names_every_restart_key);
	tcase_add_test(tc, test_reload_refuses_what_a_start_refuses);
	tcase_add_test(tc, test_stored_value_beats_file_visibly_and_unset);
	tcase_add_test(tc, test_all_flags_store_nothing);
	tcase_add_test(tc, test_metrics_bytes_mean_what_help_says);
	tcase_add_test(tc, test_admin_flush_leaves_evictions);
	tcase_add_test(tc, test_recovered_clients_visible_and_forgettable);
	tcase_add_test(tc, test_file_grants_visible);
	tcase_add_test(tc, test_tmemd_messages);
	tcase_add_test(tc, test_tmemctl_messages);
	tcase_add_test(tc, test_top_reconnects);
	tcase_add_test(tc, test_make_builds_demo_guest_and_man_signals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(truth_suite(), 0);
}
