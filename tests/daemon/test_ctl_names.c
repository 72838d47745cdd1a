/* SPDX-License-Identifier: MIT */
/*
 * Issue 25: tmemctl names a Xen domain by its identity.  tmemd's control
 * server (the daemon's glue, over a real registry, policy and store)
 * with domains attached, gone and parked through the registry as the Xen
 * backend does it: each with a domid now, an xl name and a handle
 * (uuid:U), which xl save, restore and migrate keep while the domid
 * changes.  Requests go over control.sock from a child process while
 * the test's loop serves them.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client_registry.h"
#include "common/test_main.h"
#include "config.h"
#include "control_glue.h"
#include "loop.h"
#include "tmem_names.h"

#define REPLY_MAX 4096
#define UUID_A "uuid:00000000-0000-00aa-0100-000000000000"
#define UUID_B "uuid:00000000-0000-00bb-0100-000000000000"
#define UUID_C "uuid:00000000-0000-00cc-0100-000000000000"
#define UUID_D "uuid:00000000-0000-00dd-0100-000000000000"
/* Shared pools' UUIDs. */
#define POOL(n) "00000000-0000-0000-0000-0000000000" n

static struct {
	struct tmemd_config cfg;
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmemd_clients *reg;
	struct tmemd_loop *loop;
	struct tmemd_ctl_glue *g;
	char dir[64], state[96], sock[128];
} fx;

static void setup(void)
{
	struct tmem_store_config sc = { .arena_bytes = 4u << 20 };
	struct tmem_policy_config pc;

	memset(&fx, 0, sizeof(fx));
	tmemd_config_init(&fx.cfg);
	ck_assert_int_eq(store_create(&sc, &fx.store), 0);
	tmem_policy_config_defaults(&pc);
	ck_assert_int_eq(tmem_policy_create(fx.store, &pc, &fx.policy), 0);
	ck_assert_int_eq(tmemd_clients_create(fx.store, fx.policy, &fx.cfg, &fx.reg), 0);
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/ctl-names.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fx.dir));
	snprintf(fx.state, sizeof(fx.state), "%s/state", fx.dir);
	snprintf(fx.sock, sizeof(fx.sock), "%s/control.sock", fx.dir);
}

static void teardown(void)
{
	char path[160];

	tmemd_ctl_glue_stop(fx.g);
	tmemd_loop_destroy(fx.loop);
	tmemd_clients_destroy(fx.reg);
	tmem_policy_destroy(fx.policy);
	store_destroy(fx.store);
	tmemd_config_free(&fx.cfg);
	snprintf(path, sizeof(path), "%s/state.json", fx.state);
	unlink(path);
	rmdir(fx.state);
	rmdir(fx.dir);
}

static bool stop_loop(int signo, void *data)
{
	(void)signo;
	(void)data;
	return true;
}

/* tmemd.conf's text (NULL: none), then the control server as tmemd
 * starts it, before any client. */
static void start(const char *conf)
{
	struct tmemd_ctl_glue_config gc = { .runtime_dir = fx.dir, .state_dir = fx.state,
					    .transport = "xen", .version = "test",
					    .daemon_cfg = &fx.cfg };
	char err[256] = "";

	if (conf)
		ck_assert_msg(tmemd_config_load_string(&fx.cfg, "t.conf", conf, err,
						       sizeof(err)) == 0, "%s", err);
	/* As main.c gives the store the file's grants. */
	for (unsigned i = 0; i < fx.cfg.nr_clients; i++)
		for (unsigned j = 0; j < fx.cfg.clients[i].nr_auth; j++)
			ck_assert_int_eq(store_shared_auth(fx.store, &fx.cfg.clients[i].auth[j],
							   fx.cfg.clients[i].name, true), 0);
	ck_assert_int_eq(tmemd_loop_create(stop_loop, NULL, &fx.loop), 0);
	ck_assert_int_eq(tmemd_ctl_glue_start(&gc, fx.loop, fx.reg, &fx.g), 0);
}

/* One request line to control.sock; its reply line into out. */
static void ctl_one(const char *req, char out[REPLY_MAX])
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t n = 0;
	ssize_t r;

	out[0] = '\0';
	memcpy(a.sun_path, fx.sock, strlen(fx.sock) + 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req) || write(fd, "\n", 1) != 1)
		goto out;
	while (n < REPLY_MAX - 1 && (r = read(fd, out + n, REPLY_MAX - 1 - n)) > 0) {
		n += (size_t)r;
		if (memchr(out, '\n', n))
			break;
	}
	out[n] = '\0';
out:
	if (fd >= 0)
		close(fd);
}

/*
 * Serves reqs, sent one by one by a child process, on the test's loop
 * until the child has its replies; reply[i] is request i's.  Between
 * sessions the test attaches and parks domains on this thread, as the
 * transports do on tmemd's main thread.
 */
static void session(const char *const *reqs, int n, char (*reply)[REPLY_MAX])
{
	int p[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (int i = 0; i < n; i++) {
			static char r[REPLY_MAX];

			memset(r, 0, sizeof(r));
			ctl_one(reqs[i], r);
			if (write(p[1], r, sizeof(r)) != (ssize_t)sizeof(r))
				_exit(1);
		}
		/* To the loop's thread: it alone blocks SIGTERM. */
		syscall(SYS_tgkill, getppid(), getppid(), SIGTERM);
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(tmemd_loop_run(fx.loop), 0);
	for (int i = 0; i < n; i++) {
		size_t got = 0;
		ssize_t r;

		while (got < REPLY_MAX && (r = read(p[0], reply[i] + got, REPLY_MAX - got)) > 0)
			got += (size_t)r;
		ck_assert_uint_eq(got, REPLY_MAX);
	}
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
}

#define REPLY_HAS(r, s) ck_assert_msg(strstr((r), (s)), "reply lacks %s: %s", (s), (r))
#define REPLY_LACKS(r, s) ck_assert_msg(!strstr((r), (s)), "reply has %s: %s", (s), (r))
#define REQ(cmd, args) "{\"version\":1,\"cmd\":\"" cmd "\",\"args\":{" args "}}"

/* Domain domid, called name, with handle uuid (canonical text; NULL:
 * none), attached as the Xen backend attaches it. */
static struct tmemd_client *domain(uint32_t domid, const char *name, const char *uuid)
{
	struct tmemd_domain_id dom = { .domid = domid, .name = name };
	struct tmemd_client *c;
	bool resumed;

	if (uuid)
		ck_assert_int_eq(tmem_uuid_parse(uuid + 5, &dom.uuid), 0);
	ck_assert_int_eq(tmemd_client_attach_domain(fx.reg, &dom, NULL, &c, &resumed), 0);
	return c;
}

static uint32_t weight_of(struct tmemd_client *c)
{
	struct tmem_client_settings s;

	tmem_policy_client_get(c->pc, &s);
	return s.weight;
}

static bool frozen(struct tmemd_client *c)
{
	struct tmem_client_settings s;

	tmem_policy_client_get(c->pc, &s);
	return s.frozen;
}

static char *state_json(char *buf, size_t len)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/state.json", fx.state);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	buf[fread(buf, 1, len - 1, f)] = '\0';
	fclose(f);
	return buf;
}

/* Point 1 and 2: CLIENT finds an attached domain by domid, xl name or
 * uuid:U; a name nobody attached has is refused by the live commands. */
START_TEST(test_live_commands_find_domains)
{
	static const char *const reqs[] = {
		REQ("freeze", "\"client\":\"web1\""),
		REQ("list", "\"client\":\"domid:5\""),
		REQ("stats", "\"client\":\"" UUID_A "\""),
		REQ("thaw", "\"client\":\"5\""),
		REQ("freeze", "\"client\":\"" UUID_A "\""),
		REQ("freeze", "\"client\":\"db1\""),
		REQ("flush", "\"client\":\"db1\""),
		REQ("stats", "\"client\":\"db1\""),
		REQ("list", "\"client\":\"domid:6\""),
		REQ("thaw", "\"client\":\"" UUID_B "\""),
		REQ("flush", "\"client\":\"web1\""),
		REQ("freeze", "\"client\":\"dom5\""),
	};
	char reply[12][REPLY_MAX];
	struct tmemd_client *c;

	start(NULL);
	c = domain(5, "web1", UUID_A);
	session(reqs, 12, reply);
	REPLY_HAS(reply[0], "\"client\":\"" UUID_A "\"");
	REPLY_HAS(reply[0], "\"connected\":true");
	REPLY_HAS(reply[1], "\"client\":\"" UUID_A "\",\"name\":\"web1\",\"domid\":5");
	REPLY_HAS(reply[2], "\"name\":\"web1\"");
	REPLY_HAS(reply[3], "\"result\"");
	REPLY_HAS(reply[4], "\"result\"");
	for (int i = 5; i < 10; i++) {
		REPLY_HAS(reply[i], "\"errno\":2");
		REPLY_HAS(reply[i], "no attached client");
	}
	REPLY_HAS(reply[5], "no attached client \\\"db1\\\"");
	REPLY_HAS(reply[8], "no attached client \\\"domid:6\\\"");
	REPLY_HAS(reply[10], "\"client\":\"" UUID_A "\",\"evicted_pages\":0");
	/* Its label is its xl name; dom<N> is only for a nameless domain. */
	REPLY_HAS(reply[11], "no attached client \\\"dom5\\\"");
	ck_assert(frozen(c));
	tmemd_client_remove(c);
}
END_TEST

/*
 * Point 3, the lead's case: domain 5 "web1" (uuid A) gets "set web1
 * --weight 7" and goes; domain 5 comes back as "db" (uuid B): default
 * weight; domain 9 "web1" (uuid A) gets 7.  Settings by name are stored
 * before the domain exists, domid:N is stored under the domain's uuid:U
 * (never under a domid another domain takes next), and uuid:U wins over
 * the xl name.
 */
START_TEST(test_settings_follow_identity)
{
	static const char *const first[] = {
		REQ("set", "\"client\":\"web1\",\"weight\":7"),
		REQ("set", "\"client\":\"" UUID_C "\",\"weight\":11"),
	};
	static const char *const second[] = {
		REQ("set", "\"client\":\"domid:5\",\"weight\":3"),
		REQ("set", "\"client\":\"7\",\"weight\":3"),
		REQ("set", "\"client\":\"" UUID_A "\",\"weight\":8"),
		REQ("set", "\"client\":\"web1\",\"weight\":2"),
		REQ("list", "\"all\":true"),
	};
	char reply[5][REPLY_MAX], text[4096];
	struct tmemd_client *web, *db, *c;

	start(NULL);
	session(first, 2, reply);
	REPLY_HAS(reply[0], "\"client\":\"web1\",\"connected\":false");
	REPLY_HAS(reply[1], "\"client\":\"" UUID_C "\",\"connected\":false");
	web = domain(5, "web1", UUID_A);
	ck_assert_uint_eq(weight_of(web), 7);
	tmemd_client_remove(web);
	db = domain(5, "db", UUID_B);
	ck_assert_uint_eq(weight_of(db), TMEM_DEFAULT_WEIGHT);
	web = domain(9, "web1", UUID_A);
	ck_assert_uint_eq(weight_of(web), 7);
	c = domain(12, "x", UUID_C);
	ck_assert_uint_eq(weight_of(c), 11);

	session(second, 5, reply);
	REPLY_HAS(reply[0], "\"client\":\"" UUID_B "\",\"connected\":true");
	ck_assert_uint_eq(weight_of(db), 3);
	REPLY_HAS(reply[1], "\"errno\":2");
	REPLY_HAS(reply[1], "no Xen domain 7 is attached; a domain that is not running is "
		  "named by its xl name or uuid:U");
	REPLY_HAS(reply[2], "\"client\":\"" UUID_A "\",\"connected\":true");
	ck_assert_uint_eq(weight_of(web), 8);
	/* Stored, but uuid:A's own entry stays in force over its name's. */
	REPLY_HAS(reply[3], "\"client\":\"web1\",\"connected\":true");
	ck_assert_uint_eq(weight_of(web), 8);
	REPLY_HAS(reply[4], "{\"name\":\"web1\",\"attached\":true");
	state_json(text, sizeof(text));
	ck_assert_msg(strstr(text, "\"" UUID_B "\"") && !strstr(text, "domid:"), "%s", text);
	/* Domain 5 goes; whoever is domain 5 next does not inherit db's 3. */
	tmemd_client_remove(db);
	db = domain(5, "other", UUID_D);
	ck_assert_uint_eq(weight_of(db), TMEM_DEFAULT_WEIGHT);
	tmemd_client_remove(db);
	tmemd_client_remove(web);
	tmemd_client_remove(c);
}
END_TEST

/* Point 3: "domid:N" entries an older tmemd stored keep loading and
 * match whatever domain has that id, as [client domid:N] does. */
START_TEST(test_old_domid_entry_matches_that_domid)
{
	char path[160];
	FILE *f;
	struct tmemd_client *a, *b;

	ck_assert_int_eq(mkdir(fx.state, 0700), 0);
	snprintf(path, sizeof(path), "%s/state.json", fx.state);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"version\":2,\"clients\":{\"domid:5\":{\"weight\":42}}}\n", f);
	fclose(f);
	start(NULL);
	a = domain(5, "web1", UUID_A);
	b = domain(6, "db", UUID_B);
	ck_assert_uint_eq(weight_of(a), 42);
	ck_assert_uint_eq(weight_of(b), TMEM_DEFAULT_WEIGHT);
	tmemd_client_remove(a);
	tmemd_client_remove(b);
}
END_TEST

static int join(struct tmemd_client *c, const char *uuid)
{
	struct tmem_uuid u;

	ck_assert_int_eq(tmem_uuid_parse(uuid, &u), 0);
	return store_new_pool(c->sc, tmem_pool_flags(TMEM_POOL_SHARED), &u);
}

/*
 * Point 4: the store lets a client join by its key (uuid:U); grants to
 * the domain's xl name (tmemd.conf and tmemctl), its uuid:U and its
 * domid reach it, revokes take them back, a domid's grant does not
 * stay with the domid, and a local client gets none of a domain's.
 */
START_TEST(test_grants_reach_domains_by_any_name)
{
	static const char *const reqs[] = {
		REQ("shared-auth", "\"uuid\":\"" POOL("02") "\",\"client\":\"" UUID_A "\""),
		REQ("shared-auth", "\"uuid\":\"" POOL("03") "\",\"client\":\"domid:5\""),
		REQ("shared-auth", "\"uuid\":\"" POOL("04") "\",\"client\":\"db\""),
		REQ("shared-auth", "\"uuid\":\"" POOL("06") "\",\"client\":\"domid:44\""),
	};
	static const char *const revoke[] = {
		REQ("shared-auth", "\"uuid\":\"" POOL("04") "\",\"client\":\"db\","
		    "\"revoke\":true"),
	};
	char reply[4][REPLY_MAX];
	struct tmemd_client *web, *db, *local, *app;

	start("[client web1]\nshared-auth = " POOL("01") "\n"
	      "[client app]\nshared-auth = " POOL("05") "\n");
	web = domain(5, "web1", UUID_A);
	db = domain(6, "db", UUID_B);
	ck_assert_int_ge(join(web, POOL("01")), 0);   /* the file's, by xl name */
	ck_assert_int_eq(join(db, POOL("01")), -EPERM);
	session(reqs, 4, reply);
	REPLY_HAS(reply[0], "\"authorised\":true");
	REPLY_HAS(reply[1], "\"client\":\"" UUID_A "\"");  /* domid:5 is uuid A's */
	REPLY_HAS(reply[2], "\"client\":\"db\"");
	REPLY_HAS(reply[3], "no Xen domain 44 is attached");
	ck_assert_int_ge(join(web, POOL("02")), 0);
	ck_assert_int_ge(join(web, POOL("03")), 0);
	ck_assert_int_eq(join(web, POOL("04")), -EPERM);
	ck_assert_int_eq(join(db, POOL("02")), -EPERM);
	ck_assert_int_eq(join(db, POOL("03")), -EPERM);
	/* Granted by name while db is attached: at once. */
	ck_assert_int_ge(join(db, POOL("04")), 0);
	session(revoke, 1, reply);
	REPLY_HAS(reply[0], "\"authorised\":false");
	ck_assert_int_eq(join(db, POOL("04")), -EPERM);
	/* A local client of the domain's name gets the grant by name (the
	 * transports never run together) but none by uuid:U or domid. */
	local = NULL;
	ck_assert_int_eq(tmemd_client_add(fx.reg, "web1", "local", -1, &local), 0);
	ck_assert_int_ge(join(local, POOL("01")), 0);
	ck_assert_int_eq(join(local, POOL("02")), -EPERM);
	ck_assert_int_eq(join(local, POOL("03")), -EPERM);
	tmemd_client_remove(local);
	/* A domain without a handle is keyed domid:7; what its name gave
	 * it does not stay with domid 7 for the next domain. */
	app = domain(7, "app", NULL);
	ck_assert_str_eq(app->name, "domid:7");
	ck_assert_int_ge(join(app, POOL("05")), 0);
	tmemd_client_remove(app);
	app = domain(7, "other", NULL);
	ck_assert_int_eq(join(app, POOL("05")), -EPERM);
	tmemd_client_remove(app);
	/* Restored with a new domid, web1 still joins what uuid A has. */
	tmemd_client_remove(web);
	web = domain(15, "web1", UUID_A);
	ck_assert_int_ge(join(web, POOL("03")), 0);
	ck_assert_int_ge(join(web, POOL("01")), 0);
	tmemd_client_remove(web);
	tmemd_client_remove(db);
}
END_TEST

/* A domain with a persistent pool of pages pages, parked at when. */
static void park(uint32_t domid, const char *name, const char *uuid, unsigned pages,
		 uint64_t when)
{
	struct tmemd_client *c = domain(domid, name, uuid);
	static const char page[TMEM_PAGE_SIZE] = { 1 };
	struct tmem_oid oid = { { 1, 0, 0 } };
	int32_t pool = store_new_pool(c->sc, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);

	ck_assert_int_ge(pool, 0);
	for (unsigned i = 0; i < pages; i++)
		ck_assert_int_eq(store_put_page(c->sc, pool, &oid, i, page,
						 TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	ck_assert_int_eq(tmemd_client_park(c, when, NULL), 0);
}

/* Points 5 and 6: parked clients in list --all, stats, status and
 * stats.json; forget drops one by its key or xl name, not an attached one. */
START_TEST(test_parked_shown_and_forgotten)
{
	static const char *const reqs[] = {
		REQ("list", "\"all\":true"),
		REQ("stats", ""),
		REQ("status", ""),
		REQ("forget", "\"client\":\"web1\""),
		REQ("forget", "\"client\":\"" UUID_B "\""),
		REQ("forget", "\"client\":\"" UUID_B "\""),
		REQ("forget", "\"client\":\"" UUID_C "\""),
		REQ("list", "\"all\":true"),
		REQ("status", ""),
	};
	char reply[9][REPLY_MAX], path[160], text[8192];
	uint64_t now = (uint64_t)time(NULL);
	struct tmem_page_counts pc;
	struct tmemd_client *c;
	FILE *f;

	start(NULL);
	park(5, "web1", UUID_A, 3, now - 100);
	park(6, "db", UUID_B, 2, now - 50);
	c = domain(7, "app", UUID_C);
	snprintf(path, sizeof(path), "%s/stats.json", fx.dir);
	ck_assert_int_eq(tmemd_ctl_glue_write_stats(fx.g, path), 0);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	unlink(path);
	ck_assert_msg(strstr(text, "\"parked\": {") && strstr(text, "\"age_seconds\""), "%s",
		      text);
	session(reqs, 9, reply);
	REPLY_HAS(reply[0], "\"parked\":[");
	REPLY_HAS(reply[0], "{\"client\":\"" UUID_A "\",\"name\":\"web1\",\"pages\":3,"
		  "\"pools\":1,\"parked_at_seconds\":");
	REPLY_HAS(reply[0], "\"name\":\"db\",\"pages\":2");
	REPLY_HAS(reply[1], "\"parked\":{\"clients\":2,\"pools\":{\"parked\":2,\"claimed\":0,"
		  "\"expired\":0},\"pages\":{\"parked\":5,\"claimed\":0,\"expired\":0},"
		  "\"list\":[");
	REPLY_HAS(reply[1], "\"age_seconds\":");
	REPLY_HAS(reply[2], "\"parked_clients\":2");
	REPLY_HAS(reply[3], "\"client\":\"web1\",\"stored\":false,\"parked\":\"" UUID_A "\","
		  "\"parked_pages_dropped\":3");
	REPLY_HAS(reply[4], "\"parked\":\"" UUID_B "\"");
	REPLY_HAS(reply[5], "nothing is stored, parked or recovered");
	REPLY_HAS(reply[6], "\"errno\":16");  /* attached: EBUSY */
	REPLY_HAS(reply[7], "\"parked\":[]");
	REPLY_HAS(reply[8], "\"parked_clients\":0");
	ck_assert_int_eq(store_detached_page_counts(fx.store, UUID_A, &pc), -ENOENT);
	ck_assert_int_eq(store_detached_page_counts(fx.store, UUID_B, &pc), -ENOENT);
	tmemd_client_remove(c);
}
END_TEST

static Suite *names_suite(void)
{
	Suite *s = suite_create("ctl-names");
	TCase *tc = tcase_create("names");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_live_commands_find_domains);
	tcase_add_test(tc, test_settings_follow_identity);
	tcase_add_test(tc, test_old_domid_entry_matches_that_domid);
	tcase_add_test(tc, test_grants_reach_domains_by_any_name);
	tcase_add_test(tc, test_parked_shown_and_forgotten);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(names_suite(), 0);
}
