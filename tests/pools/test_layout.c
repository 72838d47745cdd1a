/*
 * pools/: the durable layout (durable.h) against a recorded copy.  An
 * arena written by one build is read by the next, so a change to a
 * durable struct's size, a field's offset or size, or a durable constant
 * must come with a bump of TMEM_ARENA_LAYOUT (which makes the next build
 * refuse the old file instead of misreading it).  This test fails when
 * anything recorded here changed while the version did not; after a
 * bump, record the new version's table here (and its number below).
 */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/test_main.h"
#include "durable.h"
#include "tmem_store.h"
#include "test_pools.h"

#define RECORDED_LAYOUT 3u
#define RECORDED_MAGIC "tmemARN\n"

/* Every field of every durable struct: X(struct, field), in order. */
#define DURABLE_FIELDS(X) \
	X(tmem_durable_hdr, magic) X(tmem_durable_hdr, layout) \
	X(tmem_durable_hdr, page_size) X(tmem_durable_hdr, max_frames) \
	X(tmem_durable_hdr, page_cap) X(tmem_durable_hdr, chunk_cap) \
	X(tmem_durable_hdr, max_clients) X(tmem_durable_hdr, max_pools) \
	X(tmem_durable_hdr, block_bytes) X(tmem_durable_hdr, span_cap) \
	X(tmem_durable_hdr, zobj_cap) X(tmem_durable_hdr, off_clients) \
	X(tmem_durable_hdr, off_pools) X(tmem_durable_hdr, off_chunks) \
	X(tmem_durable_hdr, off_objs) X(tmem_durable_hdr, off_pages) \
	X(tmem_durable_hdr, off_frames) X(tmem_durable_hdr, off_spans) \
	X(tmem_durable_hdr, off_zobjs) X(tmem_durable_hdr, file_bytes) \
	X(tmem_durable_hdr, created_usec) X(tmem_durable_hdr, geom_sum) \
	X(tmem_durable_hdr, total_frames) X(tmem_durable_hdr, frame_bump) \
	X(tmem_durable_hdr, page_bump) X(tmem_durable_hdr, chunk_bump) \
	X(tmem_durable_hdr, client_bump) X(tmem_durable_hdr, pool_bump) \
	X(tmem_durable_hdr, span_bump) X(tmem_durable_hdr, zobj_bump) \
	X(tmem_durable_hdr, starts) \
	X(tmem_client_rec, state) X(tmem_client_rec, id) X(tmem_client_rec, name) \
	X(tmem_client_rec, ident) X(tmem_client_rec, free_next) X(tmem_client_rec, rsvd) \
	X(tmem_pool_rec, state) X(tmem_pool_rec, gen) X(tmem_pool_rec, client) \
	X(tmem_pool_rec, slot) X(tmem_pool_rec, persistent) X(tmem_pool_rec, shared) \
	X(tmem_pool_rec, rsvd) X(tmem_pool_rec, uuid) X(tmem_pool_rec, rsvd2) \
	X(tmem_zspan_rec, state) X(tmem_zspan_rec, cls) X(tmem_zspan_rec, nframes) \
	X(tmem_zspan_rec, rsvd) X(tmem_zspan_rec, frames) X(tmem_zspan_rec, rsvd2) \
	X(tmem_pagedesc, obj) X(tmem_pagedesc, index) X(tmem_pagedesc, hnext) \
	X(tmem_pagedesc, oprev) X(tmem_pagedesc, onext) X(tmem_pagedesc, lprev) \
	X(tmem_pagedesc, lnext) X(tmem_pagedesc, data) \
	X(tmem_objdesc, oid) \
	X(tmem_chunk, owner) X(tmem_chunk, next) X(tmem_chunk, prev) \
	X(tmem_chunk, free) X(tmem_chunk, live) X(tmem_chunk, rsvd) \
	X(tmem_tier_hdr, magic) X(tmem_tier_hdr, layout) X(tmem_tier_hdr, unit) \
	X(tmem_tier_hdr, bytes) X(tmem_tier_hdr, arena_created) X(tmem_tier_hdr, arena_sum) \
	X(tmem_tier_hdr, created_usec) X(tmem_tier_hdr, sum)

/* Every durable struct: X(struct). */
#define DURABLE_STRUCTS(X) \
	X(tmem_durable_hdr) X(tmem_client_rec) X(tmem_pool_rec) X(tmem_zspan_rec) \
	X(tmem_pagedesc) X(tmem_objdesc) X(tmem_chunk) X(tmem_oid) X(tmem_uuid) \
	X(tmem_tier_hdr)

/* Every durable constant: X(name). */
#define DURABLE_CONSTS(X) \
	X(TMEM_PAGE_SIZE) X(TMEM_MAX_CLIENTS) X(TMEM_MAX_POOLS_TOTAL) \
	X(TMEM_OBJS_PER_CHUNK) X(TMEM_MAX_DESCS) X(TMEM_NIL) X(TMEM_OBJ_HEAD) \
	X(TMEM_DATA_LIVE) X(TMEM_H_ZS) X(TMEM_H_SUB) X(TMEM_H_IDX) \
	X(TMEM_ZOBJ_MAX) X(TMEM_ZS_ALIGN) X(TMEM_ZS_CLASSES) X(TMEM_ZS_HDR) \
	X(ZENT_SLOT_SHIFT) X(ZENT_LEN_SHIFT) X(ZENT_CODEC_SHIFT) \
	X(ZENT_SLOT_MASK) X(ZENT_LEN_MASK) X(ZENT_CODEC_MASK) \
	X(TMEM_CODEC_NONE) X(TMEM_CODEC_LZ4) X(TMEM_CODEC_ZSTD) \
	X(TMEM_ZSPAN_FRAMES) X(TMEM_REC_FREE) X(TMEM_REC_LIVE) X(TMEM_REC_DYING) \
	X(TMEM_CLIENT_NAME_MAX) X(TMEM_IDENT_LEN) \
	X(ZENT_TIER) X(ZENT_UNIT_MASK) X(TMEM_TIER_UNIT) X(TMEM_TIER_LAYOUT) \
	X(TMEM_TIER_HDR_BYTES)

struct rec {
	const char *name;
	uint64_t v, v2; /* offset and size, a struct's size, a constant */
};

/* Recorded at layout 3 (2 plus the host tier): offset and size of every field. */
static const struct rec rec_fields[] = {
	{ "tmem_durable_hdr.magic", 0, 8 },
	{ "tmem_durable_hdr.layout", 8, 4 },
	{ "tmem_durable_hdr.page_size", 12, 4 },
	{ "tmem_durable_hdr.max_frames", 16, 4 },
	{ "tmem_durable_hdr.page_cap", 20, 4 },
	{ "tmem_durable_hdr.chunk_cap", 24, 4 },
	{ "tmem_durable_hdr.max_clients", 28, 4 },
	{ "tmem_durable_hdr.max_pools", 32, 4 },
	{ "tmem_durable_hdr.block_bytes", 36, 4 },
	{ "tmem_durable_hdr.span_cap", 40, 4 },
	{ "tmem_durable_hdr.zobj_cap", 44, 4 },
	{ "tmem_durable_hdr.off_clients", 48, 8 },
	{ "tmem_durable_hdr.off_pools", 56, 8 },
	{ "tmem_durable_hdr.off_chunks", 64, 8 },
	{ "tmem_durable_hdr.off_objs", 72, 8 },
	{ "tmem_durable_hdr.off_pages", 80, 8 },
	{ "tmem_durable_hdr.off_frames", 88, 8 },
	{ "tmem_durable_hdr.off_spans", 96, 8 },
	{ "tmem_durable_hdr.off_zobjs", 104, 8 },
	{ "tmem_durable_hdr.file_bytes", 112, 8 },
	{ "tmem_durable_hdr.created_usec", 120, 8 },
	{ "tmem_durable_hdr.geom_sum", 128, 8 },
	{ "tmem_durable_hdr.total_frames", 136, 4 },
	{ "tmem_durable_hdr.frame_bump", 140, 4 },
	{ "tmem_durable_hdr.page_bump", 144, 4 },
	{ "tmem_durable_hdr.chunk_bump", 148, 4 },
	{ "tmem_durable_hdr.client_bump", 152, 4 },
	{ "tmem_durable_hdr.pool_bump", 156, 4 },
	{ "tmem_durable_hdr.span_bump", 160, 4 },
	{ "tmem_durable_hdr.zobj_bump", 164, 4 },
	{ "tmem_durable_hdr.starts", 168, 8 },
	{ "tmem_client_rec.state", 0, 4 },
	{ "tmem_client_rec.id", 4, 4 },
	{ "tmem_client_rec.name", 8, 64 },
	{ "tmem_client_rec.ident", 72, 32 },
	{ "tmem_client_rec.free_next", 104, 4 },
	{ "tmem_client_rec.rsvd", 108, 20 },
	{ "tmem_pool_rec.state", 0, 4 },
	{ "tmem_pool_rec.gen", 4, 4 },
	{ "tmem_pool_rec.client", 8, 4 },
	{ "tmem_pool_rec.slot", 12, 4 },
	{ "tmem_pool_rec.persistent", 16, 1 },
	{ "tmem_pool_rec.shared", 17, 1 },
	{ "tmem_pool_rec.rsvd", 18, 6 },
	{ "tmem_pool_rec.uuid", 24, 16 },
	{ "tmem_pool_rec.rsvd2", 40, 24 },
	{ "tmem_zspan_rec.state", 0, 4 },
	{ "tmem_zspan_rec.cls", 4, 1 },
	{ "tmem_zspan_rec.nframes", 5, 1 },
	{ "tmem_zspan_rec.rsvd", 6, 2 },
	{ "tmem_zspan_rec.frames", 8, 32 },
	{ "tmem_zspan_rec.rsvd2", 40, 8 },
	{ "tmem_pagedesc.obj", 0, 4 },
	{ "tmem_pagedesc.index", 4, 4 },
	{ "tmem_pagedesc.hnext", 8, 4 },
	{ "tmem_pagedesc.oprev", 12, 4 },
	{ "tmem_pagedesc.onext", 16, 4 },
	{ "tmem_pagedesc.lprev", 20, 4 },
	{ "tmem_pagedesc.lnext", 24, 4 },
	{ "tmem_pagedesc.data", 28, 4 },
	{ "tmem_objdesc.oid", 0, 24 },
	{ "tmem_chunk.owner", 0, 4 },
	{ "tmem_chunk.next", 4, 4 },
	{ "tmem_chunk.prev", 8, 4 },
	{ "tmem_chunk.free", 12, 1 },
	{ "tmem_chunk.live", 13, 1 },
	{ "tmem_chunk.rsvd", 14, 2 },
	{ "tmem_tier_hdr.magic", 0, 8 },
	{ "tmem_tier_hdr.layout", 8, 4 },
	{ "tmem_tier_hdr.unit", 12, 4 },
	{ "tmem_tier_hdr.bytes", 16, 8 },
	{ "tmem_tier_hdr.arena_created", 24, 8 },
	{ "tmem_tier_hdr.arena_sum", 32, 8 },
	{ "tmem_tier_hdr.created_usec", 40, 8 },
	{ "tmem_tier_hdr.sum", 48, 8 },
};

/* Recorded at layout 3 (2 plus the host tier): the size of every struct. */
static const struct rec rec_structs[] = {
	{ "sizeof tmem_durable_hdr", 176, 0 },
	{ "sizeof tmem_client_rec", 128, 0 },
	{ "sizeof tmem_pool_rec", 64, 0 },
	{ "sizeof tmem_zspan_rec", 48, 0 },
	{ "sizeof tmem_pagedesc", 32, 0 },
	{ "sizeof tmem_objdesc", 24, 0 },
	{ "sizeof tmem_chunk", 16, 0 },
	{ "sizeof tmem_oid", 24, 0 },
	{ "sizeof tmem_uuid", 16, 0 },
	{ "sizeof tmem_tier_hdr", 56, 0 },
};

/* Recorded at layout 3 (2 plus the host tier): every durable constant. */
static const struct rec rec_consts[] = {
	{ "TMEM_PAGE_SIZE", 0x1000ull, 0 },
	{ "TMEM_MAX_CLIENTS", 0x2000ull, 0 },
	{ "TMEM_MAX_POOLS_TOTAL", 0x4000ull, 0 },
	{ "TMEM_OBJS_PER_CHUNK", 0x40ull, 0 },
	{ "TMEM_MAX_DESCS", 0x7fffff00ull, 0 },
	{ "TMEM_NIL", 0xffffffffull, 0 },
	{ "TMEM_OBJ_HEAD", 0x80000000ull, 0 },
	{ "TMEM_DATA_LIVE", 0x80000000ull, 0 },
	{ "TMEM_H_ZS", 0x40000000ull, 0 },
	{ "TMEM_H_SUB", 0x20000000ull, 0 },
	{ "TMEM_H_IDX", 0x1fffffffull, 0 },
	{ "TMEM_ZOBJ_MAX", 0x1fffffffull, 0 },
	{ "TMEM_ZS_ALIGN", 0x20ull, 0 },
	{ "TMEM_ZS_CLASSES", 0x80ull, 0 },
	{ "TMEM_ZS_HDR", 0x8ull, 0 },
	{ "ZENT_SLOT_SHIFT", 0x20ull, 0 },
	{ "ZENT_LEN_SHIFT", 0x2cull, 0 },
	{ "ZENT_CODEC_SHIFT", 0x39ull, 0 },
	{ "ZENT_SLOT_MASK", 0xfffull, 0 },
	{ "ZENT_LEN_MASK", 0x1fffull, 0 },
	{ "ZENT_CODEC_MASK", 0x7ull, 0 },
	{ "TMEM_CODEC_NONE", 0ull, 0 },
	{ "TMEM_CODEC_LZ4", 0x1ull, 0 },
	{ "TMEM_CODEC_ZSTD", 0x2ull, 0 },
	{ "TMEM_ZSPAN_FRAMES", 0x8ull, 0 },
	{ "TMEM_REC_FREE", 0ull, 0 },
	{ "TMEM_REC_LIVE", 0x1ull, 0 },
	{ "TMEM_REC_DYING", 0x2ull, 0 },
	{ "TMEM_CLIENT_NAME_MAX", 0x40ull, 0 },
	{ "TMEM_IDENT_LEN", 0x20ull, 0 },
	{ "ZENT_TIER", 0x8000000000000000ull, 0 },
	{ "ZENT_UNIT_MASK", 0xfffffffffffull, 0 },
	{ "TMEM_TIER_UNIT", 0x40ull, 0 },
	{ "TMEM_TIER_LAYOUT", 0x1ull, 0 },
	{ "TMEM_TIER_HDR_BYTES", 0x1000ull, 0 },
};

#define NOW_FIELD(t, f) { #t "." #f, offsetof(struct t, f), sizeof(((struct t *)0)->f) },
#define NOW_STRUCT(t) { "sizeof " #t, sizeof(struct t), 0 },
#define NOW_CONST(n) { #n, (uint64_t)(n), 0 },

static const struct rec now_fields[] = { DURABLE_FIELDS(NOW_FIELD) };
static const struct rec now_structs[] = { DURABLE_STRUCTS(NOW_STRUCT) };
static const struct rec now_consts[] = { DURABLE_CONSTS(NOW_CONST) };

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The differences between a recorded table and today's, printed; how many. */
static unsigned int diff(const struct rec *rec, size_t nrec,
			 const struct rec *now, size_t nnow)
{
	unsigned int bad = 0;

	for (size_t i = 0; i < nrec || i < nnow; i++) {
		if (i >= nrec || i >= nnow) {
			fprintf(stderr, "layout: %s %s\n", i < nnow ? now[i].name : rec[i].name,
				i < nnow ? "is new" : "is gone");
			bad++;
		} else if (strcmp(rec[i].name, now[i].name) != 0 ||
			   rec[i].v != now[i].v || rec[i].v2 != now[i].v2) {
			fprintf(stderr, "layout: %s was %llu/%llu, is %s %llu/%llu\n",
				rec[i].name, (unsigned long long)rec[i].v,
				(unsigned long long)rec[i].v2, now[i].name,
				(unsigned long long)now[i].v, (unsigned long long)now[i].v2);
			bad++;
		}
	}
	return bad;
}

/* The version is the one recorded: record a new table with a bump. */
START_TEST(test_layout_version_recorded)
{
	ck_assert_msg(TMEM_ARENA_LAYOUT == RECORDED_LAYOUT,
		      "TMEM_ARENA_LAYOUT is %u: record its table in test_layout.c",
		      TMEM_ARENA_LAYOUT);
	ck_assert_str_eq(TMEM_ARENA_MAGIC, RECORDED_MAGIC);
}
END_TEST

START_TEST(test_layout_fields_unchanged)
{
	unsigned int bad = diff(rec_fields, N(rec_fields), now_fields, N(now_fields));

	ck_assert_msg(bad == 0, "%u durable fields moved without a TMEM_ARENA_LAYOUT bump", bad);
}
END_TEST

START_TEST(test_layout_sizes_unchanged)
{
	unsigned int bad = diff(rec_structs, N(rec_structs), now_structs, N(now_structs));

	ck_assert_msg(bad == 0, "%u durable structs resized without a TMEM_ARENA_LAYOUT bump", bad);
}
END_TEST

START_TEST(test_layout_constants_unchanged)
{
	unsigned int bad = diff(rec_consts, N(rec_consts), now_consts, N(now_consts));

	ck_assert_msg(bad == 0, "%u durable constants changed without a TMEM_ARENA_LAYOUT bump", bad);
}
END_TEST

void add_layout_tests(Suite *suite)
{
	TCase *tc = tcase_create("layout");

	tcase_add_test(tc, test_layout_version_recorded);
	tcase_add_test(tc, test_layout_fields_unchanged);
	tcase_add_test(tc, test_layout_sizes_unchanged);
	tcase_add_test(tc, test_layout_constants_unchanged);
	suite_add_tcase(suite, tc);
}
