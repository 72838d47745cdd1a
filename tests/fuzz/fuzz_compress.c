/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer over compression with the size-class allocator underneath
 * (pools/codec.c, pools/zs.c): a guest chooses every byte it puts, and a
 * damaged arena (a bug, or a file changed between two runs) chooses every
 * byte a get decompresses.
 *
 * The input drives three things:
 *   1. the input itself, as a page, compressed by each codec and
 *      decompressed again: exact, never past either buffer;
 *   2. the input, as compressed bytes of each codec, decompressed into a
 *      page: accepted only when it makes exactly a page, never overruns;
 *   3. ops on a store in a memfd (puts of pages cut from the input, gets
 *      checked against a model, flushes, compaction), then input bytes
 *      written over the arena's entries, span records and frames, then
 *      gets (an error or a page, no overrun) and recovery of the damaged
 *      file (gets and a compaction on what it kept).
 * ASan and UBSan do the checking.  make fuzz-compress; make check replays
 * tests/fuzz/corpus/fuzz-compress.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define PG TMEM_PAGE_SIZE
#define NH 24u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A page from the input: its bytes from off, repeated or cut to size. */
static void page_from(uint8_t *pg, const uint8_t *data, size_t size, size_t off)
{
	if (!size) {
		memset(pg, 0, PG);
		return;
	}
	for (size_t i = 0; i < PG; i++)
		pg[i] = data[(off + i) % size];
}

static void roundtrip(const uint8_t *data, size_t size)
{
	static const uint32_t modes[] = { TMEM_COMPRESS_LZ4, TMEM_COMPRESS_ZSTD | 1 << 8,
					  TMEM_COMPRESS_ZSTD | 19 << 8 };
	uint8_t pg[PG], back[PG];
	struct tmem_enc e;

	page_from(pg, data, size, 0);
	for (unsigned m = 0; m < 3; m++) {
		codec_encode(modes[m], size ? 256 + data[0] * 15u : TMEM_COMPRESS_THRESHOLD, pg, &e);
		if (e.kind == TMEM_ENC_Z) {
			if (e.len > PG || codec_decode(e.codec, e.bytes, e.len, back) != 0 ||
			    memcmp(back, pg, PG))
				abort();
		} else if (e.kind == TMEM_ENC_SAME) {
			page_fill_word(back, e.word);
			if (memcmp(back, pg, PG))
				abort();
		}
	}
	/* The input as compressed bytes: any verdict, no overrun.  A copy of
	 * exactly size bytes, so ASan sees a read past the input. */
	if (size && size <= PG) {
		uint8_t *in = malloc(size);

		if (!in)
			abort();
		memcpy(in, data, size);
		(void)codec_decode(TMEM_CODEC_LZ4, in, (uint32_t)size, back);
		(void)codec_decode(TMEM_CODEC_ZSTD, in, (uint32_t)size, back);
		(void)codec_decode((uint8_t)(data[0] & 7), in, (uint32_t)size, back);
		free(in);
	}
}

struct run {
	const uint8_t *data;
	size_t size, pos;
	struct tmem_store *s;
	struct tmem_client *c;
	uint8_t model[NH][PG];
	bool have[NH];
};

static uint8_t next(struct run *r)
{
	return r->size ? r->data[r->pos++ % r->size] : 0;
}

static struct tmem_store *open_store(int fd)
{
	struct tmem_store_config sc = { .arena_bytes = 48 * PG, .max_arena_bytes = 64 * PG,
					.compress = { TMEM_COMPRESS_LZ4, 0 } };
	struct tmem_store *s = NULL;

	return store_open(&sc, fd, &s, NULL, 0) == 0 ? s : NULL;
}

static void ops(struct run *r, unsigned n)
{
	static const struct tmem_compress modes[] = { { TMEM_COMPRESS_LZ4, 0 },
						      { TMEM_COMPRESS_ZSTD, 3 },
						      { TMEM_COMPRESS_OFF, 0 } };
	uint8_t pg[PG];

	for (unsigned k = 0; k < n; k++) {
		uint8_t op = next(r), h = next(r) % NH;
		struct tmem_oid o = { { h / 4, 1, 2 } };
		uint32_t cut;
		int ret;

		switch (op % 6) {
		case 0: case 1: case 2: /* a put of a page cut from the input */
			(void)store_client_set_compress(r->c, &modes[next(r) % 3]);
			page_from(pg, r->data, r->size, r->pos);
			/* Zeros after a cut-off point: sizes of all classes. */
			cut = next(r) * 16u;
			memset(pg + cut, 0, PG - cut);
			ret = store_put_page(r->c, 0, &o, h % 4, pg, TMEM_PUT_CAP(TMEM_NO_CAP));
			r->have[h] = ret == 1;
			if (ret == 1)
				memcpy(r->model[h], pg, PG);
			break;
		case 3:
			ret = store_get_page(r->c, 0, &o, h % 4, pg);
			if (ret != (int)r->have[h] || (ret == 1 && memcmp(pg, r->model[h], PG)))
				abort(); /* an undamaged store never loses or changes a page */
			break;
		case 4:
			(void)store_flush_page(r->c, 0, &o, h % 4);
			r->have[h] = false;
			break;
		default:
			(void)store_compact(r->s);
		}
	}
}

/* Input bytes over the arena's entries, span records and frames. */
static void damage(struct run *r)
{
	struct tmem_store *s = r->s;
	unsigned n = next(r) % 8;

	for (unsigned k = 0; k < n; k++) {
		uint8_t where = next(r);
		uint8_t *p;
		size_t len;

		if (where % 3 == 0) {
			p = (uint8_t *)s->zs.zobjs;
			len = (size_t)(s->zs.zobj_bump ? s->zs.zobj_bump : 1) * 8;
		} else if (where % 3 == 1) {
			p = (uint8_t *)s->zs.spans;
			len = (size_t)(s->zs.span_bump ? s->zs.span_bump : 1) * sizeof(*s->zs.spans);
		} else {
			p = s->frames.base;
			len = (size_t)s->frames.total_frames * PG;
		}
		p[((size_t)next(r) << 8 | next(r)) % len] = next(r);
	}
}

static void gets_any(struct run *r)
{
	uint8_t pg[PG];

	for (uint32_t h = 0; h < NH; h++) {
		struct tmem_oid o = { { h / 4, 1, 2 } };

		(void)store_get_page(r->c, 0, &o, h % 4, pg);
	}
}

static const struct tmem_ident ID = { { 'F' } };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run *r = calloc(1, sizeof(*r));
	int fd = memfd_create("fuzz-compress", MFD_CLOEXEC);

	if (!r || fd < 0)
		abort();
	roundtrip(data, size);
	r->data = data;
	r->size = size;
	r->s = open_store(fd);
	if (!r->s || store_client_create_ident(r->s, "f", &ID, &r->c) ||
	    store_new_pool(r->c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL) != 0)
		abort();
	ops(r, 24 + (size ? data[0] % 64 : 0));
	/* Damage, then gets: decompression checks what it reads.  (Nothing
	 * else runs on a store damaged while live; recovery checks all.) */
	damage(r);
	gets_any(r);
	store_destroy(r->s);
	r->s = open_store(fd); /* recovery of the damaged file */
	if (r->s) {
		if (store_client_claim(r->s, "f", &ID, &r->c) == 0) {
			gets_any(r);
			(void)store_compact(r->s);
			gets_any(r);
		}
		store_destroy(r->s);
	}
	close(fd);
	free(r);
	return 0;
}
