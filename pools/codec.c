/* SPDX-License-Identifier: MIT */
/*
 * Compression of one page, done by the putting thread before it takes any
 * lock, and decompression under the page's pool lock.  A guest chooses
 * every byte it puts, and the arena may be damaged (a bug, or a file that
 * changed under a restart), so:
 *   - compression writes into a buffer of TMEM_PAGE_SIZE with that bound
 *     passed to the library (LZ4_compress_default and ZSTD_compressCCtx
 *     never write past it; a page that does not fit under the
 *     threshold is stored raw instead);
 *   - decompression passes both bounds (input length from the entry,
 *     output exactly one page) to the library's safe decoder and accepts
 *     only a result of exactly TMEM_PAGE_SIZE bytes.
 * Same-filled pages (every 8-byte word equal; zero pages included) are
 * found first and stored as their word, as zram does.
 *
 * zstd keeps one compression and one decompression context per thread
 * (a pthread key frees them when the thread ends).  LZ4 needs none:
 * LZ4_compress_default() is as fast as its stream APIs for one page.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>

#include "internal.h"

struct zstd_ctx {
	ZSTD_CCtx *c;
	ZSTD_DCtx *d;
};

static pthread_key_t zstd_key;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;

static void zstd_ctx_free(void *p)
{
	struct zstd_ctx *z = p;

	ZSTD_freeCCtx(z->c);
	ZSTD_freeDCtx(z->d);
	free(z);
}

static void zstd_key_init(void)
{
	(void)pthread_key_create(&zstd_key, zstd_ctx_free);
}

/* This thread's contexts, or NULL when out of memory. */
static struct zstd_ctx *zstd_ctx(void)
{
	struct zstd_ctx *z;

	pthread_once(&zstd_once, zstd_key_init);
	z = pthread_getspecific(zstd_key);
	if (z)
		return z;
	z = calloc(1, sizeof(*z));
	if (!z)
		return NULL;
	z->c = ZSTD_createCCtx();
	z->d = ZSTD_createDCtx();
	if (!z->c || !z->d || pthread_setspecific(zstd_key, z) != 0) {
		zstd_ctx_free(z);
		return NULL;
	}
	return z;
}

bool page_same_filled(const void *page, uint64_t *word)
{
	const uint64_t *w = page;
	uint64_t v = w[0];

	/* Most pages differ within the first words: cheap for them. */
	for (unsigned i = 1; i < TMEM_PAGE_SIZE / sizeof(*w); i++)
		if (w[i] != v)
			return false;
	*word = v;
	return true;
}

void page_fill_word(void *page, uint64_t word)
{
	uint64_t *w = page;

	for (unsigned i = 0; i < TMEM_PAGE_SIZE / sizeof(*w); i++)
		w[i] = word;
}

/* Compressed length into out->buf (at most cap bytes), or 0: did not fit. */
static uint32_t compress_into(uint32_t algo, int level, const void *page,
			      struct tmem_enc *out, uint32_t cap)
{
	struct zstd_ctx *z;
	size_t n;
	int r;

	switch (algo) {
	case TMEM_COMPRESS_LZ4:
		r = LZ4_compress_default(page, (char *)out->buf, TMEM_PAGE_SIZE, (int)cap);
		out->codec = TMEM_CODEC_LZ4;
		return r > 0 ? (uint32_t)r : 0;
	case TMEM_COMPRESS_ZSTD:
		z = zstd_ctx();
		if (!z)
			return 0;
		n = ZSTD_compressCCtx(z->c, out->buf, cap, page, TMEM_PAGE_SIZE, level);
		out->codec = TMEM_CODEC_ZSTD;
		return ZSTD_isError(n) ? 0 : (uint32_t)n;
	default:
		return 0;
	}
}

void codec_encode(uint32_t mode, uint32_t threshold, const void *page,
		  struct tmem_enc *out)
{
	uint32_t algo = mode & 0xff, len;
	int level = (int8_t)(mode >> 8);

	out->bytes = out->page = page;
	out->len = TMEM_PAGE_SIZE;
	out->codec = TMEM_CODEC_NONE;
	if (algo == TMEM_COMPRESS_OFF) {
		out->kind = TMEM_ENC_RAW;
		return;
	}
	if (page_same_filled(page, &out->word)) {
		out->kind = TMEM_ENC_SAME;
		out->len = 0;
		return;
	}
	len = compress_into(algo, level, page, out, threshold);
	if (len == 0) {
		out->kind = TMEM_ENC_HUGE;
		out->codec = TMEM_CODEC_NONE;
		return;
	}
	out->kind = TMEM_ENC_Z;
	out->len = len;
	out->bytes = out->buf;
}

int codec_decode(uint8_t codec, const void *src, uint32_t len, void *page)
{
	struct zstd_ctx *z;
	size_t n;

	if (len == 0 || len > TMEM_PAGE_SIZE)
		return -EIO;
	switch (codec) {
	case TMEM_CODEC_LZ4:
		return LZ4_decompress_safe(src, page, (int)len, TMEM_PAGE_SIZE) ==
			       TMEM_PAGE_SIZE ? 0 : -EIO;
	case TMEM_CODEC_ZSTD:
		z = zstd_ctx();
		if (!z)
			return -ENOMEM;
		n = ZSTD_decompressDCtx(z->d, page, TMEM_PAGE_SIZE, src, len);
		return !ZSTD_isError(n) && n == TMEM_PAGE_SIZE ? 0 : -EIO;
	default:
		return -EIO;
	}
}
