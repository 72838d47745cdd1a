/*
 * compress-bench: what compression buys and costs, on the page store
 * alone (pools/), with a corpus of real pages (tools/tmem-bench/
 * make-corpus.sh: ELF libraries, text and docs, 20% zero pages).  A
 * program that prints numbers (make bench-compress), never a test.
 *
 *   capacity   fill a pool until it evicts; effective capacity = logical
 *              bytes held / physical bytes used, against the ideal ratio
 *              on the same pages (4096 N / the sum of per-page compressed
 *              sizes, same-filled pages free, pages over the threshold
 *              raw); allocator overhead + fragmentation as a share of
 *              the compressed bytes; zstd's ratio over lz4's;
 *   speed      one core's LZ4 compress rate on the corpus, then lz4 puts
 *              from one thread against it, put->get round trips (p50,
 *              p99), two clients on two threads against one, and puts
 *              with compression off against plain memcpy;
 *   churn      puts, flushes and evictions of the corpus's mixed sizes
 *              for CHURN_SECONDS (default 20) on a full pool, compaction
 *              every 50 ms as the daemon's background does: the largest
 *              fragmentation seen after a compaction against the bound
 *              (under one span's slots per size class), and wrong bytes.
 *
 * Usage: compress-bench --corpus FILE [--json].  Store-level: the
 * daemon-level figures (through the ring) are tmem-bench --corpus.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>
#include <zstd.h>

#include "internal.h"
#include "tmem_store.h"

#define PG TMEM_PAGE_SIZE

static uint8_t *corpus;
static uint32_t npages;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const uint8_t *page(uint64_t i)
{
	return corpus + (i % npages) * PG;
}

static int load_corpus(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < PG)
		return -1;
	npages = (uint32_t)(st.st_size / PG);
	corpus = aligned_alloc(PG, (size_t)npages * PG);
	if (!corpus || read(fd, corpus, (size_t)npages * PG) != (ssize_t)npages * PG)
		return -1;
	close(fd);
	return 0;
}

static bool same_filled(const uint8_t *p)
{
	const uint64_t *w = (const uint64_t *)p;

	for (unsigned i = 1; i < PG / 8; i++)
		if (w[i] != w[0])
			return false;
	return true;
}

/* The page's stored size as the ideal counts it. */
static uint32_t ideal_size(const uint8_t *p, const struct tmem_compress *cz, ZSTD_CCtx *zc)
{
	static uint8_t out[2 * PG];
	size_t n;

	if (same_filled(p))
		return 0;
	if (cz->algo == TMEM_COMPRESS_LZ4)
		n = (size_t)LZ4_compress_default((const char *)p, (char *)out, PG, sizeof(out));
	else
		n = ZSTD_compressCCtx(zc, out, sizeof(out), p, PG, cz->level);
	return n > TMEM_COMPRESS_THRESHOLD ? PG : (uint32_t)n;
}

static struct tmem_store *store_of(uint64_t frames, const struct tmem_compress *cz)
{
	struct tmem_store_config cfg = { .arena_bytes = frames * PG, .compress = *cz,
					 .prefault = true };
	struct tmem_store *s = NULL;

	if (store_create(&cfg, &s))
		exit(1);
	return s;
}

static struct tmem_oid oid_of(uint64_t i)
{
	return (struct tmem_oid){ { i / 64, 0x42, 0 } };
}

struct capacity {
	uint64_t held;
	double effective, ideal, overhead_frag, overhead, frag;
};

static void capacity(const struct tmem_compress *cz, uint64_t frames, struct capacity *r)
{
	struct tmem_store *s = store_of(frames, cz);
	struct tmem_client *c;
	struct tmem_store_info si;
	ZSTD_CCtx *zc = ZSTD_createCCtx();
	uint64_t ideal_bytes = 0;

	store_client_create(s, "bench", &c);
	store_new_pool(c, tmem_pool_flags(0), NULL);
	for (r->held = 0;; r->held++) {
		struct tmem_oid o = oid_of(r->held);

		if (store_put_page(c, 0, &o, r->held % 64, page(r->held), TMEM_PUT_CAP(TMEM_NO_CAP)) != 1)
			break; /* the first put that would evict */
		ideal_bytes += ideal_size(page(r->held), cz, zc);
	}
	store_info(s, &si);
	r->effective = (double)r->held * PG / (double)si.mem_used_total;
	r->ideal = (double)r->held * PG / (double)ideal_bytes;
	r->overhead_frag = (double)(si.zs_overhead + si.zs_fragmentation) /
			   (double)si.z.compr_data_size;
	r->overhead = (double)si.zs_overhead / (double)si.z.compr_data_size;
	r->frag = (double)si.zs_fragmentation / (double)si.z.compr_data_size;
	ZSTD_freeCCtx(zc);
	store_destroy(s);
}

static double lz4_rate(void)
{
	static uint8_t out[2 * PG];
	uint64_t t0 = now_ns(), n = 0;

	while (now_ns() - t0 < 1000000000u)
		for (int k = 0; k < 256; k++, n++)
			(void)LZ4_compress_default((const char *)page(n), (char *)out, PG, sizeof(out));
	return (double)n * 1e9 / (double)(now_ns() - t0);
}

struct putter {
	struct tmem_store *s;
	uint64_t base, n;
	double rate;
};

static void *put_loop(void *arg)
{
	struct putter *p = arg;
	struct tmem_client *c;
	char name[32];
	uint64_t t0;

	snprintf(name, sizeof(name), "put%llu", (unsigned long long)p->base);
	store_client_create(p->s, name, &c);
	store_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	t0 = now_ns();
	for (uint64_t i = 0; i < p->n; i++) {
		struct tmem_oid o = oid_of(i);

		if (store_put_page(c, 0, &o, i % 64, page(p->base + i), TMEM_PUT_CAP(TMEM_NO_CAP)) != 1)
			exit(2);
	}
	p->rate = (double)p->n * 1e9 / (double)(now_ns() - t0);
	return NULL;
}

/* Pages a second of puts, from threads threads, each its own client. */
static double put_rate(const struct tmem_compress *cz, unsigned threads, uint64_t n)
{
	struct tmem_store *s = store_of(threads * n + 1024, cz);
	struct putter p[2];
	pthread_t t[2];
	double sum = 0;

	for (unsigned i = 0; i < threads; i++) {
		p[i] = (struct putter){ .s = s, .base = i * 7919u, .n = n };
		pthread_create(&t[i], NULL, put_loop, &p[i]);
	}
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		sum += p[i].rate;
	}
	store_destroy(s);
	return sum;
}

static double memcpy_rate(uint64_t n)
{
	uint8_t *dst = aligned_alloc(PG, (size_t)n * PG);
	uint64_t t0 = now_ns();

	for (uint64_t i = 0; i < n; i++)
		memcpy(dst + i * PG, page(i), PG);
	t0 = now_ns() - t0;
	free(dst);
	return (double)n * 1e9 / (double)t0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void roundtrip(const struct tmem_compress *cz, double *p50, double *p99)
{
	enum { N = 100000 };
	struct tmem_store *s = store_of(4096, cz);
	static uint64_t lat[N];
	struct tmem_client *c;
	uint8_t back[PG];

	store_client_create(s, "rt", &c);
	store_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	for (uint64_t i = 0; i < N; i++) {
		struct tmem_oid o = oid_of(i % 1024);
		uint64_t t0 = now_ns();

		store_put_page(c, 0, &o, i % 64, page(i), TMEM_PUT_CAP(TMEM_NO_CAP));
		store_get_page(c, 0, &o, i % 64, back);
		lat[i] = now_ns() - t0;
	}
	qsort(lat, N, sizeof(lat[0]), cmp_u64);
	*p50 = (double)lat[N / 2] / 1000;
	*p99 = (double)lat[N * 99 / 100] / 1000;
	store_destroy(s);
}

/* ---- churn --------------------------------------------------------------- */

struct churn {
	uint64_t ops, wrong, moved, compactions;
	double worst_frag, bound_frag;  /* bytes, after compactions */
	double worst_share;             /* worst (overhead + frag) / compressed */
};

static double frag_bound(struct tmem_store *s)
{
	double b = 0;

	/* One span's slots per class that holds any: the compaction bound. */
	pthread_mutex_lock(&s->alloc_lock);
	for (uint32_t k = 0; k < TMEM_ZS_CLASSES; k++)
		if (s->zs.cls[k].spans)
			b += (double)s->zs.cls[k].slots * s->zs.cls[k].size;
	pthread_mutex_unlock(&s->alloc_lock);
	return b;
}

static void churn(const struct tmem_compress *cz, double seconds, struct churn *r)
{
	enum { H = 24576 };
	struct tmem_store *s = store_of(4096, cz);
	static uint32_t have[H]; /* corpus index + 1, 0: none */
	struct tmem_client *c;
	uint8_t back[PG];
	uint64_t rng = 88172645463325252ull, t0 = now_ns(), last = t0;

	store_client_create(s, "churn", &c);
	store_new_pool(c, tmem_pool_flags(0), NULL);
	memset(r, 0, sizeof(*r));
	while (now_ns() - t0 < (uint64_t)(seconds * 1e9)) {
		uint32_t h, op;
		struct tmem_oid o;
		int ret;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		h = (uint32_t)(rng % H);
		op = (uint32_t)(rng >> 40) % 10;
		o = oid_of(h);
		if (op < 5) {
			uint32_t idx = (uint32_t)((rng >> 20) % npages);

			ret = store_put_page(c, 0, &o, h % 64, page(idx), TMEM_PUT_CAP(TMEM_NO_CAP));
			while (ret == -ENOSPC && store_client_evict_oldest_n(c, 8))
				ret = store_put_page(c, 0, &o, h % 64, page(idx), TMEM_PUT_CAP(TMEM_NO_CAP));
			have[h] = ret == 1 ? idx + 1 : 0;
		} else if (op < 8) {
			/* Ephemeral: a get removes; a miss is fine (evicted). */
			ret = store_get_page(c, 0, &o, h % 64, back);
			if (ret == 1 && (!have[h] || memcmp(back, page(have[h] - 1), PG)))
				r->wrong++;
			have[h] = 0;
		} else {
			store_flush_page(c, 0, &o, h % 64);
			have[h] = 0;
		}
		r->ops++;
		if (now_ns() - last > 50000000u) {
			struct tmem_store_info si;
			double share;

			r->moved += store_compact(s);
			store_info(s, &si);
			if ((double)si.zs_fragmentation > r->worst_frag) {
				r->worst_frag = (double)si.zs_fragmentation;
				r->bound_frag = frag_bound(s);
			}
			share = (double)(si.zs_overhead + si.zs_fragmentation) /
				(double)(si.z.compr_data_size ? si.z.compr_data_size : 1);
			if (share > r->worst_share)
				r->worst_share = share;
			r->compactions = si.compactions;
			last = now_ns();
		}
	}
	/* Everything still there comes back exact. */
	for (uint32_t h = 0; h < H; h++) {
		struct tmem_oid o = oid_of(h);

		if (store_get_page(c, 0, &o, h % 64, back) == 1 &&
		    (!have[h] || memcmp(back, page(have[h] - 1), PG)))
			r->wrong++;
	}
	store_destroy(s);
}

int main(int argc, char **argv)
{
	static const struct tmem_compress LZ4 = { TMEM_COMPRESS_LZ4, 0 },
					  ZSTD = { TMEM_COMPRESS_ZSTD, 3 },
					  OFF = { TMEM_COMPRESS_OFF, 0 };
	const char *path = NULL, *cs = getenv("CHURN_SECONDS");
	bool json = false;
	struct capacity cl, cz;
	struct churn ch;
	double rate, put1, put2, off1, mc, p50, p99;
	json_t *doc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--corpus") && i + 1 < argc)
			path = argv[++i];
		else if (!strcmp(argv[i], "--json"))
			json = true;
		else
			path = NULL, i = argc;
	}
	if (!path || load_corpus(path)) {
		fprintf(stderr, "usage: compress-bench --corpus FILE [--json] "
			"(tools/tmem-bench/make-corpus.sh makes one)\n");
		return 2;
	}
	/* A 128 MiB pool: fewer frames would make the last, part-filled span
	 * of each of the 128 size classes look like fragmentation. */
	capacity(&LZ4, 32768, &cl);
	capacity(&ZSTD, 32768, &cz);
	rate = lz4_rate();
	put1 = put_rate(&LZ4, 1, npages);
	put2 = put_rate(&LZ4, 2, npages);
	off1 = put_rate(&OFF, 1, npages);
	mc = memcpy_rate(npages);
	roundtrip(&LZ4, &p50, &p99);
	churn(&LZ4, cs ? atof(cs) : 20, &ch);
	doc = json_pack("{s:i, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o}, s:{s:o, s:o, s:o, s:o}, s:o,"
			" s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o}}",
			"corpus_pages", (int)npages,
			"lz4", "pages_held", json_integer((json_int_t)cl.held),
			"effective_capacity", json_real(cl.effective),
			"ideal_ratio", json_real(cl.ideal),
			"effective_over_ideal", json_real(cl.effective / cl.ideal),
			"overhead_plus_fragmentation_share", json_real(cl.overhead_frag),
			"overhead_share", json_real(cl.overhead),
			"fragmentation_share", json_real(cl.frag),
			"zstd", "pages_held", json_integer((json_int_t)cz.held),
			"effective_capacity", json_real(cz.effective),
			"ideal_ratio", json_real(cz.ideal),
			"effective_over_ideal", json_real(cz.effective / cz.ideal),
			"zstd_over_lz4_ratio", json_real(cz.effective / cl.effective),
			"speed", "lz4_compress_pages_per_s_one_core", json_real(rate),
			"lz4_puts_per_s_one_thread", json_real(put1),
			"lz4_puts_over_compress_rate", json_real(put1 / rate),
			"roundtrip_p50_us", json_real(p50), "roundtrip_p99_us", json_real(p99),
			"lz4_puts_per_s_two_threads", json_real(put2),
			"two_over_one", json_real(put2 / put1),
			"off_puts_per_s_one_thread", json_real(off1),
			"off_puts_over_memcpy", json_real(off1 / mc),
			"churn", "seconds", json_real(cs ? atof(cs) : 20),
			"ops", json_integer((json_int_t)ch.ops),
			"pages_compacted", json_integer((json_int_t)ch.moved),
			"worst_fragmentation_bytes", json_real(ch.worst_frag),
			"fragmentation_bound_bytes", json_real(ch.bound_frag),
			"worst_overhead_plus_fragmentation_share", json_real(ch.worst_share),
			"wrong_bytes_pages", json_integer((json_int_t)ch.wrong));
	json_dumpf(doc, stdout, json ? JSON_COMPACT : JSON_INDENT(2) | JSON_REAL_PRECISION(4));
	putchar('\n');
	json_decref(doc);
	free(corpus);
	return ch.wrong ? 1 : 0;
}
