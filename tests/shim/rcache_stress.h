/* SPDX-License-Identifier: MIT */
/*
 * Random reads, writes and discards from several threads on one read
 * cache over a fake disk, checking every block read against the model:
 * a read must return an untorn version of its block (else "corrupt")
 * no older than the last write to that block that completed before the
 * read began (else "stale").  Writers of one block are serialised (the
 * block layer gives no order to overlapping writes either); readers
 * race them freely.  A discard is a write here: the fake disk stores a
 * new version for it, the cache must drop the old one either way.
 */
#ifndef RCACHE_STRESS_H
#define RCACHE_STRESS_H

#include "fake_disk.h"

struct rc_stress_opts {
	uint32_t threads;	/* at most 8 */
	uint64_t ops;		/* requests in all */
	uint32_t max_n;		/* blocks per request, 1..SHIM_RC_BATCH */
	uint32_t seed;
};

struct rc_stress_result {
	uint64_t reads, writes, discards;	/* requests */
	uint64_t blocks_read;
	uint64_t stale;
	uint64_t corrupt;
	uint64_t errors;			/* read calls that failed */
};

/* Runs opts->ops requests over every block of d, fresh from
 * fake_disk_init (the model starts at version 0).  0 or -errno. */
int rc_stress_run(struct shim_rcache *rc, struct fake_disk *d,
		  const struct rc_stress_opts *opts,
		  struct rc_stress_result *res);

#endif /* RCACHE_STRESS_H */
