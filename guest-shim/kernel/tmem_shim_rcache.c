// SPDX-License-Identifier: GPL-2.0
/*
 * The device-mapper target "tmemcache": a read cache of one disk's clean
 * 4 KiB blocks in a private ephemeral tmem pool, for kernels without
 * cleancache (every kernel since 5.17):
 *
 *	dmsetup create data --table "0 $SECTORS tmemcache /dev/xvdb"
 *
 * The decisions and their ordering against racing reads and writes are
 * core/shim_rcache.c; this file moves bios.  map() passes empty flushes
 * (dm sends a write's REQ_PREFLUSH as one) and reads the cache cannot
 * hold (not whole, aligned 4 KiB pages) to the disk at once; every other read, write and discard goes to a
 * workqueue, one work item per bio, because the core sleeps on the ring
 * and on the disk.  A read's pages go to tmem in one batch each way:
 * max_io_len caps a bio at SHIM_RC_BATCH blocks.  A write is sent to the
 * disk as a clone and waited for, then the core flushes the blocks'
 * tmem copies, then the bio completes: a read that starts after the
 * completion cannot find the old data.
 *
 * Everything written to the disk has to go through the target: a write
 * made to /dev/xvdb directly is not seen and can leave stale blocks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/debugfs.h>
#include <linux/device-mapper.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "tmem_shim.h"

#if TMEM_DM_TARGET

#define TC_SECTORS_PER_BLOCK (PAGE_SIZE >> SECTOR_SHIFT)
/* 64 KiB of slots per device; a collision only skips a put. */
#define TC_NR_SLOTS 4096u

struct tmemcache {
	struct dm_dev *dev;
	struct workqueue_struct *wq;
	struct bio_set bs;		/* clones sent to the disk */
	struct shim_rcache core;
	struct shim_rc_slot *slots;
	sector_t begin;			/* the target's first sector */
	int id;				/* tmemcacheN in debugfs and status */
	struct dentry *debugfs;
};

/* Per-bio data: the work item and one batch of scratch. */
struct tmemcache_io {
	struct work_struct work;
	struct tmemcache *tc;
	struct bio *bio;
	void *pages[SHIM_RC_BATCH];
	struct shim_call calls[SHIM_RC_BATCH];
};

static DEFINE_IDA(tmemcache_ida);

/* The disk sector of a bio's first sector (the target maps from 0). */
static sector_t tc_sector(struct tmemcache *tc, struct bio *bio)
{
	return bio->bi_iter.bi_sector - tc->begin;
}

/* Whole, aligned pages inside the cached blocks: the core can take it. */
static bool tc_cacheable(struct tmemcache *tc, struct bio *bio)
{
	sector_t sector = tc_sector(tc, bio);
	struct bvec_iter iter;
	struct bio_vec bv;

	if (!bio_sectors(bio) || sector % TC_SECTORS_PER_BLOCK ||
	    bio_sectors(bio) % TC_SECTORS_PER_BLOCK ||
	    bio_sectors(bio) > SHIM_RC_BATCH * TC_SECTORS_PER_BLOCK ||
	    (sector + bio_sectors(bio)) / TC_SECTORS_PER_BLOCK >
		    tc->core.nr_blocks)
		return false;
	bio_for_each_segment(bv, bio, iter)
		if (bv.bv_offset || bv.bv_len != PAGE_SIZE)
			return false;
	return true;
}

/* A clone of io's bio on the disk, trimmed to [off, off + len) sectors. */
static int tc_clone_wait(struct tmemcache_io *io, sector_t off, sector_t len)
{
	struct tmemcache *tc = io->tc;
	struct bio *clone;
	int err;

	clone = bio_alloc_clone(tc->dev->bdev, io->bio, GFP_NOIO, &tc->bs);
	if (!clone)
		return -ENOMEM;
	clone->bi_iter.bi_sector = tc_sector(tc, io->bio);
	if (len != bio_sectors(io->bio))
		bio_trim(clone, off, len);
	err = submit_bio_wait(clone);
	bio_put(clone);
	return err;
}

/* The core's disk: blocks [blk, blk + n) of io's bio, from the disk. */
static int tc_disk_read(void *ctx, u64 blk, u32 n, void *const *pages)
{
	struct tmemcache_io *io = ctx;
	u64 first = tc_sector(io->tc, io->bio) / TC_SECTORS_PER_BLOCK;

	return tc_clone_wait(io, (blk - first) * TC_SECTORS_PER_BLOCK,
			     (sector_t)n * TC_SECTORS_PER_BLOCK);
}

static blk_status_t tc_read(struct tmemcache_io *io)
{
	struct shim_rc_disk disk = { .read = tc_disk_read, .ctx = io };
	struct bio *bio = io->bio;
	struct bvec_iter iter;
	struct bio_vec bv;
	u32 n = 0;

	bio_for_each_segment(bv, bio, iter)
		io->pages[n++] = bv.bv_page;
	return errno_to_blk_status(shim_rc_read(&io->tc->core,
			tc_sector(io->tc, bio) / TC_SECTORS_PER_BLOCK,
			io->pages, n, io->calls, &disk));
}

/* Write, discard, write-zeroes: the disk first, then the cached copies. */
static blk_status_t tc_write(struct tmemcache_io *io)
{
	sector_t sector = tc_sector(io->tc, io->bio);
	sector_t len = bio_sectors(io->bio);
	u64 first = sector / TC_SECTORS_PER_BLOCK;
	u64 end = DIV_ROUND_UP_ULL(sector + len, TC_SECTORS_PER_BLOCK);
	int err = tc_clone_wait(io, 0, len);

	/* Even a failed write may have reached some blocks. */
	shim_rc_invalidate(&io->tc->core, first, end - first, io->calls);
	return errno_to_blk_status(err);
}

static void tc_work(struct work_struct *work)
{
	struct tmemcache_io *io = container_of(work, struct tmemcache_io, work);
	struct bio *bio = io->bio;

	bio->bi_status = bio_op(bio) == REQ_OP_READ ? tc_read(io) :
						      tc_write(io);
	bio_endio(bio);
}

static int tc_map(struct dm_target *ti, struct bio *bio)
{
	struct tmemcache *tc = ti->private;
	struct tmemcache_io *io;

	/* An empty flush (a write cache flush): the cached blocks are clean. */
	if (!bio_sectors(bio)) {
		bio_set_dev(bio, tc->dev->bdev);
		return DM_MAPIO_REMAPPED;
	}
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		if (tc_cacheable(tc, bio))
			break;
		shim_stat_inc(&tc->core.stats.uncached);
		bio_set_dev(bio, tc->dev->bdev);
		bio->bi_iter.bi_sector = tc_sector(tc, bio);
		return DM_MAPIO_REMAPPED;
	case REQ_OP_WRITE:
	case REQ_OP_DISCARD:
	case REQ_OP_SECURE_ERASE:
	case REQ_OP_WRITE_ZEROES:
		break;
	default:
		return DM_MAPIO_KILL;
	}
	io = dm_per_bio_data(bio, sizeof(*io));
	io->tc = tc;
	io->bio = bio;
	INIT_WORK(&io->work, tc_work);
	queue_work(tc->wq, &io->work);
	return DM_MAPIO_SUBMITTED;
}

static void tc_debugfs(struct tmemcache *tc)
{
	struct shim_rc_stats *st = &tc->core.stats;
	char name[24];
	struct dentry *d;

	if (IS_ERR_OR_NULL(tmem_shim.debugfs))
		return;
	snprintf(name, sizeof(name), "tmemcache%d", tc->id);
	d = debugfs_create_dir(name, tmem_shim.debugfs);
	tc->debugfs = d;
	debugfs_create_u64("hits", 0444, d, &st->hits);
	debugfs_create_u64("misses", 0444, d, &st->misses);
	debugfs_create_u64("puts", 0444, d, &st->puts);
	debugfs_create_u64("invalidations", 0444, d, &st->invalidations);
	debugfs_create_u64("puts_refused", 0444, d, &st->puts_refused);
	debugfs_create_u64("puts_raced", 0444, d, &st->puts_raced);
	debugfs_create_u64("uncached", 0444, d, &st->uncached);
	debugfs_create_u64("errors", 0444, d, &st->errors);
}

/* Accepts a half-built tmemcache (ctr's failure path). */
static void tc_free(struct dm_target *ti, struct tmemcache *tc)
{
	debugfs_remove_recursive(tc->debugfs);
	if (tc->wq)
		destroy_workqueue(tc->wq);
	shim_rc_fini(&tc->core);
	bioset_exit(&tc->bs);
	if (tc->dev)
		dm_put_device(ti, tc->dev);
	if (tc->id >= 0)
		ida_free(&tmemcache_ida, tc->id);
	kvfree(tc->slots);
	kfree(tc);
}

static int tc_setup(struct dm_target *ti, struct tmemcache *tc,
		    const char *path)
{
	int err;

	err = dm_get_device(ti, path, dm_table_get_mode(ti->table), &tc->dev);
	if (err) {
		ti->error = "Device lookup failed";
		return err;
	}
	err = bioset_init(&tc->bs, BIO_POOL_SIZE, 0, 0);
	if (err) {
		ti->error = "Cannot allocate bioset";
		return err;
	}
	tc->slots = kvcalloc(TC_NR_SLOTS, sizeof(*tc->slots), GFP_KERNEL);
	if (!tc->slots) {
		ti->error = "Cannot allocate slots";
		return -ENOMEM;
	}
	err = shim_rc_init(&tc->core, &tmem_shim.ops,
			   ti->len / TC_SECTORS_PER_BLOCK, tc->slots,
			   TC_NR_SLOTS);
	if (err) {
		ti->error = "No free tmem pool (or device under 4 KiB)";
		return err;
	}
	tc->wq = alloc_workqueue("tmemcache%d", WQ_MEM_RECLAIM, 0, tc->id);
	if (!tc->wq) {
		ti->error = "Cannot allocate workqueue";
		return -ENOMEM;
	}
	return 0;
}

/* Table line: <disk>.  The target covers the disk from sector 0. */
static int tc_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct tmemcache *tc;
	int err;

	if (argc != 1) {
		ti->error = "Usage: tmemcache <disk>";
		return -EINVAL;
	}
	tc = kzalloc(sizeof(*tc), GFP_KERNEL);
	if (!tc) {
		ti->error = "Cannot allocate context";
		return -ENOMEM;
	}
	tc->core.pool = -1;
	tc->begin = ti->begin;
	tc->id = ida_alloc(&tmemcache_ida, GFP_KERNEL);
	err = tc->id < 0 ? tc->id : tc_setup(ti, tc, argv[0]);
	if (!err)
		err = dm_set_target_max_io_len(ti, SHIM_RC_BATCH *
					       TC_SECTORS_PER_BLOCK);
	if (err) {
		tc_free(ti, tc);
		return err;
	}
	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_secure_erase_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->per_io_data_size = sizeof(struct tmemcache_io);
	ti->private = tc;
	tc_debugfs(tc);
	return 0;
}

static void tc_dtr(struct dm_target *ti)
{
	tc_free(ti, ti->private);
}

/* INFO: tmemcacheN hits misses puts invalidations refused raced uncached errors */
static void tc_status(struct dm_target *ti, status_type_t type,
		      unsigned int status_flags, char *result,
		      unsigned int maxlen)
{
	struct tmemcache *tc = ti->private;
	struct shim_rc_stats *st = &tc->core.stats;

	switch (type) {
	case STATUSTYPE_INFO:
		scnprintf(result, maxlen,
			  "tmemcache%d %llu %llu %llu %llu %llu %llu %llu %llu",
			  tc->id, shim_stat_read(&st->hits),
			  shim_stat_read(&st->misses),
			  shim_stat_read(&st->puts),
			  shim_stat_read(&st->invalidations),
			  shim_stat_read(&st->puts_refused),
			  shim_stat_read(&st->puts_raced),
			  shim_stat_read(&st->uncached),
			  shim_stat_read(&st->errors));
		break;
	case STATUSTYPE_TABLE:
		scnprintf(result, maxlen, "%s", tc->dev->name);
		break;
	default:
		*result = '\0';
		break;
	}
}

static int tc_iterate_devices(struct dm_target *ti,
			      iterate_devices_callout_fn fn, void *data)
{
	struct tmemcache *tc = ti->private;

	return fn(ti, tc->dev, 0, ti->len, data);
}

static struct target_type tmemcache_target = {
	.name = "tmemcache",
	.version = { 1, 0, 0 },
	.module = THIS_MODULE,
	.ctr = tc_ctr,
	.dtr = tc_dtr,
	.map = tc_map,
	.status = tc_status,
	.iterate_devices = tc_iterate_devices,
};

static bool tmemcache_registered;

void tmem_dm_init(void)
{
	int err = dm_register_target(&tmemcache_target);

	if (err)
		pr_err("tmemcache: dm_register_target: %d; no target\n", err);
	tmemcache_registered = !err;
}

void tmem_dm_exit(void)
{
	if (tmemcache_registered)
		dm_unregister_target(&tmemcache_target);
}

#else /* no device-mapper, or a kernel before bio_alloc_clone */

void tmem_dm_init(void)
{
	pr_info("tmemcache: not built for this kernel (needs device-mapper, 5.18+)\n");
}

void tmem_dm_exit(void)
{
}

#endif
