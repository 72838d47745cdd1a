/* SPDX-License-Identifier: MIT */
/*
 * Per-pool chained hash tables of descriptor indices.  The chain links
 * live in the page descriptors, so a table is only its bucket array:
 *
 *   pages: (oid, index) -> page, chained through pagedesc.hnext;
 *   objs:  oid -> the object's head page, chained through the head
 *          page's oprev (a head page has no predecessor in its object).
 *
 * Tables double when the load passes TMEM_*_HTAB_LOAD, which keeps the
 * average chain short (O(1) lookups) and the buckets within the metadata
 * budget.  A failed allocation while growing only leaves chains longer.
 *
 * Page chains are kept in insertion order, oldest first (adds append,
 * growing keeps the order).  Eviction removes pages oldest first, so its
 * victim is usually the first entry of its chain and the removal touches
 * only the bucket, instead of walking past every newer entry, each a
 * cold descriptor by the time the victim is old.  An add pays a walk to
 * the tail, but the put that adds has just walked the same chain in its
 * lookup, so those descriptors are already cached.  Object chains stay
 * newest first: every put looks its object up, and puts come in runs on
 * the newest objects, while an object leaves the table only once.
 * Hashes are XXH3 with a per-store random seed, so a guest cannot choose
 * oids that collide.  All functions expect the pool lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "internal.h"

static uint32_t *buckets_alloc(struct tmem_store *s, uint32_t n)
{
	uint32_t *b = malloc((size_t)n * sizeof(*b));

	if (!b)
		return NULL;
	memset(b, 0xff, (size_t)n * sizeof(*b)); /* TMEM_NIL */
	atomic_fetch_add_explicit(&s->table_bytes, (uint64_t)n * sizeof(*b),
				  memory_order_relaxed);
	return b;
}

static void buckets_free(struct tmem_store *s, uint32_t *b, uint32_t n)
{
	if (!b)
		return;
	atomic_fetch_sub_explicit(&s->table_bytes, (uint64_t)n * sizeof(*b),
				  memory_order_relaxed);
	free(b);
}

int htab_init(struct tmem_store *s, struct tmem_htab *t)
{
	t->count = 0;
	t->mask = TMEM_HTAB_MIN - 1;
	t->b = buckets_alloc(s, TMEM_HTAB_MIN);
	return t->b ? 0 : -ENOMEM;
}

void htab_fini(struct tmem_store *s, struct tmem_htab *t)
{
	buckets_free(s, t->b, t->mask + 1);
	t->b = NULL;
	t->count = 0;
}

uint64_t oid_hash(const struct tmem_store *s, const struct tmem_oid *oid)
{
	return XXH3_64bits_withSeed(oid, sizeof(*oid), s->hash_seed);
}

/* The page hash from the oid hash: a 64-bit finaliser (bijective) of both. */
static inline uint64_t page_hash(uint64_t oh, uint32_t index)
{
	uint64_t h = oh ^ ((uint64_t)index * 0x9e3779b97f4a7c15ull);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* ---- growing ----------------------------------------------------------- */

/* Entry i's chain link in t: hnext in the page table, the head's oprev
 * in the object table. */
static uint32_t *chain_link(struct tmem_pool *pool, const struct tmem_htab *t,
			    uint32_t i)
{
	struct tmem_pagedesc *p = pd(pool->store, i);

	return t == &pool->objs ? &p->oprev : &p->hnext;
}

static uint64_t entry_hash(struct tmem_pool *pool, const struct tmem_htab *t,
			   uint32_t i)
{
	const struct tmem_store *s = pool->store;
	const struct tmem_pagedesc *p = pd(s, i);
	uint64_t oh = oid_hash(s, &od(s, pd_obj(p))->oid);

	return t == &pool->objs ? oh : page_hash(oh, p->index);
}

/* Double t's buckets, rehashing every entry and keeping each chain's
 * order: old bucket i splits into new buckets i and i + old size. */
static void htab_grow(struct tmem_pool *pool, struct tmem_htab *t)
{
	struct tmem_store *s = pool->store;
	uint32_t old_n = t->mask + 1, n = old_n * 2, *b;

	if (n == 0 || !(b = buckets_alloc(s, n)))
		return;
	for (uint32_t i = 0; i < old_n; i++) {
		uint32_t *tail[2] = { &b[i], &b[i + old_n] };

		for (uint32_t e = t->b[i]; e != TMEM_NIL;) {
			uint32_t **at = &tail[(entry_hash(pool, t, e) & old_n) != 0];

			**at = e;
			*at = chain_link(pool, t, e);
			e = **at;
		}
		*tail[0] = *tail[1] = TMEM_NIL;
	}
	buckets_free(s, t->b, old_n);
	t->b = b;
	t->mask = n - 1;
}

/* Add entry e with hash h at the end of its chain (append) or at the
 * front, growing t first when its load passes load. */
static void htab_add(struct tmem_pool *pool, struct tmem_htab *t, uint32_t e,
		     uint64_t h, uint32_t load, bool append)
{
	uint32_t *link;

	if (t->count >= load * (uint64_t)(t->mask + 1))
		htab_grow(pool, t);
	link = &t->b[h & t->mask];
	while (append && *link != TMEM_NIL)
		link = chain_link(pool, t, *link);
	*chain_link(pool, t, e) = *link;
	*link = e;
	t->count++;
}

/* The link that points at entry e (hash h) in t; e must be there. */
static uint32_t *htab_link_to(struct tmem_pool *pool, struct tmem_htab *t,
			      uint32_t e, uint64_t h)
{
	uint32_t *link = &t->b[h & t->mask];

	while (*link != e)
		link = chain_link(pool, t, *link);
	return link;
}

/* ---- page table -------------------------------------------------------- */

uint32_t do_page_lookup(struct tmem_pool *pool, const struct tmem_oid *oid,
			uint32_t index, uint64_t oh)
{
	struct tmem_store *s = pool->store;
	uint32_t p = pool->pages.b[page_hash(oh, index) & pool->pages.mask];

	for (; p != TMEM_NIL; p = pd(s, p)->hnext) {
		const struct tmem_pagedesc *d = pd(s, p);

		if (d->index == index && oid_eq(&od(s, pd_obj(d))->oid, oid))
			return p;
	}
	return TMEM_NIL;
}

void do_page_hash_add(struct tmem_pool *pool, uint32_t page, uint64_t oh)
{
	htab_add(pool, &pool->pages, page,
		 page_hash(oh, pd(pool->store, page)->index), TMEM_PAGE_HTAB_LOAD,
		 true);
}

void do_page_hash_del(struct tmem_pool *pool, uint32_t page, uint64_t oh)
{
	struct tmem_htab *t = &pool->pages;
	uint32_t *link = htab_link_to(pool, t, page,
				      page_hash(oh, pd(pool->store, page)->index));

	*link = pd(pool->store, page)->hnext;
	t->count--;
}

/* ---- object table ------------------------------------------------------ */

uint32_t do_obj_lookup(struct tmem_pool *pool, const struct tmem_oid *oid,
		       uint64_t oh)
{
	struct tmem_store *s = pool->store;
	uint32_t h = pool->objs.b[oh & pool->objs.mask];

	for (; h != TMEM_NIL; h = pd(s, h)->oprev)
		if (oid_eq(&od(s, pd_obj(pd(s, h)))->oid, oid))
			return h;
	return TMEM_NIL;
}

void do_obj_hash_add(struct tmem_pool *pool, uint32_t head, uint64_t oh)
{
	htab_add(pool, &pool->objs, head, oh, TMEM_OBJ_HTAB_LOAD, false);
}

void do_obj_hash_replace(struct tmem_pool *pool, uint32_t old, uint32_t new,
			 uint64_t oh)
{
	struct tmem_store *s = pool->store;
	struct tmem_htab *t = &pool->objs;
	uint32_t *link = htab_link_to(pool, t, old, oh);

	if (new == TMEM_NIL) {
		*link = pd(s, old)->oprev;
		t->count--;
	} else {
		pd(s, new)->oprev = pd(s, old)->oprev;
		*link = new;
	}
}
