/* SPDX-License-Identifier: MIT */
/*
 * zs.c: the size-class allocator for compressed pages (its spans and
 * entries are durable.h's), the zs data allocator (tmem_zs_data_ops).
 * Used by pagedata.c, recover.c, store.c and stats.c.
 */
#ifndef TMEM_POOLS_ZS_H
#define TMEM_POOLS_ZS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "durable.h"

struct tmem_store;
struct tmem_pool;

#define TMEM_ZS_NO_SLOT 0xffffu

/* A size class of zs.c.  Under alloc_lock. */
struct tmem_zclass {
	uint32_t size;     /* slot bytes, TMEM_ZS_HDR included */
	uint16_t slots;    /* per span */
	uint8_t nframes;   /* per span */
	uint32_t partial;  /* spans with a free slot (through tmem_zspan_rt) */
	uint32_t nr_partial;
	uint64_t spans;    /* live */
	uint64_t objs;     /* live */
};

/* A span's derived state, rebuilt by recovery.  Under alloc_lock. */
struct tmem_zspan_rt {
	uint32_t next, prev; /* class partial list; free list (next) */
	uint16_t inuse;
	uint16_t free;       /* first free slot; slots link through their header */
	uint8_t on_partial;
	uint8_t rsvd[3];
};

/* The size-class allocator (zs.c).  Under alloc_lock except as noted. */
struct tmem_zs {
	struct tmem_zspan_rec *spans; /* span_cap, durable */
	uint64_t *zobjs;              /* zobj_cap entries, durable */
	uint32_t span_cap, zobj_cap;
	uint32_t span_bump, span_free;
	uint32_t zobj_bump, zobj_free; /* free entries link through themselves */
	struct tmem_zspan_rt *rt;     /* span_cap, NORESERVE */
	struct tmem_zclass cls[TMEM_ZS_CLASSES];
	/* Read without the lock (stats): relaxed. */
	_Atomic uint64_t obj_bytes;   /* compressed bytes of live objects */
	_Atomic uint64_t slot_bytes;  /* their slots' bytes */
	_Atomic uint64_t span_frames; /* frames held by spans */
	_Atomic uint64_t same_pages;
	_Atomic uint64_t compactions; /* compaction runs that moved something */
	_Atomic uint64_t pages_compacted;
	_Atomic uint64_t decode_errors;
};

/* ---- zs.c: the size-class allocator ------------------------------------- */
int zs_init(struct tmem_store *s);
void zs_fini(struct tmem_store *s);
/* A same-filled page's word. */
uint64_t zs_word(const struct tmem_store *s, uint32_t handle);
/* A compressed object's length (0 when the entry does not check out). */
uint32_t zs_len(const struct tmem_store *s, uint32_t handle);
/* The ZENT_TIER entry a handle names, or 0 (not in the tier). */
uint64_t zs_tier_ent(const struct tmem_store *s, uint32_t handle);
/* spill.c's commit, alloc_lock held: *nh the handle naming the tier. */
int do_zs_spill_commit(struct tmem_store *s, uint32_t handle, uint64_t te, uint32_t *nh);
/* Shrink, alloc_lock held: spans' frames above total_frames move below. */
void do_zs_shrink(struct tmem_store *s);
/* Compaction, alloc_lock held: move objects out of the emptiest spans
 * while a class has a span's worth of free slots; the pool lock of
 * each page moved is trylocked (a busy one is skipped), except held's,
 * which the caller holds (NULL: none), or every pool's (all_held: a
 * resize).  Returns objects moved. */
uint64_t do_zs_compact(struct tmem_store *s, struct tmem_pool *held, bool all_held);
/* alloc_lock held: bytes of all slots of live spans. */
void do_zs_frag(struct tmem_store *s, uint64_t *capacity);
/* Recovery. */
struct zs_recover;
int zs_recover_begin(struct tmem_store *s, struct zs_recover **out,
		     uint32_t *frame_user, uint32_t frames, uint32_t span_tag);
/* Whether page's zs handle checks out and is its alone; claims it. */
bool zs_recover_claim(struct zs_recover *r, uint32_t page, uint32_t handle);
/* Free lists, class lists and counts from what was claimed; spans with
 * no object go.  Frees r. */
void zs_recover_end(struct zs_recover *r);
/* The frames every kept span holds (for shrink's used count). */
uint64_t zs_frames(const struct tmem_store *s);

#endif /* TMEM_POOLS_ZS_H */
