/* SPDX-License-Identifier: MIT */
/*
 * The elastic target: the most frames the pool may hold in use now,
 * below the arena size, as daemon/ sets it from the host's free memory.
 * Lowering it evicts ephemeral pages by the weighted rule (as a full
 * arena does) and compacts the compressed ones, until the frames in use
 * fit.  Persistent pages are never evicted: when they alone do not fit,
 * the target still holds, so puts find no room from then on (ephemeral
 * ones evict each other, persistent ones are refused unless a host tier
 * takes some: spill.c), and nothing stored is lost.  Moving them to the
 * tier is not done here, under resize_lock and on the caller's thread
 * (tmemd's event loop), but by tmem_policy_spill_reserve() on a thread
 * of its own, which counts the target in.
 */
#include <errno.h>

#include "policy_internal.h"

/* Evict-and-compact rounds before giving up on pages that stay busy. */
#define TARGET_ROUNDS 32

static int evict_to_target(struct tmem_policy *policy, uint64_t pages,
			   uint64_t *evicted)
{
	struct tmem_arena_counts a;

	for (int i = 0; i < TARGET_ROUNDS; i++) {
		uint64_t got;

		store_arena_counts(policy->store, &a);
		if (a.used_pages <= pages)
			return 0;
		got = policy_evict_weighted(policy, a.used_pages - pages);
		*evicted += got;
		/* Evicted compressed pages leave holes in their spans: only
		 * compaction turns those into free frames. */
		if (store_compact(policy->store) == 0 && got == 0 &&
		    a.ephemeral == 0)
			break;
	}
	store_arena_counts(policy->store, &a);
	return a.used_pages <= pages ? 0 : -EBUSY;
}

int tmem_policy_set_target(struct tmem_policy *policy, uint64_t pages,
			   uint64_t *evicted)
{
	uint64_t dummy = 0;
	int rc = 0;

	if (!policy)
		return -EINVAL;
	if (!evicted)
		evicted = &dummy;
	*evicted = 0;
	pthread_mutex_lock(&policy->resize_lock);
	/* First, so that puts racing with the evictions stop growing. */
	store_set_target(policy->store, pages);
	if (pages)
		rc = evict_to_target(policy, pages, evicted);
	pthread_mutex_unlock(&policy->resize_lock);
	return rc;
}
