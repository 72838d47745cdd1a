/*
 * pools/: compression.  Same-filled and incompressible pages, pages of
 * many compressed sizes sharing frames, the size-class allocator's
 * compaction and its fragmentation bound, shrink refused below what the
 * compressed pages need, eviction until a put fits, recovery of
 * compressed pages after a restart, and a damaged arena giving errors,
 * never wrong bytes or a read out of bounds (make check runs this under
 * ASan and valgrind too).
 */
#include <check.h>
#include <errno.h>
#include <unistd.h>

#include "durable_helpers.h"
#include "pool_helpers.h"
#include "internal.h"
#include "test_pools.h"

static const struct tmem_compress LZ4 = { TMEM_COMPRESS_LZ4, 0 };
static const struct tmem_compress ZSTD = { TMEM_COMPRESS_ZSTD, 3 };
static const struct tmem_compress OFF = { TMEM_COMPRESS_OFF, 0 };

static struct tmem_store *zstore(uint64_t frames, const struct tmem_compress *cz)
{
	struct tmem_store_config cfg = { .arena_bytes = frames * PG, .compress = *cz };
	struct tmem_store *s = NULL;

	ck_assert_int_eq(store_create(&cfg, &s), 0);
	return s;
}

static struct tmem_client *zclient(struct tmem_store *s, const char *name, uint32_t flags)
{
	struct tmem_client *c;

	ck_assert_int_eq(store_client_create(s, name, &c), 0);
	ck_assert_int_eq(store_new_pool(c, flags, NULL), 0);
	return c;
}

/* A page of text, compressing to about a third of a page or less. */
static void text_page(uint8_t *pg, uint64_t seed)
{
	page_fill(pg, seed * 5 + 2);
}

/* A page whose compressed size grows with len (a random run of len bytes). */
static void sized_page(uint8_t *pg, uint64_t seed, uint32_t len)
{
	page_fill_random(pg, seed);
	memset(pg + len, 0, PG - len);
	memcpy(pg, &seed, sizeof(seed));
}

static int zput(struct tmem_client *c, uint32_t i, const uint8_t *pg)
{
	struct tmem_oid o = mkoid(i / 16, 7, 0);

	return store_put_page(c, 0, &o, i % 16, pg, TMEM_PUT_CAP(TMEM_NO_CAP));
}

static int zget(struct tmem_client *c, uint32_t i, uint8_t *pg)
{
	struct tmem_oid o = mkoid(i / 16, 7, 0);

	return store_get_page(c, 0, &o, i % 16, pg);
}

/* Page i of c is there, and is pg. */
static void expect_page(struct tmem_client *c, uint32_t i, const uint8_t *pg)
{
	uint8_t back[PG];

	ck_assert_int_eq(zget(c, i, back), 1);
	ck_assert_mem_eq(back, pg, PG);
}

static uint64_t free_frames(struct tmem_store *s)
{
	struct tmem_arena_counts a;

	store_arena_counts(s, &a);
	return a.free_pages;
}

START_TEST(same_filled_pages_take_no_frame)
{
	struct tmem_store *s = zstore(64, &LZ4);
	struct tmem_client *c = zclient(s, "c", PERS);
	uint8_t pg[PG];
	struct tmem_store_info si;

	for (uint32_t i = 0; i < 200; i++) {
		page_fill_word(pg, i % 2 ? 0 : 0x0102030405060708ull * i);
		ck_assert_int_eq(zput(c, i, pg), 1);
	}
	ck_assert_uint_eq(free_frames(s), 64); /* 200 pages, no frame */
	store_info(s, &si);
	ck_assert_uint_eq(si.z.same_pages, 200);
	ck_assert_uint_eq(si.z.pages, 200);
	ck_assert_uint_eq(si.z.compr_data_size, 0);
	for (uint32_t i = 0; i < 200; i++) {
		page_fill_word(pg, i % 2 ? 0 : 0x0102030405060708ull * i);
		expect_page(c, i, pg);
	}
	store_destroy(s);
}
END_TEST

START_TEST(off_stores_every_page_raw)
{
	struct tmem_store *s = zstore(64, &OFF);
	struct tmem_client *c = zclient(s, "c", PERS);
	uint8_t pg[PG];
	struct tmem_store_info si;

	memset(pg, 0, PG);
	ck_assert_int_eq(zput(c, 0, pg), 1);
	text_page(pg, 1);
	ck_assert_int_eq(zput(c, 1, pg), 1);
	ck_assert_uint_eq(free_frames(s), 62);
	store_info(s, &si);
	ck_assert_uint_eq(si.z.same_pages, 0);
	ck_assert_uint_eq(si.z.huge_pages, 0);
	ck_assert_uint_eq(si.z.compr_data_size, 2 * PG);
	store_destroy(s);
}
END_TEST

START_TEST(incompressible_pages_stay_raw)
{
	struct tmem_store *s = zstore(64, &ZSTD);
	struct tmem_client *c = zclient(s, "c", PERS);
	uint8_t pg[PG];
	struct tmem_store_info si;

	page_fill_random(pg, 9);
	ck_assert_int_eq(zput(c, 0, pg), 1);
	ck_assert_uint_eq(free_frames(s), 63);
	store_info(s, &si);
	ck_assert_uint_eq(si.z.huge_pages, 1);
	ck_assert_uint_eq(si.z.compr_data_size, PG);
	expect_page(c, 0, pg);
	store_destroy(s);
}
END_TEST

/* The threshold is the store's: a low one keeps text raw too. */
START_TEST(threshold_is_configurable)
{
	struct tmem_store_config cfg = { .arena_bytes = 64 * PG, .compress = LZ4,
					 .compress_threshold = 256 };
	struct tmem_store *s = NULL;
	struct tmem_client *c;
	struct tmem_store_info si;
	uint8_t pg[PG];

	ck_assert_int_eq(store_create(&cfg, &s), 0);
	c = zclient(s, "c", PERS);
	sized_page(pg, 3, 1024); /* about 1 KiB compressed: over 256 */
	ck_assert_int_eq(zput(c, 0, pg), 1);
	sized_page(pg, 4, 64);   /* about 80 bytes: under */
	ck_assert_int_eq(zput(c, 1, pg), 1);
	store_info(s, &si);
	ck_assert_uint_eq(si.z.huge_pages, 1);
	ck_assert_uint_lt(si.z.compr_data_size, PG + 256);
	store_destroy(s);
}
END_TEST

/* More pages than frames: quotas count pages, the pool's size is frames. */
START_TEST(compressed_pages_share_frames)
{
	const struct tmem_compress *modes[] = { &LZ4, &ZSTD };

	for (int m = 0; m < 2; m++) {
		struct tmem_store *s = zstore(256, modes[m]);
		struct tmem_client *c = zclient(s, "c", PERS);
		struct tmem_page_counts pc;
		struct tmem_store_info si;
		uint8_t pg[PG];

		for (uint32_t i = 0; i < 400; i++) {
			text_page(pg, i);
			ck_assert_int_eq(zput(c, i, pg), 1);
		}
		store_client_page_counts(c, &pc);
		ck_assert_uint_eq(pc.persistent, 400);
		store_info(s, &si);
		ck_assert_uint_lt(si.mem_used_total, 256 * PG);
		ck_assert_uint_lt(si.z.compr_data_size, 400 * PG / 2);
		/* Allocator overhead: headers, rounding and span tails. */
		ck_assert_uint_lt(si.zs_overhead, si.z.compr_data_size / 10);
		for (uint32_t i = 0; i < 400; i++) {
			text_page(pg, i);
			expect_page(c, i, pg);
		}
		store_destroy(s);
	}
}
END_TEST

/* A handle's page changes kind (text, same-filled, random, text): every
 * get is exact and the counts follow. */
START_TEST(replace_changes_representation)
{
	struct tmem_store *s = zstore(64, &LZ4);
	struct tmem_client *c = zclient(s, "c", PERS);
	uint8_t pg[PG];
	struct tmem_store_info si;

	for (int k = 0; k < 12; k++) {
		if (k % 4 == 0)
			text_page(pg, (uint64_t)k);
		else if (k % 4 == 1)
			page_fill_word(pg, (uint64_t)k);
		else if (k % 4 == 2)
			page_fill_random(pg, (uint64_t)k);
		else
			sized_page(pg, (uint64_t)k, 1500);
		ck_assert_int_eq(zput(c, 0, pg), 1);
		expect_page(c, 0, pg);
		store_info(s, &si);
		ck_assert_uint_eq(si.z.pages, 1);
		ck_assert_uint_eq(si.z.same_pages, k % 4 == 1);
		ck_assert_uint_eq(si.z.huge_pages, k % 4 == 2);
	}
	ck_assert_int_eq(store_flush_object(c, 0, &(struct tmem_oid){ { 0, 7, 0 } }), 1);
	store_info(s, &si);
	ck_assert_uint_eq(si.z.pages + si.z.compr_data_size + si.mem_used_total, 0);
	store_destroy(s);
}
END_TEST

/* Free slots in a class's partial spans, in slots, and that class's slots a span. */
static void class_free_slots(struct tmem_store *s, uint32_t k, uint64_t *free_slots)
{
	struct tmem_zs *z = &s->zs;

	*free_slots = 0;
	for (uint32_t sp = z->cls[k].partial; sp != TMEM_NIL; sp = z->rt[sp].next)
		*free_slots += z->cls[k].slots - z->rt[sp].inuse;
}

START_TEST(compaction_bounds_fragmentation)
{
	struct tmem_store *s = zstore(1024, &LZ4);
	struct tmem_client *c = zclient(s, "c", PERS);
	uint8_t pg[PG];
	struct tmem_store_info before, after;
	uint64_t moved, free_slots;
	const uint32_t n = 3000;

	for (uint32_t i = 0; i < n; i++) {
		sized_page(pg, i, 64 + (i * 97) % 2000);
		ck_assert_int_eq(zput(c, i, pg), 1);
	}
	for (uint32_t i = 0; i < n; i++)
		if (i % 4 != 0) {
			struct tmem_oid o = mkoid(i / 16, 7, 0);

			ck_assert_int_eq(store_flush_page(c, 0, &o, i % 16), 1);
		}
	store_info(s, &before);
	moved = store_compact(s);
	store_info(s, &after);
	ck_assert_uint_gt(moved, 0);
	ck_assert_uint_eq(after.pages_compacted, moved);
	ck_assert_uint_eq(after.compactions, 1);
	ck_assert_uint_lt(after.mem_used_total, before.mem_used_total);
	ck_assert_uint_lt(after.zs_fragmentation, before.zs_fragmentation);
	/* The bound: less than one span's worth of free slots per class. */
	for (uint32_t k = 0; k < TMEM_ZS_CLASSES; k++) {
		class_free_slots(s, k, &free_slots);
		ck_assert_uint_lt(free_slots, s->zs.cls[k].slots);
	}
	for (uint32_t i = 0; i < n; i += 4) {
		sized_page(pg, i, 64 + (i * 97) % 2000);
		expect_page(c, i, pg);
	}
	ck_assert_uint_eq(store_compact(s), 0); /* nothing left to do */
	store_destroy(s);
}
END_TEST

/* Shrinking compacts first, and is refused below what the pages need. */
START_TEST(shrink_refused_below_compressed_need)
{
	struct tmem_store_config cfg = { .arena_bytes = 512 * PG, .max_arena_bytes = 512 * PG,
					 .compress = LZ4 };
	struct tmem_store *s = NULL;
	struct tmem_client *c;
	struct tmem_arena_counts a;
	uint8_t pg[PG];
	uint64_t used;

	ck_assert_int_eq(store_create(&cfg, &s), 0);
	c = zclient(s, "c", PERS);
	for (uint32_t i = 0; i < 1200; i++) {
		sized_page(pg, i, 200 + (i * 131) % 1800);
		ck_assert_int_eq(zput(c, i, pg), 1);
	}
	for (uint32_t i = 0; i < 1200; i += 2) {
		struct tmem_oid o = mkoid(i / 16, 7, 0);

		ck_assert_int_eq(store_flush_page(c, 0, &o, i % 16), 1);
	}
	store_arena_counts(s, &a);
	used = a.total_pages - a.free_pages;
	ck_assert_int_eq(store_resize(s, 8), -EBUSY);
	store_arena_counts(s, &a);
	ck_assert_uint_eq(a.total_pages, 512);
	ck_assert_uint_lt(a.total_pages - a.free_pages, used); /* compacted */
	used = a.total_pages - a.free_pages;
	ck_assert_int_eq(store_resize(s, used), 0);
	store_arena_counts(s, &a);
	ck_assert_uint_eq(a.total_pages, used);
	ck_assert_uint_eq(a.free_pages, 0);
	for (uint32_t i = 1; i < 1200; i += 2) {
		sized_page(pg, i, 200 + (i * 131) % 1800);
		expect_page(c, i, pg);
	}
	store_destroy(s);
}
END_TEST

/* Evicting the oldest pages until a put fits terminates, whatever the
 * sizes: each eviction frees a page, and the arena empties at worst. */
START_TEST(evict_until_put_fits_terminates)
{
	struct tmem_store *s = zstore(512, &LZ4);
	struct tmem_client *c = zclient(s, "c", EPH);
	uint8_t pg[PG];
	uint32_t i, evicted = 0;
	int ret;

	for (i = 0;; i++) {
		sized_page(pg, i, 32 + (i * 53) % 3000);
		ret = zput(c, i, pg);
		if (ret != 1)
			break;
	}
	ck_assert_int_eq(ret, -ENOSPC);
	ck_assert_uint_gt(i, 512); /* more pages than frames */
	for (uint32_t k = 0; k < 8; k++) {
		page_fill_random(pg, 1000 + k); /* needs a whole frame */
		while ((ret = zput(c, 100000 + k, pg)) == -ENOSPC) {
			ck_assert_int_eq(store_client_evict_oldest(c), 1);
			ck_assert_uint_le(++evicted, i);
		}
		ck_assert_int_eq(ret, 1);
	}
	store_destroy(s);
}
END_TEST

/* One frame left, and the page's size class would need a new span of
 * several: it is stored raw in that frame rather than refused. */
START_TEST(last_frame_takes_a_page_raw)
{
	struct tmem_store *s = zstore(16, &LZ4);
	struct tmem_client *c = zclient(s, "c", PERS);
	struct tmem_store_info si;
	uint8_t pg[PG];

	for (uint32_t i = 0; i < 15; i++) {
		page_fill_random(pg, i);
		ck_assert_int_eq(zput(c, i, pg), 1);
	}
	ck_assert_uint_eq(free_frames(s), 1);
	sized_page(pg, 99, 1500); /* a 1536-byte class: spans of 3 frames */
	ck_assert_int_eq(zput(c, 15, pg), 1);
	store_info(s, &si);
	ck_assert_uint_eq(si.z.huge_pages, 16);
	ck_assert_uint_eq(free_frames(s), 0);
	expect_page(c, 15, pg);
	store_destroy(s);
}
END_TEST

START_TEST(client_setting)
{
	struct tmem_store *s = zstore(16, &LZ4);
	struct tmem_client *c = zclient(s, "c", PERS);
	struct tmem_compress cz;

	store_client_get_compress(c, &cz);
	ck_assert_int_eq(cz.algo, TMEM_COMPRESS_LZ4);
	ck_assert_int_eq(store_client_set_compress(c, &ZSTD), 0);
	store_client_get_compress(c, &cz);
	ck_assert(cz.algo == TMEM_COMPRESS_ZSTD && cz.level == 3);
	ck_assert_int_eq(store_client_set_compress(c, &(struct tmem_compress){ TMEM_COMPRESS_ZSTD, 20 }),
			 -EINVAL);
	ck_assert_int_eq(store_client_set_compress(c, &(struct tmem_compress){ 7, 0 }), -EINVAL);
	ck_assert_int_eq(store_client_set_compress(NULL, &LZ4), -EINVAL);
	ck_assert_int_eq(store_compress_parse("zstd:19", &cz), 0);
	ck_assert_int_eq(cz.level, 19);
	ck_assert_int_eq(store_compress_parse("zstd:0", &cz), -EINVAL);
	ck_assert_int_eq(store_compress_parse("zstd:3x", &cz), -EINVAL);
	ck_assert_int_eq(store_compress_parse("on", &cz), -EINVAL);
	ck_assert_int_eq(store_compress_parse("lz4", &cz), 0);
	ck_assert_int_eq(cz.algo, TMEM_COMPRESS_LZ4);
	store_destroy(s);
}
END_TEST

/* ---- after a restart ------------------------------------------------------ */

static const struct tmem_ident ID = { { 'Z' } };

/* Page i of the restart tests: every kind, compressed sizes of all classes. */
static void mixed_page(uint8_t *pg, uint32_t i)
{
	if (i % 7 == 0)
		page_fill_word(pg, i % 14 ? 0x1111111111111111ull * (i % 5) : 0);
	else if (i % 7 == 1)
		page_fill_random(pg, i);
	else
		sized_page(pg, i, (i * 61) % 3500);
}

START_TEST(compressed_pages_survive_restart)
{
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, DURABLE_MAX_FRAMES);
	struct tmem_client *c, *z;
	struct tmem_store_info si, si2;
	uint8_t pg[PG], back[PG];

	ck_assert_int_eq(store_client_create_ident(s, "a", &ID, &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	ck_assert_int_eq(store_client_set_compress(c, &LZ4), 0);
	ck_assert_int_eq(store_client_create_ident(s, "z", &ID, &z), 0);
	ck_assert_int_eq(store_new_pool(z, PERS, NULL), 0);
	ck_assert_int_eq(store_client_set_compress(z, &ZSTD), 0);
	for (uint32_t i = 0; i < 600; i++) {
		mixed_page(pg, i);
		ck_assert_int_eq(zput(i % 2 ? c : z, i, pg), 1);
	}
	for (uint32_t i = 0; i < 600; i += 3) { /* holes in the spans */
		struct tmem_oid o = mkoid(i / 16, 7, 0);

		ck_assert_int_eq(store_flush_page(i % 2 ? c : z, 0, &o, i % 16), 1);
	}
	store_info(s, &si);
	store_destroy(s);

	s = durable_open(fd, DURABLE_MAX_FRAMES);
	ck_assert_int_eq(store_client_claim(s, "a", &ID, &c), 0);
	ck_assert_int_eq(store_client_claim(s, "z", &ID, &z), 0);
	store_info(s, &si2);
	ck_assert_uint_eq(si2.z.pages, si.z.pages);
	ck_assert_uint_eq(si2.z.same_pages, si.z.same_pages);
	ck_assert_uint_eq(si2.z.huge_pages, si.z.huge_pages);
	ck_assert_uint_eq(si2.z.compr_data_size, si.z.compr_data_size);
	ck_assert_uint_eq(si2.mem_used_total, si.mem_used_total);
	ck_assert_uint_eq(si2.zs_fragmentation, si.zs_fragmentation);
	for (uint32_t i = 0; i < 600; i++) {
		mixed_page(pg, i);
		ck_assert_int_eq(zget(i % 2 ? c : z, i, back), i % 3 != 0);
		if (i % 3)
			ck_assert_mem_eq(back, pg, PG);
	}
	/* The rebuilt free lists work: more puts, a compaction, all exact. */
	for (uint32_t i = 600; i < 900; i++) {
		mixed_page(pg, i);
		ck_assert_int_eq(zput(c, i, pg), 1);
	}
	(void)store_compact(s);
	for (uint32_t i = 1; i < 900; i += 2)
		if (i >= 600 || i % 3) {
			mixed_page(pg, i);
			expect_page(c, i, pg);
		}
	store_destroy(s);
	close(fd);
}
END_TEST

/* The zs entry of the page at i, in the live mapping. */
static uint64_t *entry_of(struct tmem_store *s, struct tmem_client *c, uint32_t i)
{
	struct tmem_pool *pool = s->pool_tab[(uint32_t)c->slots[0].ref - 1];
	struct tmem_oid o = mkoid(i / 16, 7, 0);
	uint32_t page = do_page_lookup(pool, &o, i % 16, oid_hash(s, &o)), h;

	ck_assert_uint_ne(page, TMEM_NIL);
	h = pd_handle(pd(s, page));
	ck_assert(h & TMEM_H_ZS);
	return &s->zs.zobjs[h & TMEM_H_IDX];
}

/*
 * A damaged arena (a bug, or a file changed between two runs): a get of
 * a page whose stored bytes, length or span do not check out is an
 * error or a miss, never wrong bytes, never a read out of bounds.
 */
START_TEST(damaged_arena_never_overruns)
{
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, 64);
	struct tmem_client *c;
	uint8_t pg[PG], back[PG];
	uint64_t *e;

	ck_assert_int_eq(store_client_create_ident(s, "a", &ID, &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	ck_assert_int_eq(store_client_set_compress(c, &LZ4), 0);
	for (uint32_t i = 0; i < 8; i++) {
		sized_page(pg, i, 2000);
		ck_assert_int_eq(zput(c, i, pg), 1);
	}
	/* 0: a byte of the compressed data flipped (the checksum sees it). */
	e = entry_of(s, c, 0);
	{
		struct tmem_zspan_rec *r = &s->zs.spans[(uint32_t)*e];
		uint32_t off = (uint32_t)(*e >> ZENT_SLOT_SHIFT & 0xfff) * s->zs.cls[r->cls].size;

		frame_at(&s->frames, r->frames[off / PG])[off % PG + TMEM_ZS_HDR + 5] ^= 0x40;
	}
	ck_assert_int_eq(zget(c, 0, back), -EIO);
	/* 1: a length longer than its slot; 2: the longest length there is. */
	e = entry_of(s, c, 1);
	*e = (*e & ~(0x1fffull << ZENT_LEN_SHIFT)) | 4000ull << ZENT_LEN_SHIFT;
	ck_assert_int_eq(zget(c, 1, back), -EIO);
	e = entry_of(s, c, 2);
	*e |= 0x1fffull << ZENT_LEN_SHIFT;
	ck_assert_int_eq(zget(c, 2, back), -EIO);
	/* 3: an unknown codec; 4: a span out of range. */
	e = entry_of(s, c, 3);
	*e |= 7ull << ZENT_CODEC_SHIFT;
	ck_assert_int_eq(zget(c, 3, back), -EIO);
	e = entry_of(s, c, 4);
	*e = (*e & ~0xffffffffull) | 0xfffffff0ull;
	ck_assert_int_eq(zget(c, 4, back), -EIO);
	/* 5: its span's frame number out of the mapping. */
	e = entry_of(s, c, 5);
	s->zs.spans[(uint32_t)*e].frames[0] = 0x7fffffffu;
	ck_assert_int_eq(zget(c, 5, back), -EIO);
	store_destroy(s);

	/* Recovery drops what does not check out and keeps the rest. */
	s = durable_open(fd, 64);
	ck_assert_int_eq(store_client_claim(s, "a", &ID, &c), 0);
	for (uint32_t i = 0; i < 8; i++) {
		int ret = zget(c, i, back);

		sized_page(pg, i, 2000);
		ck_assert_msg(ret == 0 || ret == -EIO || (ret == 1 && !memcmp(back, pg, PG)),
			      "page %u: %d", i, ret);
	}
	store_destroy(s);
	close(fd);
}
END_TEST

void add_compress_tests(Suite *suite)
{
	TCase *tc = tcase_create("compress");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, same_filled_pages_take_no_frame);
	tcase_add_test(tc, off_stores_every_page_raw);
	tcase_add_test(tc, incompressible_pages_stay_raw);
	tcase_add_test(tc, threshold_is_configurable);
	tcase_add_test(tc, compressed_pages_share_frames);
	tcase_add_test(tc, replace_changes_representation);
	tcase_add_test(tc, compaction_bounds_fragmentation);
	tcase_add_test(tc, shrink_refused_below_compressed_need);
	tcase_add_test(tc, evict_until_put_fits_terminates);
	tcase_add_test(tc, last_frame_takes_a_page_raw);
	tcase_add_test(tc, client_setting);
	tcase_add_test(tc, compressed_pages_survive_restart);
	tcase_add_test(tc, damaged_arena_never_overruns);
	suite_add_tcase(suite, tc);
}
