/*
 * daemon/: a get of a page in the host tier does not hold up its ring's
 * worker (issue 29, readback.h).  Two clients, each on a ring in plain
 * memory, one store whose tier is a file on /var/tmp (a disk file
 * system, so a spilled page dropped from the page cache must be read
 * from the device).  Client A's get of its spilled page is handed to the
 * read-back threads: tmemd_ring_process() returns at once with A's ring
 * waiting; client B's requests are served meanwhile; once the read is
 * done, A's response comes, in order, with the page's bytes.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/test_main.h"
#include "config.h"
#include "fake_ring.h"
#include "readback.h"
#include "ring.h"
#include "test_readback.h"
#include "tmem_policy.h"

struct side {
	struct tmemd_client *client;
	struct fake_ring fr;
	void *region;
	uint32_t prod;
	int32_t pool;
};

static atomic_int wakes;

static void on_wake(void *ctx)
{
	(void)ctx;
	atomic_fetch_add(&wakes, 1);
}

/* Posts r on s's ring (not served). */
static void post(struct side *s, uint32_t op, uint32_t slot, uint32_t index)
{
	struct tmem_ring_hdr *h = s->region;
	union tmem_ring_entry *e = tmem_ring_entries(s->region);
	struct tmem_req *r = &e[s->prod & 7].req;

	memset(r, 0, sizeof(*r));
	r->op = op;
	r->pool_id = op == TMEM_OP_NEW_POOL ? 0 : s->pool;
	r->flags = op == TMEM_OP_NEW_POOL ? tmem_pool_flags(TMEM_POOL_PERSIST) : 0;
	r->slot = slot;
	r->index = index;
	r->oid[0] = op == TMEM_OP_NEW_POOL ? 0 : 7;
	r->id = s->prod;
	s->prod++;
	h->req_prod = s->prod;
}

static int32_t rsp_ret(struct side *s, uint32_t i)
{
	return tmem_ring_entries(s->region)[i & 7].rsp.ret;
}

static void side_init(struct side *s, struct tmemd_clients *reg, const char *name,
		      struct tmemd_readbacks *rb)
{
	ck_assert_int_eq(tmemd_client_add(reg, name, "test", -1, &s->client), 0);
	s->region = aligned_alloc(4096, tmem_region_size(8, 4));
	fake_ring_init(&s->fr, s->region, 8, 4, s->client);
	((struct tmem_ring_hdr *)s->region)->rsp_event = 1;
	s->fr.ring.readbacks = rb;
	s->fr.ring.rb_job.wake = on_wake;
	post(s, TMEM_OP_NEW_POOL, TMEM_NO_SLOT, 0);
	ck_assert_int_eq(tmemd_ring_process(&s->fr.ring, 8), 1);
	s->pool = rsp_ret(s, 0);
	ck_assert_int_ge(s->pool, 0);
}

START_TEST(test_readback_leaves_the_worker_free)
{
	char path[] = "/var/tmp/tmemd-readback-tier.XXXXXX";
	int tier = mkstemp(path);
	struct tmem_store_config sc = { .arena_bytes = 4u << 20, .tier_bytes = 4u << 20 };
	struct tmem_policy_config pc;
	struct tmemd_config cfg;
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmemd_clients *reg;
	struct tmemd_readbacks *rb;
	struct side a, b;
	uint8_t *slot, want[4096];
	uint32_t get_at;

	ck_assert_int_ge(tier, 0);
	sc.tier_fd = tier;
	tmemd_config_init(&cfg);
	ck_assert_int_eq(store_create(&sc, &store), 0);
	tmem_policy_config_defaults(&pc);
	pc.defaults.compress.algo = TMEM_COMPRESS_OFF;
	ck_assert_int_eq(tmem_policy_create(store, &pc, &policy), 0);
	ck_assert_int_eq(tmemd_clients_create(store, policy, &cfg, &reg), 0);
	ck_assert_int_eq(tmemd_readbacks_create(1, &rb), 0);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	side_init(&a, reg, "a", rb);
	side_init(&b, reg, "b", rb);

	/* A's page, put through its ring, then spilled (and so dropped
	 * from the page cache; dropped again here to be sure). */
	slot = tmem_slot_ptr(a.region, 8, 1);
	for (unsigned i = 0; i < sizeof(want); i++)
		want[i] = (uint8_t)(i * 7 + 3);
	memcpy(slot, want, sizeof(want));
	post(&a, TMEM_OP_PUT_PAGE, 1, 5);
	ck_assert_int_eq(tmemd_ring_process(&a.fr.ring, 8), 1);
	ck_assert_int_eq(rsp_ret(&a, 1), 1);
	ck_assert_int_eq(store_spill(store, 16), 1);
	ck_assert_int_eq(posix_fadvise(tier, 0, 0, POSIX_FADV_DONTNEED), 0);

	/* A's get: started, handed off; the ring waits, the call does not. */
	memset(slot, 0, 4096);
	get_at = a.prod;
	post(&a, TMEM_OP_GET_PAGE, 1, 5);
	post(&a, TMEM_OP_FLUSH_PAGE, TMEM_NO_SLOT, 5);
	ck_assert_int_eq(tmemd_ring_process(&a.fr.ring, 8), 0);
	ck_assert_msg(a.fr.ring.rb_pending,
		      "the read-back was done inline: the page was still cached");
	ck_assert_uint_eq(((struct tmem_ring_hdr *)a.region)->rsp_prod, get_at);

	/* B is served meanwhile, by the same (this) thread. */
	post(&b, TMEM_OP_PUT_PAGE, 1, 1);
	post(&b, TMEM_OP_GET_PAGE, 2, 1);
	ck_assert_int_eq(tmemd_ring_process(&b.fr.ring, 8), 2);
	ck_assert_int_eq(rsp_ret(&b, 1), 1);
	ck_assert_int_eq(rsp_ret(&b, 2), 1);

	/* The read ends: the worker is woken, A's get answers, then the
	 * flush queued behind it. */
	for (int i = 0; i < 5000 && !tmemd_ring_pending(&a.fr.ring); i++)
		usleep(1000);
	ck_assert(tmemd_ring_pending(&a.fr.ring));
	ck_assert_int_ge(atomic_load(&wakes), 1);
	ck_assert_int_eq(tmemd_ring_process(&a.fr.ring, 8), 2);
	ck_assert_int_eq(rsp_ret(&a, get_at), 1);
	ck_assert_int_eq(rsp_ret(&a, get_at + 1), 1);
	ck_assert(memcmp(slot, want, sizeof(want)) == 0);
	ck_assert(!a.fr.ring.rb_pending);

	tmemd_readbacks_destroy(rb);
	tmemd_clients_destroy(reg);
	tmem_policy_destroy(policy);
	store_destroy(store);
	tmemd_config_free(&cfg);
	free(a.region);
	free(b.region);
	close(tier);
	unlink(path);
}
END_TEST

void add_readback_tests(Suite *s)
{
	TCase *tc = tcase_create("readback");

	tcase_add_test(tc, test_readback_leaves_the_worker_free);
	suite_add_tcase(s, tc);
}
