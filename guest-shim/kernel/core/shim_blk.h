/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The /dev/tmemswapN block path's decisions, independent of the kernel:
 * each 4 KiB page of the device lives in one place, recorded in map[]:
 *
 *   EMPTY    never written, or discarded: reads return zeros
 *   TMEM     in the device's persistent tmem pool
 *   BACKING  on the backing block device (a refused put went there)
 *
 * The caller supplies the backing device's I/O (struct shim_blk_backing).
 * A write that tmem refuses goes to the backing device, and after the
 * backing write the tmem handle is flushed and the map says BACKING, so
 * a read never finds an older copy in tmem.  Without a backing device
 * a refused write fails with -EIO and the page becomes EMPTY.
 *
 * Keys use the frontswap swizzle with type SHIM_BLK_TYPE_BASE + dev, so
 * they never collide with a frontswap type (at most 32) in one pool
 * space, even though each device has its own pool.
 *
 * Lock: map[] entries are read and written under the ring's lock; the
 * block layer does not issue overlapping writes to one swap page.
 */
#ifndef SHIM_BLK_H
#define SHIM_BLK_H

#include "shim_ops.h"

#define SHIM_BLK_TYPE_BASE 0x100u

enum shim_blk_where {
	SHIM_BLK_EMPTY = 0,
	SHIM_BLK_TMEM = 1,
	SHIM_BLK_BACKING = 2,
};

struct shim_blk_stats {
	uint64_t tmem_writes;
	uint64_t backing_writes;
	uint64_t tmem_reads;
	uint64_t backing_reads;
	uint64_t zero_reads;
	uint64_t discards;
	uint64_t errors;		/* I/O errors returned */
};

struct shim_blk {
	struct shim_ops *ops;
	uint32_t dev;
	int pool;		/* local pool id */
	int has_backing;
	uint64_t nr_pages;
	uint8_t *map;		/* nr_pages entries, enum shim_blk_where */
	struct shim_blk_stats stats;
};

/*
 * map must hold nr_pages bytes, zeroed.  Creates the device's persistent
 * pool.  Returns 0 or -errno.
 */
int shim_blk_init(struct shim_blk *b, struct shim_ops *ops, uint32_t dev,
		  uint64_t nr_pages, uint8_t *map, int has_backing);
void shim_blk_fini(struct shim_blk *b);
/* After the caller wrote pgno to the backing device successfully. */
void shim_blk_backing_written(struct shim_blk *b, uint64_t pgno);
/* The block layer's ops. */
enum shim_blk_op {
	SHIM_BLK_OP_READ = 0,
	SHIM_BLK_OP_WRITE,
	SHIM_BLK_OP_DISCARD,
};

/* The caller's backing device: one page of I/O, 0 or -errno. */
struct shim_blk_backing {
	int (*io)(void *ctx, int write, uint64_t pgno, void *page);
	void *ctx;
};

/*
 * One page of a block request, with the backing I/O the decisions
 * above call for (bk may be NULL without a backing device): shim_blk_rw
 * with n = 1.  Returns 0, -EIO or -EINVAL.
 */
int shim_blk_page_io(struct shim_blk *b, enum shim_blk_op op, uint64_t pgno,
		     void *page, const struct shim_blk_backing *bk);
/* Most pages one shim_blk_rw call takes. */
#define SHIM_BLK_BATCH 32u

/*
 * n (1..SHIM_BLK_BATCH) consecutive pages from pgno, as shim_blk_page_io
 * does one, but with their tmem requests posted as one batch (one
 * doorbell, one wait).  The driver's queue_rq runs this.  calls is scratch space for n requests; pages
 * may be NULL for a discard.  Every page is acted on even if one fails.
 * Returns 0, -EIO or -EINVAL.
 */
int shim_blk_rw(struct shim_blk *b, enum shim_blk_op op, uint64_t pgno,
		void *const *pages, uint32_t n, struct shim_call *calls,
		const struct shim_blk_backing *bk);
/* Where pgno lives now (enum shim_blk_where), or -EINVAL. */
int shim_blk_where(struct shim_blk *b, uint64_t pgno);

#endif /* SHIM_BLK_H */
