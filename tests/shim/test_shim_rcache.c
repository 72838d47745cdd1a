// SPDX-License-Identifier: MIT
/*
 * The tmemcache target's core (core/shim_rcache.c) against the in-process
 * fake backend and a fake disk: hit, miss, write and discard orderings,
 * the two races a write can lose against a read's put (each made
 * deterministic by writing from inside the read's disk callback), a
 * lost backend, a timed-out flush, and a threaded random run checked
 * against a model.  Runs under ASan+UBSan, TSan and valgrind.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/test_main.h"
#include "fake_backend.h"
#include "rcache_fixture.h"
#include "rcache_stress.h"
#include "shim_test_util.h"

#define NR_SLOTS 64

static struct fake_backend fb;
static struct shim_ops ops;
static struct rc_fixture fx;

static void up(uint64_t nr_blocks, uint32_t capacity)
{
	ck_assert_int_eq(fake_start(&fb, 64, 32, capacity), 0);
	shim_ops_init(&ops, &fb.ring);
	rc_fix_up(&fx, &ops, nr_blocks, NR_SLOTS);
}

static void down(void)
{
	rc_fix_down(&fx);
	fake_stop(&fb);
}

static int rd(uint64_t blk, uint32_t n)
{
	return rc_fix_read(&fx, blk, n);
}

static void wr(uint64_t blk, uint64_t ver)
{
	rc_fix_write(&fx, blk, ver);
}

START_TEST(rc_init_rejects)
{
	struct shim_rcache r;
	struct shim_rc_slot s[4];

	ck_assert_int_eq(fake_start(&fb, 16, 4, 16), 0);
	shim_ops_init(&ops, &fb.ring);
	ck_assert_int_eq(shim_rc_init(&r, &ops, 8, NULL, 4), -EINVAL);
	ck_assert_int_eq(shim_rc_init(&r, &ops, 0, s, 4), -EINVAL);
	ck_assert_int_eq(shim_rc_init(&r, &ops, 8, s, 3), -EINVAL);
	shim_rc_fini(&r);	/* never built: a no-op */
	ck_assert_int_eq(shim_rc_init(&r, &ops, 8, s, 4), 0);
	ck_assert_int_eq(ops.pools[r.pool].kind, 0);	/* private ephemeral */
	shim_rc_fini(&r);
	fake_stop(&fb);
}
END_TEST

/*
 * A miss reads the disk and puts; a hit is served from tmem without the
 * disk, in one get batch, and is put back (gets are exclusive), so a
 * third read hits too.  Out of range and oversized requests: -EINVAL.
 */
START_TEST(rc_miss_then_hit)
{
	uint64_t posted, kicks;
	uint32_t i;

	up(64, 256);
	posted = fb.ring.stats.posted;
	kicks = fb.ring.stats.kicks;
	ck_assert_int_eq(rd(8, 16), 0);
	for (i = 0; i < 16; i++)
		rc_fix_assert_ver(&fx, i, 8 + i, 0);
	ck_assert_uint_eq(fx.rc.stats.misses, 16);
	ck_assert_uint_eq(fx.rc.stats.puts, 16);
	ck_assert_uint_eq(fake_disk_reads(&fx.disk), 16);
	/* 16 gets, then 16 puts: two batches, at most a doorbell each. */
	ck_assert_uint_eq(fb.ring.stats.posted - posted, 32);
	ck_assert_uint_le(fb.ring.stats.kicks - kicks, 2);
	ck_assert_uint_eq(fake_nr_pages(&fb), 16);

	memset(fx.bufs, 0, sizeof(fx.bufs));
	ck_assert_int_eq(rd(8, 16), 0);
	for (i = 0; i < 16; i++)
		rc_fix_assert_ver(&fx, i, 8 + i, 0);
	ck_assert_uint_eq(fx.rc.stats.hits, 16);
	ck_assert_uint_eq(fake_disk_reads(&fx.disk), 16);
	ck_assert_uint_eq(fake_nr_pages(&fb), 16);	/* put back */
	ck_assert_int_eq(rd(8, 16), 0);
	ck_assert_uint_eq(fx.rc.stats.hits, 32);
	ck_assert_uint_eq(fake_disk_reads(&fx.disk), 16);

	ck_assert_int_eq(rd(60, 8), -EINVAL);
	ck_assert_int_eq(rd(64, 1), -EINVAL);
	ck_assert_int_eq(rd(0, 0), -EINVAL);
	ck_assert_int_eq(rd(0, SHIM_RC_BATCH + 1), -EINVAL);
	down();
}
END_TEST

/*
 * A request that straddles hits and misses reads only its runs of
 * misses from the disk (here two runs), and tmem's refusals (the fake
 * holds 4 pages) only cost the later hits.
 */
START_TEST(rc_mixed_runs_and_refusals)
{
	uint32_t i;

	up(64, 4);
	ck_assert_int_eq(rd(2, 1), 0);
	ck_assert_int_eq(rd(5, 1), 0);
	ck_assert_uint_eq(fake_disk_reads(&fx.disk), 2);
	ck_assert_int_eq(rd(0, 8), 0);	/* 0-1 miss, 2 hit, 3-4, 5, 6-7 */
	for (i = 0; i < 8; i++)
		rc_fix_assert_ver(&fx, i, i, 0);
	ck_assert_uint_eq(fx.rc.stats.hits, 2);
	ck_assert_uint_eq(fake_disk_reads(&fx.disk), 8);
	ck_assert_uint_eq(fx.rc.stats.puts, 2 + 4);
	ck_assert_uint_eq(fx.rc.stats.puts_refused, 4);
	down();
}
END_TEST

/* A completed write flushes the cached copy: the next read is the new data. */
START_TEST(rc_write_invalidates)
{
	up(64, 256);
	ck_assert_int_eq(rd(3, 1), 0);
	ck_assert_uint_eq(fake_nr_pages(&fb), 1);
	wr(3, 7);
	ck_assert_uint_eq(fake_nr_pages(&fb), 0);
	ck_assert_uint_eq(fx.rc.stats.invalidations, 1);
	ck_assert_int_eq(rd(3, 1), 0);
	rc_fix_assert_ver(&fx, 0, 3, 7);
	ck_assert_uint_eq(fx.rc.stats.misses, 2);
	/* Past the end: clipped, nothing sent, nothing waits. */
	shim_rc_invalidate(&fx.rc, 64, 5, fx.calls);
	shim_rc_invalidate(&fx.rc, 60, 100, fx.calls);
	ck_assert_uint_eq(fx.rc.stats.invalidations, 5);
	down();
}
END_TEST

/*
 * A discard over whole 1024-block objects is one FLUSH_OBJECT each, the
 * ragged ends are page flushes; a range wider than the slot table marks
 * every slot.
 */
START_TEST(rc_discard_by_object)
{
	uint64_t posted;
	uint32_t i;

	up(4096, 256);
	ck_assert_int_eq(rd(1008, 32), 0);	/* objects 0 and 1 */
	ck_assert_int_eq(rd(3000, 4), 0);	/* object 2 */
	ck_assert_uint_eq(fake_nr_pages(&fb), 36);
	posted = fb.ring.stats.posted;
	shim_rc_invalidate(&fx.rc, 0, 2048 + 3, fx.calls);
	ck_assert_uint_eq(fb.ring.stats.posted - posted, 2 + 3);
	ck_assert_uint_eq(fake_nr_pages(&fb), 4);
	for (i = 0; i < NR_SLOTS; i++) {
		ck_assert_uint_eq(fx.slots[i].gen, 1);
		ck_assert_uint_eq(fx.slots[i].inval, 0);
	}
	ck_assert_int_eq(rd(1020, 8), 0);
	ck_assert_uint_eq(fx.rc.stats.hits, 0);
	down();
}
END_TEST

/* The race hooks: write block arg->blk as version arg->ver, once. */
struct race {
	uint64_t blk, ver;
	int fired;
};

static void write_in_window(void *arg, uint64_t blk, uint32_t n)
{
	struct race *r = arg;

	(void)blk;
	(void)n;
	if (r->fired++)
		return;
	wr(r->blk, r->ver);
}

/*
 * Regression (the ordering the design exists for): a miss reads the
 * old block, a write of that block completes before the miss's put,
 * and the put must not install the old data after the write's flush.
 */
START_TEST(rc_late_miss_put_dropped)
{
	struct race r = { .blk = 4, .ver = 1 };

	up(64, 256);
	fx.disk.hook = write_in_window;
	fx.disk.hook_arg = &r;
	ck_assert_int_eq(rd(4, 1), 0);
	rc_fix_assert_ver(&fx, 0, 4, 0);	/* concurrent with the write: either is right */
	ck_assert_int_eq(rd(4, 1), 0);
	rc_fix_assert_ver(&fx, 0, 4, 1);
	ck_assert_uint_eq(fx.rc.stats.puts_raced, 1);
	down();
}
END_TEST

/*
 * A hit takes the block out of tmem (exclusive get); if a write of it
 * completes before the re-put, the re-put of the old data is dropped.
 * The window: the same request's miss on the next block.
 */
START_TEST(rc_hit_reput_after_write_dropped)
{
	struct race r = { .blk = 10, .ver = 5 };

	up(64, 256);
	ck_assert_int_eq(rd(10, 1), 0);
	fx.disk.hook = write_in_window;
	fx.disk.hook_arg = &r;
	ck_assert_int_eq(rd(10, 2), 0);	/* 10 hits, 11 misses */
	ck_assert_uint_eq(fx.rc.stats.hits, 1);
	rc_fix_assert_ver(&fx, 0, 10, 0);
	rc_fix_assert_ver(&fx, 1, 11, 0);
	fx.disk.hook = NULL;
	ck_assert_int_eq(rd(10, 1), 0);
	rc_fix_assert_ver(&fx, 0, 10, 5);
	ck_assert_uint_eq(fx.rc.stats.puts_raced, 1);
	down();
}
END_TEST

/* A disk error fails the read and puts nothing for the failed blocks. */
START_TEST(rc_disk_error)
{
	up(64, 256);
	ck_assert_int_eq(rd(0, 1), 0);
	__atomic_store_n(&fx.disk.fail, 1, __ATOMIC_RELAXED);
	ck_assert_int_eq(rd(0, 4), -EIO);
	ck_assert_uint_eq(fx.rc.stats.errors, 1);
	ck_assert_uint_eq(fx.rc.stats.hits, 1);
	ck_assert_uint_eq(fake_nr_pages(&fb), 1);	/* the hit, put back */
	down();
}
END_TEST

/* Without a backend every read is a prompt disk read; writes do not wait. */
START_TEST(rc_backend_gone)
{
	uint64_t t0;

	up(64, 256);
	ck_assert_int_eq(rd(0, 8), 0);
	wr(1, 3);
	shim_ring_detach(&fb.ring);
	t0 = shim_user_now_ms();
	ck_assert_int_eq(rd(0, 8), 0);
	rc_fix_assert_ver(&fx, 1, 1, 3);
	wr(2, 4);
	ck_assert_int_eq(rd(0, 8), 0);
	rc_fix_assert_ver(&fx, 2, 2, 4);
	ck_assert_uint_lt(shim_user_now_ms() - t0, 200);
	ck_assert_uint_eq(fx.rc.stats.hits, 0);
	ck_assert_uint_eq(fx.rc.stats.misses, 8 + 16);
	down();
}
END_TEST

/*
 * A flush that times out may still be served after a later put, so the
 * pool is poisoned, and the next read empties it before any get.
 */
START_TEST(rc_timed_out_flush_poisons)
{
	up(64, 256);
	fb.ring.timeout_ms = 200;
	ck_assert_int_eq(rd(6, 1), 0);
	fake_set_mode(&fb, FAKE_MUTE);
	wr(6, 2);
	ck_assert_uint_eq(ops.pools[fx.rc.pool].poisoned, 1);
	fake_set_mode(&fb, FAKE_NORMAL);
	ck_assert_int_eq(rd(6, 1), 0);
	rc_fix_assert_ver(&fx, 0, 6, 2);
	ck_assert_uint_eq(ops.pools[fx.rc.pool].poisoned, 0);
	ck_assert_uint_eq(fx.rc.stats.hits, 0);
	down();
}
END_TEST

/* Threads racing random requests on 48 blocks: the model finds no stale read. */
START_TEST(rc_stress_model)
{
	struct rc_stress_opts o = {
		.threads = 4,
		.ops = shim_test_quick() ? 2000 : 40000,
		.max_n = 8,
		.seed = 1,
	};
	struct rc_stress_result res;

	up(48, 256);
	ck_assert_int_eq(rc_stress_run(&fx.rc, &fx.disk, &o, &res), 0);
	ck_assert_uint_eq(res.corrupt, 0);
	ck_assert_uint_eq(res.stale, 0);
	ck_assert_uint_eq(res.errors, 0);
	ck_assert_uint_gt(fx.rc.stats.hits, 0);
	ck_assert_uint_gt(fx.rc.stats.puts_raced + fx.rc.stats.invalidations, 0);
	down();
}
END_TEST

static Suite *rcache_suite(void)
{
	Suite *s = suite_create("shim-rcache");
	TCase *tc = tcase_create("rcache");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, rc_init_rejects);
	tcase_add_test(tc, rc_miss_then_hit);
	tcase_add_test(tc, rc_mixed_runs_and_refusals);
	tcase_add_test(tc, rc_write_invalidates);
	tcase_add_test(tc, rc_discard_by_object);
	tcase_add_test(tc, rc_late_miss_put_dropped);
	tcase_add_test(tc, rc_hit_reput_after_write_dropped);
	tcase_add_test(tc, rc_disk_error);
	tcase_add_test(tc, rc_backend_gone);
	tcase_add_test(tc, rc_timed_out_flush_poisons);
	tcase_add_test(tc, rc_stress_model);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(rcache_suite(), TMEM_TEST_ALWAYS_FORK);
}
