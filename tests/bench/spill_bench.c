/* SPDX-License-Identifier: MIT */
/*
 * bench-spill: the host tier (issue 29), against the device it is on,
 * both measured in this run, in SPILL_BENCH_DIR (default /var/tmp):
 *
 *   1. the device's sequential write rate: 1 MiB pwrite()s then one
 *      fdatasync(), as a spill writes;
 *   2. spill throughput: store_spill() of every persistent page of a
 *      full store (raw, incompressible pages, so the bytes compare), in
 *      disk bytes per second, and its ratio to (1) (goal >= 0.7);
 *   3. read-back latency: store_get_page() of random spilled pages, p50
 *      and p99, against a plain 4 KiB pread() at random offsets of the
 *      same file, the page cache dropped before each (goal p50 <= 1.5x);
 *   4. the victim order: a swap-like workload (new pages streaming in
 *      over a pool half the handles' size, 90% of gets on a hot twentieth
 *      put first), once with the default order (oldest put first, a
 *      second chance for pages got since) and once put order only:
 *      read-backs each way (fewer is better).
 *
 * A program that prints numbers, not a timed test.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tmem_store.h"

#define PG 4096u
#define MiB (1024.0 * 1024.0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fill(void *pg, uint64_t seed)
{
	uint64_t *w = pg, x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (unsigned i = 0; i < PG / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench-spill: %s: %s\n", what, strerror(err));
	exit(1);
}

static int scratch(const char *dir, const char *name, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/tmem-bench-spill-%s.%d", dir, name, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path, errno);
	return fd;
}

/* 1: MiB/s of 1 MiB pwrite()s and one fdatasync(). */
static double seq_write_rate(const char *dir, uint64_t bytes)
{
	char path[256];
	int fd = scratch(dir, "seq", path, sizeof(path));
	void *buf = malloc(1 << 20);
	uint64_t t0;

	for (unsigned i = 0; i < (1u << 20) / PG; i++)
		fill((char *)buf + (size_t)i * PG, i + 77);
	t0 = now_ns();
	for (uint64_t off = 0; off < bytes; off += 1 << 20)
		if (pwrite(fd, buf, 1 << 20, (off_t)off) != 1 << 20)
			die("pwrite", errno);
	if (fdatasync(fd) < 0)
		die("fdatasync", errno);
	t0 = now_ns() - t0;
	close(fd);
	unlink(path);
	free(buf);
	return (double)bytes / MiB / ((double)t0 / 1e9);
}

struct rig {
	int arena, tier;
	char tier_path[256];
	struct tmem_store *s;
	struct tmem_client *c;
	int32_t pool;
};

static void rig_open(struct rig *r, const char *dir, unsigned frames, uint64_t tier_bytes,
		     bool fifo)
{
	struct tmem_store_config sc = {
		.arena_bytes = (uint64_t)frames * PG,
		.max_arena_bytes = (uint64_t)frames * PG,
		.compress = { TMEM_COMPRESS_OFF, 0 },
		.tier_bytes = tier_bytes,
		.spill_fifo = fifo,
	};
	char why[200] = "";
	int rc;

	r->arena = memfd_create("bench-spill-arena", MFD_CLOEXEC);
	r->tier = scratch(dir, "tier", r->tier_path, sizeof(r->tier_path));
	sc.tier_fd = r->tier;
	rc = store_open(&sc, r->arena, &r->s, why, sizeof(why));
	if (rc)
		die(why[0] ? why : "store_open", -rc);
	if (store_client_create(r->s, "bench", &r->c) ||
	    (r->pool = store_new_pool(r->c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL)) < 0)
		die("client", EINVAL);
}

static void rig_close(struct rig *r)
{
	store_destroy(r->s);
	close(r->arena);
	close(r->tier);
	unlink(r->tier_path);
}

static struct tmem_oid oid_of(unsigned i)
{
	struct tmem_oid o = { { i / 64, 0xbe, 0 } };

	return o;
}

static int put(struct rig *r, unsigned i, uint64_t seed)
{
	struct tmem_oid o = oid_of(i);
	uint8_t pg[PG];

	fill(pg, seed);
	return store_put_page(r->c, r->pool, &o, i % 64, pg, TMEM_PUT_CAP(TMEM_NO_CAP));
}

/* 2 and 3. */
static void spill_and_readback(const char *dir, unsigned pages, double seq, unsigned samples)
{
	struct rig r;
	struct tmem_tier_info ti;
	uint64_t t0, *lat = calloc(samples, sizeof(uint64_t)), *plat = calloc(samples, 8);
	double rate, secs;
	int64_t n;
	uint8_t pg[PG];
	unsigned seed = 12345;

	rig_open(&r, dir, pages + 64, (uint64_t)pages * 4224 + (8u << 20), false);
	for (unsigned i = 0; i < pages; i++)
		if (put(&r, i, i) != 1)
			die("put", ENOSPC);
	t0 = now_ns();
	n = store_spill(r.s, pages);
	secs = (double)(now_ns() - t0) / 1e9;
	if (n <= 0)
		die("store_spill", (int)-n);
	store_tier_info(r.s, &ti);
	rate = (double)ti.used_bytes / MiB / secs;
	printf("spill: %lld pages (%.1f MiB on disk) in %.3f s: %.1f MiB/s, %.2fx the device's "
	       "sequential write rate (goal >= 0.7), %llu writes\n", (long long)n,
	       (double)ti.used_bytes / MiB, secs, rate, rate / seq, (unsigned long long)ti.writes);
	/* Read-backs, page cache dropped (spills drop their pages from it too). */
	(void)posix_fadvise(r.tier, 0, 0, POSIX_FADV_DONTNEED);
	for (unsigned k = 0; k < samples; k++) {
		unsigned i = (unsigned)rand_r(&seed) % pages;
		struct tmem_oid o = oid_of(i);

		t0 = now_ns();
		if (store_get_page(r.c, r.pool, &o, i % 64, pg) != 1)
			die("get", EIO);
		lat[k] = now_ns() - t0;
	}
	/* The same file, plain 4 KiB preads at random page offsets. */
	(void)posix_fadvise(r.tier, 0, 0, POSIX_FADV_DONTNEED);
	for (unsigned k = 0; k < samples; k++) {
		uint64_t off = 4096 + (uint64_t)((unsigned)rand_r(&seed) % pages) * 4160;

		t0 = now_ns();
		if (pread(r.tier, pg, PG, (off_t)(off & ~4095ull)) != PG)
			die("pread", errno);
		plat[k] = now_ns() - t0;
	}
	qsort(lat, samples, 8, cmp_u64);
	qsort(plat, samples, 8, cmp_u64);
	printf("read-back: p50 %.1f us, p99 %.1f us; plain 4 KiB pread of the same file: p50 %.1f "
	       "us, p99 %.1f us; p50 ratio %.2f (goal <= 1.5)\n", (double)lat[samples / 2] / 1e3,
	       (double)lat[samples * 99 / 100] / 1e3, (double)plat[samples / 2] / 1e3,
	       (double)plat[samples * 99 / 100] / 1e3,
	       (double)lat[samples / 2] / (double)plat[samples / 2]);
	rig_close(&r);
	free(lat);
	free(plat);
}

/*
 * 4: read-backs of a swap-like workload, one victim order: a hot set
 * (the first tenth of the pool, put first) read again and again, while
 * new pages keep coming (a stream over the rest of the handles, as a
 * guest swapping out), so the pool keeps spilling.  With put order alone
 * the hot pages, oldest of all, are the first victims.
 */
static uint64_t skewed(const char *dir, unsigned pages, bool fifo, unsigned ops)
{
	struct rig r;
	struct tmem_tier_info ti, t2;
	unsigned seed = 4242, hot = pages / 20, next = hot;
	uint8_t pg[PG];
	uint64_t gets = 0;

	rig_open(&r, dir, pages / 2, (uint64_t)pages * 4224 + (8u << 20), fifo);
	for (unsigned i = 0; i < pages / 3; i++)
		if (put(&r, i, i) != 1)
			die("put", ENOSPC);
	store_tier_info(r.s, &ti);
	for (unsigned k = 0; k < ops; k++) {
		unsigned i = (unsigned)rand_r(&seed) % 10 ? (unsigned)rand_r(&seed) % hot
							   : (unsigned)rand_r(&seed) % pages;
		struct tmem_oid o = oid_of(i);

		if (k % 2 == 0) {
			while (put(&r, next, (uint64_t)k << 20 | next) == -ENOSPC)
				(void)store_spill(r.s, 32);
			next = next + 1 < pages ? next + 1 : hot;
		} else {
			(void)store_get_page(r.c, r.pool, &o, i % 64, pg);
			gets++;
		}
	}
	store_tier_info(r.s, &t2);
	printf("victim order %-34s %llu gets, %llu read-backs from the tier (%.1f%%)\n",
	       fifo ? "oldest put first:" : "oldest put first, second chance:",
	       (unsigned long long)gets, (unsigned long long)(t2.st.readbacks - ti.st.readbacks),
	       100.0 * (double)(t2.st.readbacks - ti.st.readbacks) / (double)gets);
	rig_close(&r);
	return t2.st.readbacks - ti.st.readbacks;
}

int main(void)
{
	const char *dir = getenv("SPILL_BENCH_DIR") ? getenv("SPILL_BENCH_DIR") : "/var/tmp";
	unsigned pages = getenv("SPILL_BENCH_PAGES") ? (unsigned)atoi(getenv("SPILL_BENCH_PAGES"))
						       : 32768;
	double seq;
	uint64_t sc, ff;

	printf("bench-spill in %s, %u pages (%.0f MiB) of incompressible data\n", dir, pages,
	       pages * (double)PG / MiB);
	seq = seq_write_rate(dir, (uint64_t)pages * PG);
	printf("device: sequential write %.1f MiB/s (1 MiB pwrite, one fdatasync)\n", seq);
	spill_and_readback(dir, pages, seq, 2000);
	sc = skewed(dir, 8192, false, 40000);
	ff = skewed(dir, 8192, true, 40000);
	printf("victim order: the second chance reads back %.2fx what put order alone does\n",
	       ff ? (double)sc / (double)ff : 0.0);
	return 0;
}
