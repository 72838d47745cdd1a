// SPDX-License-Identifier: MIT
/*
 * tmemcache's core against a real tmemd (through the harness's ring, as
 * the module runs it through xenbus): the hit/miss/write/discard
 * orderings on tmemd's ephemeral pool, a million random racing requests
 * with no stale read while tmemd evicts, and tmemd killed and restarted
 * under the cache (reads degrade to the disk, never to errors or stale
 * data), and tmemd's per-pool stats counting what the target counts.
 * TMEM_RC_OPS overrides the million.
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/test_main.h"
#include "rcache_fixture.h"
#include "rcache_stress.h"
#include "shim_harness.h"
#include "shim_test_util.h"
#include "tmemd_fixture.h"

#define CLIENT "shim-harness"
#define NR_SLOTS 1024

static struct tmemd_fixture fx;
static struct shim_harness hh;
static struct rc_fixture rf;

static void up(const char *conf, uint64_t nr_blocks)
{
	int ret = tmemd_fixture_start(&fx, conf);

	ck_assert_msg(ret == 0, "tmemd did not start: %d", ret);
	ck_assert_int_eq(shim_harness_start(&hh, fx.sock, 64, 32, 0), 0);
	ck_assert_int_eq(shim_harness_wait(&hh, 1, 5000), 0);
	rc_fix_up(&rf, &hh.ops, nr_blocks, NR_SLOTS);
}

static void down(void)
{
	rc_fix_down(&rf);
	shim_harness_stop(&hh);
	tmemd_fixture_stop(&fx);
}

static int rd(uint64_t blk, uint32_t n)
{
	return rc_fix_read(&rf, blk, n);
}

static void wr(uint64_t blk, uint64_t ver)
{
	rc_fix_write(&rf, blk, ver);
}

/*
 * Miss -> put; hit served from tmemd (exclusive get, then put back);
 * write -> flushed, the next read is the new data; a discard over whole
 * objects leaves tmemd nothing to return.
 */
START_TEST(rc_tmemd_orderings)
{
	uint32_t i;

	up(NULL, 4096);
	ck_assert_int_eq(rd(1000, 32), 0);
	ck_assert_uint_eq(rf.rc.stats.misses, 32);
	ck_assert_uint_eq(rf.rc.stats.puts, 32);
	memset(rf.bufs, 0, sizeof(rf.bufs));
	ck_assert_int_eq(rd(1000, 32), 0);
	for (i = 0; i < 32; i++)
		rc_fix_assert_ver(&rf, i, 1000 + i, 0);
	ck_assert_uint_eq(rf.rc.stats.hits, 32);
	ck_assert_uint_eq(fake_disk_reads(&rf.disk), 32);

	wr(1005, 9);
	ck_assert_int_eq(rd(1000, 32), 0);
	rc_fix_assert_ver(&rf, 5, 1005, 9);
	ck_assert_uint_eq(rf.rc.stats.hits, 63);

	shim_rc_invalidate(&rf.rc, 0, 2048, rf.calls);	/* objects 0 and 1 */
	ck_assert_int_eq(rd(1000, 32), 0);
	ck_assert_uint_eq(rf.rc.stats.hits, 63);
	ck_assert_uint_eq(rf.rc.stats.errors, 0);
	ck_assert_uint_eq(hh.ring.stats.bad_responses, 0);
	down();
}
END_TEST

static uint64_t stress_ops(void)
{
	const char *e = getenv("TMEM_RC_OPS");

	if (e)
		return strtoull(e, NULL, 10);
	return shim_test_quick() ? 20000 : 1000000;
}

/*
 * A million requests (reads 70%, writes 20%, discards 10%, 1-8 blocks)
 * from 4 threads over 2048 blocks, with tmemd's ephemeral quota at a
 * quarter of them: tmemd evicts and refuses all along, and the model
 * finds no stale and no torn block.
 */
START_TEST(rc_tmemd_million_random_ops)
{
	struct rc_stress_opts o = {
		.threads = 4, .ops = stress_ops(), .max_n = 8, .seed = 7,
	};
	struct rc_stress_result res;

	up("[client " CLIENT "]\nephemeral-max = 2M\ncompress = off\n", 2048);
	ck_assert_int_eq(rc_stress_run(&rf.rc, &rf.disk, &o, &res), 0);
	printf("rcache vs tmemd: %llu requests, %llu blocks read, hits %llu "
	       "misses %llu puts %llu refused %llu raced %llu invalidations "
	       "%llu, stale %llu corrupt %llu\n",
	       (unsigned long long)o.ops,
	       (unsigned long long)res.blocks_read,
	       (unsigned long long)rf.rc.stats.hits,
	       (unsigned long long)rf.rc.stats.misses,
	       (unsigned long long)rf.rc.stats.puts,
	       (unsigned long long)rf.rc.stats.puts_refused,
	       (unsigned long long)rf.rc.stats.puts_raced,
	       (unsigned long long)rf.rc.stats.invalidations,
	       (unsigned long long)res.stale,
	       (unsigned long long)res.corrupt);
	ck_assert_uint_eq(res.reads + res.writes + res.discards, o.ops);
	ck_assert_uint_eq(res.stale, 0);
	ck_assert_uint_eq(res.corrupt, 0);
	ck_assert_uint_eq(res.errors, 0);
	ck_assert_uint_gt(rf.rc.stats.hits, 0);
	ck_assert_uint_eq(hh.ring.stats.timeouts, 0);
	down();
}
END_TEST

/*
 * tmemd killed under the cache: reads go to the disk at once, a write
 * made meanwhile is read back new; after a new tmemd answers, the pool
 * is recreated (empty: nothing old can hit) and hits resume.
 */
START_TEST(rc_tmemd_restart)
{
	uint64_t t0;
	uint32_t i;

	up(NULL, 256);
	ck_assert_int_eq(rd(0, 16), 0);
	tmemd_fixture_kill(&fx, SIGKILL);
	t0 = shim_user_now_ms();
	while (shim_ring_gen(&hh.ring) && shim_user_now_ms() - t0 < 2000)
		usleep(1000);
	ck_assert_uint_eq(shim_ring_gen(&hh.ring), 0);
	t0 = shim_user_now_ms();
	wr(3, 4);
	ck_assert_int_eq(rd(0, 16), 0);
	for (i = 0; i < 16; i++)
		rc_fix_assert_ver(&rf, i, i, i == 3 ? 4 : 0);
	ck_assert_msg(shim_user_now_ms() - t0 < 200, "disconnected I/O waited");

	ck_assert_int_eq(tmemd_fixture_restart(&fx), 0);
	ck_assert_int_eq(shim_harness_wait(&hh, 2, 5000), 0);
	ck_assert_int_eq(rd(0, 16), 0);	/* new, empty pool: misses, puts */
	ck_assert_uint_eq(rf.rc.stats.hits, 0);
	wr(4, 6);
	ck_assert_int_eq(rd(0, 16), 0);
	for (i = 0; i < 16; i++)
		rc_fix_assert_ver(&rf, i, i, i == 3 ? 4 : i == 4 ? 6 : 0);
	ck_assert_uint_eq(rf.rc.stats.hits, 15);
	ck_assert_uint_eq(rf.rc.stats.errors, 0);
	down();
}
END_TEST

#ifndef SHIM_TEST_TMEMCTL
#define SHIM_TEST_TMEMCTL "build/tmemctl"
#endif

/* This client's ops object of its private ephemeral pool, or NULL. */
static json_t *eph_pool_ops(json_t *doc)
{
	json_t *cl, *pool;
	size_t i, j;

	json_array_foreach(json_object_get(doc, "clients"), i, cl) {
		if (strcmp(json_string_value(json_object_get(cl, "name")) ?: "",
			   CLIENT))
			continue;
		json_array_foreach(json_object_get(cl, "pools"), j, pool)
			if (!json_is_true(json_object_get(pool, "persistent")) &&
			    !json_is_true(json_object_get(pool, "shared")))
				return json_object_get(pool, "ops");
	}
	return NULL;
}

static uint64_t ops_key(json_t *ops, const char *key)
{
	return (uint64_t)json_integer_value(json_object_get(ops, key));
}

/*
 * tmemctl stats --json shows the device's pool with the target's hits
 * (succ_gets), misses (failed_gets), puts and invalidations (flushes:
 * one per block, or one per whole object).
 */
START_TEST(rc_tmemd_pool_stats)
{
	char cmd[600];
	json_error_t jerr;
	json_t *doc, *ops;
	FILE *p;

	up(NULL, 4096);
	ck_assert_int_eq(rd(0, 32), 0);
	ck_assert_int_eq(rd(0, 32), 0);
	ck_assert_int_eq(rd(100, 8), 0);
	wr(3, 1);
	wr(4, 1);
	shim_rc_invalidate(&rf.rc, 1024, 1024 + 2, rf.calls);
	snprintf(cmd, sizeof(cmd), "%s --socket %s/control.sock stats --json",
		 getenv("TMEMCTL") ?: SHIM_TEST_TMEMCTL, fx.dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	doc = json_loadf(p, 0, &jerr);
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_msg(doc != NULL, "stats: %s", jerr.text);
	ops = eph_pool_ops(doc);
	ck_assert_msg(ops != NULL, "no ephemeral pool of " CLIENT);
	ck_assert_uint_eq(ops_key(ops, "succ_gets"), rf.rc.stats.hits);
	ck_assert_uint_eq(ops_key(ops, "succ_gets"), 32);
	ck_assert_uint_eq(ops_key(ops, "failed_gets"), rf.rc.stats.misses);
	ck_assert_uint_eq(ops_key(ops, "failed_gets"), 40);
	ck_assert_uint_eq(ops_key(ops, "succ_puts"), rf.rc.stats.puts);
	ck_assert_uint_eq(ops_key(ops, "flush_pages"), 2 + 2);
	ck_assert_uint_eq(ops_key(ops, "flush_objects"), 1);
	ck_assert_uint_eq(rf.rc.stats.invalidations, 2 + 1026);
	json_decref(doc);
	down();
}
END_TEST

static Suite *rcache_tmemd_suite(void)
{
	Suite *s = suite_create("shim-rcache-tmemd");
	TCase *tc = tcase_create("rcache");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, rc_tmemd_orderings);
	tcase_add_test(tc, rc_tmemd_million_random_ops);
	tcase_add_test(tc, rc_tmemd_restart);
	tcase_add_test(tc, rc_tmemd_pool_stats);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(rcache_tmemd_suite(), TMEM_TEST_ALWAYS_FORK);
}
