/* SPDX-License-Identifier: MIT */
/*
 * Issue 28: the elastic pool's controller (daemon/fallow.c) under Xen,
 * with the Xen side faked (its host hooks, as xen/balloon.c gives them)
 * and the host's meminfo and PSI in files.  A pool nearly full at its
 * target balloons dom0 up into Xen's free memory, keeping xen-reserve;
 * the toolstack lowering dom0's target (xl create's autoballoon) makes
 * the pool drop ephemeral pages at once; tmemctl release lowers dom0's
 * target by what went.  The real thing is make e2e-xen's fallow phase.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/test_main.h"
#include "fallow.h"
#include "host_mem.h"
#include "loop.h"
#include "tmem_policy.h"
#include "tmem_store.h"

#define MiB (1024ull * 1024ull)

static struct {
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmem_pclient *pc;
	struct tmemd_loop *loop;
	struct tmemd_fallow *f;
	char dir[64], meminfo[96], psi[96];
	struct tmemd_fallow_xen x;   /* what the fake Xen reports */
	unsigned target_writes;
} fx;

static int fake_sample(void *ctx, struct tmemd_fallow_xen *out)
{
	(void)ctx;
	*out = fx.x;
	return 0;
}

static int fake_set_target(void *ctx, uint64_t bytes)
{
	(void)ctx;
	fx.x.dom0_target = bytes;
	fx.target_writes++;
	return 0;
}

static const struct tmemd_fallow_host_ops fake_xen = {
	.sample = fake_sample,
	.set_dom0_target = fake_set_target,
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* dom0 has avail_mib available (the reserve is 8 MiB). */
static void host_available(unsigned long long avail_mib)
{
	char text[200];

	snprintf(text, sizeof(text), "MemTotal: 1048576 kB\nMemAvailable: %llu kB\n",
		 avail_mib * 1024);
	write_file(fx.meminfo, text);
}

static bool no_signal(int signo, void *data)
{
	(void)signo;
	(void)data;
	return true;
}

static void setup(void)
{
	struct tmem_store_config sc = { .arena_bytes = 256 * MiB };
	struct tmem_policy_config pc;
	struct tmemd_fallow_config fc = {
		.ceiling = 256 * MiB, .reserve = 8 * MiB, .xen_reserve = 64 * MiB,
		.grow_delay_sec = 1,
	};
	struct tmem_client_settings cs;

	memset(&fx, 0, sizeof(fx));
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/fallow-unit.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fx.dir));
	snprintf(fx.meminfo, sizeof(fx.meminfo), "%s/meminfo", fx.dir);
	snprintf(fx.psi, sizeof(fx.psi), "%s/psi", fx.dir);
	write_file(fx.psi, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	host_available(1024);
	setenv("TMEMD_MEMINFO", fx.meminfo, 1);
	setenv("TMEMD_PSI", fx.psi, 1);
	setenv("TMEMD_CGROUP", "", 1);
	ck_assert_int_eq(store_create(&sc, &fx.store), 0);
	tmem_policy_config_defaults(&pc);
	ck_assert_int_eq(tmem_policy_create(fx.store, &pc, &fx.policy), 0);
	cs = pc.defaults;
	cs.compress.algo = TMEM_COMPRESS_OFF;
	ck_assert_int_eq(tmem_policy_client_add(fx.policy, "vm1", &cs, &fx.pc), 0);
	ck_assert_int_eq(tmemd_loop_create(no_signal, NULL, &fx.loop), 0);
	fx.x = (struct tmemd_fallow_xen){ .xen_free = 1024 * MiB, .dom0_now = 512 * MiB,
					  .dom0_target = 512 * MiB, .dom0_max = 2048 * MiB };
	ck_assert_int_eq(tmemd_fallow_start(&fc, fx.store, fx.policy, fx.loop, &fx.f), 0);
	tmemd_fallow_set_host(fx.f, &fake_xen, NULL);
}

static void teardown(void)
{
	char cmd[128];

	tmemd_fallow_stop(fx.f);
	tmem_policy_client_remove(fx.pc);
	tmem_policy_destroy(fx.policy);
	store_destroy(fx.store);
	tmemd_loop_destroy(fx.loop);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fx.dir);
	(void)system(cmd);
}

static void put_eph(int32_t pool, uint32_t from, uint32_t n)
{
	static uint8_t page[4096];
	struct tmem_oid o = { .oid = { 7, 7, 7 } };

	for (uint32_t i = from; i < from + n; i++) {
		memset(page, 0, sizeof(page));
		memcpy(page, &i, sizeof(i));
		page[100] = (uint8_t)(i * 31 + 1);
		ck_assert_int_eq(tmem_policy_put(fx.pc, pool, &o, i, page), 1);
	}
}

static struct tmemd_fallow_stats stats(void)
{
	struct tmemd_fallow_stats s;

	tmemd_fallow_stats(fx.f, &s);
	return s;
}

static int32_t eph_pool(void)
{
	int32_t id = store_new_pool(tmem_pclient_store_client(fx.pc), tmem_pool_flags(0), NULL);

	ck_assert_int_ge(id, 0);
	return id;
}

/* Nearly full at its target, and Xen has room: dom0's target rises, a
 * step at a time, never into xen-reserve or past dom0's maximum. */
START_TEST(test_balloon_up_when_full)
{
	int32_t pool = eph_pool();
	uint64_t before = fx.x.dom0_target;

	put_eph(pool, 0, 16 * MiB / 4096);
	host_available(8 + 2); /* 2 MiB over the reserve: the pool is at its target */
	tmemd_fallow_tick(fx.f);
	ck_assert_uint_eq(fx.target_writes, 1);
	ck_assert_uint_gt(fx.x.dom0_target, before);
	ck_assert_uint_le(fx.x.dom0_target - before, 256 * MiB / 16);
	ck_assert_uint_eq(stats().ballooned, fx.x.dom0_target - before);
	/* dom0 has not grown to that target yet: nothing more is asked. */
	tmemd_fallow_tick(fx.f);
	ck_assert_uint_eq(fx.target_writes, 1);
	/* Grown: the next step. */
	fx.x.dom0_now = fx.x.dom0_target;
	tmemd_fallow_tick(fx.f);
	ck_assert_uint_eq(fx.target_writes, 2);
	/* Xen down to its reserve: no more. */
	fx.target_writes = 1;
	fx.x.xen_free = 64 * MiB;
	tmemd_fallow_tick(fx.f);
	ck_assert_uint_eq(fx.target_writes, 1);
	/* Room in Xen, but dom0 at its maximum: no more either. */
	fx.x.xen_free = 1024 * MiB;
	fx.x.dom0_max = fx.x.dom0_target;
	tmemd_fallow_tick(fx.f);
	ck_assert_uint_eq(fx.target_writes, 1);
}
END_TEST

/* An empty pool does not take Xen's memory. */
START_TEST(test_no_balloon_when_idle)
{
	host_available(8 + 2);
	tmemd_fallow_tick(fx.f);
	tmemd_fallow_tick(fx.f);
	ck_assert_uint_eq(fx.target_writes, 0);
}
END_TEST

/* xl create's autoballoon lowers dom0's target by 64 MiB: the pool's
 * target falls as much at the next tick, ephemeral pages go (cause
 * toolstack), and nothing balloons up meanwhile. */
START_TEST(test_toolstack_takes_memory_back)
{
	int32_t pool = eph_pool();
	struct tmem_arena_counts a;
	struct tmemd_fallow_stats s;

	put_eph(pool, 0, 100 * MiB / 4096);
	host_available(8 + 16);
	tmemd_fallow_tick(fx.f);
	fx.target_writes = 0;
	fx.x.dom0_target = fx.x.dom0_now - 64 * MiB;
	tmemd_fallow_tick(fx.f);
	s = stats();
	store_arena_counts(fx.store, &a);
	ck_assert_uint_eq(s.reclaim_events[TMEMD_RECLAIM_TOOLSTACK], 1);
	ck_assert_uint_ge(s.reclaim_pages[TMEMD_RECLAIM_TOOLSTACK], 48 * MiB / 4096);
	ck_assert_uint_le(a.used_pages * 4096, 100 * MiB - 48 * MiB);
	ck_assert_uint_eq(fx.target_writes, 0);
}
END_TEST

/* tmemctl release under Xen: what went comes off dom0's target. */
START_TEST(test_release_lowers_dom0_target)
{
	int32_t pool = eph_pool();
	uint64_t released = 0, before;

	put_eph(pool, 0, 64 * MiB / 4096);
	tmemd_fallow_tick(fx.f);
	before = fx.x.dom0_target;
	ck_assert_int_eq(tmemd_fallow_release(fx.f, 32 * MiB, &released), 0);
	ck_assert_uint_ge(released, 31 * MiB);
	ck_assert_uint_eq(fx.x.dom0_target, before - released);
	ck_assert_uint_eq(stats().reclaim_events[TMEMD_RECLAIM_ADMIN], 1);
	/* While dom0 shrinks to that target, and after: the memory that went
	 * is not taken out of the pool a second time. */
	fx.x.dom0_now = before;
	host_available(8 + 4 + released / MiB);
	tmemd_fallow_tick(fx.f);
	fx.x.dom0_now = fx.x.dom0_target;
	host_available(8 + 4);
	tmemd_fallow_tick(fx.f);
	ck_assert_uint_eq(stats().reclaim_pages[TMEMD_RECLAIM_TOOLSTACK] +
			  stats().reclaim_pages[TMEMD_RECLAIM_LOW_FREE], 0);
}
END_TEST

static void psi_total(unsigned long long usec)
{
	char text[160];

	snprintf(text, sizeof(text), "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n", usec);
	write_file(fx.psi, text);
}

/* One tick's stall is noise (a slow compaction, a descheduled vCPU in a
 * nested dom0): the target holds.  Stalls in two ticks running are
 * pressure: it falls by an eighth of what is in use. */
START_TEST(test_one_stalled_tick_is_noise)
{
	int32_t pool = eph_pool();
	struct tmemd_fallow_stats s;

	put_eph(pool, 0, 64 * MiB / 4096);
	tmemd_fallow_tick(fx.f);
	ck_assert_uint_eq(stats().target, 256 * MiB);
	psi_total(1000000);
	tmemd_fallow_tick(fx.f);
	tmemd_fallow_tick(fx.f);
	s = stats();
	ck_assert_uint_eq(s.target, 256 * MiB);
	ck_assert_uint_eq(s.reclaim_events[TMEMD_RECLAIM_PRESSURE], 0);
	psi_total(2000000);
	tmemd_fallow_tick(fx.f);
	ck_assert_uint_eq(stats().target, 256 * MiB);
	psi_total(3000000);
	tmemd_fallow_tick(fx.f);
	s = stats();
	ck_assert_uint_eq(s.reclaim_events[TMEMD_RECLAIM_PRESSURE], 1);
	ck_assert_uint_le(s.target, 64 * MiB - 64 * MiB / 8);
	ck_assert(s.pressure);
}
END_TEST

/* host_mem.c: the tightest cgroup up the tree wins over MemAvailable,
 * its page cache (not its shmem: the arena) counting as room, and the
 * cgroup's own PSI file is read. */
START_TEST(test_host_mem_cgroup_room)
{
	struct tmemd_host_mem_paths p;
	struct tmemd_host_mem h;
	char parent[128], child[160], path[200];

	snprintf(parent, sizeof(parent), "%s/slice", fx.dir);
	snprintf(child, sizeof(child), "%s/tmemd.service", parent);
	ck_assert_int_eq(mkdir(parent, 0700), 0);
	ck_assert_int_eq(mkdir(child, 0700), 0);
	snprintf(path, sizeof(path), "%s/memory.max", parent);
	write_file(path, "1073741824\n");
	snprintf(path, sizeof(path), "%s/memory.current", parent);
	write_file(path, "943718400\n"); /* 900 MiB */
	snprintf(path, sizeof(path), "%s/memory.stat", parent);
	write_file(path, "anon 1\nfile 104857600\nkernel 3\nshmem 20971520\n");
	snprintf(path, sizeof(path), "%s/memory.max", child);
	write_file(path, "max\n");
	snprintf(path, sizeof(path), "%s/memory.pressure", child);
	write_file(path, "some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\n"
			 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	host_available(2048);
	unsetenv("TMEMD_PSI");
	setenv("TMEMD_CGROUP", child, 1);
	tmemd_host_mem_paths(&p);
	ck_assert_str_eq(p.cgroup, child);
	ck_assert_ptr_nonnull(strstr(p.psi, "tmemd.service/memory.pressure"));
	ck_assert_int_eq(tmemd_host_mem_read(&p, &h), 0);
	ck_assert_uint_eq(h.total, 1024 * MiB);
	/* 124 MiB under the limit, plus 100 MiB of cache less 20 MiB of shmem */
	ck_assert_uint_eq(h.available, 124 * MiB + 80 * MiB);
	ck_assert(h.cgroup_limited);
	ck_assert_uint_eq(h.cgroup_limit, 1024 * MiB);
	ck_assert(h.have_psi);
	ck_assert_uint_eq(h.stall_usec, 123456);
	/* No such cgroup file: the whole system's PSI, and MemAvailable. */
	setenv("TMEMD_CGROUP", fx.dir, 1);
	tmemd_host_mem_paths(&p);
	ck_assert_str_eq(p.psi, "/proc/pressure/memory");
	ck_assert_int_eq(tmemd_host_mem_read(&p, &h), 0);
	ck_assert_uint_eq(h.available, 2048 * MiB);
	ck_assert(!h.cgroup_limited);
	/* A meminfo without MemAvailable is an error, not a zero. */
	write_file(fx.meminfo, "MemTotal: 1048576 kB\n");
	ck_assert_int_eq(tmemd_host_mem_read(&p, &h), -EINVAL);
}
END_TEST

static Suite *fallow_unit_suite(void)
{
	Suite *s = suite_create("fallow-unit");
	TCase *tc = tcase_create("xen");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_balloon_up_when_full);
	tcase_add_test(tc, test_no_balloon_when_idle);
	tcase_add_test(tc, test_toolstack_takes_memory_back);
	tcase_add_test(tc, test_release_lowers_dom0_target);
	tcase_add_test(tc, test_one_stalled_tick_is_noise);
	tcase_add_test(tc, test_host_mem_cgroup_room);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(fallow_unit_suite(), 0);
}
