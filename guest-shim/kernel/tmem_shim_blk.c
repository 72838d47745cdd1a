// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/tmemswap0: a blk-mq disk whose 4 KiB pages live in a persistent
 * tmem pool, for kernels whose frontswap is gone (>= 6.6) or taken
 * (Debian 6.1's zswap).  `swapon /dev/tmemswap0` then gives frontswap's
 * semantics: the decisions (page map, write-through to backing=, flush
 * of the older tmem copy, discard -> FLUSH_PAGE) are core/shim_blk.c;
 * this file moves pages between requests, the core and the backing
 * device.  queue_rq sleeps (BLK_MQ_F_BLOCKING): every tmem op and every
 * backing I/O is synchronous, so a completed write is where the map
 * says.  A merged request's pages go to tmem in batches, one doorbell
 * and one wait each: under a hypervisor a wait costs far more than a
 * page.
 *
 * The block layer's API moved a lot; two generations are written here:
 * 6.0-6.4 (blkdev_get_by_path, blk_queue_* setters; compiled in CI
 * against Debian's 6.1) and >= 6.11 (bdev_file_open_by_path, queue_limits
 * with features; not compiled here).  Other kernels load without the
 * device and say so.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/vmalloc.h>

#include "tmem_shim.h"

#if TMEM_BLK_OLD_API || TMEM_BLK_NEW_API

#define TMEM_BLK_NAME "tmemswap"
#define SECTORS_PER_PAGE (PAGE_SIZE >> SECTOR_SHIFT)

struct tmem_blkdev {
	int major;
	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;
	struct shim_blk core;
	u8 *map;
	struct block_device *backing;
#if TMEM_BLK_NEW_API
	struct file *backing_file;
#endif
	struct shim_blk_backing bk;
};

static struct tmem_blkdev *tmem_blk;

/* One page of I/O on the backing device, waited for. */
static int tmem_backing_io(void *ctx, int write, u64 pgno, void *page)
{
	struct tmem_blkdev *d = ctx;
	blk_opf_t opf = write ? REQ_OP_WRITE | REQ_SYNC : REQ_OP_READ;
	struct bio *bio;
	int err;

	bio = bio_alloc(d->backing, 1, opf, GFP_NOIO);
	bio->bi_iter.bi_sector = pgno * SECTORS_PER_PAGE;
	__bio_add_page(bio, page, PAGE_SIZE, 0);
	err = submit_bio_wait(bio);
	bio_put(bio);
	return err;
}

/* A request's scratch space (its blk-mq PDU): one batch of pages. */
struct tmem_blk_batch {
	void *pages[SHIM_BLK_BATCH];
	struct shim_call calls[SHIM_BLK_BATCH];
};

/* The request's pages go to the core SHIM_BLK_BATCH at a time. */
static blk_status_t tmem_blk_rw(struct tmem_blkdev *d, struct request *rq,
				enum shim_blk_op op)
{
	const struct shim_blk_backing *bk = d->backing ? &d->bk : NULL;
	struct tmem_blk_batch *batch = blk_mq_rq_to_pdu(rq);
	u64 pgno = blk_rq_pos(rq) / SECTORS_PER_PAGE;
	struct req_iterator iter;
	struct bio_vec bv;
	u32 n = 0;

	rq_for_each_segment(bv, rq, iter) {
		if (bv.bv_offset || bv.bv_len != PAGE_SIZE)
			return BLK_STS_IOERR;
		batch->pages[n++] = bv.bv_page;
		if (n < SHIM_BLK_BATCH)
			continue;
		if (shim_blk_rw(&d->core, op, pgno, batch->pages, n,
				batch->calls, bk))
			return BLK_STS_IOERR;
		pgno += n;
		n = 0;
	}
	if (n && shim_blk_rw(&d->core, op, pgno, batch->pages, n,
			     batch->calls, bk))
		return BLK_STS_IOERR;
	return BLK_STS_OK;
}

/* A freed swap cluster is one request of up to 256 pages: 32 at a time. */
static blk_status_t tmem_blk_discard(struct tmem_blkdev *d,
				     struct request *rq)
{
	struct tmem_blk_batch *batch = blk_mq_rq_to_pdu(rq);
	u64 pgno = blk_rq_pos(rq) / SECTORS_PER_PAGE;
	u64 left = blk_rq_sectors(rq) / SECTORS_PER_PAGE;
	u32 n;

	while (left) {
		n = min_t(u64, left, SHIM_BLK_BATCH);
		if (shim_blk_rw(&d->core, SHIM_BLK_OP_DISCARD, pgno, NULL, n,
				batch->calls, NULL))
			return BLK_STS_IOERR;
		pgno += n;
		left -= n;
	}
	return BLK_STS_OK;
}

static blk_status_t tmem_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	struct request *rq = bd->rq;
	struct tmem_blkdev *d = rq->q->queuedata;
	blk_status_t st;

	blk_mq_start_request(rq);
	switch (req_op(rq)) {
	case REQ_OP_READ:
		st = tmem_blk_rw(d, rq, SHIM_BLK_OP_READ);
		break;
	case REQ_OP_WRITE:
		st = tmem_blk_rw(d, rq, SHIM_BLK_OP_WRITE);
		break;
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		st = tmem_blk_discard(d, rq);
		break;
	case REQ_OP_FLUSH:
		st = BLK_STS_OK;
		if (d->backing && blkdev_issue_flush(d->backing))
			st = BLK_STS_IOERR;
		break;
	default:
		st = BLK_STS_NOTSUPP;
		break;
	}
	blk_mq_end_request(rq, st);
	return BLK_STS_OK;
}

static const struct blk_mq_ops tmem_mq_ops = {
	.queue_rq = tmem_queue_rq,
};

static const struct block_device_operations tmem_blk_fops = {
	.owner = THIS_MODULE,
};

#if TMEM_BLK_NEW_API
static int tmem_blk_get_backing(struct tmem_blkdev *d, const char *path)
{
	d->backing_file = bdev_file_open_by_path(path,
						 BLK_OPEN_READ | BLK_OPEN_WRITE,
						 d, NULL);
	if (IS_ERR(d->backing_file)) {
		int err = PTR_ERR(d->backing_file);

		d->backing_file = NULL;
		return err;
	}
	d->backing = file_bdev(d->backing_file);
	return 0;
}

static void tmem_blk_close_backing(struct tmem_blkdev *d)
{
	if (d->backing_file)
		fput(d->backing_file);
	d->backing_file = NULL;
	d->backing = NULL;
}
#else
static int tmem_blk_get_backing(struct tmem_blkdev *d, const char *path)
{
	d->backing = blkdev_get_by_path(path,
					FMODE_READ | FMODE_WRITE | FMODE_EXCL,
					d);
	if (IS_ERR(d->backing)) {
		int err = PTR_ERR(d->backing);

		d->backing = NULL;
		return err;
	}
	return 0;
}

static void tmem_blk_close_backing(struct tmem_blkdev *d)
{
	if (d->backing)
		blkdev_put(d->backing, FMODE_READ | FMODE_WRITE | FMODE_EXCL);
	d->backing = NULL;
}
#endif

static void tmem_blk_free(struct tmem_blkdev *d)
{
	if (!d)
		return;
	if (d->disk)
		put_disk(d->disk);
	if (d->tag_set.ops)
		blk_mq_free_tag_set(&d->tag_set);
	if (d->core.ops)
		shim_blk_fini(&d->core);
	tmem_blk_close_backing(d);
	if (d->major > 0)
		unregister_blkdev(d->major, TMEM_BLK_NAME);
	vfree(d->map);
	kfree(d);
}

static int tmem_blk_open_backing(struct tmem_blkdev *d, const char *path,
				 u64 nr_pages)
{
	int err = tmem_blk_get_backing(d, path);

	if (err) {
		pr_err("tmemswap: cannot open backing=%s: %d\n", path, err);
		return err;
	}
	if (bdev_nr_sectors(d->backing) < nr_pages * SECTORS_PER_PAGE) {
		pr_err("tmemswap: backing=%s is smaller than the device\n",
		       path);
		return -ENOSPC;
	}
	d->bk.io = tmem_backing_io;
	d->bk.ctx = d;
	return 0;
}

/* 4 KiB blocks, discard by page, non-rotational; a cache if backed. */
#if TMEM_BLK_NEW_API
static struct gendisk *tmem_blk_alloc_disk(struct tmem_blkdev *d)
{
	struct queue_limits lim = {
		.logical_block_size = PAGE_SIZE,
		.physical_block_size = PAGE_SIZE,
		.max_hw_discard_sectors = UINT_MAX >> SECTOR_SHIFT,
		.max_write_zeroes_sectors = UINT_MAX >> SECTOR_SHIFT,
		.discard_granularity = PAGE_SIZE,
		.features = d->backing ? BLK_FEAT_WRITE_CACHE : 0,
	};

	return blk_mq_alloc_disk(&d->tag_set, &lim, d);
}
#else
static struct gendisk *tmem_blk_alloc_disk(struct tmem_blkdev *d)
{
	struct gendisk *disk = blk_mq_alloc_disk(&d->tag_set, d);
	struct request_queue *q;

	if (IS_ERR(disk))
		return disk;
	q = disk->queue;
	blk_queue_logical_block_size(q, PAGE_SIZE);
	blk_queue_physical_block_size(q, PAGE_SIZE);
	blk_queue_max_discard_sectors(q, UINT_MAX >> SECTOR_SHIFT);
	blk_queue_max_write_zeroes_sectors(q, UINT_MAX >> SECTOR_SHIFT);
	q->limits.discard_granularity = PAGE_SIZE;
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	blk_queue_write_cache(q, d->backing != NULL, false);
	return disk;
}
#endif

static int tmem_blk_setup_disk(struct tmem_blkdev *d, u64 nr_pages)
{
	int err;

	d->tag_set.ops = &tmem_mq_ops;
	d->tag_set.nr_hw_queues = 1;
	d->tag_set.queue_depth = 64;
	d->tag_set.numa_node = NUMA_NO_NODE;
	d->tag_set.flags = BLK_MQ_F_BLOCKING;
	d->tag_set.cmd_size = sizeof(struct tmem_blk_batch);
	err = blk_mq_alloc_tag_set(&d->tag_set);
	if (err) {
		d->tag_set.ops = NULL;
		return err;
	}
	d->disk = tmem_blk_alloc_disk(d);
	if (IS_ERR(d->disk)) {
		err = PTR_ERR(d->disk);
		d->disk = NULL;
		return err;
	}
	d->disk->major = d->major;
	d->disk->first_minor = 0;
	d->disk->minors = 1;
	d->disk->fops = &tmem_blk_fops;
	d->disk->private_data = d;
	snprintf(d->disk->disk_name, DISK_NAME_LEN, TMEM_BLK_NAME "0");
	set_capacity(d->disk, nr_pages * SECTORS_PER_PAGE);
	return add_disk(d->disk);
}

int tmem_blk_init(unsigned long size_mb, const char *backing)
{
	u64 nr_pages = (u64)size_mb << (20 - PAGE_SHIFT);
	struct tmem_blkdev *d;
	int err;

	if (!size_mb)
		return 0;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->map = vzalloc(nr_pages);
	err = d->map ? 0 : -ENOMEM;
	if (!err && backing && backing[0])
		err = tmem_blk_open_backing(d, backing, nr_pages);
	err = err ?: shim_blk_init(&d->core, &tmem_shim.ops, 0, nr_pages,
				   d->map, d->backing != NULL);
	if (err)
		goto fail;
	err = register_blkdev(0, TMEM_BLK_NAME);
	if (err < 0)
		goto fail;
	d->major = err;
	err = tmem_blk_setup_disk(d, nr_pages);
	if (err)
		goto fail;
	tmem_blk = d;
	pr_info("tmemswap0: %lu MiB, backing %s\n", size_mb,
		d->backing ? backing : "none (refused writes fail)");
	return 0;
fail:
	tmem_blk_free(d);
	return err;
}

void tmem_blk_exit(void)
{
	if (!tmem_blk)
		return;
	del_gendisk(tmem_blk->disk);
	tmem_blk_free(tmem_blk);
	tmem_blk = NULL;
}

void tmem_blk_debugfs(struct dentry *dir)
{
	struct shim_blk_stats *st;

	if (!tmem_blk)
		return;
	st = &tmem_blk->core.stats;
	debugfs_create_u64("tmemswap_tmem_writes", 0444, dir, &st->tmem_writes);
	debugfs_create_u64("tmemswap_backing_writes", 0444, dir,
			   &st->backing_writes);
	debugfs_create_u64("tmemswap_tmem_reads", 0444, dir, &st->tmem_reads);
	debugfs_create_u64("tmemswap_backing_reads", 0444, dir,
			   &st->backing_reads);
	debugfs_create_u64("tmemswap_zero_reads", 0444, dir, &st->zero_reads);
	debugfs_create_u64("tmemswap_discards", 0444, dir, &st->discards);
	debugfs_create_u64("tmemswap_errors", 0444, dir, &st->errors);
}

#else /* no block-layer generation written for this kernel */

int tmem_blk_init(unsigned long size_mb, const char *backing)
{
	if (size_mb)
		pr_warn("tmemswap: not built for this kernel version; no device\n");
	return 0;
}

void tmem_blk_exit(void)
{
}

void tmem_blk_debugfs(struct dentry *dir)
{
}

#endif
