/* Shared helpers for the pools/ tests: deterministic page contents. */
#ifndef TMEM_TESTS_POOL_HELPERS_H
#define TMEM_TESTS_POOL_HELPERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tmem_store.h"

#define PG TMEM_PAGE_SIZE
#define EPH tmem_pool_flags(0)
#define PERS tmem_pool_flags(TMEM_POOL_PERSIST)
#define SHR tmem_pool_flags(TMEM_POOL_SHARED)

/* Fill a page from a 64-bit seed (xorshift64*); never all-equal pages. */
static inline void page_fill(void *page, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1, *w = page;

	for (unsigned i = 0; i < PG / sizeof(*w); i++) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		w[i] = x * 0x2545f4914f6cdd1dull;
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

static inline struct tmem_store *mkstore(uint64_t pages, uint64_t max_pages)
{
	struct tmem_store_config cfg = {
		.arena_bytes = pages * PG,
		.max_arena_bytes = max_pages * PG,
	};
	struct tmem_store *s = NULL;

	return tmem_store_create(&cfg, &s) == 0 ? s : NULL;
}

static inline bool test_quick(void)
{
	const char *q = getenv("TMEM_TEST_QUICK");
	return q && *q && strcmp(q, "0") != 0;
}

#endif
