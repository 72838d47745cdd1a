/* SPDX-License-Identifier: MIT */
/*
 * pagedata.c: a page's bytes by data handle (the handle's encoding is
 * durable.h's), through the data allocator ops of its kind: raw
 * (frames.c) or zs (zs.c).  Used by descs.c, object.c, guest_ops.c,
 * recover.c and store.c.
 */
#ifndef TMEM_POOLS_PAGEDATA_H
#define TMEM_POOLS_PAGEDATA_H

#include <stdint.h>

#include "codec.h"
#include "durable.h"

struct tmem_pool;

/*
 * Where a page's bytes live.  alloc and free are called with
 * store->alloc_lock held; write and read need only keep the handle alive
 * (the pool lock of the page that owns it: compaction moves an object
 * only holding that lock too).  Two implementations: "raw" (one 4 KiB
 * frame per page, frames.c) and "zs" (size classes over spans, zs.c).
 */
struct tmem_data_ops {
	const char *name;
	/* Room for the encoded page e (a same-filled word: its entry
	 * only); -ENOSPC. */
	int (*alloc)(struct tmem_store *s, const struct tmem_enc *e, uint32_t *handle);
	void (*free)(struct tmem_store *s, uint32_t handle);
	/* Fill the room alloc gave, for the page descriptor page. */
	void (*write)(struct tmem_store *s, uint32_t handle, uint32_t page,
		      const struct tmem_enc *e);
	/* The stored bytes, contiguous (in the arena, or copied to bounce,
	 * TMEM_PAGE_SIZE bytes); *len their length, *codec how to decode.
	 * NULL when the handle does not check out (a damaged arena). */
	const void *(*map)(const struct tmem_store *s, uint32_t handle,
			   void *bounce, uint32_t *len, uint8_t *codec);
	/* Shrinking: called for every live handle after frames_trim_free();
	 * returns the handle to keep, moving the data inside the new size.
	 * Cannot fail: resize checked that the used frames fit. */
	uint32_t (*relocate)(struct tmem_store *s, uint32_t handle);
};
extern const struct tmem_data_ops tmem_raw_data_ops;
extern const struct tmem_data_ops tmem_zs_data_ops;

static inline const struct tmem_data_ops *data_ops(uint32_t handle)
{
	return handle & TMEM_H_ZS ? &tmem_zs_data_ops : &tmem_raw_data_ops;
}

/* ---- pagedata.c: a page's bytes by handle ------------------------------ */
/* alloc_lock held, and held's pool lock: room for e, compacting first
 * when out of frames; *handle (unpublished). */
int do_data_alloc(struct tmem_store *s, const struct tmem_enc *e,
		  struct tmem_pool *held, uint32_t *handle);
/* Pool lock held: write e at handle for page. */
void do_data_write(struct tmem_store *s, uint32_t handle, uint32_t page,
		   const struct tmem_enc *e);
/* Pool lock held: the stored bytes of page (its data handle), as the
 * map op gives them; a page in the host tier is read back into bounce. */
const void *do_data_map(const struct tmem_store *s, uint32_t page, uint32_t handle,
			void *bounce, uint32_t *len, uint8_t *codec);
/* Pool lock held: the page's bytes into dst; -EIO when they do not decode. */
int do_data_read(const struct tmem_store *s, uint32_t page, uint32_t handle, void *dst);
/* Pool lock held: count handle in (d = 1) or out (-1) of the pool's stats. */
void do_data_account(struct tmem_pool *pool, uint32_t handle, int d);

#endif /* TMEM_POOLS_PAGEDATA_H */
