/* SPDX-License-Identifier: MIT */
/*
 * policy-bench: put throughput through tmem_policy_put() into an empty
 * pool, and into a full pool where every put must evict (weighted victim
 * choice, reserve refills), measured in the same run, interleaved, as
 * the median of several repetitions.  Prints both and their ratio.  The
 * two phases differ only by the evictions: same arena, pool and table
 * size, key pattern (a new handle per put, 16 pages per object), page
 * contents, prefaulted frames.
 *
 *   policy-bench [PAGES [REPS]]     defaults 16384 pages (64 MiB), 11 reps
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tmem_policy.h"
#include "tmem_store.h"

#define SRC_PAGES 64u
#define MAX_REPS 101

struct bench {
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmem_pclient *pc;
	struct tmem_client *c;
	uint64_t pages;
	uint64_t next_obj; /* every put goes to a new handle */
	unsigned char (*src)[TMEM_PAGE_SIZE];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* n puts to new handles; -1 if any is not stored. */
static int put_n(struct bench *b, int32_t pool, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		struct tmem_oid oid = { .oid = { b->next_obj / 16, 1, 2 } };
		int rc = tmem_policy_put(b->pc, pool, &oid, (uint32_t)(b->next_obj % 16),
					 b->src[i % SRC_PAGES]);

		b->next_obj++;
		if (rc != 1) {
			fprintf(stderr, "policy-bench: put returned %d\n", rc);
			return -1;
		}
	}
	return 0;
}

static uint64_t evictions(struct bench *b)
{
	struct tmem_store_info info;

	store_info(b->store, &info);
	return info.evictions;
}

/* Flush objects [from, to) of pool: empties it, keeping its hash tables grown. */
static int flush_objects(struct bench *b, int32_t pool, uint64_t from, uint64_t to)
{
	for (uint64_t o = from; o < to; o++) {
		struct tmem_oid oid = { .oid = { o, 1, 2 } };

		if (store_flush_object(b->c, pool, &oid) < 0)
			return -1;
	}
	return 0;
}

/*
 * One repetition.  Untimed: fill a fresh pool to full and flush it all,
 * so its hash tables have already grown to the size the full phase uses
 * (tables never shrink); otherwise the empty phase alone would pay for
 * rehashing.  Timed: puts of half the arena into the empty pool.  Then
 * (untimed) fill it, and the same number of timed puts, each of which
 * now needs an eviction.  Returns -1 on error.
 */
static int one_rep(struct bench *b, double *empty_rate, double *full_rate,
		   double *evict_per_put)
{
	uint64_t m = b->pages / 2, ev, first = b->next_obj / 16;
	int32_t pool = store_new_pool(b->c, tmem_pool_flags(0), NULL);
	double t;

	if (pool < 0)
		return -1;
	if (put_n(b, pool, b->pages) ||
	    flush_objects(b, pool, first, (b->next_obj + 15) / 16))
		return -1;
	b->next_obj = (b->next_obj + 15) / 16 * 16; /* start on a new object */
	t = now();
	if (put_n(b, pool, m))
		return -1;
	*empty_rate = (double)m / (now() - t);
	if (put_n(b, pool, b->pages))
		return -1;
	ev = evictions(b);
	t = now();
	if (put_n(b, pool, m))
		return -1;
	*full_rate = (double)m / (now() - t);
	*evict_per_put = (double)(evictions(b) - ev) / (double)m;
	return store_destroy_pool(b->c, pool) < 0 ? -1 : 0;
}

/* Stay on one CPU so a migration does not empty the caches mid-phase. */
static void pin_to_this_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

static int setup(struct bench *b, uint64_t pages)
{
	struct tmem_store_config sc = {
		.arena_bytes = pages * TMEM_PAGE_SIZE,
		.prefault = true,
	};
	int rc;

	memset(b, 0, sizeof(*b));
	b->pages = pages;
	b->src = malloc(SRC_PAGES * sizeof(*b->src));
	if (!b->src)
		return -ENOMEM;
	for (size_t i = 0; i < SRC_PAGES * TMEM_PAGE_SIZE; i++)
		((unsigned char *)b->src)[i] = (unsigned char)(i * 131 + i / 4096);
	rc = store_create(&sc, &b->store);
	if (!rc)
		rc = tmem_policy_create(b->store, NULL, &b->policy);
	if (!rc)
		rc = tmem_policy_client_add(b->policy, "bench", NULL, &b->pc);
	if (!rc)
		b->c = tmem_pclient_store_client(b->pc);
	return rc;
}

static void teardown(struct bench *b)
{
	tmem_policy_destroy(b->policy);
	store_destroy(b->store);
	free(b->src);
}

/* reps repetitions, then the medians; the ratio is taken per repetition,
 * whose two halves run moments apart, so load from other processes
 * mostly cancels out. */
static int measure(struct bench *b, int reps)
{
	double empty[MAX_REPS], full[MAX_REPS], epp[MAX_REPS], ratio[MAX_REPS];
	int rc = 0;

	for (int r = 0; r < reps && !rc; r++) {
		rc = one_rep(b, &empty[r], &full[r], &epp[r]);
		ratio[r] = full[r] / empty[r];
	}
	if (rc)
		return rc;
	printf("  put into empty pool:            %10.0f pages/s\n", median(empty, reps));
	printf("  put into full pool (evicting):  %10.0f pages/s  (%.2f evictions/put)\n",
	       median(full, reps), median(epp, reps));
	printf("  full/empty ratio:               %10.2f  (acceptance >= 0.70)\n",
	       median(ratio, reps));
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t pages = argc > 1 ? strtoull(argv[1], NULL, 0) : 16384;
	int reps = argc > 2 ? atoi(argv[2]) : 11, rc;
	struct bench b;

	if (pages < 256 || reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "usage: policy-bench [PAGES>=256 [REPS 1..%d]]\n", MAX_REPS);
		return 2;
	}
	pin_to_this_cpu();
	rc = setup(&b, pages);
	if (!rc) {
		printf("policy-bench: %llu-page arena, %d reps, medians\n",
		       (unsigned long long)pages, reps);
		rc = measure(&b, reps);
	}
	if (rc)
		fprintf(stderr, "policy-bench: failed (%d)\n", rc);
	teardown(&b);
	return rc ? 1 : 0;
}
