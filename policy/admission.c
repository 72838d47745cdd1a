/* SPDX-License-Identifier: MIT */
/*
 * Admission: whether a put may store, and what to evict so it can.
 *
 *  - frozen client: refused (reason frozen); an older page at the handle
 *    is discarded (not counted as a guest flush), so a later get cannot
 *    return it (put-put-get coherency);
 *  - over the client's cap (pools/ says -EDQUOT): a persistent put is
 *    refused (quota); an ephemeral put evicts the client's own oldest
 *    ephemeral pages down to the cap and retries, refused only when the
 *    cap is 0 or nothing of its own can go;
 *  - arena full (-ENOSPC): evict by the weighted rule (ephemeral pages
 *    only, anyone's) and retry; with everything stored persistent, move
 *    a batch of them to the host tier (spill.c) and retry; refused
 *    (full) only when nothing evictable is left, nothing could spill and
 *    no page is free.
 * Other threads race for the freed pages, hence the bounded retries.
 * pools/ has already removed any old page at the handle when it returns
 * -EDQUOT or -ENOSPC.  Each refusal is counted once, with the reason of
 * the last attempt, by pools/ under that attempt's pool lock (a frozen
 * client's here).
 */
#include <errno.h>

#include "policy_internal.h"

#define PUT_RETRIES 64

/*
 * After -EDQUOT (an ephemeral pool under a cap above 0: the store left
 * it to us): make room under the client's own ephemeral cap.  false
 * means refuse.  Evicting nothing while pages remain means they were
 * busy for a moment: retry.
 */
static bool room_under_cap(struct tmem_pclient *pc, uint64_t cap)
{
	struct tmem_page_counts counts;
	uint64_t want = 1;

	store_client_page_counts(pc->client, &counts);
	if (counts.ephemeral >= cap)
		want = counts.ephemeral - cap + 1;
	return policy_evict_own(pc, want) > 0 || counts.ephemeral > 0;
}

/*
 * After -ENOSPC: refill the reserve (so the retry is not lost to a racing
 * put) and retry while a page is free or an ephemeral page is left to
 * evict, or persistent pages could move to the host tier; refuse when
 * none of these.
 */
static bool room_in_arena(struct tmem_policy *policy)
{
	struct tmem_arena_counts a;

	if (policy_refill(policy, false))
		return true;
	store_arena_counts(policy->store, &a);
	if (a.free_pages > 0 || a.ephemeral > 0)
		return true;
	/* Over a lower target, the spiller thread has the catching up to
	 * do (a put would spill batch after batch): refuse meanwhile. */
	return a.used_pages <= a.limit_pages && policy_spill_inline(policy);
}

/*
 * The store picks the cap of the pool's kind and answers under one pool
 * lock; a refusal it is not told we retry it counts itself.  So the
 * common put is one call and one lock, and policy/ asks pools/ nothing.
 * Once we would give up, the last attempt tells the store so (retry 0):
 * it may still succeed (another thread freed room), and if it does not,
 * the store counts the refusal with its reason.
 */
int tmem_policy_put(struct tmem_pclient *pc, int32_t pool_id,
		    const struct tmem_oid *oid, uint32_t index,
		    const void *src)
{
	struct tmem_put_args args;
	int rc;

	if (!pc || !oid || !src)
		return -EINVAL;
	if (atomic_load(&pc->frozen)) {
		/* Not the guest's flush: it must not count as one. */
		rc = store_discard_page(pc->client, pool_id, oid, index);
		if (rc < 0)
			return rc;
		store_count_put_failure(pc->client, pool_id, TMEM_PUT_FAIL_FROZEN);
		return 0;
	}
	args.retry = TMEM_PUT_RETRY_FULL | TMEM_PUT_RETRY_OWN;
	policy_refill(pc->policy, true);
	for (int attempt = 0;; attempt++) {
		args.ephemeral_max = atomic_load(&pc->ephemeral_max);
		args.persistent_max = atomic_load(&pc->persistent_max);
		rc = store_put_page(pc->client, pool_id, oid, index, src, &args);
		if (rc != -EDQUOT && rc != -ENOSPC)
			return rc;
		if (attempt + 1 >= PUT_RETRIES ||
		    !(rc == -EDQUOT ? room_under_cap(pc, args.ephemeral_max)
				    : room_in_arena(pc->policy)))
			args.retry = 0;
	}
}
