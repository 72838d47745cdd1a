/* SPDX-License-Identifier: MIT */
/*
 * Shared pools and their authorisations.  A shared pool belongs to the
 * store (its pages are charged to the built-in shared client) and is
 * found by UUID; each client that joins holds one reference through one
 * of its slots, and the last reference to go destroys the pool.
 * Joining needs an authorisation for (uuid, principal): deny by default,
 * as Xen has done since 4.9 (a UUID is a guessable secret).  Both sides
 * are principals (proto/tmem_names.h), matched by kind and domid or
 * name: a client's principal is its name read in canonical form, so the
 * client "domid:5" is Xen domain 5, whatever the domain calls itself, and
 * no local name can spell a domain.  A client whose name is not a
 * canonical principal joins nothing.
 * Everything here runs under store->lock.  (pool.c calls in here for a
 * shared pool's handle, and this calls pool.c to make and drop the pool:
 * the loop is explained at the top of pool.c.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tmem_names.h"

static bool uuid_eq(const struct tmem_uuid *a, const struct tmem_uuid *b)
{
	return a->lo == b->lo && a->hi == b->hi;
}

static int do_auth_find(struct tmem_store *s, const struct tmem_uuid *uuid,
			const struct tmem_principal *who)
{
	for (uint32_t i = 0; i < s->nr_auth; i++)
		if (uuid_eq(&s->auth[i].uuid, uuid) &&
		    tmem_principal_eq(&s->auth[i].who, who))
			return (int)i;
	return -1;
}

int store_shared_auth(struct tmem_store *s, const struct tmem_uuid *uuid,
		      const char *principal, bool allow)
{
	struct tmem_principal who;
	int i, ret = 0;

	if (!s || !uuid || !principal ||
	    tmem_principal_parse(principal, TMEM_PRINCIPAL_CANONICAL, &who))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	i = do_auth_find(s, uuid, &who);
	if (allow && i < 0) {
		if (s->nr_auth >= TMEM_MAX_SHARED_AUTH) {
			ret = -ENOSPC;
			goto out;
		}
		s->auth[s->nr_auth].uuid = *uuid;
		s->auth[s->nr_auth].who = who;
		tmem_principal_format(&who, s->auth[s->nr_auth].principal);
		s->nr_auth++;
	} else if (!allow && i >= 0) {
		s->auth[i] = s->auth[--s->nr_auth];
	}
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static struct tmem_pool *do_shared_find(struct tmem_store *s,
					const struct tmem_uuid *uuid)
{
	for (uint32_t i = 0; i < TMEM_MAX_SHARED_POOLS; i++) {
		struct tmem_pool *pool;

		if (s->shared_gid[i] == TMEM_NIL)
			continue;
		pool = s->pool_tab[s->shared_gid[i]];
		if (uuid_eq(&pool->uuid, uuid))
			return pool;
	}
	return NULL;
}

static int do_shared_create(struct tmem_store *s, const struct tmem_uuid *uuid,
			    struct tmem_pool **out)
{
	for (uint32_t i = 0; i < TMEM_MAX_SHARED_POOLS; i++) {
		int ret;

		if (s->shared_gid[i] != TMEM_NIL)
			continue;
		ret = do_pool_create(s, s->shared_client, false, true, uuid, out);
		if (ret == 0)
			s->shared_gid[i] = (*out)->gid;
		return ret;
	}
	return -ENOSPC;
}

int do_shared_join(struct tmem_client *c, const struct tmem_uuid *uuid)
{
	struct tmem_store *s = c->store;
	struct tmem_principal who;
	struct tmem_pool *pool;
	int ret;

	if (tmem_principal_parse(c->name, TMEM_PRINCIPAL_CANONICAL, &who) ||
	    do_auth_find(s, uuid, &who) < 0)
		return -EPERM;
	pool = do_shared_find(s, uuid);
	if (pool) {
		uint64_t ref = (uint64_t)pool->gen << 32 | (pool->gid + 1);

		for (int32_t i = 0; i < (int32_t)TMEM_MAX_POOLS_PER_CLIENT; i++)
			if (atomic_load_explicit(&c->slots[i].ref,
						 memory_order_relaxed) == ref)
				return i; /* already joined: same handle */
	} else {
		ret = do_shared_create(s, uuid, &pool);
		if (ret < 0)
			return ret;
	}
	ret = do_slot_alloc(c, pool);
	if (ret >= 0)
		pool->sharers++;
	else if (pool->sharers == 0)
		do_shared_destroy(pool);
	return ret;
}

/* The last sharer left (or a new pool could not be joined). */
void do_shared_destroy(struct tmem_pool *pool)
{
	struct tmem_store *s = pool->store;

	for (uint32_t i = 0; i < TMEM_MAX_SHARED_POOLS; i++)
		if (s->shared_gid[i] == pool->gid)
			s->shared_gid[i] = TMEM_NIL;
	do_pool_destroy(pool);
}

static void do_shared_info(struct tmem_store *s, struct tmem_pool *pool,
			   struct tmem_shared_pool_info *info)
{
	memset(info, 0, sizeof(*info));
	info->uuid = pool->uuid;
	info->sharers = pool->sharers;
	pthread_mutex_lock(&pool->lock);
	info->pages = pool->pages.count;
	info->objects = pool->objs.count;
	pthread_mutex_unlock(&pool->lock);
	for (uint32_t i = 0; i < s->nr_auth; i++)
		if (uuid_eq(&s->auth[i].uuid, &pool->uuid))
			info->principals[info->nr_principals++] = s->auth[i].principal;
}

int store_for_each_shared_pool(struct tmem_store *s,
			       int (*fn)(const struct tmem_shared_pool_info *, void *),
			       void *ctx)
{
	struct tmem_shared_pool_info *info;
	int ret = 0;

	if (!s || !fn)
		return -EINVAL;
	info = malloc(sizeof(*info));
	if (!info)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	for (uint32_t i = 0; i < TMEM_MAX_SHARED_POOLS && ret == 0; i++) {
		if (s->shared_gid[i] == TMEM_NIL)
			continue;
		do_shared_info(s, s->pool_tab[s->shared_gid[i]], info);
		ret = fn(info, ctx);
	}
	pthread_mutex_unlock(&s->lock);
	free(info);
	return ret;
}

int store_for_each_shared_auth(struct tmem_store *s,
			       int (*fn)(const struct tmem_uuid *, const char *, void *),
			       void *ctx)
{
	int ret = 0;

	if (!s || !fn)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	for (uint32_t i = 0; i < s->nr_auth && ret == 0; i++)
		ret = fn(&s->auth[i].uuid, s->auth[i].principal, ctx);
	pthread_mutex_unlock(&s->lock);
	return ret;
}
