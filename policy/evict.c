/* SPDX-License-Identifier: MIT */
/*
 * Weighted fair eviction.
 *
 * When the arena runs short, the victim is the client whose ephemeral
 * pages per unit of weight are the most (the store's shared client counts
 * with the default weight), and it loses its LRU-oldest ephemeral page.
 * In steady state every client's ephemeral residency therefore settles
 * in proportion to its weight.
 *
 * Cost: one scan of the client list (under policy->lock, reading page
 * counters only) picks a victim and how many pages it is over its fair
 * share against the runner-up; up to POLICY_EVICT_BATCH of those go
 * before the next scan, so a scan is amortised over a batch.  The batch is one
 * store_client_evict_oldest_n() call (pools/ O(1) LRU pops, taking the
 * LRU and pool locks once for the batch), made with no policy lock held.  A free-page reserve (the low-water mark) is
 * refilled in such batches, so most puts find a free page and do not
 * evict at all.
 */
#include "policy_internal.h"

/* Victims found with nothing evictable (all busy), skipped this round. */
#define EVICT_SKIP_MAX 4

struct victim {
	struct tmem_pclient *pc;
	uint64_t ephemeral;
	uint32_t weight;
};

/* a.ephemeral / a.weight > b.ephemeral / b.weight, without division. */
static bool share_above(const struct victim *a, const struct victim *b)
{
	return (unsigned __int128)a->ephemeral * b->weight >
	       (unsigned __int128)b->ephemeral * a->weight;
}

static bool skipped(struct tmem_pclient *pc, struct tmem_pclient *const *skip,
		    unsigned int nskip)
{
	for (unsigned int i = 0; i < nskip; i++)
		if (skip[i] == pc)
			return true;
	return false;
}

/* Pages best holds beyond the runner-up's share, scaled to best's weight. */
static uint64_t excess_over(const struct victim *best,
			    const struct victim *second)
{
	unsigned __int128 fair;

	if (!second->pc)
		return best->ephemeral;
	fair = ((unsigned __int128)second->ephemeral * best->weight +
		second->weight - 1) / second->weight;
	return best->ephemeral > fair ? best->ephemeral - (uint64_t)fair : 0;
}

/*
 * Pick the victim and pin it (users++).  *batch gets how many pages to
 * take from it: one more than its excess over the runner-up (or 1/64 of
 * its pages if more), at most POLICY_EVICT_BATCH.  Returns NULL when no client has ephemeral pages.
 */
static struct tmem_pclient *victim_pin(struct tmem_policy *policy,
				       struct tmem_pclient *const *skip,
				       unsigned int nskip, uint64_t *batch)
{
	struct victim best = { 0 }, second = { 0 }, cur;
	struct tmem_page_counts counts;
	struct tmem_pclient *pc;
	uint64_t excess;

	best.weight = second.weight = 1;
	pthread_mutex_lock(&policy->lock);
	for (pc = policy->clients; pc; pc = pc->next) {
		if (skipped(pc, skip, nskip))
			continue;
		store_client_page_counts(pc->client, &counts);
		if (!counts.ephemeral)
			continue;
		cur.pc = pc;
		cur.ephemeral = counts.ephemeral;
		cur.weight = atomic_load(&pc->weight);
		if (!best.pc || share_above(&cur, &best)) {
			second = best;
			best = cur;
		} else if (!second.pc || share_above(&cur, &second)) {
			second = cur;
		}
	}
	if (best.pc)
		best.pc->users++;
	pthread_mutex_unlock(&policy->lock);
	/* Overshooting the fair share by 1/64 of the victim's pages is noise
	 * next to the +-10% fairness goal, and lets a scan serve a whole
	 * batch even when clients are close to their shares. */
	excess = excess_over(&best, &second) + 1;
	if (excess < best.ephemeral / 64)
		excess = best.ephemeral / 64;
	*batch = excess < POLICY_EVICT_BATCH ? excess : POLICY_EVICT_BATCH;
	return best.pc;
}

static void victim_unpin(struct tmem_pclient *pc)
{
	struct tmem_policy *policy = pc->policy;

	pthread_mutex_lock(&policy->lock);
	if (--pc->users == 0 && pc->removing)
		pthread_cond_broadcast(&policy->unpinned);
	pthread_mutex_unlock(&policy->lock);
}

/* Evicts up to want of c's oldest ephemeral pages, a batch per pools/ call. */
static uint64_t evict_from(struct tmem_client *c, uint64_t want)
{
	uint64_t n = 0;
	unsigned int got, ask;

	while (n < want) {
		ask = want - n < POLICY_EVICT_BATCH ? (unsigned int)(want - n)
						    : POLICY_EVICT_BATCH;
		got = store_client_evict_oldest_n(c, ask);
		n += got;
		if (got < ask)
			break;
	}
	return n;
}

/*
 * Evicts up to want ephemeral pages by the weighted rule; returns how
 * many.  Pages of detached clients (recovered after a restart, owners
 * not back yet) go first: nobody is using them.
 */
uint64_t policy_evict_weighted(struct tmem_policy *policy, uint64_t want)
{
	struct tmem_pclient *skip[EVICT_SKIP_MAX];
	unsigned int nskip = 0;
	uint64_t got, batch, n;
	struct tmem_pclient *v;

	got = store_evict_detached(policy->store,
				   want < POLICY_EVICT_BATCH ? (unsigned int)want
								  : POLICY_EVICT_BATCH);
	while (got < want) {
		v = victim_pin(policy, skip, nskip, &batch);
		if (!v)
			break;
		n = evict_from(v->client, batch < want - got ? batch : want - got);
		victim_unpin(v);
		if (!n) {
			/* Only compared by address from here on. */
			if (nskip == EVICT_SKIP_MAX)
				break;
			skip[nskip++] = v;
		}
		got += n;
	}
	return got;
}

/* Evicts up to want of pc's own oldest ephemeral pages (the caller pins pc). */
uint64_t policy_evict_own(struct tmem_pclient *pc, uint64_t want)
{
	return evict_from(pc->client, want);
}

/*
 * The configured low-water mark, or 1/64 of the arena's limit (its
 * target; at least 16 pages); never more than half of it, so a small
 * arena is not emptied to keep its reserve.
 */
uint64_t policy_low_water(const struct tmem_policy *policy,
			  uint64_t total_pages)
{
	uint64_t lw = policy->low_water_cfg;

	if (!lw) {
		lw = total_pages / 64;
		if (lw < 16)
			lw = 16;
	}
	return lw < total_pages / 2 ? lw : total_pages / 2;
}

uint64_t tmem_policy_low_water(struct tmem_policy *policy)
{
	struct tmem_arena_counts a;

	if (!policy)
		return 0;
	store_arena_counts(policy->store, &a);
	return policy_low_water(policy, a.limit_pages);
}

/*
 * Brings free pages back to the low-water mark, evicting at least one
 * batch so the puts that follow need not evict.  From the put path
 * (inline_put) only one thread refills at a time; the others go on
 * using the reserve.  Returns how many pages it evicted.
 */
uint64_t policy_refill(struct tmem_policy *policy, bool inline_put)
{
	struct tmem_arena_counts a;
	uint64_t lw, want, got;

	store_arena_counts(policy->store, &a);
	lw = policy_low_water(policy, a.limit_pages);
	if (a.free_pages >= lw)
		return 0;
	if (inline_put && atomic_flag_test_and_set(&policy->refilling))
		return 0;
	want = lw - a.free_pages;
	if (want < POLICY_EVICT_BATCH)
		want = POLICY_EVICT_BATCH;
	got = policy_evict_weighted(policy, want);
	if (inline_put)
		atomic_flag_clear(&policy->refilling);
	return got;
}

void tmem_policy_refill_reserve(struct tmem_policy *policy)
{
	if (policy)
		policy_refill(policy, false);
}
