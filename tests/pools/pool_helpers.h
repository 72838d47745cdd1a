/* Shared helpers for the pools/ tests: deterministic page contents. */
#ifndef TMEM_TESTS_POOL_HELPERS_H
#define TMEM_TESTS_POOL_HELPERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmem_store.h"

#define PG TMEM_PAGE_SIZE
#define EPH tmem_pool_flags(0)
#define PERS tmem_pool_flags(TMEM_POOL_PERSIST)
#define SHR tmem_pool_flags(TMEM_POOL_SHARED)

/* Random words from a 64-bit seed (xorshift64*): incompressible. */
static inline void page_fill_random(void *page, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1, *w = page;

	for (unsigned i = 0; i < PG / sizeof(*w); i++) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		w[i] = x * 0x2545f4914f6cdd1dull;
	}
}

/*
 * The test corpus: a page from a seed, of one of five kinds (random,
 * same-filled, text, binary, nearly all zero), so that with compression
 * on every test stores pages of many sizes: raw, compressed to a few
 * bytes or to most of a page, and same-filled.  No two seeds give the
 * same page (the seed is in every kind), so a stale get is always seen.
 * Whole zero pages, which cannot be told apart, have their own tests.
 */
/* Set by a test that counts frames (one page, one frame): every page
 * random, so stored raw whatever the compression.  Tests fork, so it
 * lasts one test. */
static bool test_incompressible;

static inline void page_fill(void *page, uint64_t seed)
{
	static const char *words[] = { "tmem ", "page ", "the ", "guest ", "swap ",
				       "frontswap ", "of ", "cleancache ", "xen ", "and\n" };
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1, *w = page;
	uint8_t *b = page;
	unsigned n = 0;

	switch (test_incompressible ? 0 : seed % 5) {
	case 0:
		page_fill_random(page, seed);
		return;
	case 1: /* same-filled: one word, unique to the seed */
		for (unsigned i = 0; i < PG / sizeof(*w); i++)
			w[i] = seed * 0x2545f4914f6cdd1dull | 1;
		return;
	case 2: /* text */
		n = (unsigned)snprintf((char *)b, PG, "seed %llu\n", (unsigned long long)seed);
		while (n < PG) {
			const char *t;

			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			t = words[(x >> 32) % 10];
			while (*t && n < PG)
				b[n++] = (uint8_t)*t++;
		}
		return;
	case 3: /* binary: small counters and pointer-like words */
		for (unsigned i = 0; i < PG / sizeof(*w); i++)
			w[i] = i % 4 == 0 ? seed + i : i % 4 == 1 ? 0x00007f0000001000ull + i * 64 :
			       i % 4 == 2 ? (seed >> (i % 32)) & 0xff : 0;
		return;
	default: /* nearly zero: the seed somewhere, then a random tail of some length */
		memset(page, 0, PG);
		w[(seed / 5) % (PG / sizeof(*w))] = seed | 1ull << 63;
		n = (unsigned)((seed * 2654435761u) % (PG / 2));
		for (unsigned i = PG - n; i + 8 <= PG; i += 8) {
			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			memcpy(b + i, &x, 8);
		}
		return;
	}
}

static inline bool page_check(const void *page, uint64_t seed)
{
	uint64_t ref[PG / sizeof(uint64_t)];

	page_fill(ref, seed);
	return memcmp(ref, page, PG) == 0;
}

static inline struct tmem_oid mkoid(uint64_t a, uint64_t b, uint64_t c)
{
	struct tmem_oid o = { { a, b, c } };
	return o;
}

/* The compression new clients get in these tests: TMEM_TEST_COMPRESS
 * (off, lz4, zstd, zstd:N), lz4 (the product's default) when unset.
 * make check runs the suites once with each. */
static inline struct tmem_compress test_compress(void)
{
	const char *t = getenv("TMEM_TEST_COMPRESS");
	struct tmem_compress cz = { TMEM_COMPRESS_LZ4, 0 };

	if (t && *t && store_compress_parse(t, &cz) != 0) {
		fprintf(stderr, "TMEM_TEST_COMPRESS=%s: want " TMEM_COMPRESS_VALUES "\n", t);
		abort();
	}
	return cz;
}

static inline struct tmem_store *mkstore(uint64_t pages, uint64_t max_pages)
{
	struct tmem_store_config cfg = {
		.arena_bytes = pages * PG,
		.max_arena_bytes = max_pages * PG,
		.compress = test_compress(),
	};
	struct tmem_store *s = NULL;

	return store_create(&cfg, &s) == 0 ? s : NULL;
}

static inline bool test_quick(void)
{
	const char *q = getenv("TMEM_TEST_QUICK");
	return q && *q && strcmp(q, "0") != 0;
}

#endif
