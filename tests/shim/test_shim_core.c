// SPDX-License-Identifier: MIT
/*
 * Unit tests of the shim's translation core against an in-process fake
 * backend (fake_backend.c): the ring's corner cases that a well-behaved
 * tmemd never produces (mute, wrong ids, overflow), timeouts, detach
 * while waiting, the slot/tag accounting, and concurrent users.  These
 * also run under ASan+UBSan, TSan and valgrind.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/test_main.h"
#include "fake_backend.h"
#include "shim_blk.h"
#include "shim_ops.h"
#include "shim_test_util.h"

#define PAGE 4096

static struct fake_backend fb;
static struct shim_ops ops;

static void up(uint32_t entries, uint32_t slots, uint32_t capacity)
{
	ck_assert_int_eq(fake_start(&fb, entries, slots, capacity), 0);
	shim_ops_init(&ops, &fb.ring);
}

/* No request in flight and every tag and slot free again. */
static int idle(void)
{
	uint64_t end = shim_user_now_ms() + 2000;
	int busy;

	do {
		unsigned int i;

		shim_ring_poll(&fb.ring);
		pthread_mutex_lock(&fb.uenv.core_lock);
		busy = fb.ring.req_prod_pvt != fb.ring.rsp_cons;
		for (i = 0; i < SHIM_MAP_WORDS(SHIM_MAX_ENTRIES); i++)
			busy |= fb.ring.tag_map[i] != 0;
		for (i = 0; i < SHIM_MAP_WORDS(SHIM_MAX_SLOTS); i++)
			busy |= fb.ring.slot_map[i] != 0;
		pthread_mutex_unlock(&fb.uenv.core_lock);
		if (!busy)
			return 1;
		usleep(1000);
	} while (shim_user_now_ms() < end);
	return 0;
}

START_TEST(geometry_rejected)
{
	struct shim_user_env u;
	struct shim_ring r;
	static uint8_t region[8 * PAGE];

	shim_user_env_init(&u, NULL, NULL);
	shim_ring_init(&r, &u.env);
	ck_assert_int_eq(shim_ring_attach(&r, region, 3, 1), -EINVAL);
	ck_assert_int_eq(shim_ring_attach(&r, region, 512, 1), -EINVAL);
	ck_assert_int_eq(shim_ring_attach(&r, region, 4, 0), -EINVAL);
	ck_assert_int_eq(shim_ring_attach(&r, NULL, 4, 1), -EINVAL);
	ck_assert_uint_eq(shim_ring_gen(&r), 0);
	ck_assert_int_eq(shim_ring_attach(&r, region, 4, 1), 0);
	ck_assert_uint_ne(shim_ring_gen(&r), 0);
	shim_ring_detach(&r);
	ck_assert_uint_eq(shim_ring_gen(&r), 0);
	shim_user_env_destroy(&u);
}
END_TEST

START_TEST(swizzle_layout)
{
	struct tmem_oid oid;
	uint32_t index;

	shim_swizzle(3, 0x12345, &oid, &index);
	ck_assert_uint_eq(oid.oid[0], (3u << 4) | 5u);
	ck_assert_uint_eq(oid.oid[1], 0);
	ck_assert_uint_eq(index, 0x1234);
}
END_TEST

START_TEST(cleancache_roundtrip)
{
	struct tmem_oid key = { { 1, 2, 3 } };
	uint8_t buf[PAGE], out[PAGE];
	int pool;

	up(16, 4, 64);
	pool = shim_cc_init_fs(&ops, PAGE);
	ck_assert_int_ge(pool, 0);
	ck_assert_int_eq(shim_cc_init_fs(&ops, 8192), -EINVAL);
	shim_test_fill(buf, 1);
	shim_cc_put_page(&ops, pool, &key, 10, buf);
	ck_assert(idle());
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 10, out), 0);
	ck_assert(shim_test_same(out, 1));
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 10, out), -1);
	ck_assert_int_eq(shim_cc_get_page(&ops, 77, &key, 10, out), -1);
	shim_cc_invalidate_fs(&ops, pool);
	ck_assert(idle());
	fake_stop(&fb);
}
END_TEST

/* A backend that never answers: the wait ends at timeout_ms, the tag
 * is abandoned, and freed when the late answer finally comes. */
START_TEST(timeout_then_late_answer)
{
	uint8_t buf[PAGE];
	uint64_t t0;

	up(16, 4, 64);
	fb.ring.timeout_ms = 300;
	shim_fs_init(&ops, 0);
	shim_test_fill(buf, 2);
	ck_assert_int_eq(shim_fs_store(&ops, 0, 1, buf), 0);
	fake_set_mode(&fb, FAKE_MUTE);
	t0 = shim_user_now_ms();
	ck_assert_int_eq(shim_fs_store(&ops, 0, 2, buf), -1);
	ck_assert_uint_ge(shim_user_now_ms() - t0, 250);
	ck_assert_uint_lt(shim_user_now_ms() - t0, 2000);
	ck_assert_uint_eq(fb.ring.stats.timeouts, 1);
	fake_set_mode(&fb, FAKE_NORMAL);
	ck_assert(idle());
	ck_assert_int_eq(shim_fs_store(&ops, 0, 3, buf), 0);
	fake_stop(&fb);
}
END_TEST

/* Responses whose id the frontend never issued are dropped. */
START_TEST(bad_response_ids_dropped)
{
	uint8_t buf[PAGE];

	up(16, 4, 64);
	fb.ring.timeout_ms = 300;
	shim_fs_init(&ops, 0);
	shim_test_fill(buf, 3);
	ck_assert_int_eq(shim_fs_store(&ops, 0, 1, buf), 0);
	fake_set_mode(&fb, FAKE_BAD_ID);
	ck_assert_int_eq(shim_fs_store(&ops, 0, 2, buf), -1);
	ck_assert_uint_ge(fb.ring.stats.bad_responses, 1);
	ck_assert_uint_eq(fb.ring.stats.timeouts, 1);
	fake_stop(&fb);
}
END_TEST

/* An rsp_prod beyond the requests made: the ring is dropped at once. */
START_TEST(overflow_detaches)
{
	uint8_t buf[PAGE];

	up(16, 4, 64);
	shim_fs_init(&ops, 0);
	shim_test_fill(buf, 4);
	fake_set_mode(&fb, FAKE_OVERFLOW);
	ck_assert_int_eq(shim_fs_store(&ops, 0, 1, buf), -1);
	ck_assert_uint_eq(fb.ring.stats.corrupt, 1);
	ck_assert_uint_eq(shim_ring_gen(&fb.ring), 0);
	ck_assert_uint_eq(fb.ring.stats.timeouts, 0);
	fake_stop(&fb);
}
END_TEST

struct waiter {
	uint8_t buf[PAGE];
	int ret;
};

static void *store_waiter(void *arg)
{
	struct waiter *w = arg;

	shim_test_fill(w->buf, 5);
	w->ret = shim_fs_store(&ops, 0, 9, w->buf);
	return NULL;
}

/* Detach (xenbus Closing) wakes a task waiting on a mute backend. */
START_TEST(detach_wakes_waiters)
{
	struct waiter w;
	pthread_t t;
	uint64_t t0;

	up(16, 4, 64);
	fb.ring.timeout_ms = 5000;
	shim_fs_init(&ops, 0);
	shim_pool_ensure(&ops, ops.swap_pool);
	fake_set_mode(&fb, FAKE_MUTE);
	ck_assert_int_eq(pthread_create(&t, NULL, store_waiter, &w), 0);
	usleep(50 * 1000);
	t0 = shim_user_now_ms();
	shim_ring_detach(&fb.ring);
	pthread_join(t, NULL);
	ck_assert_int_eq(w.ret, -1);
	ck_assert_uint_lt(shim_user_now_ms() - t0, 1000);
	ck_assert_uint_eq(ops.fs.failed_stores, 1);
	fake_stop(&fb);
}
END_TEST

/*
 * With every slot held by unanswered puts, puts return at once.  Each
 * dropped put's replacement flush takes a free entry, or is owed to the
 * pool's next get (shim_owed_eph.c); the pool is not emptied for it.
 */
START_TEST(puts_never_wait_for_slots)
{
	struct tmem_oid key = { { 7 } };
	uint8_t buf[PAGE], out[PAGE];
	uint64_t t0;
	int pool, i;

	up(8, 2, 64);
	pool = shim_cc_init_fs(&ops, PAGE);
	shim_test_fill(buf, 6);
	fake_set_mode(&fb, FAKE_MUTE);
	t0 = shim_user_now_ms();
	for (i = 0; i < 100; i++)
		shim_cc_put_page(&ops, pool, &key, (uint64_t)i, buf);
	ck_assert_uint_lt(shim_user_now_ms() - t0, 100);
	ck_assert_uint_eq(ops.cc.puts_dropped, 98);
	/* 6 flushes took the free entries; the other 92 are owed. */
	ck_assert_uint_eq(ops.cc.flushes_owed, 92);
	ck_assert(!ops.pools[pool].poisoned);
	fake_set_mode(&fb, FAKE_NORMAL);
	ck_assert(idle());
	/* The gets send what is owed first; the two posted puts still hit. */
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 0, out), 0);
	ck_assert(shim_test_same(out, 6));
	ck_assert_uint_eq(ops.pools[pool].owed, 0);
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 1, out), 0);
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 50, out), -1);
	fake_stop(&fb);
}
END_TEST

/* Fills every ring entry with unanswered flushes of other handles. */
static void fill_entries(int pool, uint32_t entries)
{
	struct tmem_oid other = { { 99 } };
	uint32_t i;

	for (i = 0; i < entries; i++)
		shim_cc_invalidate_page(&ops, pool, &other, i);
}

/*
 * The stale page an owed flush stands for is never returned: a page put
 * and answered, then a newer version of it dropped with the ring full;
 * the get after that misses, and other pages of the pool still hit.
 */
START_TEST(owed_flush_hides_the_older_page)
{
	struct tmem_oid key = { { 8 } };
	uint8_t old[PAGE], new[PAGE], out[PAGE];
	int pool;

	up(8, 2, 64);
	pool = shim_cc_init_fs(&ops, PAGE);
	shim_test_fill(old, 1);
	shim_test_fill(new, 2);
	shim_cc_put_page(&ops, pool, &key, 3, old);
	shim_cc_put_page(&ops, pool, &key, 4, old);
	ck_assert(idle());
	fake_set_mode(&fb, FAKE_MUTE);
	fill_entries(pool, 8);
	shim_cc_put_page(&ops, pool, &key, 3, new);
	ck_assert_uint_eq(ops.cc.puts_dropped, 1);
	ck_assert_uint_eq(ops.cc.flushes_owed, 1);
	/* A second drop of the same handle owes nothing more. */
	shim_cc_put_page(&ops, pool, &key, 3, new);
	ck_assert_uint_eq(ops.cc.flushes_owed, 1);
	fake_set_mode(&fb, FAKE_NORMAL);
	ck_assert(idle());
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 3, out), -1);
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 4, out), 0);
	ck_assert(shim_test_same(out, 1));
	ck_assert(!ops.pools[pool].poisoned);
	fake_stop(&fb);
}
END_TEST

/*
 * An owed flush whose answer is lost (the backend mute past timeout_ms)
 * keeps its handle missing; a whole-object invalidate owed covers every
 * index of the object.
 */
START_TEST(owed_flush_unanswered_keeps_missing)
{
	struct tmem_oid key = { { 9 } };
	uint8_t buf[PAGE], out[PAGE];
	int pool;

	up(8, 2, 64);
	fb.ring.timeout_ms = 200;
	pool = shim_cc_init_fs(&ops, PAGE);
	shim_test_fill(buf, 3);
	shim_cc_put_page(&ops, pool, &key, 5, buf);
	ck_assert(idle());
	fake_set_mode(&fb, FAKE_MUTE);
	fill_entries(pool, 8);
	shim_cc_invalidate_inode(&ops, pool, &key);
	ck_assert_uint_eq(ops.cc.flushes_owed, 1);
	fake_set_mode(&fb, FAKE_NORMAL);
	ck_assert(idle());
	fake_set_mode(&fb, FAKE_MUTE);
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 5, out), -1);
	ck_assert_uint_eq(ops.pools[pool].owed, 1);
	fake_set_mode(&fb, FAKE_NORMAL);
	ck_assert(idle());
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 5, out), -1);
	ck_assert_uint_eq(ops.pools[pool].owed, 0);
	fake_stop(&fb);
}
END_TEST

/* With the owed table full the pool is poisoned: emptied at its next get. */
START_TEST(owed_table_full_poisons)
{
	struct tmem_oid key = { { 7 } };
	uint8_t buf[PAGE], out[PAGE];
	uint32_t i, n = SHIM_OWED_EPH_MAX + 8 + 10;
	int pool;

	up(8, 2, 64);
	pool = shim_cc_init_fs(&ops, PAGE);
	shim_test_fill(buf, 6);
	fake_set_mode(&fb, FAKE_MUTE);
	for (i = 0; i < n; i++)
		shim_cc_put_page(&ops, pool, &key, i, buf);
	ck_assert_uint_eq(ops.cc.flushes_owed, SHIM_OWED_EPH_MAX);
	ck_assert(ops.pools[pool].poisoned);
	fake_set_mode(&fb, FAKE_NORMAL);
	ck_assert(idle());
	/* Poisoned: the get empties the pool instead of trusting it. */
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 0, out), -1);
	ck_assert(!ops.pools[pool].poisoned);
	ck_assert_uint_eq(ops.pools[pool].owed, 0);
	ck_assert_int_eq(shim_cc_get_page(&ops, pool, &key, 1, out), -1);
	fake_stop(&fb);
}
END_TEST

/* Notification hold-off: a busy backend is not kicked per request. */
START_TEST(holdoff_limits_kicks)
{
	struct tmem_oid key = { { 8 } };
	uint8_t buf[PAGE];
	int pool, i, n = shim_test_quick() ? 50 : 500;

	up(64, 32, 256);
	pool = shim_cc_init_fs(&ops, PAGE);
	shim_test_fill(buf, 7);
	for (i = 0; i < n; i++)
		shim_cc_put_page(&ops, pool, &key, (uint64_t)i, buf);
	ck_assert(idle());
	ck_assert_uint_le(fb.ring.stats.kicks, fb.ring.stats.posted);
	ck_assert_uint_eq(fb.ring.stats.posted, fb.ring.stats.completed);
	ck_assert_uint_eq(fb.requests, fb.ring.stats.posted);
	fake_stop(&fb);
}
END_TEST

START_TEST(concurrent_stores)
{
	up(4, 2, 256);
	shim_fs_init(&ops, 0);
	ck_assert_uint_eq(shim_test_swappers(&ops, 4,
					     shim_test_quick() ? 8 : 60), 0);
	ck_assert_uint_eq(fb.ring.stats.timeouts, 0);
	ck_assert(idle());
	fake_stop(&fb);
}
END_TEST

/* Frontswap's swapoff flushes 16 swizzled objects of one type only. */
START_TEST(invalidate_area_by_type)
{
	uint8_t buf[PAGE];
	int i;

	up(16, 4, 256);
	shim_fs_init(&ops, 0);
	shim_test_fill(buf, 8);
	for (i = 0; i < 40; i++)
		ck_assert_int_eq(shim_fs_store(&ops, (unsigned int)(i % 2),
					       (uint64_t)i, buf), 0);
	shim_fs_invalidate_area(&ops, 1);
	ck_assert_uint_eq(fake_nr_pages(&fb), 20);
	shim_fs_invalidate_page(&ops, 0, 0);
	ck_assert(idle());
	ck_assert_uint_eq(fake_nr_pages(&fb), 19);
	fake_stop(&fb);
}
END_TEST

/* The page map against a backend that holds 4 pages and no backing. */
START_TEST(blk_map_without_backing)
{
	uint8_t map[8] = { 0 }, buf[PAGE], out[PAGE];
	struct shim_blk b;
	int i;

	up(16, 4, 4);
	ck_assert_int_eq(shim_blk_init(&b, &ops, 0, 8, map, 0), 0);
	ck_assert_int_eq(shim_blk_init(&b, &ops, 0, 0, map, 0), -EINVAL);
	ck_assert_int_eq(shim_blk_init(&b, &ops, 0, 8, map, 0), 0);
	for (i = 0; i < 5; i++) {
		shim_test_fill(buf, (uint32_t)i);
		ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_WRITE,
						  (uint64_t)i, buf, NULL),
				 i < 4 ? 0 : -EIO);
	}
	ck_assert_int_eq(shim_blk_where(&b, 4), SHIM_BLK_EMPTY);
	ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_READ, 4, out, NULL),
			 0);
	memset(buf, 0, PAGE);
	ck_assert(!memcmp(out, buf, PAGE));
	ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_DISCARD, 3, NULL,
					  NULL), 0);
	shim_test_fill(buf, 40);
	ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_WRITE, 4, buf, NULL),
			 0);
	ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_READ, 4, out, NULL),
			 0);
	ck_assert(shim_test_same(out, 40));
	ck_assert_int_eq(shim_blk_page_io(&b, 99, 0, out, NULL), -EINVAL);
	shim_blk_fini(&b);
	fake_stop(&fb);
}
END_TEST

/* A 64-page device on the fake backend, and 32 pages of test data. */
static struct {
	uint8_t map[64];
	uint8_t pages[32][PAGE];
	void *ptrs[32];
	struct shim_call calls[32];
	struct shim_blk b;
} bf;
static const uint8_t zero_page[PAGE];

static void blk_up(uint32_t entries, uint32_t slots, uint32_t capacity,
		   uint32_t seed)
{
	uint32_t i;

	memset(&bf, 0, sizeof(bf));
	up(entries, slots, capacity);
	ck_assert_int_eq(shim_blk_init(&bf.b, &ops, 0, 64, bf.map, 0), 0);
	shim_pool_ensure(&ops, bf.b.pool);
	for (i = 0; i < 32; i++) {
		shim_test_fill(bf.pages[i], seed + i);
		bf.ptrs[i] = bf.pages[i];
	}
}

static void blk_down(void)
{
	shim_blk_fini(&bf.b);
	ck_assert(idle());
	fake_stop(&fb);
}

static int blk_rw(enum shim_blk_op op, uint64_t pgno, uint32_t n)
{
	return shim_blk_rw(&bf.b, op, pgno,
			   op == SHIM_BLK_OP_DISCARD ? NULL : bf.ptrs, n,
			   bf.calls, NULL);
}

/*
 * A 32-page request is one batch: 32 requests, at most one doorbell each
 * way.  At most, not exactly: a backend still awake from the previous
 * batch (its adaptive spin, longer under valgrind or a loaded machine)
 * asked for no doorbell (req_event), and then none is rung.
 */
START_TEST(blk_batch_one_doorbell)
{
	uint64_t posted, kicks;
	uint32_t i;

	blk_up(64, 32, 256, 100);
	posted = fb.ring.stats.posted;
	kicks = fb.ring.stats.kicks;
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_WRITE, 16, 32), 0);
	ck_assert_uint_eq(fb.ring.stats.posted - posted, 32);
	ck_assert_uint_le(fb.ring.stats.kicks - kicks, 1);
	ck_assert_uint_eq(bf.b.stats.tmem_writes, 32);
	memset(bf.pages, 0, sizeof(bf.pages));
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_READ, 16, 32), 0);
	ck_assert_uint_eq(fb.ring.stats.posted - posted, 64);
	ck_assert_uint_le(fb.ring.stats.kicks - kicks, 2);
	for (i = 0; i < 32; i++)
		ck_assert_msg(shim_test_same(bf.pages[i], 100 + i), "page %u",
			      i);
	/* Past the end, too many, none: rejected before any request. */
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_READ, 40, 32), -EINVAL);
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_READ, 0, SHIM_BLK_BATCH + 1),
			 -EINVAL);
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_READ, 0, 0), -EINVAL);
	ck_assert_uint_eq(fb.ring.stats.posted - posted, 64);
	blk_down();
}
END_TEST

/*
 * Discarding a freed swap cluster: the pages in tmem are flushed in one
 * batch (no data slots needed), never-written ones cost no request, and
 * every page reads as zeros afterwards.
 */
START_TEST(blk_discard_batch)
{
	uint64_t posted, kicks;
	uint32_t i;

	blk_up(64, 4, 256, 400);
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_WRITE, 0, 24), 0);
	ck_assert(idle());
	ck_assert_uint_eq(fake_nr_pages(&fb), 24);
	posted = fb.ring.stats.posted;
	kicks = fb.ring.stats.kicks;
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_DISCARD, 0, 32), 0);
	ck_assert_uint_eq(fb.ring.stats.posted - posted, 24);
	ck_assert_uint_le(fb.ring.stats.kicks - kicks, 1);  /* see blk_batch_one_doorbell */
	ck_assert_uint_eq(fake_nr_pages(&fb), 0);
	ck_assert_uint_eq(bf.b.stats.discards, 32);
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_READ, 0, 32), 0);
	for (i = 0; i < 32; i++) {
		ck_assert_int_eq(shim_blk_where(&bf.b, i), SHIM_BLK_EMPTY);
		ck_assert_msg(!memcmp(bf.pages[i], zero_page, PAGE), "page %u",
			      i);
	}
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_DISCARD, 60, 8), -EINVAL);
	blk_down();
}
END_TEST

/*
 * A batch larger than the free slots goes in rounds; a refusal in the
 * middle (the backend holds 20 pages) fails only its own pages, and a
 * read batch mixes tmem pages with never-written ones.
 */
START_TEST(blk_batch_rounds_and_refusals)
{
	uint32_t i;

	blk_up(16, 4, 20, 200);
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_WRITE, 0, 32), -EIO);
	ck_assert_uint_eq(bf.b.stats.tmem_writes, 20);
	ck_assert_uint_eq(bf.b.stats.errors, 12);
	ck_assert_uint_le(fb.ring.stats.kicks, fb.ring.stats.posted);
	ck_assert_int_eq(shim_blk_where(&bf.b, 19), SHIM_BLK_TMEM);
	ck_assert_int_eq(shim_blk_where(&bf.b, 20), SHIM_BLK_EMPTY);
	memset(bf.pages, 0xaa, sizeof(bf.pages));
	ck_assert_int_eq(blk_rw(SHIM_BLK_OP_READ, 0, 32), 0);
	for (i = 0; i < 20; i++)
		ck_assert_msg(shim_test_same(bf.pages[i], 200 + i), "page %u",
			      i);
	for (i = 20; i < 32; i++)
		ck_assert_msg(!memcmp(bf.pages[i], zero_page, PAGE), "page %u",
			      i);
	ck_assert_uint_eq(fb.ring.stats.timeouts, 0);
	blk_down();
}
END_TEST

/*
 * A mute backend: the whole batch times out together, once, and the
 * batch returns the error that stopped it (shim_ops.h).
 */
START_TEST(batch_times_out_together)
{
	uint8_t buf[PAGE];
	struct shim_call calls[3];
	struct tmem_oid key = { { 5 } };
	uint64_t t0;
	int pool, i;

	up(16, 4, 64);
	fb.ring.timeout_ms = 300;
	pool = shim_pool_new(&ops, TMEM_POOL_PERSIST, NULL, 1);
	ck_assert_int_ge(pool, 0);
	shim_test_fill(buf, 9);
	for (i = 0; i < 3; i++) {
		tmem_req_init(&calls[i].req, TMEM_OP_PUT_PAGE, 0, &key,
			      (uint32_t)i);
		calls[i].src = buf;
		calls[i].dst = NULL;
	}
	fake_set_mode(&fb, FAKE_MUTE);
	t0 = shim_user_now_ms();
	ck_assert_int_eq(shim_pool_call_batch(&ops, pool, calls, 3),
			 -ETIMEDOUT);
	ck_assert_uint_lt(shim_user_now_ms() - t0, 600);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(calls[i].ret, -ETIMEDOUT);
	ck_assert_uint_eq(fb.ring.stats.timeouts, 3);
	fake_set_mode(&fb, FAKE_NORMAL);
	ck_assert(idle());
	shim_ring_detach(&fb.ring);
	ck_assert_int_eq(shim_pool_call_batch(&ops, pool, calls, 3),
			 -ENOTCONN);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(calls[i].ret, -ENOTCONN);
	fake_stop(&fb);
}
END_TEST

static Suite *core_suite(void)
{
	Suite *s = suite_create("shim-core");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, geometry_rejected);
	tcase_add_test(tc, swizzle_layout);
	tcase_add_test(tc, cleancache_roundtrip);
	tcase_add_test(tc, timeout_then_late_answer);
	tcase_add_test(tc, bad_response_ids_dropped);
	tcase_add_test(tc, overflow_detaches);
	tcase_add_test(tc, detach_wakes_waiters);
	tcase_add_test(tc, puts_never_wait_for_slots);
	tcase_add_test(tc, owed_flush_hides_the_older_page);
	tcase_add_test(tc, owed_flush_unanswered_keeps_missing);
	tcase_add_test(tc, owed_table_full_poisons);
	tcase_add_test(tc, holdoff_limits_kicks);
	tcase_add_test(tc, concurrent_stores);
	tcase_add_test(tc, invalidate_area_by_type);
	tcase_add_test(tc, blk_map_without_backing);
	tcase_add_test(tc, blk_batch_one_doorbell);
	tcase_add_test(tc, blk_batch_rounds_and_refusals);
	tcase_add_test(tc, blk_discard_batch);
	tcase_add_test(tc, batch_times_out_together);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(core_suite(), TMEM_TEST_ALWAYS_FORK);
}
