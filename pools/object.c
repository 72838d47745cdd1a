/* SPDX-License-Identifier: MIT */
/*
 * Pages in objects.  An object's pages form a list from its head page
 * (the one the object table points at) through onext/oprev.  The head
 * page has no predecessor, so its oprev is free to chain the object
 * table instead; when the head goes, the next page becomes head and
 * takes its place in that chain.  The object descriptor is freed with
 * its last page.  All functions expect the pool lock.  The charged
 * client's LRU list of ephemeral pages is linked here too, with the
 * page's other derived links (under the client's lru_lock, inside the
 * pool lock); evict.c takes pages from its head.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* ---- the charged client's LRU lists; do_* expect its lru_lock ---------- */

/* A list of pages through lprev/lnext, from *head (oldest) to *tail. */
static void list_add_tail(struct tmem_store *s, uint32_t *head, uint32_t *tail, uint32_t page)
{
	struct tmem_pagedesc *p = pd(s, page);

	p->lnext = TMEM_NIL;
	p->lprev = *tail;
	if (*tail != TMEM_NIL)
		pd(s, *tail)->lnext = page;
	else
		*head = page;
	*tail = page;
}

static void list_del(struct tmem_store *s, uint32_t *head, uint32_t *tail, uint32_t page)
{
	struct tmem_pagedesc *p = pd(s, page);

	if (p->lprev != TMEM_NIL)
		pd(s, p->lprev)->lnext = p->lnext;
	else
		*head = p->lnext;
	if (p->lnext != TMEM_NIL)
		pd(s, p->lnext)->lprev = p->lprev;
	else
		*tail = p->lprev;
	p->lprev = p->lnext = TMEM_NIL;
}

void do_lru_add_tail(struct tmem_client *c, uint32_t page)
{
	list_add_tail(c->store, &c->lru_head, &c->lru_tail, page);
}

void do_lru_del(struct tmem_client *c, uint32_t page)
{
	list_del(c->store, &c->lru_head, &c->lru_tail, page);
}

void lru_add(struct tmem_client *c, uint32_t page)
{
	pthread_mutex_lock(&c->lru_lock);
	do_lru_add_tail(c, page);
	pthread_mutex_unlock(&c->lru_lock);
}

void lru_touch(struct tmem_client *c, uint32_t page)
{
	pthread_mutex_lock(&c->lru_lock);
	do_lru_del(c, page);
	do_lru_add_tail(c, page);
	pthread_mutex_unlock(&c->lru_lock);
}

/* ---- the persistent list (spill victims); do_* expect its lru_lock ----- */

bool do_plru_member(const struct tmem_client *c, uint32_t page)
{
	return pd(c->store, page)->lprev != TMEM_NIL || c->plru_head == page;
}

void do_plru_add_tail(struct tmem_client *c, uint32_t page)
{
	list_add_tail(c->store, &c->plru_head, &c->plru_tail, page);
}

void do_plru_del(struct tmem_client *c, uint32_t page)
{
	if (do_plru_member(c, page))
		list_del(c->store, &c->plru_head, &c->plru_tail, page);
}

/* Without a tier nothing spills, and persistent puts take no LRU lock. */
void plru_sync(struct tmem_pool *pool, uint32_t page, uint32_t h)
{
	struct tmem_store *s = pool->store;
	struct tmem_client *c = pool->owner;
	bool want, member;

	if (!pool->persistent || !tier_on(&s->tier))
		return;
	want = !((h & TMEM_H_ZS) && (h & TMEM_H_SUB)) && !zs_tier_ent(s, h);
	pthread_mutex_lock(&c->lru_lock);
	member = do_plru_member(c, page);
	if (want && !member)
		do_plru_add_tail(c, page);
	else if (!want && member)
		do_plru_del(c, page);
	pthread_mutex_unlock(&c->lru_lock);
}

/*
 * The commit order (COMMIT.md): data, index and object are written
 * first, and the page is published by the last store, so a crash at any
 * point before it leaves only an unpublished descriptor that recovery
 * frees.
 */
int do_page_insert(struct tmem_pool *pool, const struct tmem_oid *oid,
		   uint32_t index, uint64_t oh, const struct tmem_enc *e, uint32_t *page)
{
	struct tmem_store *s = pool->store;
	uint32_t head = do_obj_lookup(pool, oid, oh), obj = TMEM_NIL;
	struct tmem_pagedesc *p, *h;
	int ret;

	if (head == TMEM_NIL) {
		ret = do_pool_obj_alloc(pool, &obj);
		if (ret < 0)
			return ret;
	}
	ret = descs_page_alloc(s, e, pool, page);
	if (ret < 0) {
		if (obj != TMEM_NIL)
			do_pool_obj_free(pool, obj);
		return ret;
	}
	p = pd(s, *page);
	do_data_write(s, pd_handle(p), *page, e);
	p->index = index;
	p->lprev = p->lnext = TMEM_NIL;
	if (head == TMEM_NIL) {
		od(s, obj)->oid = *oid;
		pd_set_obj(p, obj | TMEM_OBJ_HEAD);
		p->onext = TMEM_NIL;
		do_obj_hash_add(pool, *page, oh);
	} else {
		h = pd(s, head);
		pd_set_obj(p, pd_obj(h));
		p->oprev = head;
		p->onext = h->onext;
		if (h->onext != TMEM_NIL)
			pd(s, h->onext)->oprev = *page;
		h->onext = *page;
	}
	do_page_hash_add(pool, *page, oh);
	if (!pool->persistent)
		lru_add(pool->owner, *page);
	else
		plru_sync(pool, *page, pd_handle(p));
	atomic_fetch_add_explicit(&s->kind_pages[pool_kind(pool)], 1,
				  memory_order_relaxed);
	do_data_account(pool, pd_handle(p), 1);
	pd_publish(p, pd_handle(p));
	return 0;
}

void do_page_adopt(struct tmem_pool *pool, uint32_t page, uint64_t oh)
{
	struct tmem_store *s = pool->store;
	struct tmem_pagedesc *p = pd(s, page), *h;
	uint32_t obj = pd_obj(p), head = do_obj_lookup(pool, &od(s, obj)->oid, oh);

	p->lprev = p->lnext = TMEM_NIL;
	if (head == TMEM_NIL) {
		pd_set_obj(p, obj | TMEM_OBJ_HEAD);
		p->onext = TMEM_NIL;
		do_obj_hash_add(pool, page, oh);
	} else {
		h = pd(s, head);
		pd_set_obj(p, obj);
		p->oprev = head;
		p->onext = h->onext;
		if (h->onext != TMEM_NIL)
			pd(s, h->onext)->oprev = page;
		h->onext = page;
	}
	do_page_hash_add(pool, page, oh);
	if (!pool->persistent)
		lru_add(pool->owner, page);
	else
		plru_sync(pool, page, pd_handle(p));
	atomic_fetch_add_explicit(&pool->owner->charged[pool_kind(pool)], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&s->kind_pages[pool_kind(pool)], 1,
				  memory_order_relaxed);
	do_data_account(pool, pd_handle(p), 1);
}

static void do_obj_unlink_page(struct tmem_pool *pool, uint32_t page,
			       uint64_t oh)
{
	struct tmem_store *s = pool->store;
	struct tmem_pagedesc *p = pd(s, page);
	uint32_t obj = pd_obj(p), next = p->onext;

	if (!pd_is_head(p)) {
		pd(s, p->oprev)->onext = next;
		if (next != TMEM_NIL)
			pd(s, next)->oprev = p->oprev;
	} else if (next == TMEM_NIL) {
		do_obj_hash_replace(pool, page, TMEM_NIL, oh);
		do_pool_obj_free(pool, obj);
	} else {
		pd_set_obj(pd(s, next), obj | TMEM_OBJ_HEAD);
		do_obj_hash_replace(pool, page, next, oh);
	}
}

/*
 * Detaching a page, in three steps: the removal's commit store comes
 * before any link changes (COMMIT.md); then the page leaves the LRU
 * (do_page_detach() takes the owner's LRU lock for it, do_page_evict()
 * runs under it), before its object: eviction finds a listed page's pool
 * through its object's chunk, so the object must outlive the page's
 * listing; then the tables and the object.
 */
static void do_page_unpublish(struct tmem_pool *pool, uint32_t page)
{
	tier_page_changed(pool->store, page);
	pd_unpublish(pd(pool->store, page));
	do_data_account(pool, pd_handle(pd(pool->store, page)), -1);
}

static void do_page_unlink_tables(struct tmem_pool *pool, uint32_t page, uint64_t oh)
{
	do_page_hash_del(pool, page, oh);
	do_obj_unlink_page(pool, page, oh);
}

void do_page_detach(struct tmem_pool *pool, uint32_t page, uint64_t oh)
{
	struct tmem_client *owner = pool->owner;

	do_page_unpublish(pool, page);
	if (!pool->persistent) {
		pthread_mutex_lock(&owner->lru_lock);
		do_lru_del(owner, page);
		pthread_mutex_unlock(&owner->lru_lock);
	} else if (tier_on(&pool->store->tier)) {
		pthread_mutex_lock(&owner->lru_lock);
		do_plru_del(owner, page);
		pthread_mutex_unlock(&owner->lru_lock);
	}
	do_page_unlink_tables(pool, page, oh);
}

void do_page_evict(struct tmem_pool *pool, uint32_t page, uint64_t oh)
{
	do_page_unpublish(pool, page);
	if (!pool->persistent)
		do_lru_del(pool->owner, page);
	do_page_unlink_tables(pool, page, oh);
}

void pool_uncharge(struct tmem_pool *pool, uint64_t n)
{
	enum tmem_kind k = pool_kind(pool);

	atomic_fetch_sub_explicit(&pool->owner->charged[k], n, memory_order_relaxed);
	atomic_fetch_sub_explicit(&pool->store->kind_pages[k], n,
				  memory_order_relaxed);
}

void do_page_unlink(struct tmem_pool *pool, uint32_t page, uint64_t oh)
{
	do_page_detach(pool, page, oh);
	pool_uncharge(pool, 1);
}

void do_page_free(struct tmem_pool *pool, uint32_t page)
{
	struct tmem_store *s = pool->store;

	pthread_mutex_lock(&s->alloc_lock);
	do_descs_page_free(s, page);
	pthread_mutex_unlock(&s->alloc_lock);
}

void do_page_remove(struct tmem_pool *pool, uint32_t page, uint64_t oh)
{
	do_page_unlink(pool, page, oh);
	do_page_free(pool, page);
}

uint32_t do_object_remove(struct tmem_pool *pool, uint32_t head, uint64_t oh)
{
	struct tmem_store *s = pool->store;
	uint32_t n = 1;

	/* Tail pages first: each is O(1), and the head goes last with its object. */
	for (uint32_t p = pd(s, head)->onext, next; p != TMEM_NIL; p = next, n++) {
		next = pd(s, p)->onext;
		do_page_remove(pool, p, oh);
	}
	do_page_remove(pool, head, oh);
	return n;
}

void do_pool_empty(struct tmem_pool *pool)
{
	struct tmem_htab *t = &pool->objs;

	if (!t->b)
		return;
	for (uint32_t i = 0; i <= t->mask; i++)
		while (t->b[i] != TMEM_NIL)
			do_object_remove(pool, t->b[i], page_oid_hash(pool, t->b[i]));
}

uint64_t page_oid_hash(struct tmem_pool *pool, uint32_t page)
{
	struct tmem_store *s = pool->store;

	return oid_hash(s, &od(s, pd_obj(pd(s, page)))->oid);
}
