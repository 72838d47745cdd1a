/* SPDX-License-Identifier: MIT */
/*
 * Pools and the client's pool handles (slots).  A pool id the guest sees
 * is an index into its own client's slots, so it can only ever name its
 * own pools.  Slots are read lock-free by the guest ops; the (gid, gen)
 * pair in a slot is checked again under the pool lock, so a handle that
 * went stale while an op was in flight just misses (-ENOENT).
 *
 * The one loop left in pools/ runs between this file and shared.c, and
 * is meant: a shared pool is a pool (shared.c makes and drops it with
 * do_pool_create and do_pool_destroy, and gives a joiner a slot), and a
 * pool handle may name a shared pool (store_new_pool and slot teardown
 * here hand those to do_shared_join and do_shared_destroy).  Both run
 * under store->lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "short_lock.h"
#include "internal.h"

/* A slot's counters start at zero. */
static void counters_reset(struct tmem_counters *c)
{
	_Atomic uint64_t *v = (_Atomic uint64_t *)c;

	for (size_t i = 0; i < TMEM_NR_CTRS; i++)
		atomic_store_explicit(&v[i], 0, memory_order_relaxed);
}

static inline uint64_t slot_ref(const struct tmem_pool *pool)
{
	return (uint64_t)pool->gen << 32 | (pool->gid + 1);
}

/* A pool struct for a new pool: a reused gid or a new one. */
static int do_pool_get_struct(struct tmem_store *s, struct tmem_pool **out)
{
	struct tmem_pool *pool;
	uint32_t gid;

	if (s->pool_free != TMEM_NIL) {
		gid = s->pool_free;
		s->pool_free = s->pool_tab[gid]->free_next;
		*out = s->pool_tab[gid];
		return 0;
	}
	if (s->pool_bump >= TMEM_MAX_POOLS_TOTAL)
		return -ENOSPC;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	if (short_lock_init(&pool->lock)) {
		free(pool);
		return -ENOMEM;
	}
	pool->store = s;
	pool->gid = s->pool_bump++;
	pool->partial = TMEM_NIL;
	pool->rec = &s->prec[pool->gid];
	s->pool_tab[pool->gid] = pool;
	relaxed_set(&s->hdr->pool_bump, s->pool_bump);
	atomic_fetch_add_explicit(&s->struct_bytes, sizeof(*pool), memory_order_relaxed);
	*out = pool;
	return 0;
}

static void do_pool_put_struct(struct tmem_store *s, struct tmem_pool *pool)
{
	pool->free_next = s->pool_free;
	s->pool_free = pool->gid;
}

int do_pool_create(struct tmem_store *s, struct tmem_client *owner,
		   bool persistent, bool shared, const struct tmem_uuid *uuid,
		   struct tmem_pool **out)
{
	struct tmem_pool *pool;
	int ret = do_pool_get_struct(s, &pool);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&pool->lock);
	ret = htab_init(s, &pool->pages);
	if (ret == 0)
		ret = htab_init(s, &pool->objs);
	if (ret < 0) {
		htab_fini(s, &pool->pages);
		pthread_mutex_unlock(&pool->lock);
		do_pool_put_struct(s, pool);
		return ret;
	}
	pool->gen++;
	pool->live = true;
	pool->persistent = persistent;
	pool->shared = shared;
	pool->uuid = shared ? *uuid : (struct tmem_uuid){ 0, 0 };
	pool->owner = owner;
	pool->sharers = 0;
	atomic_store_explicit(&pool->evictions, 0, memory_order_relaxed);
	pthread_mutex_unlock(&pool->lock);
	*out = pool;
	return 0;
}

/* A private pool becomes durable once its owner holds it in a slot:
 * the record's state is the commit store (COMMIT.md). */
static void do_pool_rec_publish(struct tmem_pool *pool, int32_t slot)
{
	struct tmem_pool_rec *r = pool->rec;

	r->gen = pool->gen;
	r->client = (uint32_t)(pool->owner->rec - pool->store->crec);
	r->slot = slot;
	r->persistent = pool->persistent;
	r->shared = 0;
	memset(&r->uuid, 0, sizeof(r->uuid));
	rec_set_state(&r->state, TMEM_REC_LIVE);
}

void do_pool_destroy(struct tmem_pool *pool)
{
	struct tmem_store *s = pool->store;

	pthread_mutex_lock(&pool->lock);
	/* One store drops every page of the pool for recovery; the pages
	 * then go one by one. */
	if (pool->rec->state == TMEM_REC_LIVE)
		rec_set_state(&pool->rec->state, TMEM_REC_DYING);
	do_pool_empty(pool);
	do_pool_chunks_release(pool);
	htab_fini(s, &pool->pages);
	htab_fini(s, &pool->objs);
	pool->gen++;
	pool->live = false;
	rec_set_state(&pool->rec->state, TMEM_REC_FREE);
	pthread_mutex_unlock(&pool->lock);
	do_pool_put_struct(s, pool);
}

int do_pool_structs_reserve(struct tmem_store *s, uint32_t n)
{
	struct tmem_pool *pool;
	int ret;

	while (s->pool_bump < n) {
		ret = do_pool_get_struct(s, &pool);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void do_pool_struct_release(struct tmem_pool *pool)
{
	do_pool_put_struct(pool->store, pool);
}

int do_slot_alloc(struct tmem_client *c, struct tmem_pool *pool)
{
	for (int32_t i = 0; i < (int32_t)TMEM_MAX_POOLS_PER_CLIENT; i++) {
		struct tmem_slot *slot = &c->slots[i];

		if (atomic_load_explicit(&slot->ref, memory_order_relaxed))
			continue;
		counters_reset(&slot->ops);
		atomic_store_explicit(&slot->ref, slot_ref(pool), memory_order_release);
		return i;
	}
	return -ENOSPC;
}

void do_slot_set(struct tmem_client *c, int32_t id, struct tmem_pool *pool)
{
	counters_reset(&c->slots[id].ops);
	atomic_store_explicit(&c->slots[id].ref, slot_ref(pool), memory_order_release);
}

static struct tmem_pool *do_slot_pool(struct tmem_client *c, int32_t id)
{
	uint64_t ref = atomic_load_explicit(&c->slots[id].ref, memory_order_acquire);

	return ref ? c->store->pool_tab[(uint32_t)ref - 1] : NULL;
}

void do_slot_drop(struct tmem_client *c, int32_t id)
{
	struct tmem_pool *pool = do_slot_pool(c, id);

	/* Under the pool lock: an op that checked the slot has finished. */
	pthread_mutex_lock(&pool->lock);
	atomic_store_explicit(&c->slots[id].ref, 0, memory_order_release);
	counters_retire(&c->ops[pool_kind(pool)], &c->slots[id].ops);
	pthread_mutex_unlock(&pool->lock);
	if (!pool->shared)
		do_pool_destroy(pool);
	else if (--pool->sharers == 0)
		do_shared_destroy(pool);
}

struct tmem_pool *slot_lock_pool(struct tmem_client *c, int32_t id)
{
	struct tmem_pool *pool;
	uint64_t ref;

	if (id < 0 || id >= (int32_t)TMEM_MAX_POOLS_PER_CLIENT)
		return NULL;
	ref = atomic_load_explicit(&c->slots[id].ref, memory_order_acquire);
	if (!ref)
		return NULL;
	pool = c->store->pool_tab[(uint32_t)ref - 1];
	pthread_mutex_lock(&pool->lock);
	/* The slot again: it is only cleared under this lock. */
	if (!pool->live || pool->gen != (uint32_t)(ref >> 32) ||
	    atomic_load_explicit(&c->slots[id].ref, memory_order_relaxed) != ref) {
		pthread_mutex_unlock(&pool->lock);
		return NULL;
	}
	return pool;
}

/* Xen's NEW_POOL checks: 0, or the -errno to return. */
static int pool_flags_check(uint32_t flags)
{
	if (flags & ~TMEM_POOL_VALID_MASK)
		return -EINVAL; /* reserved, PRECOMPRESSED or unknown bits */
	if ((flags >> TMEM_POOL_PAGESIZE_SHIFT) & TMEM_POOL_PAGESIZE_MASK)
		return -EINVAL; /* only 4 KiB pages */
	if (((flags >> TMEM_POOL_VERSION_SHIFT) & TMEM_POOL_VERSION_MASK) !=
	    TMEM_SPEC_VERSION)
		return -EINVAL;
	if ((flags & TMEM_POOL_PERSIST) && (flags & TMEM_POOL_SHARED))
		return -EPERM; /* as Xen: shared persistent pools are refused */
	return 0;
}

static int do_private_pool_new(struct tmem_client *c, bool persistent)
{
	struct tmem_pool *pool;
	int ret = do_pool_create(c->store, c, persistent, false, NULL, &pool);

	if (ret < 0)
		return ret;
	ret = do_slot_alloc(c, pool);
	if (ret < 0)
		do_pool_destroy(pool);
	else
		do_pool_rec_publish(pool, ret);
	return ret;
}

int store_new_pool(struct tmem_client *c, uint32_t flags,
		   const struct tmem_uuid *uuid)
{
	int ret;

	if (!c || c == c->store->shared_client)
		return -EINVAL;
	ret = pool_flags_check(flags);
	if (ret < 0)
		return ret;
	if ((flags & TMEM_POOL_SHARED) && !uuid)
		return -EINVAL;
	pthread_mutex_lock(&c->store->lock);
	if (flags & TMEM_POOL_SHARED)
		ret = do_shared_join(c, uuid);
	else
		ret = do_private_pool_new(c, flags & TMEM_POOL_PERSIST);
	pthread_mutex_unlock(&c->store->lock);
	return ret;
}

int store_destroy_pool(struct tmem_client *c, int32_t pool_id)
{
	int ret = 1;

	if (!c)
		return -EINVAL;
	if (pool_id < 0 || pool_id >= (int32_t)TMEM_MAX_POOLS_PER_CLIENT)
		return -ENOENT;
	pthread_mutex_lock(&c->store->lock);
	if (atomic_load_explicit(&c->slots[pool_id].ref, memory_order_relaxed))
		do_slot_drop(c, pool_id);
	else
		ret = -ENOENT;
	pthread_mutex_unlock(&c->store->lock);
	return ret;
}
