/* SPDX-License-Identifier: MIT */
/*
 * descs.c: the page and object descriptors and the chunks of object
 * descriptors (their durable layout is durable.h's).  Used by object.c,
 * evict.c, recover.c, durable.c and store.c.
 */
#ifndef TMEM_POOLS_DESCS_H
#define TMEM_POOLS_DESCS_H

#include <stdint.h>

#include "codec.h"
#include "durable.h"

struct tmem_store;
struct tmem_pool;

/* Page descriptors reserved per arena frame: room for a compressed
 * allocator that stores more pages than frames. */
#define TMEM_DESCS_PER_FRAME 4u

/* Descriptor arrays.  Under alloc_lock except as noted. */
struct tmem_descs {
	struct tmem_pagedesc *pages; /* page_cap entries, NORESERVE */
	uint32_t page_cap;
	uint32_t page_bump;          /* descriptors >= bump never used */
	uint32_t page_free;          /* free list through hnext */
	uint32_t pages_live;
	struct tmem_objdesc *objs;   /* chunk_cap chunks of TMEM_OBJS_PER_CHUNK */
	uint32_t chunk_cap;
	uint32_t chunk_bump;
	uint32_t chunk_free;         /* free chunks, linked through next */
	struct tmem_chunk *chunks;   /* chunk_cap records */
	struct tmem_durable_hdr *hdr;  /* page_bump and chunk_bump are mirrored there */
};

/* ---- descs.c: descriptors; do_* expect the lock they name --------------- */
/* The descriptor caps for an arena of max_frames frames. */
void descs_geometry(uint32_t max_frames, uint32_t *page_cap, uint32_t *chunk_cap);
/* Takes alloc_lock: a page descriptor plus room for e (written, not published). */
int descs_page_alloc(struct tmem_store *s, const struct tmem_enc *e,
		     struct tmem_pool *held, uint32_t *page);
/* alloc_lock held: the page's data and descriptor go back. */
void do_descs_page_free(struct tmem_store *s, uint32_t page);
/* Pool lock held: an object descriptor from the pool's chunks. */
int do_pool_obj_alloc(struct tmem_pool *pool, uint32_t *obj);
void do_pool_obj_free(struct tmem_pool *pool, uint32_t obj);
/* Pool lock held, every object freed: give the kept chunk back. */
void do_pool_chunks_release(struct tmem_pool *pool);
/* Recovery: chunk c holds the pool's objects whose slots are set in
 * live; or, with none, it goes back to the store's free list. */
void descs_chunk_adopt(struct tmem_pool *pool, uint32_t c, uint64_t live);
void descs_chunk_release(struct tmem_store *s, uint32_t c);

#endif /* TMEM_POOLS_DESCS_H */
