/* SPDX-License-Identifier: MIT */
/*
 * The arena's on-disk format: every byte a restarted tmemd reads back.
 * Nothing else in the tree defines durable bytes; a struct, bit or
 * constant whose value is stored in the arena belongs here.  The commit
 * protocol (which store publishes what) is pools/COMMIT.md; recovery is
 * recover.c; mapping and formatting the file is durable.c.  Only pools/
 * includes this.
 *
 * LAYOUT.  Every offset is from the start of the mapping and every
 * reference an index (TMEM_NIL = none), so the file may be mapped at any
 * address:
 *
 *   header       one 4 KiB page, struct tmem_durable_hdr
 *   clients      TMEM_MAX_CLIENTS x struct tmem_client_rec
 *   pools        TMEM_MAX_POOLS_TOTAL x struct tmem_pool_rec
 *   chunks       chunk_cap x struct tmem_chunk
 *   objs         chunk_cap x TMEM_OBJS_PER_CHUNK x struct tmem_objdesc
 *   pages        page_cap x struct tmem_pagedesc
 *   spans        span_cap x struct tmem_zspan_rec (compressed objects' spans)
 *   zobjs        zobj_cap x uint64_t zs entries (compressed objects' locations)
 *   frames       max_frames x 4 KiB, aligned to the file's block size
 *
 * Each region starts on a page boundary.  Untouched parts stay holes in
 * the file, so a big reservation costs nothing until it is used.
 *
 * WORDS INSIDE THE RECORDS.
 *   tmem_pagedesc.obj    object descriptor index | TMEM_OBJ_HEAD on the
 *                        object's head page
 *   tmem_pagedesc.data   a data handle | TMEM_DATA_LIVE while published
 *   data handle          TMEM_H_ZS clear: a frame number (TMEM_H_SUB set:
 *                        an incompressible page kept raw under compression);
 *                        TMEM_H_ZS set: a zs entry index (TMEM_H_SUB set:
 *                        a same-filled page, whose word is the entry itself)
 *   zs entry (64 bits)   span | slot << ZENT_SLOT_SHIFT | len << ZENT_LEN_SHIFT
 *                        | codec << ZENT_CODEC_SHIFT (enum tmem_codec)
 *   zs object            TMEM_ZS_HDR bytes (uint32 page descriptor that owns
 *                        it, uint32 low half of XXH3 of the bytes), then
 *                        the compressed bytes, in a slot of its span's class
 *                        (slot size (cls + 1) x TMEM_ZS_ALIGN)
 *
 * WHEN TO BUMP TMEM_ARENA_LAYOUT.  Change anything here (a size, an
 * offset, a field's meaning, a bit, a constant, the protocol in
 * COMMIT.md) and bump it: an arena of another version is refused, never
 * reinterpreted.  The one exception is TMEM_ARENA_LAYOUT_OLDEST: when a
 * new layout only gives a meaning to a bit that older ones never set, an
 * older arena is the new layout with no such bit, and is read as it is.
 * tests/pools/test_layout.c holds the sizes and offsets of this file
 * against a recorded copy for the current version and fails when they
 * change and the version does not; record the new version's table there
 * with the bump.
 */
#ifndef TMEM_DURABLE_H
#define TMEM_DURABLE_H

#include <stdint.h>

#include "tmem_proto.h"

#define TMEM_ARENA_MAGIC "tmemARN\n"
/* 2: compressed pages (spans, the object table, handle kinds in
 * tmem_pagedesc.data; see zs.c).  3: a zs entry may name an object in
 * the host tier (ZENT_TIER; tier.c, struct tmem_tier_hdr). */
#define TMEM_ARENA_LAYOUT 3u
/* The oldest layout read as is: a layout-2 arena is a layout-3 one with
 * no entry in a tier.  It stays 2 (an older tmemd can still read it back)
 * until a tier is opened on it, which raises it to 3 first (durable.c). */
#define TMEM_ARENA_LAYOUT_OLDEST 2u

#define TMEM_NIL UINT32_MAX        /* no record, descriptor, chunk or span */
#define TMEM_MAX_POOLS_TOTAL 16384u /* pool records */
#define TMEM_OBJS_PER_CHUNK 64u
#define TMEM_MAX_DESCS 0x7fffff00u  /* indices stay below TMEM_OBJ_HEAD */
#define TMEM_OBJ_HEAD 0x80000000u  /* in pagedesc.obj: this is the head page */
#define TMEM_DATA_LIVE 0x80000000u /* in pagedesc.data: published (COMMIT.md) */

/* Data handles.  Frames are below 2^29 (max_frames <= TMEM_MAX_DESCS /
 * TMEM_DESCS_PER_FRAME). */
#define TMEM_H_ZS 0x40000000u      /* a zs handle, not a frame */
#define TMEM_H_SUB 0x20000000u     /* zs: same-filled; raw: incompressible */
#define TMEM_H_IDX 0x1fffffffu     /* the frame or the zs entry */
#define TMEM_ZOBJ_MAX TMEM_H_IDX   /* zs entries at most */

/* Compressed objects (zs.c). */
#define TMEM_ZS_ALIGN 32u          /* size class step */
#define TMEM_ZS_CLASSES (TMEM_PAGE_SIZE / TMEM_ZS_ALIGN)
#define TMEM_ZS_HDR 8u             /* an object's header: its page descriptor, a hash of its bytes */
/* zs entry of a compressed object: span | slot << 32 | len << 44 | codec << 57 */
#define ZENT_SLOT_SHIFT 32
#define ZENT_LEN_SHIFT 44
#define ZENT_CODEC_SHIFT 57
#define ZENT_SLOT_MASK 0xfffu      /* 12 bits of slot */
#define ZENT_LEN_MASK 0x1fffu      /* 13 bits of compressed length */
#define ZENT_CODEC_MASK 7u         /* 3 bits of enum tmem_codec */
enum tmem_codec { TMEM_CODEC_NONE = 0, TMEM_CODEC_LZ4 = 1, TMEM_CODEC_ZSTD = 2 };
/*
 * A zs entry with ZENT_TIER set names an object in the host tier instead
 * of a span slot: unit | len << ZENT_LEN_SHIFT | codec << ZENT_CODEC_SHIFT
 * | ZENT_TIER, where unit (ZENT_UNIT_MASK bits) is the object's first
 * TMEM_TIER_UNIT-byte unit after the tier's header.  The object there is
 * laid out as in a span (TMEM_ZS_HDR bytes: page descriptor, low half of
 * XXH3 of the bytes; then the bytes).  codec NONE: a raw page (len 4096).
 * The bit means this only in the entry of a handle without TMEM_H_SUB:
 * a same-filled page's entry is its word (any bits), and a free entry
 * links through itself.
 */
#define ZENT_TIER (1ull << 63)
#define ZENT_UNIT_MASK 0xfffffffffffull /* 44 bits */
#define TMEM_TIER_UNIT 64u

/*
 * The host tier's header: the first TMEM_TIER_HDR_BYTES of the tier file
 * or block device (tier.c).  It binds the tier to one arena (that
 * arena's created_usec and geom_sum, written once when it was
 * formatted), so a tier from another arena is refused, never reused.
 */
#define TMEM_TIER_MAGIC "tmemSPL\n"
#define TMEM_TIER_LAYOUT 1u
#define TMEM_TIER_HDR_BYTES 4096u
struct tmem_tier_hdr {
	char magic[8];
	uint32_t layout;          /* TMEM_TIER_LAYOUT */
	uint32_t unit;            /* TMEM_TIER_UNIT */
	uint64_t bytes;           /* the tier's size, header included */
	uint64_t arena_created;   /* the arena's tmem_durable_hdr.created_usec */
	uint64_t arena_sum;       /* and its geom_sum */
	uint64_t created_usec;    /* CLOCK_REALTIME when the tier was formatted */
	uint64_t sum;             /* XXH64 of every field above */
};
_Static_assert(sizeof(struct tmem_tier_hdr) == 56, "tier header");

enum tmem_rec_state {
	TMEM_REC_FREE = 0,
	TMEM_REC_LIVE = 1,
	TMEM_REC_DYING = 2, /* being torn down: recovery drops what it owns */
};

struct tmem_durable_hdr {
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

/*
 * A stored page.  32 bytes.  All links are indices into the pages
 * region.  Written under the pool lock, except lprev/lnext (under the
 * charged client's lru_lock) and the free-list use of hnext (alloc_lock).
 * Only obj, index and data are trusted by recovery; the links are
 * derived and rewritten.
 */
struct tmem_pagedesc {
	/* objdesc index; TMEM_OBJ_HEAD set on the object's head page;
	 * TMEM_NIL when the descriptor is free.  Accessed with relaxed
	 * atomics because eviction reads it under the LRU lock only. */
	uint32_t obj;
	uint32_t index;  /* page index within the object */
	uint32_t hnext;  /* next page in the pool's page-hash chain; free-list link */
	/* Object page list (not circular, the head has no predecessor).
	 * On the head page, oprev instead links to the next head page in
	 * the pool's object-hash chain. */
	uint32_t oprev;
	uint32_t onext;
	uint32_t lprev;  /* charged client's LRU; ephemeral pages only */
	uint32_t lnext;
	/* Data handle, or'd with TMEM_DATA_LIVE while the page is
	 * published: the one store that makes it (or its removal) durable. */
	uint32_t data;
};
_Static_assert(sizeof(struct tmem_pagedesc) == 32, "page descriptor budget");

/* An object: just its id (24 bytes); oid[0] is the free-list link when free. */
struct tmem_objdesc {
	struct tmem_oid oid;
};
_Static_assert(sizeof(struct tmem_objdesc) == 24, "object descriptor budget");

/*
 * A chunk of TMEM_OBJS_PER_CHUNK object descriptors, owned by one pool
 * while any of its objects is live (a slab).  A chunk with free slots is
 * on its pool's partial list; an empty one goes back to the store's free
 * list, except the last partial one, which the pool keeps so that
 * creating and dropping one object does not take alloc_lock each time.
 */
struct tmem_chunk {
	/* Owning pool's gid: set under alloc_lock before the chunk's
	 * objects are used and stable while any is live, so eviction may
	 * read it holding only an LRU lock. */
	uint32_t owner;
	uint32_t next;  /* pool's partial list (pool lock), or the free list (alloc_lock) */
	uint32_t prev;  /* pool's partial list */
	uint8_t free;   /* first free slot, TMEM_OBJS_PER_CHUNK = none; slots link through oid[0] */
	uint8_t live;   /* objects in use */
	uint8_t rsvd[2];
};
_Static_assert(sizeof(struct tmem_chunk) == 16, "chunk record");

#endif /* TMEM_DURABLE_H */
