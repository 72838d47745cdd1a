// SPDX-License-Identifier: MIT
/*
 * The kernel shim's translation core against a real tmemd, driven with
 * the call sequences the kernel makes (see each test's comment).  The
 * harness (shim_harness.c) stands in for xenbus and the event channel.
 */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/test_main.h"
#include "shim_harness.h"
#include "shim_test_util.h"
#include "tmemd_fixture.h"

#define PAGE 4096
/* Persistent requests wait this long for a restarted tmemd (the module's
 * persist_wait_ms, shortened). */
#define PERSIST_WAIT_MS 10000u
#define CLIENT "shim-harness"
#define UUID_OK "0123abcd-89ab-cdef-0123-456789abcdef"
/* The same UUID as RFC 4122 bytes, the way a superblock holds it. */
static const uint8_t uuid_ok[16] = { 0x01, 0x23, 0xab, 0xcd, 0x89, 0xab,
				     0xcd, 0xef, 0x01, 0x23, 0x45, 0x67,
				     0x89, 0xab, 0xcd, 0xef };
static const uint8_t uuid_denied[16] = { 0xde, 0xad };

static struct tmemd_fixture fx;
static struct shim_harness hh;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* tmemd (with conf, if any) plus a connected harness of this geometry. */
static void up(const char *conf, uint32_t entries, uint32_t slots)
{
	int ret = tmemd_fixture_start(&fx, conf);

	ck_assert_msg(ret == 0, "tmemd did not start: %d (%s)", ret,
		      strerror(-ret));
	ck_assert_int_eq(shim_harness_start(&hh, fx.sock, entries, slots,
					    PERSIST_WAIT_MS), 0);
	ck_assert_int_eq(shim_harness_wait(&hh, 1, 5000), 0);
}

/* up() with tmemd's store in an arena file on tmpfs (path out), so a
 * killed tmemd's pages are there for the next one; the caller unlinks. */
static void up_with_arena(char arena[64])
{
	char conf[200];

	snprintf(arena, 64, "/dev/shm/tmem-shim-arena-%d", (int)getpid());
	unlink(arena);
	snprintf(conf, sizeof(conf), "[tmemd]\narena = %s\n", arena);
	up(conf, 32, 16);
}

/* n times: run_ms of work, SIGKILL tmemd, down_ms, a new tmemd on the
 * same arena, the harness reconnected; then run_ms more. */
static void kill_and_restart(int n, unsigned run_ms, unsigned down_ms)
{
	for (int k = 0; k < n; k++) {
		usleep(run_ms * 1000);
		tmemd_fixture_kill(&fx, SIGKILL);
		usleep(down_ms * 1000);
		ck_assert_int_eq(tmemd_fixture_restart(&fx), 0);
		ck_assert_int_eq(shim_harness_wait(&hh, (uint64_t)k + 2, 5000), 0);
	}
	usleep(run_ms * 1000);
}

static void down(void)
{
	shim_harness_stop(&hh);
	tmemd_fixture_stop(&fx);
}

static struct tmem_oid file_key(uint64_t ino)
{
	struct tmem_oid k = { { ino, 0, 0 } };

	return k;
}

/*
 * A filesystem's life under cleancache: mount -> init_fs; readpage of a
 * page never seen -> get_page misses; reclaim of the clean page ->
 * put_page; readpage -> get_page hits once (private ephemeral gets are
 * exclusive); truncate -> invalidate_inode; umount -> invalidate_fs.
 */
START_TEST(cleancache_sequence)
{
	struct shim_ops *o = &hh.ops;
	struct tmem_oid ino = file_key(42);
	uint8_t buf[PAGE], out[PAGE];
	int pool;

	up(NULL, 32, 16);
	pool = shim_cc_init_fs(o, PAGE);
	ck_assert_int_ge(pool, 0);

	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 7, out), -1);
	ck_assert_uint_eq(o->cc.failed_gets, 1);

	shim_test_fill(buf, 7);
	shim_cc_put_page(o, pool, &ino, 7, buf);
	shim_test_fill(buf, 8);
	shim_cc_put_page(o, pool, &ino, 8, buf);
	ck_assert_int_eq(shim_harness_quiesce(&hh, 2000), 0);
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 7, out), 0);
	ck_assert(shim_test_same(out, 7));
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 7, out), -1);
	ck_assert_uint_eq(o->cc.succ_gets, 1);

	/* An index above 32 bits is skipped: never stored, never found. */
	shim_cc_put_page(o, pool, &ino, 1ull << 32, buf);
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 1ull << 32, out), -1);

	/* invalidate_page of one page, then truncate the whole inode. */
	shim_cc_put_page(o, pool, &ino, 9, buf);
	shim_cc_invalidate_page(o, pool, &ino, 9);
	shim_cc_invalidate_inode(o, pool, &ino);
	ck_assert_int_eq(shim_harness_quiesce(&hh, 2000), 0);
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 8, out), -1);
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 9, out), -1);
	ck_assert_uint_eq(o->cc.puts, 4);
	ck_assert_uint_eq(o->cc.flushes, 2);

	/* umount: the pool is destroyed; its id no longer works. */
	shim_cc_put_page(o, pool, &ino, 10, buf);
	shim_cc_invalidate_fs(o, pool);
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 10, out), -1);
	ck_assert_uint_eq(hh.ring.stats.bad_responses, 0);
	down();
}
END_TEST

/*
 * A clustered filesystem (ocfs2) mounts with init_shared_fs(uuid): an
 * authorised UUID gives a shared pool whose gets are not exclusive; an
 * unauthorised one is refused by tmemd, and the shim then just misses.
 */
START_TEST(cleancache_shared)
{
	struct shim_ops *o = &hh.ops;
	struct tmem_oid ino = file_key(5);
	uint8_t buf[PAGE], out[PAGE];
	int pool, denied;

	up("[client " CLIENT "]\nshared-auth = " UUID_OK "\n", 32, 16);
	pool = shim_cc_init_shared_fs(o, uuid_ok, PAGE);
	ck_assert_int_ge(pool, 0);
	ck_assert_int_ge(o->pools[pool].remote_id, 0);
	shim_test_fill(buf, 55);
	shim_cc_put_page(o, pool, &ino, 3, buf);
	ck_assert_int_eq(shim_harness_quiesce(&hh, 2000), 0);
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 3, out), 0);
	ck_assert(shim_test_same(out, 55));
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 3, out), 0);

	denied = shim_cc_init_shared_fs(o, uuid_denied, PAGE);
	ck_assert_int_ge(denied, 0);
	ck_assert_int_lt(o->pools[denied].remote_id, 0);
	shim_cc_put_page(o, denied, &ino, 3, buf);
	ck_assert_int_eq(shim_cc_get_page(o, denied, &ino, 3, out), -1);
	shim_cc_invalidate_fs(o, denied);
	shim_cc_invalidate_fs(o, pool);
	down();
}
END_TEST

/*
 * swapon -> init(type); swap_writepage -> store; swap_readpage -> load
 * (persistent: a load does not remove the page); swap slot freed ->
 * invalidate_page; swapoff -> invalidate_area.
 */
START_TEST(frontswap_sequence)
{
	struct shim_ops *o = &hh.ops;
	uint8_t buf[PAGE], out[PAGE];
	uint32_t i, n = 64;

	up(NULL, 32, 16);
	shim_fs_init(o, 0);
	shim_fs_init(o, 1);
	ck_assert_int_ge(o->swap_pool, 0);
	for (i = 0; i < n; i++) {
		shim_test_fill(buf, i);
		ck_assert_int_eq(shim_fs_store(o, i % 2, i, buf), 0);
	}
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(shim_fs_load(o, i % 2, i, out), 0);
		ck_assert(shim_test_same(out, i));
	}
	ck_assert_int_eq(shim_fs_load(o, 0, 0, out), 0);
	ck_assert_uint_eq(o->fs.succ_stores, n);
	ck_assert_uint_eq(o->fs.loads, n + 1);

	/* Overwrite keeps the newest data (put-put-get). */
	shim_test_fill(buf, 1000);
	ck_assert_int_eq(shim_fs_store(o, 0, 2, buf), 0);
	ck_assert_int_eq(shim_fs_load(o, 0, 2, out), 0);
	ck_assert(shim_test_same(out, 1000));

	shim_fs_invalidate_page(o, 0, 2);
	ck_assert_int_eq(shim_harness_quiesce(&hh, 2000), 0);
	ck_assert_int_eq(shim_fs_load(o, 0, 2, out), -1);

	/* An offset above 32 bits is refused, not truncated. */
	ck_assert_int_eq(shim_fs_store(o, 0, 1ull << 32, buf), -1);
	ck_assert_uint_eq(o->fs.failed_stores, 1);

	/* swapoff of type 1 flushes all of type 1 and nothing of type 0. */
	shim_fs_invalidate_area(o, 1);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(shim_fs_load(o, i % 2, i, out),
				 i % 2 || i == 2 ? -1 : 0);
	down();
}
END_TEST

/* tmemd refuses stores over the client's persistent quota. */
START_TEST(frontswap_quota)
{
	struct shim_ops *o = &hh.ops;
	uint8_t buf[PAGE], out[PAGE];
	uint32_t i, stored = 0;

	up("[client " CLIENT "]\npersistent-max = 64K\ncompress = off\n", 32, 16);
	shim_fs_init(o, 0);
	for (i = 0; i < 32; i++) {
		shim_test_fill(buf, i);
		if (shim_fs_store(o, 0, i, buf) == 0)
			stored++;
	}
	ck_assert_uint_eq(stored, 16);
	ck_assert_uint_eq(o->fs.failed_stores, 16);
	for (i = 0; i < 32; i++)
		if (shim_fs_load(o, 0, i, out) == 0)
			ck_assert(shim_test_same(out, i));
	down();
}
END_TEST

/* Four tasks swapping at once through a small ring (8 entries, 4 slots). */
START_TEST(frontswap_concurrent)
{
	uint32_t n = shim_test_quick() ? 64 : 512;

	up(NULL, 8, 4);
	shim_fs_init(&hh.ops, 0);
	ck_assert_uint_eq(shim_test_swappers(&hh.ops, 4, n), 0);
	ck_assert_uint_eq(hh.ops.fs.succ_stores, 4u * n);
	ck_assert_uint_eq(hh.ring.stats.timeouts, 0);
	down();
}
END_TEST

/*
 * cleancache put_page runs with interrupts off: with tmemd stopped and
 * every slot taken, further puts return at once, dropped.  Their
 * replacement flushes take the free entries, and the rest are owed
 * (shim_owed_eph.c): the next get sends them first, so a dropped page never
 * hits, while the pages that were stored still do.
 */
START_TEST(cleancache_slots_busy)
{
	struct shim_ops *o = &hh.ops;
	struct tmem_oid ino = file_key(9);
	uint8_t buf[PAGE], out[PAGE];
	uint64_t t0, worst = 0;
	int pool, i;

	up(NULL, 8, 4);
	pool = shim_cc_init_fs(o, PAGE);
	ck_assert_int_ge(pool, 0);
	shim_test_fill(buf, 1);
	shim_cc_put_page(o, pool, &ino, 500, buf);
	ck_assert_int_eq(shim_harness_quiesce(&hh, 2000), 0);

	ck_assert_int_eq(tmemd_fixture_freeze(&fx), 0);
	for (i = 0; i < 200; i++) {
		t0 = now_ms();
		shim_cc_put_page(o, pool, &ino, (uint64_t)i, buf);
		if (now_ms() - t0 > worst)
			worst = now_ms() - t0;
	}
	ck_assert_uint_eq(o->cc.puts_dropped, 200 - 4);
	ck_assert_msg(worst < 50, "a put waited %llu ms",
		      (unsigned long long)worst);
	/* 4 puts took the slots, 4 flushes the other entries. */
	ck_assert_uint_eq(o->cc.flushes_owed, 200 - 8);
	ck_assert(!o->pools[pool].poisoned);
	ck_assert_int_eq(kill(fx.pid, SIGCONT), 0);
	ck_assert_int_eq(shim_harness_quiesce(&hh, 3000), 0);

	/* Page 500 was never replaced; 0 was stored; 150 was dropped. */
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 500, out), 0);
	ck_assert(shim_test_same(out, 1));
	ck_assert_uint_eq(o->pools[pool].owed, 0);
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 150, out), -1);
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 0, out), 0);
	ck_assert(shim_test_same(out, 1));
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 0, out), -1);
	shim_test_fill(buf, 2);
	shim_cc_put_page(o, pool, &ino, 0, buf);
	ck_assert_int_eq(shim_harness_quiesce(&hh, 2000), 0);
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 0, out), 0);
	ck_assert(shim_test_same(out, 2));
	down();
}
END_TEST

static void *restart_later(void *arg)
{
	(void)arg;
	usleep(300 * 1000);
	return (void *)(intptr_t)tmemd_fixture_restart(&fx);
}

/*
 * tmemd killed in the middle of a run, without an arena, and a new one
 * started on the same runtime dir: while it is down ephemeral requests
 * miss or drop promptly, and a persistent store waits for the new tmemd
 * and lands there.  Nothing of the old one survives: the page stored
 * before the kill is gone, and the shim's pools are new ones.
 */
START_TEST(backend_restart)
{
	struct shim_ops *o = &hh.ops;
	struct tmem_oid ino = file_key(77);
	uint8_t buf[PAGE], out[PAGE];
	pthread_t restarter;
	void *rc;
	uint64_t t0;
	int pool;

	up(NULL, 32, 16);
	shim_fs_init(o, 0);
	pool = shim_cc_init_fs(o, PAGE);
	shim_test_fill(buf, 3);
	ck_assert_int_eq(shim_fs_store(o, 0, 1, buf), 0);

	tmemd_fixture_kill(&fx, SIGKILL);
	t0 = now_ms();
	while (shim_ring_gen(&hh.ring) && now_ms() - t0 < 2000)
		usleep(1000);
	ck_assert_uint_eq(shim_ring_gen(&hh.ring), 0);
	t0 = now_ms();
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 1, out), -1);
	shim_cc_put_page(o, pool, &ino, 1, buf);
	ck_assert_msg(now_ms() - t0 < 100, "disconnected ephemeral ops waited");

	ck_assert_int_eq(pthread_create(&restarter, NULL, restart_later, NULL), 0);
	ck_assert_int_eq(shim_fs_store(o, 0, 2, buf), 0);
	ck_assert_msg(now_ms() - t0 >= 250, "the store did not wait for tmemd");
	ck_assert_int_eq(pthread_join(restarter, &rc), 0);
	ck_assert_int_eq((intptr_t)rc, 0);
	ck_assert_int_eq(shim_harness_wait(&hh, 2, 5000), 0);
	ck_assert_uint_eq(__atomic_load_n(&hh.resumes, __ATOMIC_ACQUIRE), 0);
	ck_assert_int_eq(shim_fs_load(o, 0, 2, out), 0);
	ck_assert(shim_test_same(out, 3));
	ck_assert_int_eq(shim_fs_load(o, 0, 1, out), -1);
	shim_cc_put_page(o, pool, &ino, 1, buf);
	ck_assert_int_eq(shim_harness_quiesce(&hh, 2000), 0);
	ck_assert_int_eq(shim_cc_get_page(o, pool, &ino, 1, out), 0);
	down();
}
END_TEST

/* A swapper for restart_keeps_pages: stores and loads its own offsets,
 * each page's content derived from its offset and a version. */
struct churn {
	struct shim_ops *o;
	uint32_t base, n;
	int stop;			/* atomic */
	uint64_t ops, failed, wrong;
};

static uint32_t churn_seed(uint32_t off, uint32_t ver)
{
	return off * 1000u + ver;
}

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	uint32_t ver[64] = { 0 }, i;
	uint8_t buf[PAGE], out[PAGE];

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		i = (uint32_t)(c->ops % c->n);
		if (ver[i] && c->ops % 3) {
			if (shim_fs_load(c->o, 0, c->base + i, out))
				c->failed++;
			else if (!shim_test_same(out, churn_seed(c->base + i, ver[i])))
				c->wrong++;
		} else {
			shim_test_fill(buf, churn_seed(c->base + i, ver[i] + 1));
			if (shim_fs_store(c->o, 0, c->base + i, buf))
				c->failed++;
			else
				ver[i]++;
		}
		c->ops++;
	}
	return NULL;
}

/*
 * The point of a kept arena: tmemd killed with SIGKILL three times while
 * two swappers store and load, each time restarted on the same arena.
 * The shim resumes its session, takes its persistent pool back with the
 * same id, and repeats the requests the kill cut off: not one store
 * fails, not one load misses or returns the wrong bytes.  The ephemeral
 * pool is dropped at each resume (see shim_ops.h).
 */
START_TEST(restart_keeps_pages)
{
	char arena[64];
	struct churn c[2];
	pthread_t t[2];
	uint8_t buf[PAGE], out[PAGE];
	struct tmem_oid ino = file_key(5);
	int pool, k;

	up_with_arena(arena);
	shim_fs_init(&hh.ops, 0);
	pool = shim_cc_init_fs(&hh.ops, PAGE);
	shim_test_fill(buf, 9);
	shim_cc_put_page(&hh.ops, pool, &ino, 0, buf);
	for (k = 0; k < 2; k++) {
		c[k] = (struct churn){ .o = &hh.ops, .base = 64u * (uint32_t)k, .n = 64 };
		ck_assert_int_eq(pthread_create(&t[k], NULL, churn_main, &c[k]), 0);
	}
	kill_and_restart(3, 200, 100);
	for (k = 0; k < 2; k++) {
		__atomic_store_n(&c[k].stop, 1, __ATOMIC_RELEASE);
		pthread_join(t[k], NULL);
		ck_assert_msg(c[k].failed == 0 && c[k].wrong == 0,
			      "swapper %d: %llu ops, %llu failed, %llu wrong", k,
			      (unsigned long long)c[k].ops,
			      (unsigned long long)c[k].failed,
			      (unsigned long long)c[k].wrong);
		ck_assert_uint_gt(c[k].ops, 100);
	}
	ck_assert_uint_eq(__atomic_load_n(&hh.resumes, __ATOMIC_ACQUIRE), 3);
	ck_assert_uint_ge(hh.ops.pools_resumed, 3);
	ck_assert_int_eq(shim_cc_get_page(&hh.ops, pool, &ino, 0, out), -1);
	down();
	unlink(arena);	/* the arena outlives tmemd: gone only now */
}
END_TEST

/*
 * What the caller was told is gone stays gone across a restart that kept
 * the pool: a frontswap invalidation made while tmemd was down (it
 * cannot wait), and a store over an older page that failed because
 * tmemd stayed away past persist_wait_ms, are each owed a flush, sent
 * before the pool is handed back.  Without it both loads below would
 * return the old page.
 */
START_TEST(restart_owes_flushes)
{
	struct shim_ops *o = &hh.ops;
	char arena[64];
	uint8_t buf[PAGE], out[PAGE];
	uint64_t t0;

	up_with_arena(arena);
	shim_fs_init(o, 0);
	shim_test_fill(buf, 1);
	ck_assert_int_eq(shim_fs_store(o, 0, 7, buf), 0);
	ck_assert_int_eq(shim_fs_store(o, 0, 8, buf), 0);
	ck_assert_int_eq(shim_fs_store(o, 0, 9, buf), 0);

	tmemd_fixture_kill(&fx, SIGKILL);
	t0 = now_ms();
	while (shim_ring_gen(&hh.ring) && now_ms() - t0 < 2000)
		usleep(1000);
	shim_fs_invalidate_page(o, 0, 7);
	o->persist_wait_ms = 300;
	shim_test_fill(buf, 2);
	ck_assert_int_eq(shim_fs_store(o, 0, 8, buf), -1);
	o->persist_wait_ms = PERSIST_WAIT_MS;
	ck_assert_uint_eq(o->nr_owed_persist, 2);

	ck_assert_int_eq(tmemd_fixture_restart(&fx), 0);
	ck_assert_int_eq(shim_harness_wait(&hh, 2, 5000), 0);
	ck_assert_uint_eq(__atomic_load_n(&hh.resumes, __ATOMIC_ACQUIRE), 1);
	ck_assert_int_eq(shim_fs_load(o, 0, 7, out), -1);
	ck_assert_int_eq(shim_fs_load(o, 0, 8, out), -1);
	ck_assert_int_eq(shim_fs_load(o, 0, 9, out), 0);
	ck_assert(shim_test_same(out, 1));
	ck_assert_uint_eq(o->lost_replayed, 2);
	ck_assert_uint_eq(o->nr_owed_persist, 0);
	down();
	unlink(arena);	/* the arena outlives tmemd: gone only now */
}
END_TEST

/* A /dev/tmemswap0 without backing for blk_restart_keeps_pages: batches
 * of 8 pages written and read back, each page's content its pgno and a
 * version. */
struct blk_churn {
	struct shim_blk *b;
	int stop;			/* atomic */
	uint64_t rounds, errors, wrong;
};

static void *blk_churn_main(void *arg)
{
	struct blk_churn *c = arg;
	static uint8_t bufs[8][PAGE];
	struct shim_call calls[8];
	void *pages[8];
	uint32_t i, base, ver;

	for (i = 0; i < 8; i++)
		pages[i] = bufs[i];
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		base = (uint32_t)(c->rounds % 8) * 8;
		ver = (uint32_t)c->rounds;
		for (i = 0; i < 8; i++)
			shim_test_fill(bufs[i], churn_seed(base + i, ver));
		if (shim_blk_rw(c->b, SHIM_BLK_OP_WRITE, base, pages, 8, calls, NULL))
			c->errors++;
		memset(bufs, 0, sizeof(bufs));
		if (shim_blk_rw(c->b, SHIM_BLK_OP_READ, base, pages, 8, calls, NULL))
			c->errors++;
		for (i = 0; i < 8; i++)
			c->wrong += !shim_test_same(bufs[i], churn_seed(base + i, ver));
		c->rounds++;
	}
	return NULL;
}

/*
 * The block path's batches across kills of tmemd (kept arena): a batch
 * whose connection goes under it is repeated from its first unanswered
 * page, so a device without backing never returns an I/O error.  (A
 * batch used to keep those pages' -ENOTCONN: 8 I/O errors in e2e-xen's
 * pv-stock.)
 */
START_TEST(blk_restart_keeps_pages)
{
	static uint8_t map[64];
	char arena[64];
	struct blk_churn c = { 0 };
	struct shim_blk b;
	pthread_t t;

	up_with_arena(arena);
	memset(map, 0, sizeof(map));
	ck_assert_int_eq(shim_blk_init(&b, &hh.ops, 2, 64, map, 0), 0);
	c.b = &b;
	ck_assert_int_eq(pthread_create(&t, NULL, blk_churn_main, &c), 0);
	kill_and_restart(4, 150, 50);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ck_assert_msg(c.errors == 0 && c.wrong == 0 && b.stats.errors == 0,
		      "%llu rounds: %llu failed, %llu wrong pages, %llu I/O errors",
		      (unsigned long long)c.rounds, (unsigned long long)c.errors,
		      (unsigned long long)c.wrong, (unsigned long long)b.stats.errors);
	ck_assert_uint_gt(c.rounds, 10);
	shim_blk_fini(&b);
	down();
	unlink(arena);	/* the arena outlives tmemd: gone only now */
}
END_TEST

/* The backing device of the block tests: a file, one page per pgno. */
static int file_io(void *ctx, int write, uint64_t pgno, void *page)
{
	int fd = *(int *)ctx;
	ssize_t n = write ? pwrite(fd, page, PAGE, (off_t)(pgno * PAGE)) :
			    pread(fd, page, PAGE, (off_t)(pgno * PAGE));

	return n == PAGE ? 0 : -EIO;
}

/* tmemd with a 16-page quota, and an unlinked 64-page file as backing. */
static struct shim_blk_backing blk_up(struct shim_blk *b, uint8_t *map,
				      int *fd)
{
	char path[] = "/tmp/tmem-shim-backing-XXXXXX";

	*fd = mkstemp(path);
	ck_assert_int_ge(*fd, 0);
	unlink(path);
	ck_assert_int_eq(ftruncate(*fd, 64 * PAGE), 0);
	up("[client " CLIENT "]\npersistent-max = 64K\ncompress = off\n", 32, 16);
	ck_assert_int_eq(shim_blk_init(b, &hh.ops, 0, 64, map, 1), 0);
	return (struct shim_blk_backing){ .io = file_io, .ctx = fd };
}

/*
 * /dev/tmemswap0's request translation: writes go to tmem until the
 * quota (16 pages) refuses them, then through to the backing device;
 * reads come from where the map says; discard flushes; a newer write
 * to the backing device flushes the older tmem copy.
 */
START_TEST(blk_translation)
{
	uint8_t map[64] = { 0 }, buf[PAGE], out[PAGE];
	struct shim_blk b;
	struct tmem_oid oid;
	uint32_t i, index;
	int fd;
	struct shim_blk_backing bk = blk_up(&b, map, &fd);

	/* Never written: zeros. */
	ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_READ, 3, out, &bk),
			 0);
	memset(buf, 0, PAGE);
	ck_assert_int_eq(memcmp(out, buf, PAGE), 0);

	for (i = 0; i < 24; i++) {
		shim_test_fill(buf, i);
		ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_WRITE, i,
						  buf, &bk), 0);
	}
	ck_assert_int_eq(shim_blk_where(&b, 0), SHIM_BLK_TMEM);
	ck_assert_int_eq(shim_blk_where(&b, 23), SHIM_BLK_BACKING);
	ck_assert_uint_eq(b.stats.tmem_writes, 16);
	ck_assert_uint_eq(b.stats.backing_writes, 8);
	for (i = 0; i < 24; i++) {
		ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_READ, i,
						  out, &bk), 0);
		ck_assert_msg(shim_test_same(out, i), "page %u", i);
	}

	/* Discard -> FLUSH_PAGE: quota comes back, the page reads zero. */
	ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_DISCARD, 0, NULL,
					  &bk), 0);
	ck_assert_int_eq(shim_blk_where(&b, 0), SHIM_BLK_EMPTY);
	shim_test_fill(buf, 123);
	ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_WRITE, 30, buf, &bk),
			 0);
	ck_assert_int_eq(shim_blk_where(&b, 30), SHIM_BLK_TMEM);

	/*
	 * Page 1 is in tmem.  A newer copy written to the backing device
	 * (as the driver does after a refused put) flushes the tmem copy:
	 * tmem no longer has it and the read returns the newer data.
	 */
	shim_test_fill(buf, 9999);
	ck_assert_int_eq(file_io(&fd, 1, 1, buf), 0);
	shim_blk_backing_written(&b, 1);
	ck_assert_int_eq(shim_blk_where(&b, 1), SHIM_BLK_BACKING);
	shim_swizzle(SHIM_BLK_TYPE_BASE, 1, &oid, &index);
	ck_assert_int_eq(shim_pool_call(&hh.ops, b.pool, TMEM_OP_GET_PAGE,
					&oid, index, NULL, out), 0);
	ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_READ, 1, out, &bk),
			 0);
	ck_assert(shim_test_same(out, 9999));

	/* The quota freed by that flush takes the next write into tmem. */
	shim_test_fill(buf, 31);
	ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_WRITE, 31, buf, &bk),
			 0);
	ck_assert_int_eq(shim_blk_where(&b, 31), SHIM_BLK_TMEM);
	/* Out of range is rejected. */
	ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_READ, 64, out, &bk),
			 -EINVAL);
	shim_blk_fini(&b);
	close(fd);
	down();
}
END_TEST

/* Without a backing device a refused write is an I/O error, nothing else. */
START_TEST(blk_no_backing)
{
	uint8_t map[32] = { 0 }, buf[PAGE], out[PAGE];
	struct shim_blk b;
	uint32_t i;
	int ret, errors = 0;

	up("[client " CLIENT "]\npersistent-max = 64K\ncompress = off\n", 32, 16);
	ck_assert_int_eq(shim_blk_init(&b, &hh.ops, 1, 32, map, 0), 0);
	for (i = 0; i < 20; i++) {
		shim_test_fill(buf, i);
		ret = shim_blk_page_io(&b, SHIM_BLK_OP_WRITE, i, buf, NULL);
		ck_assert(ret == 0 || ret == -EIO);
		errors += ret == -EIO;
	}
	ck_assert_int_eq(errors, 4);
	ck_assert_uint_eq(b.stats.errors, 4);
	for (i = 0; i < 16; i++) {
		ck_assert_int_eq(shim_blk_page_io(&b, SHIM_BLK_OP_READ, i, out,
						  NULL), 0);
		ck_assert(shim_test_same(out, i));
	}
	ck_assert_int_eq(shim_blk_where(&b, 19), SHIM_BLK_EMPTY);
	shim_blk_fini(&b);
	down();
}
END_TEST

/*
 * One 24-page batch against tmemd's 16-page quota: the refused pages of
 * the batch go through to the backing device, and a read batch over
 * tmem, backing and never-written pages returns each from its place.
 */
START_TEST(blk_batch_through_quota)
{
	static uint8_t map[64], pages[28][PAGE], zero[PAGE];
	struct shim_call calls[28];
	struct shim_blk b;
	void *ptrs[28];
	uint32_t i;
	int fd;
	struct shim_blk_backing bk = blk_up(&b, map, &fd);
	for (i = 0; i < 28; i++) {
		shim_test_fill(pages[i], 300 + i);
		ptrs[i] = pages[i];
	}
	ck_assert_int_eq(shim_blk_rw(&b, SHIM_BLK_OP_WRITE, 8, ptrs, 24, calls,
				     &bk), 0);
	ck_assert_uint_eq(b.stats.tmem_writes, 16);
	ck_assert_uint_eq(b.stats.backing_writes, 8);
	ck_assert_int_eq(shim_blk_where(&b, 8), SHIM_BLK_TMEM);
	ck_assert_int_eq(shim_blk_where(&b, 31), SHIM_BLK_BACKING);
	memset(pages, 0xaa, sizeof(pages));
	/* Pages 4..31: 4 never written, 16 in tmem, 8 on the backing. */
	ck_assert_int_eq(shim_blk_rw(&b, SHIM_BLK_OP_READ, 4, ptrs, 28, calls,
				     &bk), 0);
	for (i = 0; i < 4; i++)
		ck_assert_msg(!memcmp(pages[i], zero, PAGE), "page %u", i);
	for (i = 4; i < 28; i++)
		ck_assert_msg(shim_test_same(pages[i], 300 + i - 4), "page %u",
			      i);
	ck_assert_uint_eq(b.stats.tmem_reads, 16);
	ck_assert_uint_eq(b.stats.backing_reads, 8);
	ck_assert_uint_eq(b.stats.errors, 0);
	shim_blk_fini(&b);
	close(fd);
	down();
}
END_TEST

static Suite *shim_suite(void)
{
	Suite *s = suite_create("shim");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, cleancache_sequence);
	tcase_add_test(tc, cleancache_shared);
	tcase_add_test(tc, frontswap_sequence);
	tcase_add_test(tc, frontswap_quota);
	tcase_add_test(tc, frontswap_concurrent);
	tcase_add_test(tc, cleancache_slots_busy);
	tcase_add_test(tc, backend_restart);
	tcase_add_test(tc, restart_keeps_pages);
	tcase_add_test(tc, restart_owes_flushes);
	tcase_add_test(tc, blk_restart_keeps_pages);
	tcase_add_test(tc, blk_translation);
	tcase_add_test(tc, blk_no_backing);
	tcase_add_test(tc, blk_batch_through_quota);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(shim_suite(), TMEM_TEST_ALWAYS_FORK);
}
