/*
 * store-bench: the page store alone, single-threaded, against plain
 * 4 KiB memcpy over the same buffers in the same access pattern.
 *
 * Working set: a 256 MiB arena filled completely (much larger than the
 * CPU caches), keys put and got in two different random orders, 16
 * pages per object.  The store side does put (memcpy src -> arena) and
 * get (memcpy arena -> dst, exclusive); the memcpy side does the same two
 * copies into and out of a third buffer of the arena's size, frame for
 * frame where the store placed each page.  The arena and all buffers are
 * THP-advised and prefaulted before timing.  Each number is the median
 * of --reps repetitions.  Also: flush ops/s and the metadata bytes per
 * stored page, typical (16 pages per object) and worst (1 per object).
 * --memfd puts the store in a memfd, as tmemd does to survive restarts
 * (shared file pages instead of private anonymous memory).
 *
 *   store-bench [--json] [--reps N] [--mib N] [--memfd]
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "tmem_store.h"

#define PG TMEM_PAGE_SIZE
#define PAGES_PER_OBJ 16
#define MAX_REPS 31

struct bench {
	uint32_t n;            /* pages in the working set = arena pages */
	uint8_t *src, *mid, *dst;
	uint32_t *put_order, *get_order;
	uint32_t *slot_of;     /* memcpy side: where key k sits in mid */
	struct tmem_store *store;
	struct tmem_client *client;
	int pool;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *big_buffer(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, bytes, MADV_HUGEPAGE); /* as the arena does */
	memset(p, 0x5a, bytes);                 /* prefault */
	return p;
}

static void shuffle(uint32_t *a, uint32_t n, uint64_t *rng)
{
	for (uint32_t i = 0; i < n; i++)
		a[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j, t;

		*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
		j = (uint32_t)((*rng >> 33) % (i + 1));
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

static inline struct tmem_oid key_oid(uint32_t k, uint32_t per_obj)
{
	struct tmem_oid o = { { k / per_obj, 0xbe7c4, 0 } };
	return o;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int store_put_all(struct bench *b, uint32_t per_obj)
{
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t k = b->put_order[i];
		struct tmem_oid o = key_oid(k, per_obj);
		int ret = store_put_page(b->client, b->pool, &o, k % per_obj,
					 b->src + (size_t)k * PG, TMEM_PUT_CAP(TMEM_NO_CAP));

		if (ret != 1) {
			fprintf(stderr, "store-bench: put %u: %d\n", k, ret);
			return -1;
		}
	}
	return 0;
}

static int store_get_all(struct bench *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t k = b->get_order[i];
		struct tmem_oid o = key_oid(k, PAGES_PER_OBJ);
		int ret = store_get_page(b->client, b->pool, &o, k % PAGES_PER_OBJ,
					 b->dst + (size_t)k * PG);

		if (ret != 1) {
			fprintf(stderr, "store-bench: get %u: %d\n", k, ret);
			return -1;
		}
	}
	return 0;
}

static int store_flush_all(struct bench *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t k = b->get_order[i];
		struct tmem_oid o = key_oid(k, PAGES_PER_OBJ);

		if (store_flush_page(b->client, b->pool, &o, k % PAGES_PER_OBJ) != 1)
			return -1;
	}
	return 0;
}

/* The same two copies the store makes, frame for frame. */
static void memcpy_put_all(struct bench *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t k = b->put_order[i];

		memcpy(b->mid + (size_t)b->slot_of[k] * PG, b->src + (size_t)k * PG, PG);
	}
}

static void memcpy_get_all(struct bench *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t k = b->get_order[i];

		memcpy(b->dst + (size_t)k * PG, b->mid + (size_t)b->slot_of[k] * PG, PG);
	}
}

struct results {
	double put, get, flush, memcpy_pages, store_pairs, memcpy_pairs;
	double meta_typical, meta_worst;
};

static int run_reps(struct bench *b, int reps, struct results *r)
{
	double put[MAX_REPS], get[MAX_REPS], flush[MAX_REPS], mput[MAX_REPS],
		spair[MAX_REPS], mpair[MAX_REPS];

	for (int i = 0; i < reps; i++) {
		double t0 = now(), t1, t2, t3;

		if (store_put_all(b, PAGES_PER_OBJ) < 0)
			return -1;
		t1 = now();
		if (store_get_all(b) < 0 || memcmp(b->src, b->dst, (size_t)b->n * PG))
			return -1;
		t2 = now();
		put[i] = b->n / (t1 - t0);
		get[i] = b->n / (t2 - t1);
		spair[i] = b->n / (t2 - t0);
		if (store_put_all(b, PAGES_PER_OBJ) < 0)
			return -1;
		t1 = now();
		if (store_flush_all(b) < 0)
			return -1;
		flush[i] = b->n / (now() - t1);
		t1 = now();
		memcpy_put_all(b);
		t2 = now();
		memcpy_get_all(b);
		t3 = now();
		mput[i] = b->n / (t2 - t1);
		mpair[i] = b->n / (t3 - t1);
	}
	r->put = median(put, reps);
	r->get = median(get, reps);
	r->flush = median(flush, reps);
	r->memcpy_pages = median(mput, reps);
	r->store_pairs = median(spair, reps);
	r->memcpy_pairs = median(mpair, reps);
	return 0;
}

static bool use_memfd;

static int open_store(uint64_t mib, bool prefault, struct tmem_store **s,
		      struct tmem_client **c, int *pool)
{
	struct tmem_store_config cfg = { .arena_bytes = mib << 20, .prefault = prefault };
	int fd, ret;

	if (use_memfd) {
		/* The store keeps using fd; it lives as long as the process. */
		fd = memfd_create("store-bench", MFD_CLOEXEC);
		ret = fd < 0 ? -errno : store_open(&cfg, fd, s, NULL, 0);
	} else {
		ret = store_create(&cfg, s);
	}

	if (ret == 0)
		ret = store_client_create(*s, "bench", c);
	if (ret == 0)
		ret = *pool = store_new_pool(*c, tmem_pool_flags(0), NULL);
	return ret < 0 ? ret : 0;
}

static double meta_per_page(struct tmem_store *s)
{
	struct tmem_store_info si;

	store_info(s, &si);
	return (double)si.metadata_bytes /
	       (double)(si.arena.ephemeral + si.arena.persistent);
}

/* Metadata per page with the arena full: typical and one page per object. */
static int measure_metadata(struct bench *b, uint64_t mib, struct results *r)
{
	struct bench w = *b;
	int ret;

	if (store_put_all(b, PAGES_PER_OBJ) < 0)
		return -1;
	r->meta_typical = meta_per_page(b->store);
	if (store_flush_all(b) < 0)
		return -1;
	ret = open_store(mib, false, &w.store, &w.client, &w.pool);
	if (ret == 0)
		ret = store_put_all(&w, 1);
	if (ret == 0)
		r->meta_worst = meta_per_page(w.store);
	store_destroy(w.store);
	return ret;
}

/* Where each key lands in the store's arena: frames in put order. */
static void plan_memcpy_slots(struct bench *b)
{
	for (uint32_t i = 0; i < b->n; i++)
		b->slot_of[b->put_order[i]] = i;
}

static void print_text(const struct bench *b, int reps, const struct results *r)
{
	printf("store-bench: %u pages (%u MiB) working set, %d reps, medians, %s arena\n",
	       b->n, b->n / 256, reps, use_memfd ? "memfd" : "anonymous");
	printf("  store put            %12.0f ops/s\n", r->put);
	printf("  store get            %12.0f ops/s (exclusive)\n", r->get);
	printf("  store flush          %12.0f ops/s\n", r->flush);
	printf("  memcpy 4 KiB         %12.0f pages/s\n", r->memcpy_pages);
	printf("  store put+get        %12.0f pairs/s\n", r->store_pairs);
	printf("  two memcpys          %12.0f pairs/s\n", r->memcpy_pairs);
	printf("  ratio store/memcpy   %12.2f (acceptance >= 0.50)\n",
	       r->store_pairs / r->memcpy_pairs);
	printf("  metadata/page typ.   %12.1f bytes (%d pages per object)\n",
	       r->meta_typical, PAGES_PER_OBJ);
	printf("  metadata/page worst  %12.1f bytes (1 page per object; acceptance <= 64)\n",
	       r->meta_worst);
}

static int print_json(const struct bench *b, int reps, const struct results *r)
{
	json_t *j = json_pack("{s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
			      "pages", (json_int_t)b->n, "reps", reps,
			      "arena", use_memfd ? "memfd" : "anonymous",
			      "put_ops_per_s", r->put, "get_ops_per_s", r->get,
			      "flush_ops_per_s", r->flush,
			      "memcpy_pages_per_s", r->memcpy_pages,
			      "store_pairs_per_s", r->store_pairs,
			      "memcpy_pairs_per_s", r->memcpy_pairs,
			      "ratio", r->store_pairs / r->memcpy_pairs,
			      "metadata_bytes_per_page_typical", r->meta_typical,
			      "metadata_bytes_per_page_worst", r->meta_worst);
	int ret;

	if (!j)
		return -1;
	ret = json_dumpf(j, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(j);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "reps", required_argument, NULL, 'r' },
		{ "mib", required_argument, NULL, 'm' },
		{ "memfd", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench b = { 0 };
	struct results r = { 0 };
	uint64_t mib = 256, rng = 42;
	int reps = 5, json = 0, opt;
	size_t bytes;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'j')
			json = 1;
		else if (opt == 'r')
			reps = atoi(optarg);
		else if (opt == 'm')
			mib = strtoull(optarg, NULL, 0);
		else if (opt == 'f')
			use_memfd = true;
		else
			return 2;
	}
	if (reps < 1 || reps > MAX_REPS || mib < 1 || mib > 65536) {
		fprintf(stderr, "usage: store-bench [--json] [--reps 1..%d] [--mib N] [--memfd]\n",
			MAX_REPS);
		return 2;
	}
	b.n = (uint32_t)(mib << 20 >> 12);
	bytes = (size_t)b.n * PG;
	b.src = big_buffer(bytes);
	b.mid = big_buffer(bytes);
	b.dst = big_buffer(bytes);
	b.put_order = malloc(b.n * sizeof(uint32_t));
	b.get_order = malloc(b.n * sizeof(uint32_t));
	b.slot_of = malloc(b.n * sizeof(uint32_t));
	if (!b.src || !b.mid || !b.dst || !b.put_order || !b.get_order || !b.slot_of ||
	    open_store(mib, true, &b.store, &b.client, &b.pool) < 0) {
		fprintf(stderr, "store-bench: setup failed: %s\n", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < bytes; i += 8)
		*(uint64_t *)(b.src + i) = i * 0x9e3779b97f4a7c15ull;
	shuffle(b.put_order, b.n, &rng);
	shuffle(b.get_order, b.n, &rng);
	plan_memcpy_slots(&b);
	if (measure_metadata(&b, mib, &r) < 0 || run_reps(&b, reps, &r) < 0) {
		fprintf(stderr, "store-bench: the store gave a wrong answer\n");
		return 1;
	}
	if (json)
		print_json(&b, reps, &r);
	else
		print_text(&b, reps, &r);
	store_destroy(b.store);
	return 0;
}
