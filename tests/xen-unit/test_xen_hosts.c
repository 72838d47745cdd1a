/* SPDX-License-Identifier: MIT */
/*
 * A Xen guest's persistent pages follow it to another host (issue 27):
 * two tmemds in one process, each with its own store, registry, Xen
 * backend (over a fake xenstore and hypervisor, as test_xen_unit.c) and
 * migration module, on loopback TCP with one key file.  A domain suspends
 * on host A (xl migrate's source); a domain with its UUID, presenting the
 * session its pools were made in, connects on host B, which pulls the
 * parked pages from A before it says Connected.
 *   - the pages move, and back, with their pool ids and session; the
 *     source frees its copy;
 *   - the new domain runs before xl destroys the old one: B waits (the
 *     source answers EAGAIN) and takes the pages once they are parked,
 *     serving other domains meanwhile; a domain destroyed while its pull
 *     waits leaves the pages on A;
 *   - a wrong session, another UUID or no reachable peer gets nothing:
 *     the guest starts afresh (its frontend drops its pools and fails
 *     its persistent requests) and the pages stay parked on A;
 *   - a domain that suspended with pages lent to a peer keeps them lent
 *     across a restart of its tmemd (not parked twice);
 *   - tmemctl migrate-push sends parked pages ahead, and the domain
 *     restored there claims them.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client_registry.h"
#include "common/test_main.h"
#include "common/test_peers.h"
#include "config.h"
#include "ctl_session.h"
#include "fake_front.h"
#include "fake_hyp.h"
#include "fake_xs.h"
#include "log.h"
#include "migrate/mig_proto.h"
#include "migrate/mig_tls.h"
#include "migrate/mig_wire.h"
#include "migrate/migrate.h"
#include "workers.h"
#include "xen/backend.h"
#include "xen/backend_internal.h"
#include "xen/hyp.h"

enum { INITWAIT = 2, CONNECTED = 4 };

struct host {
	struct tmemd_config cfg;
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmemd_clients *reg;
	struct tmemd_workers *ws;
	struct fake_xs *xs;
	struct fake_hyp *hyp;
	struct tmemd_xen_backend *be;
	struct tmemd_migrate *mig;
	char dir[96];
};

static struct host hosts[2];
static char keydir[48];
static uint16_t ports[2];

static int park_for_peer(void *ctx, struct tmemd_client *c)
{
	return tmemd_migrate_park(ctx, c);
}

static const struct tmemd_migrate_hooks hooks = {
	.pull = tmemd_migrate_pull,
	.park = park_for_peer,
	.claimed = tmemd_migrate_claimed,
	.held = tmemd_migrate_held,
};

/* Host i's migration, its peers as given (migrate-peers). */
static void start_migrate_with(int i, const char *peers)
{
	struct host *h = &hosts[i];

	snprintf(h->cfg.migrate_key, sizeof(h->cfg.migrate_key), "%s/keys", keydir);
	snprintf(h->cfg.migrate_name, sizeof(h->cfg.migrate_name), "host%c", 'A' + i);
	snprintf(h->cfg.migrate_listen, sizeof(h->cfg.migrate_listen), "127.0.0.1:%u",
		 ports[i]);
	snprintf(h->cfg.migrate_peers, sizeof(h->cfg.migrate_peers), "%s", peers);
	ck_assert_int_eq(tmemd_migrate_start(&h->cfg, h->reg, h->dir, &h->mig), 0);
	ck_assert_ptr_nonnull(h->mig);
	tmemd_clients_set_migrate(h->reg, &hooks, h->mig);
}

/* Host i's migration, its peer the other host (or peer_port). */
static void start_migrate(int i, uint16_t peer_port)
{
	char peers[32];

	snprintf(peers, sizeof(peers), "127.0.0.1:%u", peer_port);
	start_migrate_with(i, peers);
}

static void start_backend(int i)
{
	struct host *h = &hosts[i];
	struct tmemd_env env = { .clients = h->reg, .workers = h->ws,
				 .runtime_dir = h->dir, .cfg = &h->cfg };

	ck_assert_int_eq(tmemd_xen_backend_create(&env, fake_xs_handle(h->xs),
						  fake_hyp_handle(h->hyp), 0, &h->be), 0);
	tmemd_xen_backend_poll(h->be);
}

static void host_up(int i)
{
	struct tmem_store_config sc = { .arena_bytes = 4u << 20 };
	struct tmem_policy_config pc;
	struct host *h = &hosts[i];

	tmemd_config_init(&h->cfg);
	snprintf(h->dir, sizeof(h->dir), "%s/host%c", keydir, 'A' + i);
	ck_assert_int_eq(mkdir(h->dir, 0700), 0);
	ck_assert_int_eq(store_create(&sc, &h->store), 0);
	tmem_policy_config_defaults(&pc);
	ck_assert_int_eq(tmem_policy_create(h->store, &pc, &h->policy), 0);
	ck_assert_int_eq(tmemd_clients_create(h->store, h->policy, &h->cfg, &h->reg), 0);
	ck_assert_int_eq(tmemd_workers_create(1, &h->ws), 0);
	h->xs = fake_xs_new();
	h->hyp = fake_hyp_new();
}

/* Host i's tmemd stops as tmemd does: the backend (its pulls ended),
 * then migration, then the registry. */
static void host_stop(int i, bool keep)
{
	struct host *h = &hosts[i];

	if (keep)
		tmemd_clients_keep_on_stop(h->reg);
	tmemd_xen_backend_destroy(h->be);
	h->be = NULL;
	tmemd_migrate_stop(h->mig);
	h->mig = NULL;
	tmemd_clients_destroy(h->reg);
	h->reg = NULL;
}

/* ... and starts again on the store it kept. */
static void host_start_again(int i)
{
	struct host *h = &hosts[i];

	ck_assert_int_eq(tmemd_clients_create(h->store, h->policy, &h->cfg, &h->reg), 0);
	start_migrate(i, ports[1 - i]);
	start_backend(i);
}

static void host_down(int i)
{
	struct host *h = &hosts[i];

	if (h->reg)
		host_stop(i, false);
	tmemd_workers_destroy(h->ws);
	tmem_policy_destroy(h->policy);
	store_destroy(h->store);
	tmemd_config_free(&h->cfg);
	fake_hyp_free(h->hyp);
	fake_xs_free(h->xs);
}

static void setup(void)
{
	char keys[256];

	memset(hosts, 0, sizeof(hosts));
	snprintf(keydir, sizeof(keydir), "/tmp/tmemd-xhosts.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(keydir));
	snprintf(keys, sizeof(keys), "%s/keys", keydir);
	mpair_write_keys(keys, MPAIR_KEY_A MPAIR_KEY_B);
	ports[0] = mpair_free_port();
	ports[1] = mpair_free_port();
	for (int i = 0; i < 2; i++)
		host_up(i);
	for (int i = 0; i < 2; i++)
		start_migrate(i, ports[1 - i]);
	for (int i = 0; i < 2; i++)
		start_backend(i);
}

static void teardown(void)
{
	char cmd[128];

	for (int i = 0; i < 2; i++)
		host_down(i);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", keydir);
	ck_assert_int_eq(system(cmd), 0);
}

static void poll_host(int i)
{
	tmemd_xen_backend_poll(hosts[i].be);
}

static char *be_node(int i, uint32_t domid, const char *name)
{
	char path[128], *v = NULL;

	snprintf(path, sizeof(path), "/local/domain/0/backend/tmem/%u/0/%s", domid, name);
	ck_assert_int_eq(fake_xs_read_as(hosts[i].xs, domid, path, &v), 0);
	return v;
}

static int32_t page_op(struct fake_front *f, uint32_t op, int32_t pool, uint32_t slot)
{
	struct tmem_req r = { .op = op, .pool_id = pool, .oid = { 7, 0, 0 },
			      .index = 3, .slot = slot };

	return fake_front_call(f, &r);
}

/* Domain domid on host i with handle, up to its Initialised; with
 * session (its frontend's, NULL: none) as after a move. */
static void domain_publishes(int i, struct fake_front *f, uint32_t domid,
			     const uint8_t handle[TMEMD_XEN_HANDLE_LEN], const char *session)
{
	struct host *h = &hosts[i];

	fake_front_init(f, h->xs, h->hyp, domid, "web1", 8, 4);
	fake_hyp_set_handle(h->hyp, domid, handle);
	fake_xs_fire(h->xs, "@introduceDomain");
	poll_host(i);
	ck_assert_int_eq(fake_front_backend_state(f), INITWAIT);
	if (session)
		ck_assert_int_eq(fake_front_write(f, "session", session), 0);
	fake_front_publish(f);
	poll_host(i);
}

/* Host i's backend polled until f is connected (a pull ends), 15 s at most. */
static void wait_connected(int i, struct fake_front *f)
{
	for (int n = 0; n < 1500 && fake_front_backend_state(f) != CONNECTED; n++) {
		usleep(10 * 1000);
		poll_host(i);
	}
	ck_assert_int_eq(fake_front_backend_state(f), CONNECTED);
	fake_front_set_state(f, CONNECTED);
}

static bool pulls_running(int i)
{
	if (hosts[i].be->orphan_pulls)
		return true;
	for (struct xen_dom *d = hosts[i].be->doms; d; d = d->next)
		if (d->pull)
			return true;
	return false;
}

/* Until host i has no pull running: one under valgrind can take far
 * longer than any fixed sleep. */
static void wait_pulls_ended(int i)
{
	for (int n = 0; n < 3000 && pulls_running(i); n++) {
		usleep(10 * 1000);
		poll_host(i);
	}
	ck_assert(!pulls_running(i));
}

static void domain_connects(int i, struct fake_front *f, uint32_t domid,
			    const uint8_t handle[TMEMD_XEN_HANDLE_LEN], const char *session)
{
	domain_publishes(i, f, domid, handle, session);
	wait_connected(i, f);
}

/* A guest on host i with a persistent pool 0 holding a page of fill and
 * an ephemeral pool 1; returns its session. */
static char *guest_with_page(int i, struct fake_front *f, uint32_t domid,
			     const uint8_t handle[TMEMD_XEN_HANDLE_LEN], uint8_t fill)
{
	domain_connects(i, f, domid, handle, NULL);
	ck_assert_int_eq(fake_front_call(f, &(struct tmem_req){
		.op = TMEM_OP_NEW_POOL, .flags = tmem_pool_flags(TMEM_POOL_PERSIST),
		.slot = TMEM_NO_SLOT }), 0);
	ck_assert_int_eq(fake_front_call(f, &(struct tmem_req){
		.op = TMEM_OP_NEW_POOL, .flags = tmem_pool_flags(0),
		.slot = TMEM_NO_SLOT }), 1);
	memset(fake_front_slot(f, 1), fill, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(f, TMEM_OP_PUT_PAGE, 0, 1), 1);
	ck_assert_int_eq(page_op(f, TMEM_OP_PUT_PAGE, 1, 1), 1);
	return be_node(i, domid, "session");
}

static void suspend(int i, uint32_t domid)
{
	fake_hyp_set_shutdown(hosts[i].hyp, domid, TMEMD_XEN_SHUTDOWN_SUSPEND);
	fake_xs_fire(hosts[i].xs, "@releaseDomain");
	poll_host(i);
}

/* xl destroys the suspended domain: its tmemd parks its pages. */
static void destroy(int i, uint32_t domid)
{
	fake_hyp_set_dying(hosts[i].hyp, domid);
	fake_xs_fire(hosts[i].xs, "@releaseDomain");
	poll_host(i);
	fake_hyp_remove_domain(hosts[i].hyp, domid);
	fake_xs_fire(hosts[i].xs, "@releaseDomain");
	poll_host(i);
}

static struct tmemd_park_stats park_stats(int i)
{
	struct tmemd_park_stats ps;

	tmemd_clients_park_stats(hosts[i].reg, &ps);
	return ps;
}

static struct tmemd_migrate_stats mig_stats(int i)
{
	struct tmemd_migrate_stats ms;

	tmemd_migrate_get_stats(hosts[i].mig, &ms);
	return ms;
}

static uint64_t detached(int i)
{
	struct tmem_store_info si;

	store_info(hosts[i].store, &si);
	return si.nr_detached;
}

/* Pool 0's page must read fill (hit), or miss with fill 0. */
static void expect_page(struct fake_front *f, uint8_t fill)
{
	memset(fake_front_slot(f, 2), 0, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(f, TMEM_OP_GET_PAGE, 0, 2), fill ? 1 : 0);
	if (fill)
		ck_assert_int_eq(((uint8_t *)fake_front_slot(f, 2))[77], fill);
}

/* What domain domid on host i was told at Connected: resumed-pools
 * pools, and the session (the one its pools were made in, or not). */
static void told(int i, uint32_t domid, const char *pools, const char *session, bool same)
{
	char *v = be_node(i, domid, "resumed-pools");

	ck_assert_str_eq(v, pools);
	free(v);
	v = be_node(i, domid, "session");
	ck_assert_int_eq(!strcmp(v, session), same);
	free(v);
}

/* The new domain has its pages back: the persistent pool kept, under
 * the same session, the page there. */
static void has_its_pages(int i, struct fake_front *f, uint32_t domid, const char *session,
			  uint8_t fill)
{
	told(i, domid, "0x1", session, true);
	expect_page(f, fill);
}

/* ... or starts afresh: no pool kept, another session. */
static void starts_afresh(int i, uint32_t domid, const char *session)
{
	told(i, domid, "0", session, false);
}

static const uint8_t web1[TMEMD_XEN_HANDLE_LEN] = { 0x27, 1, 2, 3, 4, 5, 6, 7,
						     8, 9, 10, 11, 12, 13, 14, 15 };

/* xl migrate web1 A -> B, then B -> A: the pages follow it each time and
 * the source keeps none. */
START_TEST(pages_follow_the_guest_and_back)
{
	struct fake_front a1, b1, a2;
	char *session = guest_with_page(0, &a1, 5, web1, 0x41);

	suspend(0, 5);
	destroy(0, 5);
	ck_assert_uint_eq(park_stats(0).parked, 1);
	domain_connects(1, &b1, 9, web1, session);
	has_its_pages(1, &b1, 9, session, 0x41);
	ck_assert_uint_eq(park_stats(0).parked, 0);
	ck_assert_uint_eq(detached(0), 0);
	ck_assert_uint_eq(mig_stats(0).transfers_out, 1);
	ck_assert_uint_eq(mig_stats(1).transfers_in, 1);
	ck_assert_uint_eq(mig_stats(1).pages_received, 1);

	/* A new page on B, then back to A. */
	memset(fake_front_slot(&b1, 1), 0x42, TMEM_PAGE_SIZE);
	ck_assert_int_eq(page_op(&b1, TMEM_OP_PUT_PAGE, 0, 1), 1);
	suspend(1, 9);
	destroy(1, 9);
	domain_connects(0, &a2, 12, web1, session);
	has_its_pages(0, &a2, 12, session, 0x42);
	ck_assert_uint_eq(park_stats(1).parked, 0);
	ck_assert_uint_eq(detached(1), 0);
	ck_assert_uint_eq(mig_stats(1).transfers_out, 1);
	free(session);
}
END_TEST

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static const uint8_t web2[TMEMD_XEN_HANDLE_LEN] = { 0x28, 1, 2, 3, 4, 5, 6, 7,
						     8, 9, 10, 11, 12, 13, 14, 15 };

/* xl migrate unpauses the new domain before it destroys the old one:
 * B's pull is told to wait until A parks the pages, then takes them;
 * meanwhile B's backend serves other domains, and the moved one stays
 * in InitWait. */
START_TEST(pull_waits_for_the_source_to_let_go)
{
	struct fake_front a1, b1, b2;
	char *session = guest_with_page(0, &a1, 5, web1, 0x51);
	uint64_t t0;

	suspend(0, 5);
	t0 = now_ms();
	domain_publishes(1, &b1, 9, web1, session);
	domain_connects(1, &b2, 10, web2, NULL);
	usleep(300 * 1000);
	poll_host(1);
	ck_assert_int_eq(fake_front_backend_state(&b1), INITWAIT);
	destroy(0, 5);
	wait_connected(1, &b1);
	ck_assert_uint_ge(now_ms() - t0, 300);
	has_its_pages(1, &b1, 9, session, 0x51);
	ck_assert_uint_eq(detached(0), 0);
	ck_assert_uint_eq(mig_stats(1).failed_pulls, 0);
	free(session);
}
END_TEST

/* The moved domain is destroyed while its pull waits: the pull gives
 * up, and the pages stay with A, parked once A lets its domain go. */
START_TEST(domain_gone_during_its_pull)
{
	struct fake_front a1, b1;
	char *session = guest_with_page(0, &a1, 5, web1, 0x55);

	suspend(0, 5);
	domain_publishes(1, &b1, 9, web1, session);
	fake_hyp_set_dying(hosts[1].hyp, 9);
	fake_hyp_remove_domain(hosts[1].hyp, 9);
	fake_xs_fire(hosts[1].xs, "@releaseDomain");
	poll_host(1);
	wait_pulls_ended(1);
	destroy(0, 5);
	ck_assert_uint_eq(park_stats(0).parked, 1);
	ck_assert_uint_eq(detached(0), 1);
	ck_assert_uint_eq(park_stats(1).parked, 0);
	ck_assert_uint_eq(detached(1), 0);
	free(session);
}
END_TEST

/* Only the same guest: a wrong session (another guest's claim, or a
 * forged one) and another UUID with the right session get nothing, and
 * the pages stay parked on A for the right one. */
START_TEST(only_the_same_guest_takes_them)
{
	uint8_t other[TMEMD_XEN_HANDLE_LEN];
	struct fake_front a1, b1, b2, b3;
	char *session = guest_with_page(0, &a1, 5, web1, 0x61);
	char forged[17];

	suspend(0, 5);
	destroy(0, 5);
	snprintf(forged, sizeof(forged), "%016llx", strtoull(session, NULL, 16) ^ 1);
	domain_connects(1, &b1, 9, web1, forged);
	starts_afresh(1, 9, session);
	ck_assert_uint_ge(mig_stats(0).refused, 1);
	memcpy(other, web1, sizeof(other));
	other[15] ^= 1;
	domain_connects(1, &b2, 10, other, session);
	starts_afresh(1, 10, session);
	ck_assert_uint_eq(park_stats(0).parked, 1);
	ck_assert_uint_eq(mig_stats(0).transfers_out, 0);
	/* Malformed: the frontend is refused, nothing asked of A. */
	fake_front_init(&b3, hosts[1].xs, hosts[1].hyp, 11, "web2", 8, 4);
	fake_hyp_set_handle(hosts[1].hyp, 11, web1);
	fake_xs_fire(hosts[1].xs, "@introduceDomain");
	poll_host(1);
	ck_assert_int_eq(fake_front_write(&b3, "session", "not-a-session"), 0);
	fake_front_publish(&b3);
	poll_host(1);
	ck_assert_int_ne(fake_front_backend_state(&b3), CONNECTED);
	ck_assert_uint_eq(park_stats(0).parked, 1);
	free(session);
}
END_TEST

/* B cannot reach A (A's tmemd is stopped, keeping its store): the guest
 * starts afresh on B, and A still has the pages parked when it is back. */
/* web1 with a page of fill, parked on A as xl migrate leaves it, then
 * A's tmemd stopped (its store kept); returns its session. */
static char *parked_on_stopped_a(struct fake_front *a1, uint8_t fill)
{
	char *session = guest_with_page(0, a1, 5, web1, fill);

	suspend(0, 5);
	destroy(0, 5);
	host_stop(0, true);
	return session;
}

START_TEST(unreachable_source_keeps_them_parked)
{
	struct fake_front a1, b1;
	char *session = parked_on_stopped_a(&a1, 0x71);
	uint64_t t0 = now_ms();

	domain_connects(1, &b1, 9, web1, session);
	starts_afresh(1, 9, session);
	/* Asked again for the while a restart takes, then it goes on. */
	ck_assert_uint_ge(now_ms() - t0, 9000);
	ck_assert_uint_ge(mig_stats(1).unreachable, 10);
	ck_assert_uint_eq(mig_stats(1).failed_pulls, 0);
	host_start_again(0);
	ck_assert_uint_eq(park_stats(0).parked, 1);
	ck_assert_uint_eq(detached(0), 1);
	free(session);
}
END_TEST

/* A's tmemd restarts while B pulls (xl migrate as it comes back): B
 * asks again until A answers, and the pages follow. */
START_TEST(source_restarting_during_the_pull)
{
	struct fake_front a1, b1;
	char *session = parked_on_stopped_a(&a1, 0x73);

	domain_publishes(1, &b1, 9, web1, session);
	usleep(1200 * 1000);
	poll_host(1);
	ck_assert_int_eq(fake_front_backend_state(&b1), INITWAIT);
	host_start_again(0);
	wait_connected(1, &b1);
	has_its_pages(1, &b1, 9, session, 0x73);
	ck_assert_uint_ge(mig_stats(1).unreachable, 1);
	ck_assert_uint_eq(mig_stats(1).failed_pulls, 0);
	ck_assert_uint_eq(park_stats(0).parked, 0);
	ck_assert_uint_eq(detached(0), 0);
	free(session);
}
END_TEST

/* migrate-peers lists a host that is down before the one with the
 * pages: the pull goes on to it. */
START_TEST(a_peer_down_does_not_stop_the_others)
{
	struct fake_front a1, b1;
	char *session = guest_with_page(0, &a1, 5, web1, 0x75);
	char peers[64];

	suspend(0, 5);
	destroy(0, 5);
	host_stop(1, true);
	snprintf(peers, sizeof(peers), "127.0.0.1:%u, 127.0.0.1:%u", mpair_free_port(),
		 ports[0]);
	ck_assert_int_eq(tmemd_clients_create(hosts[1].store, hosts[1].policy, &hosts[1].cfg,
					      &hosts[1].reg), 0);
	start_migrate_with(1, peers);
	start_backend(1);
	domain_connects(1, &b1, 9, web1, session);
	has_its_pages(1, &b1, 9, session, 0x75);
	ck_assert_uint_eq(mig_stats(1).unreachable, 1);
	ck_assert_uint_eq(park_stats(0).parked, 0);
	free(session);
}
END_TEST

/* A pull by B's name that stops after the OFFER (B killed mid-move):
 * A holds the pages lent, in doubt. */
static void pull_and_vanish(const uint8_t handle[TMEMD_XEN_HANDLE_LEN], uint64_t session)
{
	struct tmem_mig_who who = { 0 };
	struct tmem_mig_offer o;
	struct mig_keys keys;
	struct mig_tls *tls;
	struct mig_link *link;
	char path[128], why[200], hp[32];
	uint16_t type;
	uint32_t len, domid = 77;

	snprintf(path, sizeof(path), "%s/keys", keydir);
	ck_assert_int_eq(mig_keys_load(path, &keys, why, sizeof(why)), 0);
	ck_assert_int_eq(mig_tls_create(&keys, "hostB", &tls), 0);
	snprintf(hp, sizeof(hp), "127.0.0.1:%u", ports[0]);
	ck_assert_int_eq(mig_connect(tls, hp, 5000, &link), 0);
	mig_name_put(who.name, "uuid:27010203-0405-0607-0809-0a0b0c0d0e0f");
	who.ident[0] = TMEMD_XEN_IDENT_MARK;
	memcpy(who.ident + 1, &domid, 4);
	memcpy(who.ident + 5, handle, TMEMD_XEN_HANDLE_LEN);
	memcpy(who.ident + 5 + TMEMD_XEN_HANDLE_LEN, &session, 8);
	ck_assert_int_eq(mig_send(link, TMEM_MIG_PULL, &who, sizeof(who)), 0);
	ck_assert_int_eq(mig_recv(link, &type, &o, sizeof(o), &len), 0);
	ck_assert_int_eq(type, TMEM_MIG_OFFER);
	ck_assert_int_eq(o.status, 0);
	mig_link_close(link);
	mig_tls_destroy(tls);
}

/* Lent when A restarts: A's start keeps it lent (its xenstore marker
 * does not park it a second time), and B's next pull takes it. */
START_TEST(lent_stays_lent_across_a_restart)
{
	struct fake_front a1, b1;
	char *session = guest_with_page(0, &a1, 5, web1, 0x81);

	suspend(0, 5);
	destroy(0, 5);
	pull_and_vanish(web1, strtoull(session, NULL, 16));
	ck_assert_uint_eq(park_stats(0).parked, 0);
	host_stop(0, true);
	host_start_again(0);
	ck_assert_uint_eq(park_stats(0).parked, 0);
	ck_assert_uint_eq(detached(0), 1);
	ck_assert(tmemd_clients_held(hosts[0].reg, "uuid:27010203-0405-0607-0809-0a0b0c0d0e0f"));
	domain_connects(1, &b1, 9, web1, session);
	has_its_pages(1, &b1, 9, session, 0x81);
	ck_assert_uint_eq(detached(0), 0);
	free(session);
}
END_TEST

/* tmemctl migrate-push of a parked domain: B keeps it parked, and the
 * domain restored there later claims it as a local restore would. */
START_TEST(pushed_by_hand_then_restored_there)
{
	struct fake_front a1, b1;
	char *session = guest_with_page(0, &a1, 5, web1, 0x91);
	char peer[32], why[200];
	uint64_t pages = 0;

	suspend(0, 5);
	destroy(0, 5);
	snprintf(peer, sizeof(peer), "127.0.0.1:%u", ports[1]);
	ck_assert_int_eq(tmemd_migrate_push(hosts[0].mig, "uuid:27010203-0405-0607-0809-0a0b0c0d0e0f",
					    peer, &pages, why, sizeof(why)), 0);
	ck_assert_uint_eq(pages, 1);
	ck_assert_uint_eq(detached(0), 0);
	ck_assert_uint_eq(park_stats(1).parked, 1);
	domain_connects(1, &b1, 9, web1, session);
	has_its_pages(1, &b1, 9, session, 0x91);
	ck_assert_uint_eq(park_stats(1).parked, 0);
	free(session);
}
END_TEST

/* An admin names the domain as xl does (its xl name, running or parked)
 * in tmemctl migrate-check and migrate-push. */
START_TEST(tmemctl_names_the_domain_by_its_xl_name)
{
	char req[2][200], *reqs[2] = { req[0], req[1] }, reply[2][512], dir[96];
	struct fake_front a1, b1;
	char *session = guest_with_page(0, &a1, 5, web1, 0xa1);

	snprintf(dir, sizeof(dir), "%s/ctl", keydir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	/* More pages than B's arena has frames, but same-filled: they take
	 * none as stored, so there is room. */
	for (uint32_t i = 0; i < 1500; i++) {
		struct tmem_req r = { .op = TMEM_OP_PUT_PAGE, .pool_id = 0, .oid = { 8, 0, 0 },
				      .index = i, .slot = 1 };

		ck_assert_int_eq(fake_front_call(&a1, &r), 1);
	}
	snprintf(req[0], sizeof(req[0]), "{\"version\":1,\"cmd\":\"migrate-check\",\"args\":"
		 "{\"client\":\"web1\",\"peer\":\"127.0.0.1:%u\"}}", ports[1]);
	control_session(dir, hosts[0].reg, &hosts[0].cfg, hosts[0].mig,
			(const char *const *)reqs, 1, reply);
	REPLY_HAS(reply[0], "\"reachable\":true,\"authenticated\":true,\"room\":true,"
		  "\"pages\":1501,\"stored_pages\":0,\"peer_free_pages\":1024");
	suspend(0, 5);
	destroy(0, 5);
	snprintf(req[1], sizeof(req[1]), "{\"version\":1,\"cmd\":\"migrate-push\",\"args\":"
		 "{\"client\":\"web1\",\"peer\":\"127.0.0.1:%u\"}}", ports[1]);
	control_session(dir, hosts[0].reg, &hosts[0].cfg, hosts[0].mig,
			(const char *const *)reqs + 1, 1, reply + 1);
	REPLY_HAS(reply[1], "\"pages\":1501");
	ck_assert_uint_eq(detached(0), 0);
	domain_connects(1, &b1, 9, web1, session);
	has_its_pages(1, &b1, 9, session, 0xa1);
	free(session);
}
END_TEST

/* The key file, the link's only secret, is read strictly: a line with a
 * field too long, a bad digit or a name twice is refused, never cut to
 * fit (under ASan: never written past its buffer). */
START_TEST(key_file_lines_checked)
{
	static const char *const bad[] = {
		"hostA 11111111111111111111111111111111111111111111111111111111111111111\n",
		"hostA 111111111111111111111111111111111111111111111111111111111111111111\n",
		"hostA 1111111111111111111111111111111111111111111111111111111111111111 x\n",
		"hostA 111111111111111111111111111111111111111111111111111111111111111g\n",
		"hostAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA "
		"1111111111111111111111111111111111111111111111111111111111111111\n",
		MPAIR_KEY_A MPAIR_KEY_A,
	};
	struct mig_keys keys;
	char path[128], why[200], line[400];

	snprintf(path, sizeof(path), "%s/k", keydir);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mpair_write_keys(path, bad[i]);
		ck_assert_int_ne(mig_keys_load(path, &keys, why, sizeof(why)), 0);
	}
	memset(line, '1', sizeof(line) - 2);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = '\0';
	mpair_write_keys(path, line);
	ck_assert_int_ne(mig_keys_load(path, &keys, why, sizeof(why)), 0);
	mpair_write_keys(path, MPAIR_KEY_A MPAIR_KEY_B);
	ck_assert_int_eq(mig_keys_load(path, &keys, why, sizeof(why)), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("xen_hosts");
	TCase *t = tcase_create("move");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, pages_follow_the_guest_and_back);
	tcase_add_test(t, pull_waits_for_the_source_to_let_go);
	tcase_add_test(t, domain_gone_during_its_pull);
	tcase_add_test(t, only_the_same_guest_takes_them);
	tcase_add_test(t, unreachable_source_keeps_them_parked);
	tcase_add_test(t, source_restarting_during_the_pull);
	tcase_add_test(t, a_peer_down_does_not_stop_the_others);
	tcase_add_test(t, lent_stays_lent_across_a_restart);
	tcase_add_test(t, pushed_by_hand_then_restored_there);
	tcase_add_test(t, key_file_lines_checked);
	tcase_add_test(t, tmemctl_names_the_domain_by_its_xl_name);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* as tmemd: a peer that hangs up is an EPIPE */
	tmemd_log_level = TMEMD_LOG_WARNING;
	return tmem_test_main(suite(), TMEM_TEST_ALWAYS_FORK);
}
