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
	/* Frames being warmed or punched are on no stack for a moment; an
	 * alloc that finds only those waits for them (they need nothing but
	 * alloc_lock to come back), and is never refused for it. */
	while (ret == -ENOSPC && s->frames.in_transit) {
		pthread_cond_wait(&s->transit_cond, &s->alloc_lock);
		ret = do_alloc_once(s, e, handle);
	}
	return ret;
}

void do_data_write(struct tmem_store *s, uint32_t handle, uint32_t page,
		   const struct tmem_enc *e)
{
	data_ops(handle)->write(s, handle, page, e);
}

const void *do_data_map(const struct tmem_store *s, uint32_t page, uint32_t handle,
			void *bounce, uint32_t *len, uint8_t *codec)
{
	uint8_t obj[TMEM_ZS_HDR + TMEM_PAGE_SIZE];
	uint64_t te = zs_tier_ent(s, handle);

	if (!te)
		return data_ops(handle)->map(s, handle, bounce, len, codec);
	/* In the host tier: read back here, under the pool lock. */
	if (tier_read_obj((struct tmem_tier *)&s->tier, te, page, obj) < 0)
		return NULL;
	*len = (uint32_t)(te >> ZENT_LEN_SHIFT) & ZENT_LEN_MASK;
	*codec = (uint8_t)(te >> ZENT_CODEC_SHIFT) & ZENT_CODEC_MASK;
	memcpy(bounce, obj + TMEM_ZS_HDR, *len);
	return bounce;
}

int do_data_read(const struct tmem_store *s, uint32_t page, uint32_t handle, void *dst)
{
	uint8_t bounce[TMEM_PAGE_SIZE];
	const void *src;
	uint32_t len;
	uint8_t codec;

	if ((handle & TMEM_H_ZS) && (handle & TMEM_H_SUB)) {
		page_fill_word(dst, zs_word(s, handle));
		return 0;
	}
	src = do_data_map(s, page, handle, bounce, &len, &codec);
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
	uint64_t te = zs_tier_ent(pool->store, handle);

	if (te) {
		/* Not RAM: the tier's counts, the pool's and its owner's. */
		int64_t len = (int64_t)((te >> ZENT_LEN_SHIFT) & ZENT_LEN_MASK);

		do_ctr_add(&pool->tier_pages, d);
		do_ctr_add(&pool->tier_bytes, d * len);
		atomic_fetch_add_explicit(&pool->owner->tier_pages, (uint64_t)(int64_t)d,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&pool->owner->tier_bytes, (uint64_t)(d * len),
					  memory_order_relaxed);
	} else if (!(handle & TMEM_H_ZS)) {
		do_ctr_add(&pool->zbytes, d * (int64_t)TMEM_PAGE_SIZE);
		if (handle & TMEM_H_SUB)
			do_ctr_add(&pool->huge_pages, d);
	} else if (handle & TMEM_H_SUB) {
		do_ctr_add(&pool->same_pages, d);
	} else {
		do_ctr_add(&pool->zbytes, d * (int64_t)zs_len(pool->store, handle));
	}
}
