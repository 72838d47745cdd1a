/* Helpers for the pools/ tests of a store in a memfd. */
#ifndef TMEM_TESTS_DURABLE_HELPERS_H
#define TMEM_TESTS_DURABLE_HELPERS_H

#include <check.h>
#include <stddef.h>
#include <sys/mman.h>

#include "durable.h"
#include "pool_helpers.h"
#include "tmem_store.h"

#define TMEM_TEST_LAYOUT TMEM_ARENA_LAYOUT
#define TMEM_TEST_HDR_TOTAL_FRAMES offsetof(struct tmem_durable_hdr, total_frames)
#define DURABLE_MAX_FRAMES 1024u

static inline int durable_memfd(void)
{
	int fd = memfd_create("tmem-test-arena", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	return fd;
}

/* Open (format or adopt) the arena in fd with room for 1024 frames. */
static inline struct tmem_store *durable_open(int fd, unsigned frames)
{
	struct tmem_store_config sc = {
		.arena_bytes = (uint64_t)frames * PG,
		.max_arena_bytes = (uint64_t)DURABLE_MAX_FRAMES * PG,
		.compress = test_compress(),
	};
	struct tmem_store *s = NULL;
	char why[200] = "";
	int rc = store_open(&sc, fd, &s, why, sizeof(why));

	ck_assert_msg(rc == 0, "store_open: %d %s", rc, why);
	return s;
}

/* n more pages in pool, indices from start, contents seeded by index. */
static inline void populate_more(struct tmem_client *c, int32_t pool,
				 unsigned start, unsigned n)
{
	uint8_t pg[PG];

	for (unsigned i = start; i < start + n; i++) {
		struct tmem_oid o = mkoid(i / 7, 0, 0);

		page_fill(pg, i);
		ck_assert_int_eq(store_put_page(c, pool, &o, i, pg, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	}
}

#endif
