/* SPDX-License-Identifier: MIT */
/*
 * The Xen backend (daemon/xen/) without Xen: the real state machine,
 * clients registry, workers and shared ring/dispatch path, over an
 * in-memory xenstore (fake_xs.c), memfd-backed grants and eventfd event
 * channels (fake_hyp.c), and a userspace frontend that follows the guest
 * module's handshake (fake_front.c).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client_registry.h"
#include "common/test_main.h"
#include "config.h"
#include "control_glue.h"
#include "ctl_session.h"
#include "loop.h"
#include "fake_front.h"
#include "fake_hyp.h"
#include "fake_xs.h"
#include "log.h"
#include "tmem_names.h"
#include "workers.h"
#include "xen/allow.h"
#include "xen/backend.h"
#include "xen/front.h"
#include "xen/rate.h"

enum { UNKNOWN, INITIALISING, INITWAIT, INITIALISED, CONNECTED, CLOSING, CLOSED };

static struct {
	struct tmemd_config cfg;
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmemd_clients *reg;
	struct tmemd_workers *ws;
	struct fake_xs *xs;
	struct fake_hyp *hyp;
	struct tmemd_xen_backend *be;
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
	ck_assert_int_eq(tmemd_workers_create(2, &fx.ws), 0);
	fx.xs = fake_xs_new();
	fx.hyp = fake_hyp_new();
}

static void stop_backend(void)
{
	tmemd_xen_backend_destroy(fx.be);
	fx.be = NULL;
}

static void teardown(void)
{
	stop_backend();
	tmemd_workers_destroy(fx.ws);
	tmemd_clients_destroy(fx.reg);
	tmem_policy_destroy(fx.policy);
	store_destroy(fx.store);
	tmemd_config_free(&fx.cfg);
	fake_hyp_free(fx.hyp);
	fake_xs_free(fx.xs);
}

static void start_backend(void)
{
	struct tmemd_env env = { .clients = fx.reg, .workers = fx.ws,
				 .runtime_dir = "/nonexistent", .cfg = &fx.cfg };

	ck_assert_int_eq(tmemd_xen_backend_create(&env, fake_xs_handle(fx.xs),
						  fake_hyp_handle(fx.hyp), 0, &fx.be), 0);
	tmemd_xen_backend_poll(fx.be);
}

static void poll_be(void)
{
	tmemd_xen_backend_poll(fx.be);
}

/* A domain that has gone through the whole handshake. */
static void connect_front(struct fake_front *f, uint32_t domid, const char *name)
{
	fake_front_init(f, fx.xs, fx.hyp, domid, name, 8, 4);
	fake_xs_fire(fx.xs, "@introduceDomain");
	if (!fx.be)
		start_backend();
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(f), INITWAIT);
	fake_front_publish(f);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(f), CONNECTED);
}

static int32_t new_pool(struct fake_front *f, uint32_t flags)
{
	struct tmem_req r = { .op = TMEM_OP_NEW_POOL, .flags = flags,
			      .slot = TMEM_NO_SLOT };

	return fake_front_call(f, &r);
}

static int32_t page_op(struct fake_front *f, uint32_t op, int32_t pool,
		       uint32_t index, uint32_t slot)
{
	struct tmem_req r = { .op = op, .pool_id = pool, .oid = { 7, 0, 0 },
			      .index = index, .slot = slot };

	return fake_front_call(f, &r);
}

/* NEW_POOL, PUT, GET round trip on f; the data must come back. */
static void round_trip(struct fake_front *f, uint8_t fill)
{
	int32_t pool = new_pool(f, tmem_pool_flags(TMEM_POOL_PERSIST));

	ck_assert_int_ge(pool, 0);
	memset(fake_front_slot(f, 1), fill, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(f, TMEM_OP_PUT_PAGE, pool, 3, 1), 1);
	memset(fake_front_slot(f, 2), 0, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(f, TMEM_OP_GET_PAGE, pool, 3, 2), 1);
	ck_assert_int_eq(((uint8_t *)fake_front_slot(f, 2))[100], fill);
	ck_assert(!memcmp(fake_front_slot(f, 1), fake_front_slot(f, 2), TMEM_PAGE_SIZE));
}

struct by_domid {
	uint32_t domid;
	struct tmemd_client *found;
};

static int match_domid(struct tmemd_client *c, void *ctx)
{
	struct by_domid *b = ctx;

	if (c->domid >= 0 && (uint32_t)c->domid == b->domid)
		b->found = c;
	return b->found != NULL;
}

/* The client of the domain that has id domid now (its key is uuid:U). */
static struct tmemd_client *client_of(uint32_t domid)
{
	struct by_domid b = { .domid = domid };

	tmemd_clients_for_each(fx.reg, match_domid, &b);
	return b.found;
}

/* ---- parsers ---- */

START_TEST(parse_u32_strict)
{
	uint32_t v;

	ck_assert_int_eq(tmemd_xen_parse_u32("0", 10, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(tmemd_xen_parse_u32("4294967295", UINT32_MAX, &v), 0);
	ck_assert_uint_eq(v, UINT32_MAX);
	ck_assert_int_eq(tmemd_xen_parse_u32("4294967296", UINT32_MAX, &v), -EINVAL);
	ck_assert_int_eq(tmemd_xen_parse_u32("99999999999", UINT32_MAX, &v), -EINVAL);
	ck_assert_int_eq(tmemd_xen_parse_u32("11", 10, &v), -EINVAL);
	const char *bad[] = { "", "-1", "+1", " 1", "1 ", "01", "0x10", "1e3", "abc" };

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(tmemd_xen_parse_u32(bad[i], UINT32_MAX, &v) == -EINVAL,
			      "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(allow_list)
{
	struct tmemd_xen_allow a;
	const char *why = NULL;

	ck_assert_int_eq(tmemd_xen_allow_parse("", &a, &why), 0);
	ck_assert(tmemd_xen_allow_match(&a, 9, NULL));
	ck_assert_int_eq(tmemd_xen_allow_parse("all", &a, &why), 0);
	ck_assert(tmemd_xen_allow_match(&a, 32000, "x"));
	ck_assert_int_eq(tmemd_xen_allow_parse(" 1-10 , 20,web1 ", &a, &why), 0);
	ck_assert(tmemd_xen_allow_match(&a, 1, NULL));
	ck_assert(tmemd_xen_allow_match(&a, 10, ""));
	ck_assert(!tmemd_xen_allow_match(&a, 11, "web2"));
	ck_assert(tmemd_xen_allow_match(&a, 20, NULL));
	ck_assert(tmemd_xen_allow_match(&a, 99, "web1"));
	ck_assert(!tmemd_xen_allow_match(&a, 21, NULL));
	const char *bad[] = { "0", "10-1", "1-", "-3", "32752", "1-99999", "a b",
			      "web1,,bad/name", "1-2-3" };

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		ck_assert_msg(tmemd_xen_allow_parse(bad[i], &a, &why) == -EINVAL,
			      "'%s' accepted", bad[i]);
		ck_assert_ptr_nonnull(why);
	}
}
END_TEST

START_TEST(config_key)
{
	char err[256];

	ck_assert_int_eq(tmemd_config_load_string(&fx.cfg, "t.conf",
		"[tmemd]\nxen-domains = 1-5,web1\n", err, sizeof(err)), 0);
	ck_assert_str_eq(fx.cfg.xen_domains, "1-5,web1");
}
END_TEST

/* auto picks xen only where the devices are there. */
START_TEST(transport_selection)
{
	const struct tmem_transport_ops *t;
	const char *why = NULL;
	bool xen_host = access("/dev/xen/evtchn", R_OK | W_OK) == 0 &&
			access("/dev/xen/gntdev", R_OK | W_OK) == 0;

	t = tmemd_transport_find("xen", &why);
	if (xen_host) {
		ck_assert_ptr_eq(t, &tmemd_transport_xen);
		return;
	}
	ck_assert_ptr_null(t);
	ck_assert_str_eq(why, "not usable on this host");
	t = tmemd_transport_find("auto", &why);
	ck_assert_ptr_eq(t, &tmemd_transport_local);
}
END_TEST

/* ---- the handshake ---- */

START_TEST(nodes_and_permissions)
{
	struct fake_front f;
	struct tmemd_xs_perm p[4];
	char *v = NULL;

	fake_front_init(&f, fx.xs, fx.hyp, 5, "web1", 8, 4);
	start_backend();
	/* Backend dir: dom0's, the domU may read it. */
	ck_assert_uint_eq(fake_xs_perms(fx.xs, "/local/domain/0/backend/tmem/5/0", p, 4), 2);
	ck_assert_uint_eq(p[0].domid, 0);
	ck_assert_uint_eq(p[0].perms, TMEMD_XS_PERM_NONE);
	ck_assert_uint_eq(p[1].domid, 5);
	ck_assert_uint_eq(p[1].perms, TMEMD_XS_PERM_READ);
	/* Frontend dir: the domU's, the backend may read it. */
	ck_assert_uint_eq(fake_xs_perms(fx.xs, f.dir, p, 4), 2);
	ck_assert_uint_eq(p[0].domid, 5);
	ck_assert_uint_eq(p[0].perms, TMEMD_XS_PERM_NONE);
	ck_assert_uint_eq(p[1].domid, 0);
	ck_assert_uint_eq(p[1].perms, TMEMD_XS_PERM_READ);
	/* The links and states, read as the domU reads them. */
	ck_assert_int_eq(fake_xs_read_as(fx.xs, 5, "/local/domain/5/device/tmem/0/backend", &v), 0);
	ck_assert_str_eq(v, "/local/domain/0/backend/tmem/5/0");
	free(v);
	ck_assert_int_eq(fake_xs_read_as(fx.xs, 5, "/local/domain/5/device/tmem/0/backend-id", &v), 0);
	ck_assert_str_eq(v, "0");
	free(v);
	ck_assert_int_eq(fake_xs_read_as(fx.xs, 5, "/local/domain/5/device/tmem/0/state", &v), 0);
	ck_assert_str_eq(v, "1");
	free(v);
	ck_assert_int_eq(fake_xs_read_as(fx.xs, 0, "/local/domain/0/backend/tmem/5/0/frontend", &v), 0);
	ck_assert_str_eq(v, f.dir);
	free(v);
	ck_assert_int_eq(fake_xs_read_as(fx.xs, 0, "/local/domain/0/backend/tmem/5/0/frontend-id", &v), 0);
	ck_assert_str_eq(v, "5");
	free(v);
	ck_assert_int_eq(fake_front_backend_state(&f), INITWAIT);
	/* The domU cannot touch the backend's nodes, nor another domU's. */
	ck_assert_int_eq(fake_xs_write_as(fx.xs, 5, "/local/domain/0/backend/tmem/5/0/state", "4"), -EACCES);
	ck_assert_int_eq(fake_xs_read_as(fx.xs, 6, "/local/domain/0/backend/tmem/5/0/state", &v), -EACCES);
	ck_assert_int_eq(fake_xs_read_as(fx.xs, 6, "/local/domain/5/device/tmem/0/state", &v), -EACCES);
	/* dom0 itself gets no device. */
	ck_assert(!fake_xs_exists(fx.xs, "/local/domain/0/device/tmem/0"));
	ck_assert_int_eq(tmemd_xen_backend_state(fx.be, 0), -ENOENT);
}
END_TEST

START_TEST(handshake_connects)
{
	struct fake_front f;
	struct tmemd_client *c;

	connect_front(&f, 5, "web1");
	c = client_of(5);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->domid, 5);
	/* Its key everywhere: its handle, which a restore keeps. */
	ck_assert_str_eq(c->name, "uuid:05000000-0100-0000-0000-000000000000");
	ck_assert_str_eq(c->label, "web1");     /* its xenstore name: shown only */
	ck_assert_str_eq(c->transport, "xen");
	ck_assert_uint_eq(fake_hyp_mapped_pages(fx.hyp), f.nr_pages);
	ck_assert_uint_eq(fake_hyp_bound_ports(fx.hyp), 1);
	/* The backend's line of the header was reset at connect. */
	ck_assert_uint_eq(((struct tmem_ring_hdr *)f.region)->req_event, 1);
}
END_TEST

START_TEST(round_trip_through_ring)
{
	struct fake_front f;

	connect_front(&f, 5, "web1");
	round_trip(&f, 0xa5);
	/* A request the shared path rejects comes back as an error. */
	ck_assert_int_eq(page_op(&f, TMEM_OP_GET_PAGE, 0, 1, 99), -TMEM_ERANGE);
	ck_assert_int_eq(fake_front_backend_state(&f), CONNECTED);
}
END_TEST

START_TEST(unnamed_domain_gets_domid_name)
{
	struct fake_front f;

	connect_front(&f, 9, NULL);
	ck_assert_ptr_nonnull(client_of(9));
	ck_assert_int_eq(client_of(9)->domid, 9);
}
END_TEST

START_TEST(bad_name_falls_back)
{
	struct fake_front f;

	connect_front(&f, 9, "no spaces allowed");
	ck_assert_ptr_nonnull(client_of(9));
}
END_TEST

/* A domain whose name spells another's id gets its own dom<D> name. */
START_TEST(domid_like_name_falls_back)
{
	struct fake_front f, g;

	connect_front(&f, 9, "domid:7");
	ck_assert_str_eq(client_of(9)->label, "dom9");
	connect_front(&g, 11, "7");
	ck_assert_str_eq(client_of(11)->label, "dom11");
}
END_TEST

static int32_t new_shared_pool(struct fake_front *f, const struct tmem_uuid *u)
{
	struct tmem_req r = { .op = TMEM_OP_NEW_POOL, .flags = tmem_pool_flags(TMEM_POOL_SHARED),
			      .oid = { u->lo, u->hi, 0 }, .slot = TMEM_NO_SLOT };

	return fake_front_call(f, &r);
}

/*
 * The store matches a shared pool's grants against a client's key, a
 * domain's uuid:U (issue 25): a grant under the key reaches domain 5
 * whatever its xenstore name, one under a name alone does not.  The
 * control glue turns grants to an xl name or domid:N into grants to the
 * key when the domain attaches (tests/daemon/test_ctl_names.c).
 */
START_TEST(key_grant_reaches_domain)
{
	const struct tmem_uuid by_id = { 0x55, 1 }, by_name = { 0x66, 1 };
	struct tmem_client_settings s;
	struct fake_front f;
	char err[256];

	ck_assert_int_eq(tmemd_config_load_string(&fx.cfg, "t.conf", "[client domid:5]\nweight = 7\n",
						  err, sizeof(err)), 0);
	ck_assert_int_eq(store_shared_auth(fx.store, &by_id, "uuid:05000000-0100-0000-0000-000000000000", true), 0);
	ck_assert_int_eq(store_shared_auth(fx.store, &by_name, "web1", true), 0);
	connect_front(&f, 5, "web1");
	ck_assert_int_ge(new_shared_pool(&f, &by_id), 0);
	ck_assert_int_eq(new_shared_pool(&f, &by_name), -TMEM_EPERM);
	tmem_policy_client_get(client_of(5)->pc, &s);
	ck_assert_uint_eq(s.weight, 7);
}
END_TEST

/*
 * Issue 19 item 11: local clients and domains no longer share one
 * namespace.  Before, a local client called "dom9" kept unnamed domain 9
 * out (its name and its fallback dom9 were both taken), and one called
 * "web1" took domain 5's name, so a grant to that name reached it.
 */
START_TEST(local_client_cannot_take_domain_identity)
{
	const struct tmem_uuid u = { 0x77, 1 };
	struct tmemd_client *dom9, *web1;
	struct fake_front f, g;

	ck_assert_int_eq(tmemd_client_add(fx.reg, "dom9", "local", -1, &dom9), 0);
	ck_assert_int_eq(tmemd_client_add(fx.reg, "web1", "local", -1, &web1), 0);
	connect_front(&f, 9, NULL);
	connect_front(&g, 5, "web1");
	ck_assert_int_eq(store_shared_auth(fx.store, &u, client_of(5)->name, true), 0);
	ck_assert_ptr_nonnull(client_of(9));
	ck_assert_ptr_ne(client_of(9), dom9);
	ck_assert_str_eq(client_of(5)->label, "web1");
	ck_assert_int_eq(store_new_pool(web1->sc, tmem_pool_flags(TMEM_POOL_SHARED), &u), -EPERM);
	ck_assert_int_ge(new_shared_pool(&g, &u), 0);
	/* A local client cannot register as a domain at all. */
	ck_assert_int_eq(tmemd_client_add(fx.reg, "domid:5", "local", -1, &web1), -EINVAL);
	ck_assert_int_eq(tmemd_client_add(fx.reg, "5", "local", -1, &web1), -EINVAL);
}
END_TEST

/* ---- the control server over domains ---- */

/*
 * Issue 25: a domain takes the settings of every principal that names
 * it, the most specific last: [client domid:5], then its xl name, then
 * its uuid:U.  (Before, [client web1] was the local client's only.)
 */
START_TEST(sections_by_id_name_and_uuid)
{
	static const char conf[] = "[client domid:5]\nweight = 9\nephemeral-max = 8M\n"
				   "[client web1]\nweight = 11\npersistent-max = 4M\n"
				   "[client uuid:05000000-0100-0000-0000-000000000000]\n"
				   "persistent-max = 2M\n";
	struct tmem_client_settings s;
	struct fake_front f;
	char err[256];

	ck_assert_int_eq(tmemd_config_load_string(&fx.cfg, "t.conf", conf, err, sizeof(err)), 0);
	connect_front(&f, 5, "web1");
	tmem_policy_client_get(client_of(5)->pc, &s);
	ck_assert_uint_eq(s.ephemeral_max, 2048);   /* domid:5's */
	ck_assert_uint_eq(s.weight, 11);            /* the name's over domid:5's */
	ck_assert_uint_eq(s.persistent_max, 512);   /* the uuid's over the name's */
}
END_TEST

/*
 * Through the control server: CLIENT "5" is domain 5 (issue 19 item 11)
 * and, since issue 25, "web1" is the domain whose xl name is web1, as
 * xl tmem-* took it.  What is set for it by domid is stored under its
 * key, uuid:U, so it never reaches a later domain 5.
 */
START_TEST(control_names_domains_by_domid)
{
	static const char *const reqs[] = {
		"{\"version\":1,\"cmd\":\"set\",\"args\":{\"client\":\"5\",\"weight\":7}}",
		"{\"version\":1,\"cmd\":\"freeze\",\"args\":{\"client\":\"web1\"}}",
		"{\"version\":1,\"cmd\":\"list\",\"args\":{\"client\":\"domid:5\"}}",
		"{\"version\":1,\"cmd\":\"shared-auth\",\"args\":{\"client\":\"domid:5\","
		"\"uuid\":\"00000000-0000-0088-0100-000000000000\"}}",
		"{\"version\":1,\"cmd\":\"flush\",\"args\":{\"client\":\"web1\"}}",
	};
	const struct tmem_uuid u = { 0x8800000000000000ull, 1 };
	char dir[] = "/tmp/xen-unit-ctl.XXXXXX", reply[5][512], path[96], text[1024];
	struct tmem_client_settings s;
	struct fake_front f;
	FILE *st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	connect_front(&f, 5, "web1");
	control_session(dir, fx.reg, &fx.cfg, NULL, reqs, 5, reply);
	REPLY_HAS(reply[0], "\"client\":\"uuid:05000000-0100-0000-0000-000000000000\"");
	REPLY_HAS(reply[0], "\"connected\":true");
	REPLY_HAS(reply[1], "\"client\":\"uuid:05000000-0100-0000-0000-000000000000\"");
	REPLY_HAS(reply[1], "\"connected\":true");
	REPLY_HAS(reply[2], "\"client\":\"uuid:05000000-0100-0000-0000-000000000000\",\"name\":\"web1\",\"domid\":5");
	REPLY_HAS(reply[3], "\"authorised\":true");
	REPLY_HAS(reply[4], "\"client\":\"uuid:05000000-0100-0000-0000-000000000000\",\"evicted_pages\":0");
	tmem_policy_client_get(client_of(5)->pc, &s);
	ck_assert_uint_eq(s.weight, 7);
	ck_assert(s.frozen);
	ck_assert_int_ge(new_shared_pool(&f, &u), 0);
	snprintf(path, sizeof(path), "%s/state/state.json", dir);
	st = fopen(path, "r");
	ck_assert_ptr_nonnull(st);
	text[fread(text, 1, sizeof(text) - 1, st)] = '\0';
	fclose(st);
	ck_assert_msg(strstr(text, "\"uuid:05000000-0100-0000-0000-000000000000\": {") && !strstr(text, "\"web1\"") &&
		      !strstr(text, "\"domid:5\""), "%s", text);
	unlink(path);
	snprintf(path, sizeof(path), "%s/state", dir);
	rmdir(path);
	rmdir(dir);
}
END_TEST

START_TEST(commit_retried)
{
	struct fake_front f;

	fake_front_init(&f, fx.xs, fx.hyp, 5, "web1", 8, 4);
	fake_xs_fail_commits(fx.xs, 3);
	start_backend();
	ck_assert_int_eq(fake_front_backend_state(&f), INITWAIT);
	fake_front_publish(&f);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&f), CONNECTED);
}
END_TEST

/* Each kind of bad value a guest can publish; _i indexes this table. */
static const struct {
	const char *node, *value;
} bad_values[] = {
	{ "protocol-version", "2" },
	{ "protocol-version", "one" },
	{ "ring-entries", "3" },          /* not a power of two */
	{ "ring-entries", "4096" },       /* too many */
	{ "ring-entries", "08" },         /* leading zero */
	{ "ring-entries", " 8" },
	{ "nr-slots", "0" },
	{ "nr-slots", "-4" },
	{ "nr-slots", "1025" },
	{ "nr-slots", "5" },              /* ring-pages no longer matches */
	{ "ring-pages", "3" },
	{ "ring-pages", "100000" },
	{ "ring-pages", "" },
	{ "ring-ref1", "x" },
	{ "ring-ref0", "4294967296" },
	{ "ring-ref2", "4000" },          /* not granted: the map fails */
	{ "ring-ref0", "5" },             /* never granted */
	{ "event-channel", "0" },
	{ "event-channel", "63" },        /* not this domain's port */
	{ "event-channel", "1.5" },
	{ "state", "9" },
	{ "state", "connected" },
};

START_TEST(bad_value_cuts_off)
{
	struct fake_front bad, good;

	fake_front_init(&bad, fx.xs, fx.hyp, 5, "bad", 8, 4);
	connect_front(&good, 6, "good");
	ck_assert_int_eq(fake_front_backend_state(&bad), INITWAIT);
	fake_front_publish(&bad);
	/* The frontend changes one value after publishing, then says
	 * Initialised again (the backend reads only on Initialised). */
	ck_assert_int_eq(fake_front_write(&bad, bad_values[_i].node, bad_values[_i].value), 0);
	if (strcmp(bad_values[_i].node, "state"))
		fake_front_set_state(&bad, INITIALISED);
	poll_be();
	ck_assert_msg(fake_front_backend_state(&bad) == CLOSED, "%s = '%s' accepted",
		      bad_values[_i].node, bad_values[_i].value);
	ck_assert_ptr_null(client_of(5));
	/* Only the good domain's ring is mapped and bound. */
	ck_assert_uint_eq(fake_hyp_mapped_pages(fx.hyp), good.nr_pages);
	ck_assert_uint_eq(fake_hyp_bound_ports(fx.hyp), 1);
	/* It stays cut off, whatever it writes now. */
	fake_front_publish(&bad);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&bad), CLOSED);
	/* The other domain carries on. */
	round_trip(&good, 0x3c);
}
END_TEST

START_TEST(missing_value_cuts_off)
{
	struct fake_front f;

	fake_front_init(&f, fx.xs, fx.hyp, 5, "web1", 8, 4);
	start_backend();
	fake_front_set_state(&f, INITIALISED); /* nothing published */
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&f), CLOSED);
	ck_assert_uint_eq(fake_hyp_mapped_pages(fx.hyp), 0);
}
END_TEST

START_TEST(bad_header_cuts_off)
{
	struct fake_front f;

	fake_front_init(&f, fx.xs, fx.hyp, 5, "web1", 8, 4);
	start_backend();
	fake_front_publish(&f);
	((struct tmem_ring_hdr *)f.region)->nr_slots = 2; /* disagrees */
	fake_front_set_state(&f, INITIALISED);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&f), CLOSED);
	ck_assert_uint_eq(fake_hyp_mapped_pages(fx.hyp), 0);
	ck_assert_uint_eq(fake_hyp_bound_ports(fx.hyp), 0);
}
END_TEST

/* ---- teardown and reconnect ---- */

START_TEST(domain_death_tears_down)
{
	struct fake_front f, other;
	uint32_t id;

	connect_front(&f, 5, "web1");
	connect_front(&other, 6, "web2");
	round_trip(&f, 0x11);
	id = store_client_id(client_of(5)->sc);
	(void)id;
	fake_hyp_set_dying(fx.hyp, 5);
	fake_xs_fire(fx.xs, "@releaseDomain");
	poll_be();
	ck_assert_ptr_null(client_of(5));
	ck_assert_int_eq(tmemd_xen_backend_state(fx.be, 5), -ENOENT);
	ck_assert(!fake_xs_exists(fx.xs, "/local/domain/0/backend/tmem/5"));
	ck_assert(!fake_xs_exists(fx.xs, "/local/domain/5/device/tmem/0"));
	ck_assert_uint_eq(fake_hyp_mapped_pages(fx.hyp), other.nr_pages);
	ck_assert_uint_eq(fake_hyp_bound_ports(fx.hyp), 1);
	/* Then the domain is gone altogether: nothing more to do. */
	fake_hyp_remove_domain(fx.hyp, 5);
	fake_xs_fire(fx.xs, "@releaseDomain");
	poll_be();
	ck_assert_ptr_nonnull(client_of(6));
	round_trip(&other, 0x22);
}
END_TEST

/* xl destroy: the domain is dying and its xenstore dir removed; the
 * backend notices through its frontend watch, before any @releaseDomain. */
START_TEST(dying_domain_seen_through_xenstore)
{
	struct fake_front f;

	connect_front(&f, 5, "web1");
	fake_hyp_set_dying(fx.hyp, 5);
	ck_assert_int_eq(fake_xs_rm_as(fx.xs, 0, "/local/domain/5"), 0);
	poll_be();
	ck_assert_ptr_null(client_of(5));
	ck_assert_uint_eq(fake_hyp_mapped_pages(fx.hyp), 0);
	ck_assert_uint_eq(fake_hyp_bound_ports(fx.hyp), 0);
	ck_assert(!fake_xs_exists(fx.xs, "/local/domain/0/backend/tmem/5"));
}
END_TEST

/* A live guest removing its own device dir is not a death. */
START_TEST(live_guest_removing_its_dir)
{
	struct fake_front f;

	connect_front(&f, 5, "web1");
	ck_assert_int_eq(fake_xs_rm_as(fx.xs, 5, f.dir), 0);
	poll_be();
	ck_assert_ptr_nonnull(client_of(5));
	round_trip(&f, 0x42);
}
END_TEST

START_TEST(frontend_closing_then_reconnect)
{
	struct fake_front f;
	int32_t pool;

	connect_front(&f, 5, "web1");
	pool = new_pool(&f, tmem_pool_flags(TMEM_POOL_PERSIST));
	memset(fake_front_slot(&f, 0), 0x77, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(&f, TMEM_OP_PUT_PAGE, pool, 1, 0), 1);
	fake_front_set_state(&f, CLOSING);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&f), CLOSING);
	ck_assert_ptr_null(client_of(5));
	ck_assert_uint_eq(fake_hyp_mapped_pages(fx.hyp), 0);
	ck_assert_uint_eq(fake_hyp_bound_ports(fx.hyp), 0);
	fake_front_set_state(&f, CLOSED);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&f), INITWAIT);
	/* The module goes through the handshake again (Initialising,
	 * then publishes): a new client, whose old pools are gone. */
	fake_front_set_state(&f, INITIALISING);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&f), INITWAIT);
	fake_front_publish(&f);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&f), CONNECTED);
	ck_assert_ptr_nonnull(client_of(5));
	ck_assert_int_eq(page_op(&f, TMEM_OP_GET_PAGE, pool, 1, 0), -TMEM_ENOENT);
	round_trip(&f, 0x5a);
}
END_TEST

/* xen/rate.h: a burst, then one per interval; waiting refills. */
START_TEST(reconnect_rate_bucket)
{
	struct xen_rate r = { 0 };
	uint64_t t = 5000000000ull;

	for (unsigned i = 0; i < XEN_RECONNECT_BURST; i++)
		ck_assert_uint_eq(xen_rate_take(&r, t), 0);
	ck_assert_uint_eq(xen_rate_take(&r, t), XEN_RECONNECT_INTERVAL_NS);
	ck_assert_uint_eq(xen_rate_take(&r, t + XEN_RECONNECT_INTERVAL_NS / 2),
			  XEN_RECONNECT_INTERVAL_NS / 2);
	ck_assert_uint_eq(xen_rate_take(&r, t + XEN_RECONNECT_INTERVAL_NS), 0);
	ck_assert_uint_ne(xen_rate_take(&r, t + XEN_RECONNECT_INTERVAL_NS), 0);
	t += 100 * XEN_RECONNECT_INTERVAL_NS; /* idle: a full burst again */
	for (unsigned i = 0; i < XEN_RECONNECT_BURST; i++)
		ck_assert_uint_eq(xen_rate_take(&r, t), 0);
}
END_TEST

/*
 * Issue 19 item 13: a guest toggling its state between Closed and
 * Initialised made tmemd map and unmap its grants each time, without
 * limit.  Now past the burst a connect waits; the guest still gets
 * connected once the wait is over.
 */
START_TEST(state_toggling_rate_limited)
{
	struct fake_front f;
	unsigned maps;

	connect_front(&f, 5, "web1");
	maps = fake_hyp_map_calls(fx.hyp);
	for (int i = 0; i < 50; i++) {
		fake_front_set_state(&f, CLOSED);
		poll_be();
		ck_assert_int_eq(fake_front_backend_state(&f), INITWAIT);
		fake_front_publish(&f);
		poll_be();
	}
	ck_assert_msg(fake_hyp_map_calls(fx.hyp) - maps <= XEN_RECONNECT_BURST,
		      "%u maps for 50 reconnects", fake_hyp_map_calls(fx.hyp) - maps);
	ck_assert_int_eq(fake_front_backend_state(&f), INITWAIT);
	for (int i = 0; i < 30 && fake_front_backend_state(&f) != CONNECTED; i++) {
		usleep(100000);
		poll_be();
	}
	ck_assert_int_eq(fake_front_backend_state(&f), CONNECTED);
	round_trip(&f, 0x3c);
}
END_TEST

START_TEST(frontend_closed_directly)
{
	struct fake_front f;

	connect_front(&f, 5, "web1");
	fake_front_set_state(&f, CLOSED); /* module unloaded */
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&f), INITWAIT);
	ck_assert_ptr_null(client_of(5));
	ck_assert_uint_eq(fake_hyp_mapped_pages(fx.hyp), 0);
}
END_TEST

START_TEST(garbage_on_ring_cuts_off_one)
{
	struct fake_front bad, good;
	struct tmem_ring_hdr *h;
	uint64_t one = 1;

	connect_front(&bad, 5, "bad");
	connect_front(&good, 6, "good");
	round_trip(&bad, 1);
	h = bad.region;
	/* A producer index far ahead of what was answered. */
	tmem_store_release(&h->req_prod, h->req_prod + 1000);
	ck_assert_int_eq(write(fake_hyp_port_kick_fd(fx.hyp, 5, bad.port), &one, sizeof(one)), 8);
	for (int i = 0; i < 500 && fake_front_backend_state(&bad) != CLOSED; i++) {
		usleep(10000);
		poll_be();
	}
	ck_assert_int_eq(fake_front_backend_state(&bad), CLOSED);
	ck_assert_ptr_null(client_of(5));
	ck_assert_uint_eq(fake_hyp_bound_ports(fx.hyp), 1);
	round_trip(&good, 2);
}
END_TEST

START_TEST(allow_list_limits_domains)
{
	struct fake_front a, b, c;

	snprintf(fx.cfg.xen_domains, sizeof(fx.cfg.xen_domains), "6, web3");
	fake_front_init(&a, fx.xs, fx.hyp, 5, "web1", 8, 4);
	fake_front_init(&b, fx.xs, fx.hyp, 6, "web2", 8, 4);
	fake_front_init(&c, fx.xs, fx.hyp, 7, "web3", 8, 4);
	start_backend();
	ck_assert(!fake_xs_exists(fx.xs, a.dir));
	ck_assert_int_eq(tmemd_xen_backend_state(fx.be, 5), -ENOENT);
	ck_assert_int_eq(fake_front_backend_state(&b), INITWAIT);
	ck_assert_int_eq(fake_front_backend_state(&c), INITWAIT);
	/* A reload with a bad list keeps the one in force. */
	snprintf(fx.cfg.xen_domains, sizeof(fx.cfg.xen_domains), "0-");
	fake_xs_fire(fx.xs, "@introduceDomain");
	poll_be();
	ck_assert(!fake_xs_exists(fx.xs, a.dir));
	/* A reload that allows 5: it gets its device at the next scan. */
	snprintf(fx.cfg.xen_domains, sizeof(fx.cfg.xen_domains), "1-10");
	fake_xs_fire(fx.xs, "@introduceDomain");
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&a), INITWAIT);
}
END_TEST

START_TEST(bad_allow_list_stops_start)
{
	struct tmemd_env env = { .clients = fx.reg, .workers = fx.ws,
				 .runtime_dir = "/nonexistent", .cfg = &fx.cfg };
	struct fake_front f;

	fake_front_init(&f, fx.xs, fx.hyp, 5, "web1", 8, 4);
	snprintf(fx.cfg.xen_domains, sizeof(fx.cfg.xen_domains), "1-5,bad name");
	ck_assert_int_eq(tmemd_xen_backend_create(&env, fake_xs_handle(fx.xs),
						  fake_hyp_handle(fx.hyp), 0, &fx.be), -EINVAL);
	ck_assert_ptr_null(fx.be);
	ck_assert(!fake_xs_exists(fx.xs, f.dir));
	ck_assert_uint_eq(fake_xs_nr_watches(fx.xs), 0);
}
END_TEST

START_TEST(restart_keeps_frontend_state)
{
	struct fake_front f;
	char *v = NULL;

	connect_front(&f, 5, "web1");
	fake_front_set_state(&f, CONNECTED);
	poll_be();
	stop_backend();
	/* tmemd stopping: Closed, the ring unmapped, the watches gone. */
	ck_assert_int_eq(fake_front_backend_state(&f), CLOSED);
	ck_assert_uint_eq(fake_hyp_mapped_pages(fx.hyp), 0);
	ck_assert_uint_eq(fake_xs_nr_watches(fx.xs), 0);
	ck_assert_ptr_null(client_of(5));
	fake_front_set_state(&f, CLOSED); /* the module saw it */
	start_backend();
	/* The frontend's own state is left alone; the backend waits. */
	ck_assert_int_eq(fake_xs_read_as(fx.xs, 5, "/local/domain/5/device/tmem/0/state", &v), 0);
	ck_assert_str_eq(v, "6");
	free(v);
	ck_assert_int_eq(fake_front_backend_state(&f), INITWAIT);
	fake_front_set_state(&f, INITIALISING);
	fake_front_publish(&f);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(&f), CONNECTED);
	round_trip(&f, 0x99);
}
END_TEST

/* A node of domain domid's backend dir, as the domain reads it. */
static char *be_node(uint32_t domid, const char *name)
{
	char path[128], *v = NULL;

	snprintf(path, sizeof(path), "/local/domain/0/backend/tmem/%u/0/%s", domid, name);
	ck_assert_int_eq(fake_xs_read_as(fx.xs, domid, path, &v), 0);
	return v;
}

/* The domain's resumed-pools must read pools; returns its session. */
static char *session_after(uint32_t domid, const char *pools)
{
	char *v = be_node(domid, "resumed-pools");

	ck_assert_str_eq(v, pools);
	free(v);
	return be_node(domid, "session");
}

/* tmemd stops (its clients kept, as at any stop or after a kill -9 with
 * a kept arena) and starts again, the frontends seeing Closed. */
static void restart_keeping(void)
{
	tmemd_clients_keep_on_stop(fx.reg);
	stop_backend();
	tmemd_clients_destroy(fx.reg);
	ck_assert_int_eq(tmemd_clients_create(fx.store, fx.policy, &fx.cfg, &fx.reg), 0);
}

/* The frontend's side of a reconnect after the backend went InitWait. */
static void reconnect_front(struct fake_front *f)
{
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(f), INITWAIT);
	fake_front_set_state(f, INITIALISING);
	fake_front_publish(f);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(f), CONNECTED);
}

/*
 * A domain that lives on while tmemd restarts gets its client back: the
 * same pool id with its page, "resumed-pools" naming the pool and
 * "session" unchanged, so the frontend maps its pools back.
 */
START_TEST(restart_resumes_live_domain)
{
	struct tmem_store_info si;
	struct fake_front f;
	char *session, *v;
	int32_t pool;

	connect_front(&f, 5, "web1");
	fake_front_set_state(&f, CONNECTED);
	session = session_after(5, "0");
	ck_assert_uint_eq(strlen(session), 16);
	ck_assert_str_ne(session, "0000000000000000");
	ck_assert_int_eq(new_pool(&f, tmem_pool_flags(TMEM_POOL_PERSIST)), 0);
	pool = new_pool(&f, tmem_pool_flags(TMEM_POOL_PERSIST));
	ck_assert_int_eq(pool, 1);
	memset(fake_front_slot(&f, 1), 0x5a, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(&f, TMEM_OP_PUT_PAGE, pool, 3, 1), 1);

	restart_keeping();
	start_backend();
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 1);   /* kept, not freed */
	reconnect_front(&f);
	v = session_after(5, "0x3");
	ck_assert_str_eq(v, session);
	free(v);
	memset(fake_front_slot(&f, 2), 0, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(&f, TMEM_OP_GET_PAGE, pool, 3, 2), 1);
	ck_assert_int_eq(((uint8_t *)fake_front_slot(&f, 2))[7], 0x5a);
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 0);
	ck_assert_uint_eq(si.clients_reattached, 1);
	free(session);
}
END_TEST

/*
 * Issue 19 item 11 across a restart: domain 5 ("web1") is kept by its
 * domid, so a local client that connects as "web1" before the domain is
 * back gets a client of its own, and the domain its pages and label.
 * Before, both were the store client "web1", and the newcomer destroyed
 * the domain's kept persistent pages.
 */
START_TEST(restart_local_name_cannot_take_kept_domain)
{
	struct tmemd_client *local;
	struct fake_front f;
	int32_t pool;

	connect_front(&f, 5, "web1");
	fake_front_set_state(&f, CONNECTED);
	pool = new_pool(&f, tmem_pool_flags(TMEM_POOL_PERSIST));
	ck_assert_int_ge(pool, 0);
	memset(fake_front_slot(&f, 1), 0x6b, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(&f, TMEM_OP_PUT_PAGE, pool, 4, 1), 1);

	restart_keeping();
	start_backend();
	ck_assert_int_eq(tmemd_client_add(fx.reg, "web1", "local", -1, &local), 0);
	reconnect_front(&f);
	memset(fake_front_slot(&f, 2), 0, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(&f, TMEM_OP_GET_PAGE, pool, 4, 2), 1);
	ck_assert_int_eq(((uint8_t *)fake_front_slot(&f, 2))[9], 0x6b);
	ck_assert_str_eq(client_of(5)->label, "web1");
	ck_assert_ptr_ne(client_of(5), local);
}
END_TEST

/*
 * While tmemd was down domain 5 was destroyed and domain 6 destroyed
 * and its domid reused by a new domain: at start both clients are freed
 * (a local client's stays for it to claim), and the new domain 6 starts
 * empty under a new session.
 */
START_TEST(restart_frees_gone_domains)
{
	static const struct tmem_ident local = { { 'L', 1 } };
	struct tmem_store_info si;
	struct tmem_client *lc;
	struct fake_front f5, f6, g6;
	char *old_session, *v;

	connect_front(&f5, 5, "web1");
	connect_front(&f6, 6, "web2");
	fake_front_set_state(&f5, CONNECTED);
	fake_front_set_state(&f6, CONNECTED);
	ck_assert_int_ge(new_pool(&f5, tmem_pool_flags(TMEM_POOL_PERSIST)), 0);
	ck_assert_int_eq(new_pool(&f6, tmem_pool_flags(TMEM_POOL_PERSIST)), 0);
	memset(fake_front_slot(&f6, 1), 0x66, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(&f6, TMEM_OP_PUT_PAGE, 0, 3, 1), 1);
	old_session = be_node(6, "session");
	ck_assert_int_eq(store_client_create_ident(fx.store, "loc", &local, &lc), 0);
	store_client_detach(lc);
	restart_keeping();
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 3);
	fake_hyp_remove_domain(fx.hyp, 5);
	fake_hyp_remove_domain(fx.hyp, 6);
	fake_front_init(&g6, fx.xs, fx.hyp, 6, "web2", 8, 4);
	start_backend();
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 1);
	ck_assert_uint_eq(si.clients_expired, 2);
	ck_assert_int_eq(store_client_claim(fx.store, "loc", &local, &lc), 0);
	reconnect_front(&g6);
	v = session_after(6, "0");
	ck_assert_str_ne(v, old_session);
	free(v);
	free(old_session);
	ck_assert_int_eq(new_pool(&g6, tmem_pool_flags(TMEM_POOL_PERSIST)), 0);
	ck_assert_int_eq(page_op(&g6, TMEM_OP_GET_PAGE, 0, 3, 2), 0);
}
END_TEST


/* ---- save, restore and migration (issue 25) ---- */

/* Domain domid, connected as name, with one persistent pool holding a
 * page of fill at index 3; returns its session. */
static char *guest_with_page(struct fake_front *f, uint32_t domid, const char *name,
			     uint8_t fill)
{
	connect_front(f, domid, name);
	fake_front_set_state(f, CONNECTED);
	ck_assert_int_eq(new_pool(f, tmem_pool_flags(TMEM_POOL_PERSIST)), 0);
	ck_assert_int_eq(new_pool(f, tmem_pool_flags(0)), 1); /* an ephemeral one, dropped when parked */
	memset(fake_front_slot(f, 1), fill, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(f, TMEM_OP_PUT_PAGE, 0, 3, 1), 1);
	ck_assert_int_eq(page_op(f, TMEM_OP_PUT_PAGE, 1, 3, 1), 1);
	return be_node(domid, "session");
}

/* The toolstack ends domid after it shut down for reason: shut down
 * first (xenstored fires @releaseDomain), then destroyed. */
static void end_domain(uint32_t domid, unsigned reason)
{
	fake_hyp_set_shutdown(fx.hyp, domid, reason);
	fake_xs_fire(fx.xs, "@releaseDomain");
	poll_be();
	ck_assert_ptr_nonnull(client_of(domid)); /* shut down, still there */
	fake_hyp_set_dying(fx.hyp, domid);
	fake_xs_fire(fx.xs, "@releaseDomain");
	poll_be();
	fake_hyp_remove_domain(fx.hyp, domid);
	fake_xs_fire(fx.xs, "@releaseDomain");
	poll_be();
	ck_assert_ptr_null(client_of(domid));
}

/* A new domain domid with the handle of the domain that had old. */
static void restored_domain(struct fake_front *f, uint32_t domid, const char *name,
			    const uint8_t handle[TMEMD_XEN_HANDLE_LEN])
{
	fake_front_init(f, fx.xs, fx.hyp, domid, name, 8, 4);
	fake_hyp_set_handle(fx.hyp, domid, handle);
	fake_xs_fire(fx.xs, "@introduceDomain");
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(f), INITWAIT);
	fake_front_publish(f);
	poll_be();
	ck_assert_int_eq(fake_front_backend_state(f), CONNECTED);
}

static struct tmemd_park_stats park_stats(void)
{
	struct tmemd_park_stats ps;

	tmemd_clients_park_stats(fx.reg, &ps);
	return ps;
}

static bool marker_exists(const uint8_t handle[TMEMD_XEN_HANDLE_LEN])
{
	struct tmem_uuid u;
	char text[TMEM_UUID_TEXT], path[128], *v = NULL;
	bool there;

	memcpy(&u.lo, handle, 8);
	memcpy(&u.hi, handle + 8, 8);
	tmem_uuid_format(&u, text);
	snprintf(path, sizeof(path), "/tool/tmemd/parked/%s", text);
	there = fake_xs_read_as(fx.xs, 0, path, &v) == 0;
	free(v);
	return there;
}

/* The page at pool 0, index 3 must read fill (hit) or miss (fill 0). */
static void expect_page(struct fake_front *f, uint8_t fill)
{
	memset(fake_front_slot(f, 2), 0, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(f, TMEM_OP_GET_PAGE, 0, 3, 2), fill ? 1 : 0);
	if (fill)
		ck_assert_int_eq(((uint8_t *)fake_front_slot(f, 2))[77], fill);
}

/* xl save + xl restore: the suspended domain's persistent pool is
 * parked, and the restored one (new domid, same UUID) gets it back with
 * the same id, page and session; the ephemeral pool is dropped. */
START_TEST(suspend_parks_restore_claims)
{
	uint8_t handle[TMEMD_XEN_HANDLE_LEN];
	struct tmem_store_info si;
	struct fake_front f, g;
	char *session, *v;

	session = guest_with_page(&f, 5, "web1", 0x5e);
	fake_hyp_get_handle(fx.hyp, 5, handle);
	end_domain(5, TMEMD_XEN_SHUTDOWN_SUSPEND);
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 1);
	ck_assert_uint_eq(park_stats().parked, 1);
	ck_assert_uint_eq(park_stats().pools_parked, 1);
	ck_assert_uint_eq(park_stats().pages_parked, 1);
	ck_assert(marker_exists(handle));

	restored_domain(&g, 9, "web1", handle);
	v = session_after(9, "0x1");
	ck_assert_str_eq(v, session);
	free(v);
	expect_page(&g, 0x5e);
	ck_assert_str_eq(client_of(9)->label, "web1");
	ck_assert_uint_eq(park_stats().parked, 0);
	ck_assert_uint_eq(park_stats().pools_claimed, 1);
	ck_assert_uint_eq(park_stats().pages_claimed, 1);
	ck_assert(!marker_exists(handle));
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 0);
	free(session);
}
END_TEST

/* A poweroff (or a crash, or xl destroy) ends the guest for good: its
 * pages are freed at once, and a later domain with its UUID starts empty. */
START_TEST(poweroff_frees)
{
	static const unsigned reasons[] = { TMEMD_XEN_SHUTDOWN_POWEROFF,
					    TMEMD_XEN_SHUTDOWN_CRASH,
					    TMEMD_XEN_SHUTDOWN_REBOOT };
	uint8_t handle[TMEMD_XEN_HANDLE_LEN];
	struct tmem_store_info si;
	struct fake_front f, g;
	char *session, *v;

	session = guest_with_page(&f, 5, "web1", 0x11);
	fake_hyp_get_handle(fx.hyp, 5, handle);
	end_domain(5, reasons[_i]);
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 0);
	ck_assert_uint_eq(park_stats().parked, 0);
	ck_assert(!marker_exists(handle));
	restored_domain(&g, 9, "web1", handle);
	v = session_after(9, "0");
	ck_assert_str_ne(v, session);
	free(v);
	ck_assert_int_eq(new_pool(&g, tmem_pool_flags(TMEM_POOL_PERSIST)), 0);
	expect_page(&g, 0);
	free(session);
}
END_TEST

/* xl destroy of a running domain: no shutdown at all, freed. */
START_TEST(destroy_frees)
{
	struct tmem_store_info si;
	struct fake_front f;
	char *session = guest_with_page(&f, 5, "web1", 0x12);

	fake_hyp_set_dying(fx.hyp, 5);
	fake_xs_fire(fx.xs, "@releaseDomain");
	poll_be();
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 0);
	ck_assert_uint_eq(park_stats().parked, 0);
	free(session);
}
END_TEST

/* Pages parked for one UUID go to no other domain: not to one with
 * another UUID (nor to a new domain that reuses the domid). */
START_TEST(parked_refused_to_other_uuid)
{
	uint8_t handle[TMEMD_XEN_HANDLE_LEN], other[TMEMD_XEN_HANDLE_LEN];
	struct fake_front f, g, h;
	char *session, *v;

	session = guest_with_page(&f, 5, "web1", 0x21);
	fake_hyp_get_handle(fx.hyp, 5, handle);
	end_domain(5, TMEMD_XEN_SHUTDOWN_SUSPEND);
	memcpy(other, handle, sizeof(other));
	other[15] ^= 1;
	restored_domain(&g, 9, "web1", other);        /* same name, other UUID */
	v = session_after(9, "0");
	ck_assert_str_ne(v, session);
	free(v);
	ck_assert_int_eq(new_pool(&g, tmem_pool_flags(TMEM_POOL_PERSIST)), 0);
	expect_page(&g, 0);
	connect_front(&h, 5, "web1");                  /* domid 5 reused, new UUID */
	v = session_after(5, "0");
	ck_assert_str_ne(v, session);
	free(v);
	ck_assert_int_eq(new_pool(&h, tmem_pool_flags(TMEM_POOL_PERSIST)), 0);
	expect_page(&h, 0);
	ck_assert_uint_eq(park_stats().parked, 1);      /* still waits for its own */
	ck_assert(marker_exists(handle));
	free(session);
}
END_TEST

/* xl migrate to this host: the new domain (same UUID) connects while the
 * old one is suspended and not yet destroyed; it gets the pages. */
START_TEST(migration_here_claims_from_suspended_twin)
{
	uint8_t handle[TMEMD_XEN_HANDLE_LEN];
	struct fake_front f, g;
	char *session, *v;

	session = guest_with_page(&f, 5, "web1", 0x31);
	fake_hyp_get_handle(fx.hyp, 5, handle);
	fake_hyp_set_shutdown(fx.hyp, 5, TMEMD_XEN_SHUTDOWN_SUSPEND);
	fake_xs_fire(fx.xs, "@releaseDomain");
	poll_be();
	restored_domain(&g, 9, "web1--incoming", handle);
	v = session_after(9, "0x1");
	ck_assert_str_eq(v, session);
	free(v);
	expect_page(&g, 0x31);
	ck_assert_uint_eq(park_stats().pools_claimed, 1);
	/* The source goes; the destination keeps its pages. */
	fake_hyp_set_dying(fx.hyp, 5);
	fake_xs_fire(fx.xs, "@releaseDomain");
	poll_be();
	fake_hyp_remove_domain(fx.hyp, 5);
	fake_xs_fire(fx.xs, "@releaseDomain");
	poll_be();
	expect_page(&g, 0x31);
	/* xl drops "--incoming": the label follows the rename. */
	ck_assert_int_eq(fake_xs_write_as(fx.xs, 0, "/local/domain/9/name", "web1"), 0);
	fake_xs_fire(fx.xs, "/local/domain/9/name");
	poll_be();
	ck_assert_str_eq(client_of(9)->label, "web1");
	free(session);
}
END_TEST

/* xl rename: the client is shown by the new name and takes its
 * settings; a name no section names takes the defaults again. */
START_TEST(renamed_domain_follows)
{
	static const char conf[] = "[client web1]\nweight = 7\n[client db]\nweight = 9\n";
	struct tmem_client_settings s;
	struct fake_front f;
	char err[256];

	ck_assert_int_eq(tmemd_config_load_string(&fx.cfg, "t.conf", conf, err, sizeof(err)), 0);
	connect_front(&f, 5, "web1");
	tmem_policy_client_get(client_of(5)->pc, &s);
	ck_assert_uint_eq(s.weight, 7);
	ck_assert_int_eq(fake_xs_write_as(fx.xs, 0, "/local/domain/5/name", "db"), 0);
	fake_xs_fire(fx.xs, "/local/domain/5/name");
	poll_be();
	ck_assert_str_eq(client_of(5)->label, "db");
	tmem_policy_client_get(client_of(5)->pc, &s);
	ck_assert_uint_eq(s.weight, 9);
	ck_assert_int_eq(fake_xs_write_as(fx.xs, 0, "/local/domain/5/name", "other"), 0);
	fake_xs_fire(fx.xs, "/local/domain/5/name");
	poll_be();
	tmem_policy_client_get(client_of(5)->pc, &s);
	ck_assert_uint_eq(s.weight, fx.cfg.defaults.weight);
}
END_TEST

/* A new domain that reuses a domid gets none of the old one's settings
 * given by name or UUID (only [client domid:N], which names the id). */
START_TEST(reused_domid_gets_no_settings)
{
	static const char conf[] = "[client uuid:05000000-0100-0000-0000-000000000000]\n"
				   "weight = 7\n";
	struct tmem_client_settings s;
	struct fake_front f, g;
	char err[256];

	ck_assert_int_eq(tmemd_config_load_string(&fx.cfg, "t.conf", conf, err, sizeof(err)), 0);
	connect_front(&f, 5, "web1");
	tmem_policy_client_get(client_of(5)->pc, &s);
	ck_assert_uint_eq(s.weight, 7);
	fake_hyp_set_dying(fx.hyp, 5);
	fake_xs_fire(fx.xs, "@releaseDomain");
	poll_be();
	fake_hyp_remove_domain(fx.hyp, 5);
	connect_front(&g, 5, "db");
	tmem_policy_client_get(client_of(5)->pc, &s);
	ck_assert_uint_eq(s.weight, fx.cfg.defaults.weight);
}
END_TEST

/* A running domain with the same UUID (a clone) gets nothing of it. */
START_TEST(running_twin_keeps_its_pages)
{
	uint8_t handle[TMEMD_XEN_HANDLE_LEN];
	struct fake_front f, g;
	char *session;

	session = guest_with_page(&f, 5, "web1", 0x41);
	fake_hyp_get_handle(fx.hyp, 5, handle);
	fake_front_init(&g, fx.xs, fx.hyp, 9, "clone", 8, 4);
	fake_hyp_set_handle(fx.hyp, 9, handle);
	fake_xs_fire(fx.xs, "@introduceDomain");
	poll_be();
	fake_front_publish(&g);
	poll_be();
	ck_assert_int_ne(fake_front_backend_state(&g), CONNECTED);
	expect_page(&f, 0x41);
	free(session);
}
END_TEST

/* Parked pages survive a tmemd restart (a stop, or kill -9 with a kept
 * arena): the marker tells the start they wait for a restore. */
START_TEST(parked_survives_restart)
{
	uint8_t handle[TMEMD_XEN_HANDLE_LEN];
	struct tmem_store_info si;
	struct fake_front f, g;
	char *session, *v;

	session = guest_with_page(&f, 5, "web1", 0x51);
	fake_hyp_get_handle(fx.hyp, 5, handle);
	end_domain(5, TMEMD_XEN_SHUTDOWN_SUSPEND);
	restart_keeping();
	start_backend();
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 1);
	ck_assert_uint_eq(park_stats().parked, 1);
	ck_assert(tmemd_clients_is_parked(fx.reg, "uuid:05000000-0100-0000-0000-000000000000"));
	restored_domain(&g, 9, "web1", handle);
	v = session_after(9, "0x1");
	ck_assert_str_eq(v, session);
	free(v);
	expect_page(&g, 0x51);
	free(session);
}
END_TEST

/* Without its marker a detached client whose domain is gone was not
 * parked: the restart frees it, as before. */
START_TEST(restart_without_marker_frees)
{
	uint8_t handle[TMEMD_XEN_HANDLE_LEN];
	struct tmem_store_info si;
	struct fake_front f;
	char *session;

	session = guest_with_page(&f, 5, "web1", 0x61);
	fake_hyp_get_handle(fx.hyp, 5, handle);
	end_domain(5, TMEMD_XEN_SHUTDOWN_SUSPEND);
	restart_keeping();
	ck_assert_int_eq(fake_xs_rm_as(fx.xs, 0, "/tool/tmemd/parked"), 0);
	start_backend();
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 0);
	ck_assert_uint_eq(park_stats().parked, 0);
	free(session);
}
END_TEST

/* Past parked-max-age the pages go, and the marker with them. */
START_TEST(parked_expires)
{
	uint8_t handle[TMEMD_XEN_HANDLE_LEN];
	struct tmem_store_info si;
	struct fake_front f;
	char *session;

	fx.cfg.parked_max_age_sec = 1;
	session = guest_with_page(&f, 5, "web1", 0x71);
	fake_hyp_get_handle(fx.hyp, 5, handle);
	end_domain(5, TMEMD_XEN_SHUTDOWN_SUSPEND);
	ck_assert_uint_eq(park_stats().parked, 1);
	usleep(2100 * 1000);
	poll_be();
	store_info(fx.store, &si);
	ck_assert_uint_eq(si.nr_detached, 0);
	ck_assert_uint_eq(park_stats().parked, 0);
	ck_assert_uint_eq(park_stats().pools_expired, 1);
	ck_assert_uint_eq(park_stats().pages_expired, 1);
	ck_assert(!marker_exists(handle));
	free(session);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("xen-backend");
	TCase *p = tcase_create("parsers");
	TCase *h = tcase_create("handshake");
	TCase *t = tcase_create("teardown");
	TCase *pk = tcase_create("park");

	tcase_add_checked_fixture(p, setup, teardown);
	tcase_add_test(p, parse_u32_strict);
	tcase_add_test(p, allow_list);
	tcase_add_test(p, config_key);
	tcase_add_test(p, transport_selection);
	suite_add_tcase(s, p);

	tcase_add_checked_fixture(h, setup, teardown);
	tcase_set_timeout(h, 30);
	tcase_add_test(h, nodes_and_permissions);
	tcase_add_test(h, handshake_connects);
	tcase_add_test(h, round_trip_through_ring);
	tcase_add_test(h, unnamed_domain_gets_domid_name);
	tcase_add_test(h, bad_name_falls_back);
	tcase_add_test(h, domid_like_name_falls_back);
	tcase_add_test(h, key_grant_reaches_domain);
	tcase_add_test(h, local_client_cannot_take_domain_identity);
	tcase_add_test(h, control_names_domains_by_domid);
	tcase_add_test(h, sections_by_id_name_and_uuid);
	tcase_add_test(h, commit_retried);
	tcase_add_loop_test(h, bad_value_cuts_off, 0,
			    (int)(sizeof(bad_values) / sizeof(bad_values[0])));
	tcase_add_test(h, missing_value_cuts_off);
	tcase_add_test(h, bad_header_cuts_off);
	tcase_add_test(h, allow_list_limits_domains);
	tcase_add_test(h, bad_allow_list_stops_start);
	suite_add_tcase(s, h);

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, domain_death_tears_down);
	tcase_add_test(t, dying_domain_seen_through_xenstore);
	tcase_add_test(t, live_guest_removing_its_dir);
	tcase_add_test(t, frontend_closing_then_reconnect);
	tcase_add_test(t, frontend_closed_directly);
	tcase_add_test(t, reconnect_rate_bucket);
	tcase_add_test(t, state_toggling_rate_limited);
	tcase_add_test(t, garbage_on_ring_cuts_off_one);
	tcase_add_test(t, restart_keeps_frontend_state);
	tcase_add_test(t, restart_resumes_live_domain);
	tcase_add_test(t, restart_frees_gone_domains);
	tcase_add_test(t, restart_local_name_cannot_take_kept_domain);
	suite_add_tcase(s, t);

	tcase_add_checked_fixture(pk, setup, teardown);
	tcase_set_timeout(pk, 30);
	tcase_add_test(pk, suspend_parks_restore_claims);
	tcase_add_loop_test(pk, poweroff_frees, 0, 3);
	tcase_add_test(pk, destroy_frees);
	tcase_add_test(pk, parked_refused_to_other_uuid);
	tcase_add_test(pk, migration_here_claims_from_suspended_twin);
	tcase_add_test(pk, running_twin_keeps_its_pages);
	tcase_add_test(pk, renamed_domain_follows);
	tcase_add_test(pk, reused_domid_gets_no_settings);
	tcase_add_test(pk, parked_survives_restart);
	tcase_add_test(pk, restart_without_marker_frees);
	tcase_add_test(pk, parked_expires);
	suite_add_tcase(s, pk);
	return s;
}

int main(void)
{
	/* Cut-offs are expected here; keep the warnings, drop the chatter. */
	tmemd_log_level = TMEMD_LOG_WARNING;
	return tmem_test_main(suite(), 0);
}
