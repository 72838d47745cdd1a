/* SPDX-License-Identifier: MIT */
/*
 * Eviction from a client's LRU of ephemeral pages (oldest at the head;
 * the list itself is kept by object.c with the page's other links).
 *
 * Eviction runs the wrong way round the lock order: it holds the LRU
 * lock to pick a page and then needs that page's pool lock.  So it only
 * trylocks the pool and skips the page when the pool is busy, up to
 * TMEM_EVICT_TRIES pages (Xen tmem did the same).  While the LRU lock is
 * held a listed page cannot be removed, and a page leaves the list before
 * its object is freed, so the page's object, chunk and pool stay live.
 */
#include "internal.h"

/* Pages evict_oldest_n unlinks before it frees their data in one alloc_lock hold. */
#define EVICT_FREE_BATCH 32u

struct evict_run {
	struct tmem_store *s;
	struct tmem_pool *pool;      /* locked, or NULL */
	uint32_t freed[EVICT_FREE_BATCH];
	unsigned int nfreed;
	unsigned int pool_evicted;   /* not yet uncharged nor added to pool->evictions */
	bool by_admin;               /* an admin's flush: not counted as evictions */
	/* The oid hash of the last victim's object: consecutive LRU pages
	 * are mostly one object's.  Valid while r->pool stays locked, since
	 * no object of the pool can be created (and so reuse obj) until then. */
	uint32_t obj;
	uint64_t oh;
};

/* Free the unlinked pages' data and descriptors under one alloc_lock. */
static void run_free(struct evict_run *r)
{
	if (!r->nfreed)
		return;
	pthread_mutex_lock(&r->s->alloc_lock);
	for (unsigned int i = 0; i < r->nfreed; i++)
		do_descs_page_free(r->s, r->freed[i]);
	pthread_mutex_unlock(&r->s->alloc_lock);
	r->nfreed = 0;
}

/* Let go of the pool r->pool: its pages' data, its count, then its lock. */
static void run_release_pool(struct evict_run *r)
{
	if (!r->pool)
		return;
	run_free(r);
	pool_uncharge(r->pool, r->pool_evicted);
	if (!r->by_admin)
		atomic_fetch_add_explicit(&r->pool->evictions, r->pool_evicted,
					  memory_order_relaxed);
	pthread_mutex_unlock(&r->pool->lock);
	r->pool = NULL;
	r->pool_evicted = 0;
	r->obj = TMEM_NIL;
}

/* Unlink page (LRU lock held, its pool r->pool locked) and queue it for freeing. */
static void run_evict(struct evict_run *r, uint32_t page)
{
	uint32_t obj = pd_obj(pd(r->s, page));

	if (obj != r->obj) {
		r->obj = obj;
		r->oh = page_oid_hash(r->pool, page);
	}
	do_page_evict(r->pool, page, r->oh);
	r->pool_evicted++;
	r->freed[r->nfreed++] = page;
	if (r->nfreed == EVICT_FREE_BATCH)
		run_free(r);
}

/*
 * The LRU lock is held across the whole run, and a pool's lock from its
 * first page until a page of another pool comes up (consecutive LRU pages
 * usually share a pool), so n evictions take each lock about once.  Data
 * is freed in batches under one alloc_lock hold, before the pool lock
 * goes, so a resize (which stops every pool) never sees a page unlinked
 * but not yet freed.
 */
static unsigned int drop_oldest_n(struct tmem_client *c, unsigned int n, bool by_admin)
{
	struct evict_run r = { .obj = TMEM_NIL, .by_admin = by_admin };
	unsigned int done = 0, skipped = 0;
	uint32_t page, next;

	if (!c)
		return 0;
	r.s = c->store;
	pthread_mutex_lock(&c->lru_lock);
	for (page = c->lru_head; page != TMEM_NIL && done < n &&
	     skipped < TMEM_EVICT_TRIES; page = next) {
		struct tmem_pool *pool = page_pool(r.s, page);

		next = pd(r.s, page)->lnext;
		if (pool != r.pool) {
			run_release_pool(&r);
			if (pthread_mutex_trylock(&pool->lock) != 0) {
				skipped++;
				continue;
			}
			r.pool = pool;
		}
		run_evict(&r, page);
		done++;
	}
	run_release_pool(&r);
	pthread_mutex_unlock(&c->lru_lock);
	if (done && by_admin) {
		atomic_fetch_add_explicit(&c->ops[TMEM_KIND_EPH].admin_flushes, done,
					  memory_order_relaxed);
	} else if (done) {
		atomic_fetch_add_explicit(&c->ops[TMEM_KIND_EPH].evictions, done,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&r.s->evictions, done, memory_order_relaxed);
	}
	return done;
}

unsigned int store_client_evict_oldest_n(struct tmem_client *c, unsigned int n)
{
	return drop_oldest_n(c, n, false);
}

unsigned int store_client_admin_flush_n(struct tmem_client *c, unsigned int n)
{
	return drop_oldest_n(c, n, true);
}

int store_client_evict_oldest(struct tmem_client *c)
{
	return (int)store_client_evict_oldest_n(c, 1);
}

/* store->lock keeps each detached client alive while it is evicted from;
 * the lock order (store, then LRU, then a pool by trylock) allows it. */
unsigned int store_evict_detached(struct tmem_store *s, unsigned int n)
{
	unsigned int done = 0;

	if (!s || !n || !atomic_load_explicit(&s->nr_detached, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&s->lock);
	for (struct tmem_client *c = s->clients; c && done < n; c = c->next)
		if (c->detached)
			done += store_client_evict_oldest_n(c, n - done);
	pthread_mutex_unlock(&s->lock);
	return done;
}
