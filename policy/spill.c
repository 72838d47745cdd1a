/* SPDX-License-Identifier: MIT */
/*
 * Spilling to the host tier (pools/spill.c does the moving): the host
 * takes memory back from ephemeral pages first, then by moving
 * persistent pages to the tier, never by dropping them.  Three callers:
 *
 *  - a put that finds the pool full of persistent pages (admission.c)
 *    spills a small batch itself and retries, so it is not refused
 *    while the tier has room;
 *  - a lower target (target.c) spills until the frames in use fit;
 *  - the daemon's spiller keeps the free reserve (the low-water mark) by
 *    spilling in the background, so that puts seldom wait for a spill.
 *
 * A compressed page leaves a hole in its span, not a free frame, so each
 * spill is followed by a compaction.
 */
#include <errno.h>

#include "policy_internal.h"

/* Pages a put spills when it finds no room: one short write. */
#define SPILL_INLINE 32u

int64_t policy_spill(struct tmem_policy *policy, uint64_t pages)
{
	int64_t got = store_spill(policy->store, pages);

	if (got > 0)
		(void)store_compact(policy->store);
	return got;
}

bool policy_spill_inline(struct tmem_policy *policy)
{
	return policy_spill(policy, SPILL_INLINE) > 0;
}

/*
 * What is over the target (a lower target set by target.c leaves the
 * frames in use above it) plus the low-water reserve, in pages.  A
 * compressed page frees less than a frame, so the caller comes back
 * until it is met.
 */
int64_t tmem_policy_spill_reserve(struct tmem_policy *policy)
{
	struct tmem_arena_counts a;
	uint64_t lw;

	if (!policy)
		return -EINVAL;
	/* Ephemeral pages go first (they may be dropped at will). */
	policy_refill(policy, false);
	store_arena_counts(policy->store, &a);
	lw = policy_low_water(policy, a.limit_pages);
	if (a.used_pages + lw <= a.limit_pages || a.ephemeral > 0)
		return 0;
	return policy_spill(policy, a.used_pages + lw - a.limit_pages);
}
