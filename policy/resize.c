/* SPDX-License-Identifier: MIT */
/*
 * Runtime arena resize.  Growing is pools/' job alone.  Shrinking first
 * evicts ephemeral pages (weighted, as for a full arena) until the pages
 * in use fit, then asks pools/ to move the survivors down.  Puts racing
 * with a shrink may take the freed pages again, so the evict-and-resize
 * step is retried a bounded number of times.
 */
#include <errno.h>

#include "policy_internal.h"

#define SHRINK_RETRIES 16

/* Evict until in-use pages fit in new_pages; -EBUSY if persistent pages alone do not. */
static int shrink_make_room(struct tmem_policy *policy, uint64_t new_pages)
{
	struct tmem_arena_counts a;
	uint64_t used;

	for (int i = 0; i < SHRINK_RETRIES; i++) {
		store_arena_counts(policy->store, &a);
		if (a.persistent > new_pages)
			return -EBUSY;
		used = a.used_pages;
		if (used <= new_pages)
			return 0;
		if (!policy_evict_weighted(policy, used - new_pages))
			return -EBUSY;
	}
	return -EBUSY;
}

static int do_resize(struct tmem_policy *policy, uint64_t new_pages)
{
	struct tmem_arena_counts a;
	int rc = -EBUSY;

	store_arena_counts(policy->store, &a);
	if (new_pages >= a.total_pages)
		return store_resize(policy->store, new_pages);
	/* Checked before evicting anything, so a refused shrink costs no pages. */
	if (a.persistent > new_pages)
		return -EBUSY;
	for (int i = 0; i < SHRINK_RETRIES && rc == -EBUSY; i++) {
		rc = shrink_make_room(policy, new_pages);
		if (rc)
			return rc;
		rc = store_resize(policy->store, new_pages);
	}
	return rc;
}

int tmem_policy_resize(struct tmem_policy *policy, uint64_t new_pages)
{
	int rc;

	if (!policy || !new_pages)
		return -EINVAL;
	pthread_mutex_lock(&policy->resize_lock);
	rc = do_resize(policy, new_pages);
	pthread_mutex_unlock(&policy->resize_lock);
	return rc;
}
