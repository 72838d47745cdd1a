/* SPDX-License-Identifier: MIT */
/*
 * The read cache's tests' disk: blocks in memory, each 4 KiB copy done
 * whole under one mutex (a 4 KiB write lands whole).  Every block the
 * tests write carries its block number and a version in its first 16
 * bytes and a pattern derived from both in the rest, so a read can tell
 * which write it returns and whether the page is torn.  A hook called
 * inside a read, after the data is copied and before it returns, opens
 * the window in which a race test writes the same block.
 */
#ifndef FAKE_DISK_H
#define FAKE_DISK_H

#include <pthread.h>
#include <stdint.h>

#include "shim_rcache.h"

struct fake_disk {
	uint64_t nr_blocks;
	uint8_t *data;
	pthread_mutex_t mu;
	uint64_t blocks_read;		/* under mu */
	int fail;			/* reads fail with -EIO (atomic) */
	void (*hook)(void *arg, uint64_t blk, uint32_t n);
	void *hook_arg;
};

/* Every block starts as version 0 of itself.  0 or -ENOMEM. */
int fake_disk_init(struct fake_disk *d, uint64_t nr_blocks);
void fake_disk_fini(struct fake_disk *d);
/* Writes version ver of block blk (the pattern fake_disk_fill makes). */
void fake_disk_write(struct fake_disk *d, uint64_t blk, uint64_t ver);
uint64_t fake_disk_reads(struct fake_disk *d);
/* The disk as struct shim_rc_disk wants it (ctx = the fake_disk). */
struct shim_rc_disk fake_disk_ops(struct fake_disk *d);

/* Version ver of block blk. */
void fake_disk_fill(uint8_t *page, uint64_t blk, uint64_t ver);
/* 0 and *ver if page is an untorn version of block blk, else -EILSEQ. */
int fake_disk_check(const uint8_t *page, uint64_t blk, uint64_t *ver);

#endif /* FAKE_DISK_H */
