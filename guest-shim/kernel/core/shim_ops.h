/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cleancache_ops and frontswap_ops translated into tmem requests,
 * independent of the kernel.  The kernel glue (tmem_shim_hooks.c) only
 * converts struct page and the filekey and calls these; the harness in
 * tests/shim/ calls them with the same sequences the kernel makes.
 *
 * Pool ids handed to the kernel are local (an index into pools[]): the
 * backend's ids die with a connection, the kernel's live as long as the
 * superblock.  After every attach shim_ops_resume() maps them onto the
 * new connection: a backend that kept its pages across a restart (tmemd
 * with a kept arena) names the pools it kept, and each persistent local
 * pool takes its pool back, pages and all; every other pool is created
 * anew.  Ephemeral pages are dropped at a reconnect, which cleancache
 * allows: invalidations the dead backend never applied could have left
 * stale pages in them.
 *
 * A request on a persistent pool outlives a backend restart: it waits
 * for the reconnect (bounded by persist_wait_ms) and is repeated when
 * its connection died under it.  Put, get and flush are idempotent, and
 * the caller waits, so nothing it issues later can overtake the repeat.
 *
 * Return values follow Linux: cleancache get and frontswap store/load
 * return 0 on success and -1 otherwise.
 *
 * Key swizzle (as the Xen shim did for frontswap): the low 4 bits of a
 * swap offset go into the object id with the swap type and the rest
 * becomes the index, which spreads one swap device over 16 objects so
 * the backend's per-object locks do not serialise it.
 */
#ifndef SHIM_OPS_H
#define SHIM_OPS_H

#include "shim_ring.h"

#define SHIM_MAX_POOLS 32
#define SHIM_SWIZ_BITS 4u
#define SHIM_SWIZ_MASK ((1u << SHIM_SWIZ_BITS) - 1)

struct shim_pool {
	uint32_t used;
	uint32_t kind;		/* TMEM_POOL_PERSIST / TMEM_POOL_SHARED */
	struct tmem_uuid uuid;	/* shared pools only */
	int32_t remote_id;	/* the backend's id on connection remote_gen */
	uint32_t remote_gen;
	/*
	 * A flush or a put's replacement flush could not be posted (ring
	 * full, interrupts off) nor noted as owed (owed_eph[] full): the pool
	 * may hold a stale page.  Puts and flushes skip it; the next get
	 * empties it (DESTROY_POOL + NEW_POOL, ephemeral pools only)
	 * before it can hit.
	 */
	uint32_t poisoned;
	uint32_t creating;	/* a NEW_POOL for it is in flight */
	uint32_t owed;		/* entries of owed_eph[] for it (shim_owed_eph.c) */
};

/* Named as Linux's cleancache debugfs named them, plus the drops. */
struct shim_cc_stats {
	uint64_t succ_gets;
	uint64_t failed_gets;
	uint64_t puts;
	uint64_t flushes;
	uint64_t puts_dropped;	/* no free slot, or not connected */
	uint64_t flushes_owed;	/* not posted, owed instead (shim_owed_eph.c) */
};

/* Named as Linux's frontswap debugfs named them. */
struct shim_fs_stats {
	uint64_t succ_stores;
	uint64_t failed_stores;
	uint64_t loads;
	uint64_t failed_loads;
	uint64_t invalidates;
};

/*
 * Flushes owed to a pool: one idea, a table for each kind of pool.
 * shim_owed_persist.c keeps what a persistent pool is owed across a
 * reconnect (sent first on the next connection, by shim_ops_resume);
 * shim_owed_eph.c what an ephemeral pool is owed on a live connection
 * (sent before the pool's next get).  shim_pool.c notes into both what
 * it could not send; shim_owed_eph.c sends through shim_pool_call(),
 * and shim_owed_persist.c on the ring itself.  That one loop (shim_pool.c
 * <-> shim_owed_eph.c) is kept: sending to a pool is shim_pool.c's job,
 * and the note and the send run under the same env lock discipline.
 * (The debugfs counters keep their names: lost_dropped, lost_replayed.)
 */

/* A flush owed to a persistent pool across a reconnect (shim_owed_persist.c). */
struct shim_owed_persist {
	int32_t pool;		/* local id */
	uint32_t op;		/* TMEM_OP_FLUSH_PAGE or _FLUSH_OBJECT */
	struct tmem_oid oid;
	uint32_t index;
};

#define SHIM_OWED_PERSIST_MAX 256u

/* A flush an ephemeral pool is owed on a live connection (shim_owed_eph.c). */
struct shim_owed_eph {
	uint32_t state;		/* free, noted, or being sent */
	int32_t pool;		/* local id */
	uint32_t op;		/* TMEM_OP_FLUSH_PAGE or _FLUSH_OBJECT */
	uint32_t index;
	struct tmem_oid oid;
	uint32_t seq;
};

#define SHIM_OWED_EPH_MAX 512u

/* Lock order: the ring's env lock also guards pools[], owed_persist[],
 * owed_eph[].
 */
struct shim_ops {
	struct shim_ring *ring;
	struct shim_pool pools[SHIM_MAX_POOLS];
	int swap_pool;		/* local id of frontswap's pool, -1 */
	struct shim_cc_stats cc;
	struct shim_fs_stats fs;
	/*
	 * The connection pools[] was last mapped onto (0 before the first
	 * shim_ops_resume): pools are created only once it is the current
	 * one, so none is made anew before it could take its old one back.
	 */
	uint32_t conn_gen;
	uint32_t persist_wait_ms;	/* 0: persistent requests fail at once */
	uint64_t persist_retries;	/* requests repeated after a reconnect */
	uint64_t pools_resumed;		/* pools taken back, pages and all */
	struct shim_owed_persist owed_persist[SHIM_OWED_PERSIST_MAX];
	uint32_t nr_owed_persist;
	uint64_t lost_dropped;		/* notes that found owed_persist[] full */
	uint64_t lost_replayed;		/* owed flushes sent at a resume */
	struct shim_owed_eph owed_eph[SHIM_OWED_EPH_MAX];
	uint32_t owed_eph_seq;
};

#define SHIM_PERSIST_WAIT_MS 120000u

void shim_ops_init(struct shim_ops *o, struct shim_ring *ring);
/*
 * After a (re)attach.  kept: the backend's pool ids (bit n = id n) that
 * it kept, pages and all, from the connection before this one; listed:
 * every pool it holds for this client (kept is a subset).  A persistent
 * local pool whose remote id on that connection is in kept takes it
 * back; the other listed pools are destroyed; the rest are created.
 */
void shim_ops_resume(struct shim_ops *o, uint32_t kept, uint32_t listed);
/* shim_ops_resume for a backend that kept nothing. */
void shim_ops_reconnect(struct shim_ops *o);
/*
 * A put that failed, or a flush not sent, on a persistent pool while the
 * backend was away: the flush it owes is sent first on the next
 * connection (shim_owed_persist.c).  Any context.
 */
void shim_owed_persist_note(struct shim_ops *o, int pool, uint32_t op,
			    const struct tmem_oid *oid, uint32_t index);
/*
 * Sends on connection gen the owed flushes of the local pools in
 * local_pools (bit per local id; the others' are dropped) and empties
 * the table: 0, or -ENOTCONN with the table kept.  Sleeps.
 */
int shim_owed_persist_replay(struct shim_ops *o, uint32_t gen,
			     uint32_t local_pools);
/*
 * A flush of an ephemeral pool that could not be posted on a live
 * connection (shim_owed_eph.c): noted, to be sent before the pool's next
 * get.  0, -ENOSPC with the table full (the caller poisons the pool),
 * or -EINVAL (not an ephemeral pool, not a flush).  Any context.
 */
int shim_owed_eph_note(struct shim_ops *o, int pool, uint32_t op,
		       const struct tmem_oid *oid, uint32_t index);
/*
 * Before a get of (oid, index) on pool: sends the flushes the pool is
 * owed.  1 if one covering the handle is still unanswered (the get must
 * miss), else 0.  Sleeps.
 */
int shim_owed_eph_settle(struct shim_ops *o, int pool,
			 const struct tmem_oid *oid, uint32_t index);
/* The pool is new or gone: nothing is owed to it.  Caller holds the lock. */
void shim_owed_eph_clear(struct shim_ops *o, int pool);

/*
 * Pool management shared with the block path.  shim_pool_new returns a
 * local id (>= 0, even if the backend is away: it is created on the
 * next connect) or -ENOSPC/-EINVAL.  With connect it also asks the
 * backend for the pool, which sleeps; without, that waits for
 * shim_pool_ensure or the next reconnect.
 */
int shim_pool_new(struct shim_ops *o, uint32_t kind,
		  const struct tmem_uuid *uuid, int connect);
/* Creates the pool on the backend if this connection lacks it (sleeps). */
void shim_pool_ensure(struct shim_ops *o, int pool);
void shim_pool_destroy(struct shim_ops *o, int pool);
/*
 * The remote id and connection of a local pool; -ENOTCONN if none,
 * -ESTALE if the pool is poisoned.
 */
int shim_pool_remote(struct shim_ops *o, int pool, uint32_t *gen);
/* Marks an ephemeral pool poisoned (see struct shim_pool). */
void shim_pool_poison(struct shim_ops *o, int pool);
/* Empties a poisoned pool on the backend and clears the mark. */
void shim_pool_renew(struct shim_ops *o, int pool);
/* Swap-style key: object = type and low offset bits, index = the rest. */
void shim_swizzle(uint32_t type, uint32_t offset, struct tmem_oid *oid,
		  uint32_t *index);
/* Synchronous op on a local pool: ring ret, or -ENOTCONN. */
int shim_pool_call(struct shim_ops *o, int pool, uint32_t op,
		   const struct tmem_oid *oid, uint32_t index,
		   const void *src, void *dst);
/*
 * shim_pool_call for a batch: each call's req is filled with
 * tmem_req_init (any pool id: set here).  Sets every call's ret;
 * returns 0, or the error that stopped it (-ENOTCONN, -ETIMEDOUT),
 * which the calls not posted also carry.
 */
int shim_pool_call_batch(struct shim_ops *o, int pool,
			 struct shim_call *calls, uint32_t n);
/*
 * Fire-and-forget flush on a local pool (any context); may_spin as
 * shim_ring_post_nodata.  An ephemeral pool's flush that cannot be
 * posted is owed (shim_owed_eph_note), or with that table full the pool is
 * poisoned, so no flush is ever silently lost.
 */
int shim_pool_flush(struct shim_ops *o, int pool, uint32_t op,
		    const struct tmem_oid *oid, uint32_t index, int may_spin);

/* cleancache_ops */
int shim_cc_init_fs(struct shim_ops *o, size_t page_size);
int shim_cc_init_shared_fs(struct shim_ops *o, const uint8_t uuid[16],
			   size_t page_size);
int shim_cc_get_page(struct shim_ops *o, int pool, const struct tmem_oid *key,
		     uint64_t index, void *page);
void shim_cc_put_page(struct shim_ops *o, int pool, const struct tmem_oid *key,
		      uint64_t index, const void *page);
void shim_cc_invalidate_page(struct shim_ops *o, int pool,
			     const struct tmem_oid *key, uint64_t index);
void shim_cc_invalidate_inode(struct shim_ops *o, int pool,
			      const struct tmem_oid *key);
void shim_cc_invalidate_fs(struct shim_ops *o, int pool);

/* frontswap_ops */
void shim_fs_init(struct shim_ops *o, unsigned int type);
int shim_fs_store(struct shim_ops *o, unsigned int type, uint64_t offset,
		  const void *page);
int shim_fs_load(struct shim_ops *o, unsigned int type, uint64_t offset,
		 void *page);
void shim_fs_invalidate_page(struct shim_ops *o, unsigned int type,
			     uint64_t offset);
void shim_fs_invalidate_area(struct shim_ops *o, unsigned int type);

#endif /* SHIM_OPS_H */
