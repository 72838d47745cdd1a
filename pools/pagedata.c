/* SPDX-License-Identifier: MIT */
/*
 * A page's bytes by data handle: which allocator holds them (raw frame or
 * zs object, see durable.h), how to get the page back, and what
 * they count for in the pool's compression stats.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static int do_alloc_once(struct tmem_store *s, const struct tmem_enc *e, uint32_t *handle)
{
	if (e->kind == TMEM_ENC_RAW || e->kind == TMEM_ENC_HUGE)
		return tmem_raw_data_ops.alloc(s, e, handle);
	return tmem_zs_data_ops.alloc(s, e, handle);
}

/*
 * Out of frames: compaction may free some without evicting a page, so
 * try it before the put fails (and policy/ evicts).  A compressed page
 * whose class needs a new span of several frames goes raw into one, if
 * one is left, rather than fail.
 */
int do_data_alloc(struct tmem_store *s, const struct tmem_enc *e,
		  struct tmem_pool *held, uint32_t *handle)
{
	int ret = do_alloc_once(s, e, handle);

	if (ret == -ENOSPC && do_zs_compact(s, held, false) > 0)
		ret = do_alloc_once(s, e, handle);
	if (ret == -ENOSPC && e->kind == TMEM_ENC_Z) {
		struct tmem_enc raw = { .kind = TMEM_ENC_HUGE };

		ret = tmem_raw_data_ops.alloc(s, &raw, handle);
	}
	return ret;
}

void do_data_write(struct tmem_store *s, uint32_t handle, uint32_t page,
		   const struct tmem_enc *e)
{
	data_ops(handle)->write(s, handle, page, e);
}

int do_data_read(const struct tmem_store *s, uint32_t handle, void *dst)
{
	uint8_t bounce[TMEM_PAGE_SIZE];
	const void *src;
	uint32_t len;
	uint8_t codec;

	if ((handle & TMEM_H_ZS) && (handle & TMEM_H_SUB)) {
		page_fill_word(dst, zs_word(s, handle));
		return 0;
	}
	src = data_ops(handle)->map(s, handle, bounce, &len, &codec);
	if (!src)
		return -EIO;
	if (codec == TMEM_CODEC_NONE) {
		memcpy(dst, src, TMEM_PAGE_SIZE);
		return 0;
	}
	return codec_decode(codec, src, len, dst);
}

void do_data_account(struct tmem_pool *pool, uint32_t handle, int d)
{
	if (!(handle & TMEM_H_ZS)) {
		do_ctr_add(&pool->zbytes, d * (int64_t)TMEM_PAGE_SIZE);
		if (handle & TMEM_H_SUB)
			do_ctr_add(&pool->huge_pages, d);
	} else if (handle & TMEM_H_SUB) {
		do_ctr_add(&pool->same_pages, d);
	} else {
		do_ctr_add(&pool->zbytes, d * (int64_t)zs_len(pool->store, handle));
	}
}
