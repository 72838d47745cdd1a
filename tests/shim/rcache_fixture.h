/* SPDX-License-Identifier: MIT */
/*
 * One read cache over a fake disk, with a batch of page buffers, for the
 * tmemcache core's two Check programs (fake backend, real tmemd).
 */
#ifndef RCACHE_FIXTURE_H
#define RCACHE_FIXTURE_H

#include "fake_disk.h"

#define RC_FIX_PAGE 4096

struct rc_fixture {
	struct fake_disk disk;
	struct shim_rcache rc;
	struct shim_rc_slot *slots;
	uint8_t bufs[SHIM_RC_BATCH][RC_FIX_PAGE];
	void *ptrs[SHIM_RC_BATCH];
	struct shim_call calls[SHIM_RC_BATCH];
};

/* A cache of nr_blocks on ops, nr_slots slots; fails the test on error. */
void rc_fix_up(struct rc_fixture *f, struct shim_ops *ops,
	       uint64_t nr_blocks, uint32_t nr_slots);
void rc_fix_down(struct rc_fixture *f);
/* shim_rc_read of n blocks from blk into f->bufs. */
int rc_fix_read(struct rc_fixture *f, uint64_t blk, uint32_t n);
/* A write as the target does one: the disk, then the cache. */
void rc_fix_write(struct rc_fixture *f, uint64_t blk, uint64_t ver);
/* Fails the test unless bufs[i] is version ver of block blk. */
void rc_fix_assert_ver(struct rc_fixture *f, uint32_t i, uint64_t blk,
		       uint64_t ver);

#endif /* RCACHE_FIXTURE_H */
