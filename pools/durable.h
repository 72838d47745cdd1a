/* SPDX-License-Identifier: MIT */
/*
 * The durable arena's layout: what a restarted tmemd finds in the file.
 * Only pools/ includes this.  Every offset is from the start of the
 * mapping and every reference an index, so the file may be mapped at any
 * address.  The commit protocol (which store publishes what) is in
 * pools/COMMIT.md; recovery is recover.c.
 *
 *   header       one 4 KiB page, struct tmem_arena_hdr
 *   clients      TMEM_MAX_CLIENTS x struct tmem_client_rec
 *   pools        TMEM_MAX_POOLS_TOTAL x struct tmem_pool_rec
 *   chunks       chunk_cap x struct tmem_chunk
 *   objs         chunk_cap x TMEM_OBJS_PER_CHUNK x struct tmem_objdesc
 *   pages        page_cap x struct tmem_pagedesc
 *   spans        span_cap x struct tmem_zspan_rec (compressed objects' spans)
 *   zobjs        zobj_cap x uint64_t (compressed objects' locations, words)
 *   frames       max_frames x 4 KiB, aligned to the file's block size
 *
 * Each region starts on a page boundary.  Untouched parts stay holes in
 * the file, so a big reservation costs nothing until it is used.
 *
 * Change anything here (sizes, field meanings, the protocol) and bump
 * TMEM_ARENA_LAYOUT: an arena of another version is refused, never
 * reinterpreted.
 */
#ifndef TMEM_DURABLE_H
#define TMEM_DURABLE_H

#include <stdint.h>

#include "tmem_proto.h"

#define TMEM_ARENA_MAGIC "tmemARN\n"
/* 2: compressed pages (spans, the object table, handle kinds in
 * tmem_pagedesc.data; see zs.c). */
#define TMEM_ARENA_LAYOUT 2u

enum tmem_rec_state {
	TMEM_REC_FREE = 0,
	TMEM_REC_LIVE = 1,
	TMEM_REC_DYING = 2, /* being torn down: recovery drops what it owns */
};

struct tmem_arena_hdr {
	/* Written once at format, covered by geom_sum. */
	char magic[8];
	uint32_t layout;
	uint32_t page_size;
	uint32_t max_frames;
	uint32_t page_cap;
	uint32_t chunk_cap;
	uint32_t max_clients;
	uint32_t max_pools;
	uint32_t block_bytes;     /* frames' alignment (the file's block size) */
	uint32_t span_cap;
	uint32_t zobj_cap;
	uint64_t off_clients, off_pools, off_chunks, off_objs, off_pages, off_frames;
	uint64_t off_spans, off_zobjs;
	uint64_t file_bytes;
	uint64_t created_usec;    /* CLOCK_REALTIME at format */
	uint64_t geom_sum;        /* XXH64 of every field above */
	/* Written while serving; recovery checks them against the geometry.
	 * The bumps are high-water marks: nothing at or above one was ever
	 * used, so recovery reads no further (and faults in no holes). */
	uint32_t total_frames;
	uint32_t frame_bump;
	uint32_t page_bump;
	uint32_t chunk_bump;
	uint32_t client_bump;
	uint32_t pool_bump;
	uint32_t span_bump;
	uint32_t zobj_bump;
	uint64_t starts;          /* times adopted */
};

/* A client.  name and ident are written before state goes LIVE. */
struct tmem_client_rec {
	uint32_t state;           /* enum tmem_rec_state */
	uint32_t id;
	char name[64];            /* TMEM_CLIENT_NAME_MAX, NUL-terminated */
	uint8_t ident[32];        /* TMEM_IDENT_LEN */
	uint32_t free_next;       /* volatile: the free list while FREE */
	uint8_t rsvd[20];
};
_Static_assert(sizeof(struct tmem_client_rec) == 128, "client record");

/* A private pool.  Shared pools have records too (so that their pages
 * can be told apart) but recovery drops them. */
struct tmem_pool_rec {
	uint32_t state;           /* enum tmem_rec_state */
	uint32_t gen;
	uint32_t client;          /* client record index */
	int32_t slot;             /* the owner's pool id */
	uint8_t persistent;
	uint8_t shared;
	uint8_t rsvd[6];
	struct tmem_uuid uuid;
	uint8_t rsvd2[24];
};
_Static_assert(sizeof(struct tmem_pool_rec) == 64, "pool record");

/*
 * A span of the size-class allocator (zs.c): nframes arena frames (not
 * necessarily adjacent) holding objects of one class, back to back,
 * crossing frame boundaries.  cls, nframes and frames[] are written
 * before state goes LIVE; a frame moves (shrink) by one store of its
 * frames[] entry after the copy.  FREE spans own nothing.
 */
#define TMEM_ZSPAN_FRAMES 8u
struct tmem_zspan_rec {
	uint32_t state;           /* enum tmem_rec_state (LIVE or FREE) */
	uint8_t cls;              /* size class */
	uint8_t nframes;          /* 1..TMEM_ZSPAN_FRAMES (zsmalloc's chain size) */
	uint8_t rsvd[2];
	uint32_t frames[TMEM_ZSPAN_FRAMES];
	uint32_t rsvd2[2];
};
_Static_assert(sizeof(struct tmem_zspan_rec) == 48, "span record");

#endif /* TMEM_DURABLE_H */
