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
 *    only, anyone's) and retry; refused (full) only when nothing
 *    evictable is left and no page is free.
 * Other threads race for the freed pages, hence the bounded retries.
 * pools/ has already removed any old page at the handle when it returns
 * -EDQUOT or -ENOSPC.  Each refusal is counted once, with the reason of
 * the last attempt.
 */
#include <errno.h>

#include "policy_internal.h"

#define PUT_RETRIES 64

enum pool_kind { KIND_UNKNOWN, KIND_EPHEMERAL, KIND_PERSISTENT };

/* KIND_UNKNOWN when the pool does not exist (the put then gets -ENOENT). */
static enum pool_kind pool_kind(struct tmem_client *c, int32_t pool_id)
{
	switch (store_client_pool_kind(c, pool_id)) {
	case 1:
		return KIND_PERSISTENT;
	case 0:
		return KIND_EPHEMERAL;
	default:
		return KIND_UNKNOWN;
	}
}

/* The cap that applies to this put.  Looks the pool's kind up only when
 * the two caps differ. */
static uint64_t put_cap(struct tmem_pclient *pc, int32_t pool_id,
			enum pool_kind *kind)
{
	uint64_t eph = atomic_load(&pc->ephemeral_max);
	uint64_t pers = atomic_load(&pc->persistent_max);

	if (*kind == KIND_UNKNOWN && eph != pers)
		*kind = pool_kind(pc->client, pool_id);
	switch (*kind) {
	case KIND_EPHEMERAL:
		return eph;
	case KIND_PERSISTENT:
		return pers;
	default:
		return eph == pers ? eph : TMEM_NO_CAP;
	}
}

/*
 * After -EDQUOT: make room under the client's own ephemeral cap.  false
 * means refuse.  Evicting nothing while pages remain means they were
 * busy for a moment: retry.
 */
static bool room_under_cap(struct tmem_pclient *pc, int32_t pool_id,
			   enum pool_kind *kind, uint64_t cap)
{
	struct tmem_page_counts counts;
	uint64_t want = 1;

	if (*kind == KIND_UNKNOWN)
		*kind = pool_kind(pc->client, pool_id);
	if (*kind != KIND_EPHEMERAL || cap == 0)
		return false;
	store_client_page_counts(pc->client, &counts);
	if (counts.ephemeral >= cap)
		want = counts.ephemeral - cap + 1;
	return policy_evict_own(pc, want) > 0 || counts.ephemeral > 0;
}

/*
 * After -ENOSPC: refill the reserve (so the retry is not lost to a racing
 * put) and retry while a page is free or an ephemeral page is left to
 * evict; refuse when everything stored is persistent.
 */
static bool room_in_arena(struct tmem_policy *policy)
{
	struct tmem_arena_counts a;

	if (policy_refill(policy, false))
		return true;
	store_arena_counts(policy->store, &a);
	return a.free_pages > 0 || a.ephemeral > 0;
}

static int refuse(struct tmem_pclient *pc, int32_t pool_id,
		  enum tmem_put_fail why)
{
	store_count_put_failure(pc->client, pool_id, why);
	return 0;
}

int tmem_policy_put(struct tmem_pclient *pc, int32_t pool_id,
		    const struct tmem_oid *oid, uint32_t index,
		    const void *src)
{
	enum pool_kind kind = KIND_UNKNOWN;
	enum tmem_put_fail why;
	uint64_t cap;
	int rc;

	if (!pc || !oid || !src)
		return -EINVAL;
	if (atomic_load(&pc->frozen)) {
		/* Not the guest's flush: it must not count as one. */
		rc = store_discard_page(pc->client, pool_id, oid, index);
		if (rc < 0)
			return rc;
		return refuse(pc, pool_id, TMEM_PUT_FAIL_FROZEN);
	}
	policy_refill(pc->policy, true);
	for (int attempt = 0;; attempt++) {
		cap = put_cap(pc, pool_id, &kind);
		rc = store_put_page(pc->client, pool_id, oid, index, src, cap);
		if (rc != -EDQUOT && rc != -ENOSPC)
			return rc;
		why = rc == -EDQUOT ? TMEM_PUT_FAIL_QUOTA : TMEM_PUT_FAIL_FULL;
		if (attempt == PUT_RETRIES)
			break;
		if (why == TMEM_PUT_FAIL_QUOTA) {
			if (!room_under_cap(pc, pool_id, &kind, cap))
				break;
		} else if (!room_in_arena(pc->policy)) {
			break;
		}
	}
	return refuse(pc, pool_id, why);
}
