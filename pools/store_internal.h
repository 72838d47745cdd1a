/* SPDX-License-Identifier: MIT */
/*
 * pools/ internals.  Only the sources in pools/ include this.
 *
 * Memory layout.  One mapping holds everything a restart needs (see
 * durable.h for its layout and pools/COMMIT.md for the commit protocol):
 * the header, client and pool records, chunk records, object and page
 * descriptors and max_frames x 4 KiB page frames.  It is a file (a
 * memfd or --arena) when the store must outlive the process, anonymous
 * memory otherwise; either way reserved once with MAP_NORESERVE so that
 * only what is touched costs memory.  Beside it, private to the process:
 * the raw allocator's stack of free frame numbers (4 bytes a frame,
 * resident up to its high-water mark), the pool and client structs and
 * the per-pool hash tables.
 *
 * Descriptors refer to each other by uint32 index (TMEM_NIL = none), never
 * by pointer, so the mapping is position-independent.  The per-pool hash
 * tables, the LRU lists, the free lists and the counters are derived
 * state that recovery (recover.c) rebuilds from the descriptors,
 * rewriting the chain and LRU links the descriptors carry.
 *
 * A page's bytes are reached only through a data handle (the low 31
 * bits of tmem_pagedesc.data; its encoding is in durable.h) and the data
 * allocator ops (struct tmem_data_ops), chosen by the handle's kind bits:
 * raw (a frame of frames.c) or zs (the size-class allocator, zs.c).
 * pagedata.c turns a page into a handle (codec.c compresses) and back.
 *
 * Metadata per stored page (the budget is 64 bytes): a 32-byte page
 * descriptor, the page-hash bucket share (<= 4 bytes, load factor 1..2)
 * and, shared by the object's pages, a 24-byte object descriptor, the
 * object-hash bucket share (<= 2 bytes, load factor 2..4) and 1/64 of
 * a 16-byte chunk record.  Worst case, one page per object: <= 62.3.
 * A compressed or same-filled page adds an 8-byte zs entry, and each
 * span of the size-class allocator 48 + 16 bytes (over its objects).
 * Per arena frame rather than per page: the free-frame stack, 4 bytes a
 * frame at most (only its high-water mark is resident, and a store that
 * has never freed many frames at once holds next to none).
 * The object descriptor holds only the oid: its hash-chain link and the
 * head of its page list live in its head page (see struct tmem_pagedesc),
 * and its pool is the owner of the chunk it sits in.
 *
 * LOCK ORDER (take in this order, release in any order):
 *
 *   1. store->lock       clients, pool table, shared pools, auth, slots
 *   2. pool->lock        one pool's hash tables, objects and pages, and
 *                        the slot counters of ops on it; in ascending gid
 *                        order when several (resize only).  A slot's ref
 *                        is changed under both 1 and 2.
 *   3. client->lru_lock  the charged client's LRU list
 *   4. store->alloc_lock frames, page descriptors, object chunks
 *
 * Eviction walks an LRU list (3) and needs the page's pool lock (2), the
 * wrong way round, so it only pthread_mutex_trylock()s the pool and skips
 * a page whose pool is busy (Xen's way; it makes LRU approximate).
 *
 * Names say who takes the locks: do_x() expects its caller to hold the
 * lock (or locks) its comment or section below names, and takes no other
 * lock unless its comment says so; any other function takes what it
 * needs.  frames.c and zs.c, whose every function runs under alloc_lock,
 * say so at their top instead.
 * Counters are relaxed atomics read without any lock; the hot ones (slot
 * counters) are bumped under the pool lock with a plain load and store,
 * so an op adds no locked instruction for them.
 */
#ifndef TMEM_STORE_INTERNAL_H
#define TMEM_STORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "durable.h"
#include "tmem_names.h"
#include "tmem_store.h"

/* Page descriptors reserved per arena frame: room for a compressed
 * allocator that stores more pages than frames. */
#define TMEM_DESCS_PER_FRAME 4u
#define TMEM_HTAB_MIN 64u          /* buckets in a new pool's tables */
#define TMEM_PAGE_HTAB_LOAD 2u     /* grow the page table above this load */
#define TMEM_OBJ_HTAB_LOAD 4u      /* grow the object table above this load */
#define TMEM_EVICT_TRIES 32u       /* busy pages evict_oldest skips at most */

#define TMEM_ZS_NO_SLOT 0xffffu
#define TMEM_COMPRESS_THRESHOLD 3072u /* default: bigger compressed pages stay raw */

enum tmem_kind { TMEM_KIND_EPH = 0, TMEM_KIND_PERS = 1 };


/* A page, encoded outside every lock (codec.c) for the put that stores it. */
enum tmem_enc_kind { TMEM_ENC_RAW, TMEM_ENC_HUGE, TMEM_ENC_SAME, TMEM_ENC_Z };
struct tmem_enc {
	enum tmem_enc_kind kind;
	uint8_t codec;             /* TMEM_ENC_Z */
	uint32_t len;              /* bytes at bytes: TMEM_PAGE_SIZE raw, else compressed */
	uint64_t word;             /* TMEM_ENC_SAME */
	const void *bytes;         /* the guest's page, or buf */
	const void *page;          /* the guest's page (a raw frame's bytes) */
	uint8_t buf[TMEM_PAGE_SIZE];
};


struct tmem_store;

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

/* The arena's frames and their free-frame allocator (frames.c).  Under
 * alloc_lock; total_frames and used are also read without it (the counts
 * every put asks for), so they are written with relaxed_set(). */
struct tmem_frames {
	uint8_t *base;         /* max_frames frames inside the store's mapping */
	uint32_t max_frames;   /* reservation size */
	uint32_t total_frames; /* current size: frames [0, total) may be used */
	uint32_t bump;         /* frames >= bump were never handed out */
	uint32_t *free_stack;  /* free frames below bump; max_frames entries, NORESERVE */
	uint32_t free_top;     /* entries on free_stack */
	uint32_t free_high;    /* free_stack's high-water mark (resident metadata) */
	uint32_t used;         /* frames handed out */
	bool locked;           /* mlock'd (frames [0, total)) */
	bool prefault;         /* touch frames as they enter the arena */
	bool file_backed;      /* frames live in a file: release by MADV_REMOVE */
	int fd;                /* that file (not owned), frames at fd_off */
	uint64_t fd_off;
	struct tmem_durable_hdr *hdr; /* total_frames and bump are mirrored there */
};

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

/* Counters: relaxed atomics, monotonic, read without locks. */
struct tmem_counters {
	_Atomic uint64_t puts, succ_puts;
	_Atomic uint64_t failed_puts[TMEM_PUT_FAIL_NR];
	_Atomic uint64_t gets, succ_gets, failed_gets;
	_Atomic uint64_t flush_pages, flush_objects;
	_Atomic uint64_t evictions;
};


/* A chained hash table of uint32 indices; the chain link lives in the entries. */
struct tmem_htab {
	uint32_t *b;    /* mask + 1 buckets, TMEM_NIL = empty */
	uint32_t mask;
	uint32_t count; /* entries */
};

/*
 * A pool.  Pool structs are allocated once per gid and kept until the
 * store goes, so a stale (gid, gen) handle read without a lock can always
 * be checked safely under pool->lock: gen changes each time the gid is
 * reused.
 */
struct tmem_pool {
	pthread_mutex_t lock;
	struct tmem_store *store;  /* constant */
	uint32_t gid;              /* index in store->pool_tab; constant */
	/* Written under store->lock and pool->lock; read under either. */
	uint32_t gen;
	bool live;
	bool persistent;
	bool shared;
	struct tmem_uuid uuid;     /* shared pools */
	struct tmem_client *owner; /* charged client (the shared client for shared pools) */
	uint32_t sharers;          /* clients holding a slot on it; store->lock */
	uint32_t free_next;        /* store's free gid list; store->lock */
	struct tmem_pool_rec *rec; /* its durable record; constant */
	/* Under pool->lock. */
	struct tmem_htab pages;    /* (oid, index) -> page; chained through hnext */
	struct tmem_htab objs;     /* oid -> head page; chained through the head's oprev */
	uint32_t partial;          /* chunks with free slots (struct tmem_chunk) */
	_Atomic uint64_t evictions; /* pages evicted from this pool */
	/* Under pool->lock, read without it (do_ctr_add). */
	_Atomic uint64_t zbytes;   /* stored bytes: compressed, or 4 KiB raw */
	_Atomic uint64_t same_pages;
	_Atomic uint64_t huge_pages; /* incompressible, kept raw */
};

/*
 * A client's pool handle.  ref is 0 (empty) or (gen << 32 | (gid + 1)),
 * written under store->lock and the pool's lock, read lock-free by the
 * guest ops and checked again under the pool lock.
 */
struct tmem_slot {
	_Atomic uint64_t ref;
	/* This client's ops on this pool; written under the pool lock
	 * (do_ctr_inc), added to the client's totals when dropped. */
	struct tmem_counters ops;
};

struct tmem_client {
	struct tmem_store *store;             /* constant */
	uint32_t id;                          /* constant */
	char name[TMEM_CLIENT_NAME_MAX];      /* constant */
	struct tmem_client_rec *rec;          /* durable record; NULL for "shared" */
	bool detached;                        /* recovered, not yet claimed; store->lock */
	struct tmem_client *next, *prev;      /* store->clients; store->lock */
	struct tmem_slot slots[TMEM_MAX_POOLS_PER_CLIENT];
	_Atomic uint32_t compress;            /* algo | level << 8 (store_client_set_compress) */
	pthread_mutex_t lru_lock;
	uint32_t lru_head;                    /* oldest ephemeral page; lru_lock */
	uint32_t lru_tail;                    /* newest; lru_lock */
	_Atomic uint64_t charged[2];          /* pages by enum tmem_kind */
	/* Ops on pools the client no longer holds, plus evictions; the
	 * totals are these plus the live slots' counters. */
	struct tmem_counters ops;
};

struct tmem_auth {
	struct tmem_uuid uuid;
	struct tmem_principal who;            /* what joins match on */
	char principal[TMEM_CLIENT_NAME_MAX]; /* who's canonical text, for the iterators */
};

struct tmem_store {
	pthread_mutex_t lock;                 /* store lock */
	struct tmem_store_config cfg;         /* constant */
	uint64_t hash_seed;                   /* constant; keeps guests from choosing collisions */
	/* Under lock. */
	struct tmem_client *clients;          /* list of clients, shared client excluded */
	struct tmem_client *shared_client;
	uint32_t nr_clients;
	uint32_t next_client_id;
	struct tmem_pool **pool_tab;          /* TMEM_MAX_POOLS_TOTAL; entry set once */
	uint32_t pool_bump;                   /* gids >= bump never used */
	uint32_t pool_free;                   /* free gids, through pool->free_next */
	uint32_t shared_gid[TMEM_MAX_SHARED_POOLS]; /* TMEM_NIL = empty */
	struct tmem_auth auth[TMEM_MAX_SHARED_AUTH];
	uint32_t nr_auth;
	/* The durable mapping (durable.h); constant after create. */
	uint8_t *map;
	uint64_t map_bytes;
	int fd;                               /* the arena file, -1 anonymous; not owned */
	struct tmem_durable_hdr *hdr;
	struct tmem_client_rec *crec;         /* TMEM_MAX_CLIENTS */
	struct tmem_pool_rec *prec;           /* TMEM_MAX_POOLS_TOTAL */
	uint32_t crec_free;                   /* free client records; lock */
	struct tmem_recovery_info recovery;   /* constant after create */
	_Atomic uint64_t clients_reattached, clients_expired;
	_Atomic uint32_t nr_detached;         /* written under lock; read without */
	/* Under alloc_lock. */
	pthread_mutex_t alloc_lock;
	struct tmem_frames frames;
	struct tmem_descs descs;
	struct tmem_zs zs;
	/* Relaxed atomics. */
	_Atomic uint64_t kind_pages[2];       /* pages stored, by kind */
	_Atomic uint64_t evictions;
	_Atomic uint64_t table_bytes;         /* hash buckets of all pools */
	_Atomic uint64_t struct_bytes;        /* client and pool structs */
};

/* ---- inline helpers ---------------------------------------------------- */

/* store->lock held: c becomes detached or attached. */
static inline void do_client_set_detached(struct tmem_client *c, bool detached)
{
	if (c->detached != detached)
		atomic_fetch_add_explicit(&c->store->nr_detached, detached ? 1u : (uint32_t)-1,
					  memory_order_relaxed);
	c->detached = detached;
}

static inline struct tmem_pagedesc *pd(const struct tmem_store *s, uint32_t i)
{
	return &s->descs.pages[i];
}

static inline uint32_t pd_obj_raw(const struct tmem_pagedesc *p)
{
	return __atomic_load_n(&p->obj, __ATOMIC_RELAXED);
}

static inline uint32_t pd_obj(const struct tmem_pagedesc *p)
{
	return pd_obj_raw(p) & ~TMEM_OBJ_HEAD;
}

static inline bool pd_is_head(const struct tmem_pagedesc *p)
{
	return pd_obj_raw(p) & TMEM_OBJ_HEAD;
}

static inline void pd_set_obj(struct tmem_pagedesc *p, uint32_t v)
{
	__atomic_store_n(&p->obj, v, __ATOMIC_RELAXED);
}

static inline struct tmem_objdesc *od(const struct tmem_store *s, uint32_t i)
{
	return &s->descs.objs[i];
}

static inline bool oid_eq(const struct tmem_oid *a, const struct tmem_oid *b)
{
	return a->oid[0] == b->oid[0] && a->oid[1] == b->oid[1] &&
	       a->oid[2] == b->oid[2];
}

static inline uint32_t pd_handle(const struct tmem_pagedesc *p)
{
	return p->data & ~TMEM_DATA_LIVE;
}

static inline bool pd_live(const struct tmem_pagedesc *p)
{
	return __atomic_load_n(&p->data, __ATOMIC_RELAXED) & TMEM_DATA_LIVE;
}

/* The commit stores (COMMIT.md): release, so that everything the page's
 * recovery reads (its data, index, object and chunk) is written before. */
static inline void pd_publish(struct tmem_pagedesc *p, uint32_t handle)
{
	__atomic_store_n(&p->data, handle | TMEM_DATA_LIVE, __ATOMIC_RELEASE);
}

static inline void pd_unpublish(struct tmem_pagedesc *p)
{
	__atomic_store_n(&p->data, p->data & ~TMEM_DATA_LIVE, __ATOMIC_RELEASE);
}


/* A durable record's state word (enum tmem_rec_state). */
static inline void rec_set_state(uint32_t *state, uint32_t v)
{
	__atomic_store_n(state, v, __ATOMIC_RELEASE);
}

static inline enum tmem_kind pool_kind(const struct tmem_pool *pool)
{
	return pool->persistent ? TMEM_KIND_PERS : TMEM_KIND_EPH;
}

/* A tmem_frames (or durable header) size field: written under alloc_lock, read with or without it. */
static inline void relaxed_set(uint32_t *field, uint32_t v)
{
	__atomic_store_n(field, v, __ATOMIC_RELAXED);
}

static inline uint32_t relaxed_get(const uint32_t *field)
{
	return __atomic_load_n(field, __ATOMIC_RELAXED);
}

/* Any thread, any lock: an atomic add (store-wide counters). */
static inline void ctr_inc(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* For counters whose writers the pool lock serialises (slot counters):
 * no locked instruction on the hot path, still tear-free for readers. */
static inline void do_ctr_inc(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static inline void do_ctr_add(_Atomic uint64_t *c, int64_t d)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + (uint64_t)d,
			      memory_order_relaxed);
}

/* ---- durable.c: the mapping of the arena ---------------------------------- */
/* Map fd (-1: anonymous memory) and format it, or adopt what it holds;
 * fills s->map, hdr, crec, prec and the frames' and descriptors' bases.
 * *adopted tells which.  Refusals leave the file untouched. */
int durable_map(struct tmem_store *s, const struct tmem_store_config *cfg,
		 int fd, bool *adopted, char *why, size_t why_len);
void durable_unmap(struct tmem_store *s);

/* ---- recover.c ------------------------------------------------------------- */
/* Rebuild clients, pools, tables, lists and counts from the records. */
int store_recover(struct tmem_store *s);

/* ---- frames.c: the free-frame allocator ---------------------------------- */
int frames_init(struct tmem_frames *a, const struct tmem_store_config *cfg,
	       uint32_t frames);
void frames_fini(struct tmem_frames *a);
int frames_grow(struct tmem_frames *a, uint32_t new_frames);
/* Shrink step 1: the frames end at new_frames for new allocations; free
 * frames above are dropped.  The caller then relocates every live handle. */
void frames_trim_free(struct tmem_frames *a, uint32_t new_frames);
/* Shrink step 2: give [new_frames, old_frames) back to the kernel. */
void frames_release(struct tmem_frames *a, uint32_t new_frames,
		   uint32_t old_frames);

/* ---- raw frames (frames.c), for zs.c's spans; alloc_lock --------------- */
int frames_alloc(struct tmem_frames *a, uint32_t *f);
void frames_free(struct tmem_frames *a, uint32_t f);
uint8_t *frame_at(const struct tmem_frames *a, uint32_t f);
/* Shrink: f, or a copy of it below the new size. */
uint32_t frames_relocate(struct tmem_frames *a, uint32_t f);

/* ---- zs.c: the size-class allocator ------------------------------------- */
int zs_init(struct tmem_store *s);
void zs_fini(struct tmem_store *s);
/* A same-filled page's word. */
uint64_t zs_word(const struct tmem_store *s, uint32_t handle);
/* A compressed object's length (0 when the entry does not check out). */
uint32_t zs_len(const struct tmem_store *s, uint32_t handle);
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

/* ---- zmode.c: a client's compression setting ---------------------------- */
/* The packed form kept in tmem_client->compress (checked settings only). */
uint32_t compress_mode(const struct tmem_compress *cz);

/* ---- codec.c: compression, outside every lock ---------------------------- */
/* Encode page for a client's mode (tmem_client->compress). */
void codec_encode(uint32_t mode, uint32_t threshold, const void *page,
		  struct tmem_enc *out);
/* Decode len bytes of codec into a whole page; -EIO unless exactly. */
int codec_decode(uint8_t codec, const void *src, uint32_t len, void *page);
bool page_same_filled(const void *page, uint64_t *word);
void page_fill_word(void *page, uint64_t word);

/* ---- pagedata.c: a page's bytes by handle ------------------------------ */
/* alloc_lock held, and held's pool lock: room for e, compacting first
 * when out of frames; *handle (unpublished). */
int do_data_alloc(struct tmem_store *s, const struct tmem_enc *e,
		  struct tmem_pool *held, uint32_t *handle);
/* Pool lock held: write e at handle for page. */
void do_data_write(struct tmem_store *s, uint32_t handle, uint32_t page,
		   const struct tmem_enc *e);
/* Pool lock held: the page's bytes into dst; -EIO when they do not decode. */
int do_data_read(const struct tmem_store *s, uint32_t handle, void *dst);
/* Pool lock held: count handle in (d = 1) or out (-1) of the pool's stats. */
void do_data_account(struct tmem_pool *pool, uint32_t handle, int d);

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
struct tmem_pool *page_pool(const struct tmem_store *s, uint32_t page);
/* Recovery: chunk c holds the pool's objects whose slots are set in
 * live; or, with none, it goes back to the store's free list. */
void descs_chunk_adopt(struct tmem_pool *pool, uint32_t c, uint64_t live);
void descs_chunk_release(struct tmem_store *s, uint32_t c);

/* ---- htab.c: per-pool hash tables; pool lock held ----------------------- */
int htab_init(struct tmem_store *s, struct tmem_htab *t);
void htab_fini(struct tmem_store *s, struct tmem_htab *t);
uint64_t oid_hash(const struct tmem_store *s, const struct tmem_oid *oid);
uint32_t do_page_lookup(struct tmem_pool *pool, const struct tmem_oid *oid,
			uint32_t index, uint64_t oh);
void do_page_hash_add(struct tmem_pool *pool, uint32_t page, uint64_t oh);
void do_page_hash_del(struct tmem_pool *pool, uint32_t page, uint64_t oh);
uint32_t do_obj_lookup(struct tmem_pool *pool, const struct tmem_oid *oid,
		       uint64_t oh);
/* Replace head page old by new (TMEM_NIL: remove) in the object table. */
void do_obj_hash_replace(struct tmem_pool *pool, uint32_t old, uint32_t new,
			 uint64_t oh);
void do_obj_hash_add(struct tmem_pool *pool, uint32_t head, uint64_t oh);

/* ---- object.c: pages in objects; pool lock held -------------------------- */
/* Store a new page: find or make the object, allocate, link.  -errno. */
int do_page_insert(struct tmem_pool *pool, const struct tmem_oid *oid,
		   uint32_t index, uint64_t oh, const struct tmem_enc *e, uint32_t *page);
/* Link a recovered page, already in its object, into the pool's tables. */
void do_page_adopt(struct tmem_pool *pool, uint32_t page, uint64_t oh);
/* Unlink and free a page; oh is its oid_hash().  Takes the owner's LRU
 * lock (and alloc_lock) inside. */
void do_page_remove(struct tmem_pool *pool, uint32_t page, uint64_t oh);
/* do_page_remove() in two steps: the page leaves every list and the
 * charge but its data stays readable until do_page_free(). */
void do_page_unlink(struct tmem_pool *pool, uint32_t page, uint64_t oh);
void do_page_free(struct tmem_pool *pool, uint32_t page);
/* do_page_unlink() without the accounting, for a caller that uncharges
 * a batch of pages at once with pool_uncharge(). */
void do_page_detach(struct tmem_pool *pool, uint32_t page, uint64_t oh);
/* do_page_detach() for eviction, which holds the owner's LRU lock too. */
void do_page_evict(struct tmem_pool *pool, uint32_t page, uint64_t oh);
/* n pages of pool leave its owner's charge and the store's page counts. */
void pool_uncharge(struct tmem_pool *pool, uint64_t n);
/* Remove every page of the object whose head page is head. */
uint32_t do_object_remove(struct tmem_pool *pool, uint32_t head, uint64_t oh);
uint64_t page_oid_hash(struct tmem_pool *pool, uint32_t page);
/* Remove every page of the pool. */
void do_pool_empty(struct tmem_pool *pool);

/* ---- lru.c: do_* expect the client's lru_lock ---------------------------- */
void do_lru_add_tail(struct tmem_client *c, uint32_t page);
void do_lru_del(struct tmem_client *c, uint32_t page);
void lru_add(struct tmem_client *c, uint32_t page);
void lru_touch(struct tmem_client *c, uint32_t page);

/* ---- store_client.c / pool.c / shared.c ---------------------------------- */
int client_alloc(struct tmem_store *s, const char *name,
		 struct tmem_client **out);
/* store->lock held: a durable record for c (-ENOSPC when all are taken). */
int do_client_rec_new(struct tmem_client *c, const struct tmem_ident *ident);
void do_client_list_add(struct tmem_client *c);
/* Recovery, store->lock held: pool structs for every gid below n (the
 * free list must be empty), then the unused ones back on it. */
int do_pool_structs_reserve(struct tmem_store *s, uint32_t n);
void do_pool_struct_release(struct tmem_pool *pool);
void client_free(struct tmem_client *c);
bool charge_try(struct tmem_client *c, enum tmem_kind k, uint64_t cap);
void charge_drop(struct tmem_client *c, enum tmem_kind k);
/* store->lock held. */
int do_pool_create(struct tmem_store *s, struct tmem_client *owner,
		   bool persistent, bool shared, const struct tmem_uuid *uuid,
		   struct tmem_pool **out);
void do_pool_destroy(struct tmem_pool *pool);
int do_slot_alloc(struct tmem_client *c, struct tmem_pool *pool);
void do_slot_set(struct tmem_client *c, int32_t id, struct tmem_pool *pool);
void do_slot_drop(struct tmem_client *c, int32_t id);
int do_shared_join(struct tmem_client *c, const struct tmem_uuid *uuid);
void do_shared_destroy(struct tmem_pool *pool);
/* Lock-free slot lookup; returns the pool locked and live, or NULL. */
struct tmem_pool *slot_lock_pool(struct tmem_client *c, int32_t id);
void counters_reset(struct tmem_counters *c);
void counters_retire(struct tmem_counters *into, const struct tmem_counters *from);
void counters_snapshot(const struct tmem_counters *c,
		       struct tmem_op_counters *out);

#endif /* TMEM_STORE_INTERNAL_H */
