// SPDX-License-Identifier: MIT
/*
 * bench-shim-blk: /dev/tmemswap0's path (the module's core, on the
 * harness's ring over tmemd's local transport) writing and reading
 * 64 MiB one page per round trip, as the driver used to, against
 * batches of 8 (a swap readahead window) and 32 (a merged writeback
 * request).  Prints MiB/s, doorbells per page and each batch size's
 * speed as a ratio to one page per round trip, measured in one run.
 * Here a doorbell is an eventfd write, and tmemd's adaptive spin often
 * makes it unnecessary; under a hypervisor it is a VM exit.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim_harness.h"
#include "tmemd_fixture.h"

#define PAGE 4096u
#define NR_PAGES 16384u		/* 64 MiB */
#define ROUNDS 5

struct result {
	double write_mibs, read_mibs, kicks_per_page;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint8_t *page_at(uint8_t *buf, uint64_t pgno)
{
	return buf + pgno * PAGE;
}

/* Every page through shim_blk_rw, batch pages at a time; -EIO etc. */
static int pass(struct shim_blk *b, enum shim_blk_op op, uint8_t *buf,
		uint32_t batch)
{
	struct shim_call calls[SHIM_BLK_BATCH];
	void *pages[SHIM_BLK_BATCH];
	uint64_t pgno;
	uint32_t i;
	int ret;

	for (pgno = 0; pgno < NR_PAGES; pgno += batch) {
		for (i = 0; i < batch; i++)
			pages[i] = page_at(buf, pgno + i);
		ret = shim_blk_rw(b, op, pgno, pages, batch, calls, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

static int measure(struct shim_harness *h, struct shim_blk *b, uint8_t *src,
		   uint8_t *dst, uint32_t batch, struct result *res)
{
	double mib = NR_PAGES * (double)PAGE / (1 << 20), t0, t1, t2;
	uint64_t kicks = h->ring.stats.kicks;
	int ret;

	memset(dst, 0, (size_t)NR_PAGES * PAGE);
	t0 = now_s();
	ret = pass(b, SHIM_BLK_OP_WRITE, src, batch);
	t1 = now_s();
	ret = ret ?: pass(b, SHIM_BLK_OP_READ, dst, batch);
	t2 = now_s();
	if (ret)
		return ret;
	if (memcmp(src, dst, (size_t)NR_PAGES * PAGE))
		return -EBADMSG;
	res->write_mibs = mib / (t1 - t0);
	res->read_mibs = mib / (t2 - t1);
	res->kicks_per_page = (double)(h->ring.stats.kicks - kicks) /
			      (2.0 * NR_PAGES);
	return 0;
}

/* Best of ROUNDS for each batch size, the sizes interleaved. */
static int run(struct shim_harness *h, struct shim_blk *b, uint8_t *src,
	       uint8_t *dst)
{
	static const uint32_t sizes[] = { 1, 8, SHIM_BLK_BATCH };
	struct result best[3] = { 0 }, r;
	unsigned int i, round;
	int ret;

	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < 3; i++) {
			ret = measure(h, b, src, dst, sizes[i], &r);
			if (ret)
				return ret;
			if (r.write_mibs > best[i].write_mibs)
				best[i].write_mibs = r.write_mibs;
			if (r.read_mibs > best[i].read_mibs)
				best[i].read_mibs = r.read_mibs;
			best[i].kicks_per_page = r.kicks_per_page;
		}
	}
	for (i = 0; i < 3; i++)
		printf("  batch %2u: write %7.1f MiB/s (%.2fx)  read %7.1f MiB/s (%.2fx)  doorbells/page %.3f\n",
		       sizes[i], best[i].write_mibs,
		       best[i].write_mibs / best[0].write_mibs,
		       best[i].read_mibs, best[i].read_mibs / best[0].read_mibs,
		       best[i].kicks_per_page);
	return 0;
}

int main(void)
{
	static const char conf[] = "[client shim-harness]\ncompress = off\n";
	struct tmemd_fixture fx;
	struct shim_harness h;
	struct shim_blk b;
	uint8_t *src, *dst, *map;
	uint64_t i;
	int ret;

	src = malloc((size_t)NR_PAGES * PAGE);
	dst = malloc((size_t)NR_PAGES * PAGE);
	map = calloc(NR_PAGES, 1);
	if (!src || !dst || !map)
		return 1;
	for (i = 0; i < (uint64_t)NR_PAGES * PAGE / 8; i++)
		((uint64_t *)src)[i] = i * 0x9e3779b97f4a7c15ull;
	ret = tmemd_fixture_start(&fx, conf);
	if (ret) {
		fprintf(stderr, "bench-shim-blk: tmemd did not start: %s\n",
			strerror(-ret));
		return 1;
	}
	ret = shim_harness_start(&h, fx.sock, 64, 32, 0);
	ret = ret ?: shim_harness_wait(&h, 1, 5000);
	ret = ret ?: shim_blk_init(&b, &h.ops, 0, NR_PAGES, map, 0);
	if (!ret) {
		printf("bench-shim-blk: /dev/tmemswap0's core, 64 MiB written and read back, ring 64/32, best of %d\n",
		       ROUNDS);
		ret = run(&h, &b, src, dst);
		shim_blk_fini(&b);
	}
	if (ret)
		fprintf(stderr, "bench-shim-blk: failed: %s\n", strerror(-ret));
	shim_harness_stop(&h);
	tmemd_fixture_stop(&fx);
	free(src);
	free(dst);
	free(map);
	return ret ? 1 : 0;
}
