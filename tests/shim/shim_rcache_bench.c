// SPDX-License-Identifier: MIT
/*
 * bench-shim-rcache: the tmemcache target's core (the module's own code,
 * on the harness's ring to a tmemd it starts) reading 32 MiB of blocks
 * from a fake disk in memory, one block per call (as a 4 KiB read) and 32
 * per call (a 128 KiB readahead, one get batch and one put batch).
 * Prints the cost per 4 KiB block of a miss (get that misses, the disk
 * copy, the put) and of a hit (get, then the put back of the exclusive
 * get), best of ROUNDS, and the doorbells per block.  The disk is memory,
 * so a miss here is what tmem adds to a real disk read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_disk.h"
#include "shim_harness.h"
#include "tmemd_fixture.h"

#define NR_BLOCKS 8192u		/* 32 MiB */
#define NR_SLOTS 4096u
#define ROUNDS 3

struct cost {
	double miss_us, hit_us, miss_kicks, hit_kicks;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every block read once, batch at a time; seconds per block, or < 0. */
static double pass(struct shim_rcache *rc, struct fake_disk *d, uint32_t batch)
{
	static uint8_t buf[SHIM_RC_BATCH][4096];
	struct shim_call calls[SHIM_RC_BATCH];
	struct shim_rc_disk disk = fake_disk_ops(d);
	void *pages[SHIM_RC_BATCH];
	double t0 = now_s();
	uint32_t i;

	for (i = 0; i < batch; i++)
		pages[i] = buf[i];
	for (i = 0; i < NR_BLOCKS; i += batch)
		if (shim_rc_read(rc, i, pages, batch, calls, &disk))
			return -1;
	return (now_s() - t0) / NR_BLOCKS;
}

/* One cold pass (all misses) and one warm pass (all hits). */
static int measure(struct shim_harness *h, struct shim_rcache *rc,
		   struct fake_disk *d, uint32_t batch, struct cost *c)
{
	struct shim_call calls[SHIM_RC_BATCH];
	uint64_t k0, hits0 = rc->stats.hits, miss0 = rc->stats.misses;
	double miss, hit;

	shim_rc_invalidate(rc, 0, NR_BLOCKS, calls);
	k0 = h->ring.stats.kicks;
	miss = pass(rc, d, batch);
	c->miss_kicks = (double)(h->ring.stats.kicks - k0) / NR_BLOCKS;
	k0 = h->ring.stats.kicks;
	hit = pass(rc, d, batch);
	c->hit_kicks = (double)(h->ring.stats.kicks - k0) / NR_BLOCKS;
	if (miss < 0 || hit < 0 || rc->stats.misses - miss0 != NR_BLOCKS ||
	    rc->stats.hits - hits0 != NR_BLOCKS)
		return -EBADMSG;	/* not all missed, then all hit */
	c->miss_us = miss * 1e6;
	c->hit_us = hit * 1e6;
	return 0;
}

static void keep_best(struct cost *best, const struct cost *c)
{
	if (!best->miss_us || c->miss_us < best->miss_us)
		best->miss_us = c->miss_us;
	if (!best->hit_us || c->hit_us < best->hit_us)
		best->hit_us = c->hit_us;
	best->miss_kicks = c->miss_kicks;
	best->hit_kicks = c->hit_kicks;
}

static int run(struct shim_harness *h, struct shim_rcache *rc,
	       struct fake_disk *d)
{
	static const uint32_t sizes[] = { 1, SHIM_RC_BATCH };
	struct cost best[2] = { 0 }, c;
	unsigned int i, round;
	int ret;

	for (round = 0; round < ROUNDS; round++)
		for (i = 0; i < 2; i++) {
			ret = measure(h, rc, d, sizes[i], &c);
			if (ret)
				return ret;
			keep_best(&best[i], &c);
		}
	for (i = 0; i < 2; i++)
		printf("  %2u block%s a call: miss %6.2f us/block (%.2fx)  hit %6.2f us/block (%.2fx)  doorbells/block miss %.3f hit %.3f\n",
		       sizes[i], sizes[i] > 1 ? "s" : " ", best[i].miss_us,
		       best[0].miss_us / best[i].miss_us, best[i].hit_us,
		       best[0].hit_us / best[i].hit_us, best[i].miss_kicks,
		       best[i].hit_kicks);
	return 0;
}

int main(void)
{
	static const char conf[] = "[client shim-harness]\ncompress = off\n";
	static struct shim_rc_slot slots[NR_SLOTS];
	struct tmemd_fixture fx;
	struct shim_harness h;
	struct shim_rcache rc;
	struct fake_disk d;
	int ret = fake_disk_init(&d, NR_BLOCKS);

	if (ret)
		return 1;
	ret = tmemd_fixture_start(&fx, conf);
	if (ret) {
		fprintf(stderr, "bench-shim-rcache: tmemd did not start: %s\n",
			strerror(-ret));
		fake_disk_fini(&d);
		return 1;
	}
	ret = shim_harness_start(&h, fx.sock, 64, 32, 0);
	ret = ret ?: shim_harness_wait(&h, 1, 5000);
	ret = ret ?: shim_rc_init(&rc, &h.ops, NR_BLOCKS, slots, NR_SLOTS);
	if (!ret) {
		printf("bench-shim-rcache: tmemcache's core, 32 MiB read cold (misses) then warm (hits), ring 64/32, best of %d\n",
		       ROUNDS);
		ret = run(&h, &rc, &d);
		shim_rc_fini(&rc);
	}
	if (ret)
		fprintf(stderr, "bench-shim-rcache: failed: %s\n",
			strerror(-ret));
	shim_harness_stop(&h);
	tmemd_fixture_stop(&fx);
	fake_disk_fini(&d);
	return ret ? 1 : 0;
}
