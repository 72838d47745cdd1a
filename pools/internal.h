/* SPDX-License-Identifier: MIT */
/*
 * pools/ internals: the store, its clients and pools (the structs every
 * pools/ source shares), their inline accessors, the lock order, and the
 * functions of object.c, evict.c, pool.c, shared.c, store_client.c,
 * recover.c and durable.c.  Only the sources in pools/ include this.
 * Each lower layer has its own small header, included here for the
 * structs the store embeds:
 *
 *   durable.h   the on-disk format (every durable struct, bit, constant)
 *   frames.h    frames.c: the arena's frames, the raw data allocator
 *   zs.h        zs.c: the size-class allocator for compressed pages
 *   codec.h     codec.c, zmode.c: a page encoded outside every lock
 *   pagedata.h  pagedata.c: a page's bytes by handle, the data ops
 *   descs.h     descs.c: page and object descriptors, chunks
 *   htab.h      htab.c: a pool's hash tables
 *   clock.h     the one clock helper; short_lock.h the hot locks' mutex
 *
 * Floors, from the ground: durable.c; codec, frames, htab; zs; pagedata;
 * descs; object (with the LRU list); evict, pool; shared, store_client;
 * guest_ops, recover; store.c on top.  The one loop, pool.c <-> shared.c,
 * is explained at the top of pool.c.
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

#include "codec.h"
#include "descs.h"
#include "durable.h"
#include "frames.h"
#include "htab.h"
#include "pagedata.h"
#include "tmem_names.h"
#include "tier.h"
#include "tmem_store.h"
#include "zs.h"

#define TMEM_EVICT_TRIES 32u       /* busy pages evict_oldest skips at most */

enum tmem_kind { TMEM_KIND_EPH = 0, TMEM_KIND_PERS = 1 };

struct tmem_store;

/* Counters: relaxed atomics, monotonic, read without locks. */
struct tmem_counters {
	_Atomic uint64_t puts, succ_puts;
	_Atomic uint64_t failed_puts[TMEM_PUT_FAIL_NR];
	_Atomic uint64_t gets, succ_gets, failed_gets;
	_Atomic uint64_t flush_pages, flush_objects;
	_Atomic uint64_t evictions;
	_Atomic uint64_t admin_flushes;  /* ephemeral pages an admin flushed: not evictions */
};
/* The counters as an array, in struct order (pool.c and stats.c loop over it). */
#define TMEM_NR_CTRS (sizeof(struct tmem_counters) / sizeof(_Atomic uint64_t))

/* from's counts go into into's: a dropped slot's into its client's
 * totals, a destroyed client's into the store's. */
static inline void counters_retire(struct tmem_counters *into, const struct tmem_counters *from)
{
	_Atomic uint64_t *dst = (_Atomic uint64_t *)into;
	const _Atomic uint64_t *src = (const _Atomic uint64_t *)from;

	for (size_t i = 0; i < TMEM_NR_CTRS; i++)
		atomic_fetch_add_explicit(&dst[i],
					  atomic_load_explicit(&src[i], memory_order_relaxed),
					  memory_order_relaxed);
}

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
	_Atomic uint64_t tier_pages; /* in the host tier (not in zbytes) */
	_Atomic uint64_t tier_bytes; /* their encoded bytes */
	_Atomic uint64_t readbacks;  /* gets served from the tier */
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
	/* Persistent pages in RAM that may spill, oldest put first (the
	 * host tier's victims, spill.c); lru_lock.  A page is on it when
	 * its lprev is set or it is the head. */
	uint32_t plru_head, plru_tail;
	_Atomic uint64_t charged[2];          /* pages by enum tmem_kind */
	/* The host tier: bytes the client may have there (spill_max, in
	 * memory only: the daemon sets it again on a claimed client), what
	 * it has, read-backs and their latency. */
	_Atomic uint64_t spill_max;
	_Atomic uint64_t tier_pages, tier_bytes;
	_Atomic uint64_t spilled;             /* pages ever moved to the tier */
	_Atomic uint64_t readbacks;
	struct tmem_lat_hist readback_lat;
	/* Ops on pools the client no longer holds, plus evictions and
	 * admin flushes, by enum tmem_kind of the pool; the totals are these
	 * plus the live slots' counters. */
	struct tmem_counters ops[2];
};

struct tmem_auth {
	struct tmem_uuid uuid;
	struct tmem_principal who;            /* what joins match on */
	char principal[TMEM_CLIENT_NAME_MAX]; /* who's canonical text, for the iterators */
};

/* The thread that faults free frames in ahead of the puts (warm.c). */
struct tmem_warm {
	pthread_t thread;
	pthread_cond_t cond;      /* with alloc_lock */
	bool running, stop;       /* alloc_lock */
	uint32_t *batch;          /* the frames it is faulting in */
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
	struct tmem_tier tier;                /* its own locks: tier.h */
	struct tmem_warm warm;                /* warm.c; waits on alloc_lock */
	/* Broadcast (alloc_lock) when frames in transit (being warmed or
	 * punched, on no stack) come back: an alloc that found only those,
	 * or a shrink, waits for them. */
	pthread_cond_t transit_cond;
	/* Per page descriptor: got since the spiller last looked (second
	 * chance, spill.c); NULL without a tier.  Relaxed bytes. */
	uint8_t *pref;
	/* Per page descriptor: in a spill (SPILL_MARK_*, tier.h); NULL
	 * without a tier.  Atomic bytes. */
	uint8_t *spill_mark;
	/* Relaxed atomics. */
	_Atomic uint64_t kind_pages[2];       /* pages stored, by kind */
	_Atomic uint64_t evictions;
	/* The ops of clients that are gone, so the store's totals outlive
	 * them (store_info's ops); added under lock by do_client_destroy. */
	struct tmem_counters gone_ops[2];    /* by enum tmem_kind */
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

/* The pool that owns a live page: its object's chunk's owner. */
static inline struct tmem_pool *page_pool(const struct tmem_store *s, uint32_t page)
{
	uint32_t chunk = pd_obj(pd(s, page)) / TMEM_OBJS_PER_CHUNK;

	return s->pool_tab[s->descs.chunks[chunk].owner];
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

/* ---- warm.c: frames faulted in ahead of the puts -------------------------- */
int warm_start(struct tmem_store *s);
void warm_stop(struct tmem_store *s);
void do_warm_set_mark(struct tmem_store *s, uint32_t keep);

/* ---- recover.c ------------------------------------------------------------- */
/* Rebuild clients, pools, tables, lists and counts from the records. */
int store_recover(struct tmem_store *s);

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

/* ---- object.c: the client's LRU list; do_* expect its lru_lock ---------- */
void do_lru_add_tail(struct tmem_client *c, uint32_t page);
void do_lru_del(struct tmem_client *c, uint32_t page);
void lru_add(struct tmem_client *c, uint32_t page);
void lru_touch(struct tmem_client *c, uint32_t page);
/* The persistent list (plru_*): lru_lock held; del and add check membership. */
bool do_plru_member(const struct tmem_client *c, uint32_t page);
void do_plru_add_tail(struct tmem_client *c, uint32_t page);
void do_plru_del(struct tmem_client *c, uint32_t page);
/* Pool lock held: a persistent page whose data is h now joins or leaves
 * the persistent list as it belongs (in RAM, not same-filled: on it). */
void plru_sync(struct tmem_pool *pool, uint32_t page, uint32_t h);

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
/* store_put_page() of a page encoded already (codec.c, transfer.c). */
int store_put_enc(struct tmem_client *c, int32_t pool_id,
		  const struct tmem_oid *oid, uint32_t index,
		  const struct tmem_enc *e, const struct tmem_put_args *args);
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

#endif /* TMEM_STORE_INTERNAL_H */
