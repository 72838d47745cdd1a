/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The dm target tmemcache's decisions, independent of the kernel: a read
 * cache of clean 4 KiB blocks of one disk in one private ephemeral pool.
 *
 *   read   get every block of the request in one batch; a hit is served
 *          from tmem; the misses are read from the disk (one read per run
 *          of consecutive misses); then every block read (hit or miss)
 *          is put, again in one batch.
 *   write  (and discard, write-zeroes) go to the disk first; once the
 *          disk has completed them, the blocks' tmem copies are flushed.
 *
 * Why put on a miss: cleancache puts a page when the page cache evicts
 * it, but a block device never sees the eviction; the last moment it
 * sees the data is the read.  Why put again after a hit: a private
 * ephemeral get is exclusive, so a hit takes the block out of tmem; the
 * re-put keeps it cached for the next time the page cache drops it (the
 * put cleancache would have made at that eviction).
 *
 * Ordering.  A read never returns data older than the last write that
 * completed before the read began.  The danger is a put that carries
 * old data (read from disk or got from tmem before a write) and lands
 * after the write's flush.  Each block hashes to a slot (block & mask,
 * so one request's blocks use distinct slots; a collision only costs a
 * skipped put) holding:
 *   gen       bumped when an invalidation finishes;
 *   inval     invalidations in progress;
 *   putting   puts in flight.
 * A read notes gen before its get.  It puts a block only if, at the put,
 * gen is unchanged and inval is 0; it then counts itself in putting
 * until the put is answered.  An invalidation raises inval, waits for
 * putting to drain, flushes, then lowers inval and bumps gen.  So a put
 * either started before the invalidation (and was answered before the
 * flush was sent, which removes it), or its read began after the flush
 * (and read the new data).  Puts never wait: only invalidations do, and
 * inval stops new puts, so they cannot starve.
 *
 * A put or flush that times out may still be served later, after the
 * write it raced: the pool is then poisoned (shim_pool_poison) and the
 * next read empties it.  tmemd serves one ring in order, so that late
 * request is served before the emptying.  A lost connection loses the
 * pool with it (tmemd frees a guest's pools when its connection ends):
 * reads then miss and go to the disk, as they do while disconnected.
 *
 * Keys: the pool is the device's own; object = block >> 10, index = the
 * low 10 bits, so a discard of whole 4 MiB objects is one FLUSH_OBJECT.
 *
 * Lock: the slots are guarded by the ring's env lock, held only for a
 * few loads and stores.
 */
#ifndef SHIM_RCACHE_H
#define SHIM_RCACHE_H

#include "shim_ops.h"

/* Most blocks one shim_rc_read call takes (the target's max_io_len). */
#define SHIM_RC_BATCH 32u
#define SHIM_RC_OBJ_SHIFT 10u
#define SHIM_RC_OBJ_BLOCKS (1ull << SHIM_RC_OBJ_SHIFT)

struct shim_rc_slot {
	uint32_t gen;
	uint32_t inval;
	uint32_t putting;
	uint32_t pad;
};

/* Exact counts (relaxed atomics), read without the lock. */
struct shim_rc_stats {
	uint64_t hits;		/* blocks served from tmem */
	uint64_t misses;	/* blocks read from the disk */
	uint64_t puts;		/* blocks tmem stored */
	uint64_t puts_refused;	/* tmem said no, or no backend */
	uint64_t puts_raced;	/* skipped: a write to the block raced */
	uint64_t invalidations;	/* blocks whose copy a write/discard flushed */
	uint64_t uncached;	/* requests the target passed straight through */
	uint64_t errors;	/* disk read errors */
};

struct shim_rcache {
	struct shim_ops *ops;
	int pool;		/* local pool id */
	uint64_t nr_blocks;
	struct shim_rc_slot *slots;
	uint32_t slot_mask;
	struct shim_rc_stats stats;
};

/* The caller's disk: reads blocks [blk, blk + n) into pages[0..n). */
struct shim_rc_disk {
	int (*read)(void *ctx, uint64_t blk, uint32_t n, void *const *pages);
	void *ctx;
};

/*
 * slots: nr_slots (a power of two) zeroed entries.  Creates the
 * device's private ephemeral pool (sleeps; the pool is made on the next
 * connect if tmemd is away).  Returns 0 or -errno.
 */
int shim_rc_init(struct shim_rcache *rc, struct shim_ops *ops,
		 uint64_t nr_blocks, struct shim_rc_slot *slots,
		 uint32_t nr_slots);
/* Destroys the pool.  Accepts an rcache that init failed on. */
void shim_rc_fini(struct shim_rcache *rc);
/*
 * Reads n (1..SHIM_RC_BATCH) blocks from blk into pages, as above; calls
 * is scratch for n requests.  Sleeps.  Returns 0, -EINVAL, or the disk's
 * error (the blocks read from tmem are still right).
 */
int shim_rc_read(struct shim_rcache *rc, uint64_t blk, void *const *pages,
		 uint32_t n, struct shim_call *calls,
		 const struct shim_rc_disk *disk);
/*
 * After a write, discard or write-zeroes of blocks [blk, blk + count)
 * completed on the disk (or failed: it may have written some), and
 * before the request is completed: flushes their tmem copies, ordered
 * against racing reads as above.  Any count; calls is scratch for
 * SHIM_RC_BATCH requests.  Sleeps.
 */
void shim_rc_invalidate(struct shim_rcache *rc, uint64_t blk, uint64_t count,
			struct shim_call *calls);
/* The tmem handle of a block (for tests and the bench). */
void shim_rc_key(uint64_t blk, struct tmem_oid *oid, uint32_t *index);

#endif /* SHIM_RCACHE_H */
