/* SPDX-License-Identifier: MIT */
/*
 * Parked clients (client_registry.h): the registry's list of who was
 * parked when, with the counters the stats show.  The pages themselves
 * stay in the store, in a detached client under the parked key; this
 * list only says which detached clients are waiting to be claimed and
 * since when, so a parked one is never taken for a client that died.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_registry_internal.h"

struct pool_scan {
	int32_t drop[TMEM_MAX_POOLS_PER_CLIENT];
	unsigned nr_drop;
	uint32_t pools;
	uint64_t pages;
};

static int scan_pool(const struct tmem_pool_info *pi, void *ctx)
{
	struct pool_scan *ps = ctx;

	if (pi->persistent && !pi->shared) {
		ps->pools++;
		ps->pages += pi->pages;
	} else if (ps->nr_drop < TMEM_MAX_POOLS_PER_CLIENT) {
		ps->drop[ps->nr_drop++] = pi->id;
	}
	return 0;
}

/* reg->lock held. */
static struct tmemd_parked *do_parked_find(struct tmemd_clients *reg, const char *key)
{
	for (unsigned i = 0; i < reg->nr_parked; i++)
		if (!strcmp(reg->parked[i].key, key))
			return &reg->parked[i];
	return NULL;
}

/* reg->lock held: adds or replaces the entry for p->key. */
static int do_parked_put(struct tmemd_clients *reg, const struct tmemd_parked *p)
{
	struct tmemd_parked *slot = do_parked_find(reg, p->key);

	if (!slot) {
		if (reg->nr_parked == reg->cap_parked) {
			unsigned cap = reg->cap_parked * 2 + 8;
			struct tmemd_parked *bigger = realloc(reg->parked, cap * sizeof(*bigger));

			if (!bigger)
				return -ENOMEM;
			reg->parked = bigger;
			reg->cap_parked = cap;
		}
		slot = &reg->parked[reg->nr_parked++];
	}
	*slot = *p;
	reg->park.parked = reg->nr_parked;
	return 0;
}

/* reg->lock held. */
static void do_parked_del(struct tmemd_clients *reg, struct tmemd_parked *p)
{
	*p = reg->parked[--reg->nr_parked];
	reg->park.parked = reg->nr_parked;
}

int tmemd_client_park(struct tmemd_client *c, uint64_t now_sec, struct tmemd_parked *out)
{
	struct tmemd_clients *reg = c->reg;
	struct pool_scan ps = { .nr_drop = 0 };
	struct tmemd_parked p = { .parked_at = now_sec };
	int rc;

	store_client_for_each_pool(c->sc, scan_pool, &ps);
	for (unsigned i = 0; i < ps.nr_drop; i++)
		store_destroy_pool(c->sc, ps.drop[i]);
	if (!ps.pools) {
		tmemd_client_remove(c);
		return -ENOENT;
	}
	snprintf(p.key, sizeof(p.key), "%s", c->name);
	snprintf(p.label, sizeof(p.label), "%s", c->label);
	store_client_ident(c->sc, &p.ident);
	p.pages = ps.pages;
	p.pools = ps.pools;
	pthread_mutex_lock(&reg->lock);
	rc = do_parked_put(reg, &p);
	pthread_mutex_unlock(&reg->lock);
	if (rc) {
		tmemd_client_remove(c);
		return rc;
	}
	pthread_mutex_lock(&reg->lock);
	for (struct tmemd_client **pp = &reg->head; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	tmem_policy_client_detach(c->pc);
	reg->park.pools_parked += p.pools;
	reg->park.pages_parked += p.pages;
	pthread_mutex_unlock(&reg->lock);
	free(c);
	if (out)
		*out = p;
	return 0;
}

int tmemd_clients_note_parked(struct tmemd_clients *reg, const char *key,
			      const char *label, const struct tmem_ident *ident,
			      uint64_t parked_at)
{
	struct tmemd_parked p = { .parked_at = parked_at, .ident = *ident };
	struct tmem_page_counts pc;
	int rc;

	snprintf(p.key, sizeof(p.key), "%s", key);
	snprintf(p.label, sizeof(p.label), "%s", label);
	if (store_detached_page_counts(reg->store, key, &pc) == 0)
		p.pages = pc.persistent;
	pthread_mutex_lock(&reg->lock);
	rc = do_parked_put(reg, &p);
	pthread_mutex_unlock(&reg->lock);
	return rc;
}

int tmemd_clients_unpark(struct tmemd_clients *reg, const char *key,
			 struct tmemd_parked *out)
{
	struct tmemd_parked *p;
	int rc = -ENOENT;

	pthread_mutex_lock(&reg->lock);
	p = do_parked_find(reg, key);
	if (p) {
		*out = *p;
		do_parked_del(reg, p);
		rc = 0;
	}
	pthread_mutex_unlock(&reg->lock);
	return rc;
}

int tmemd_clients_parked(struct tmemd_clients *reg, const char *key,
			 struct tmemd_parked *out)
{
	struct tmemd_parked *p;

	pthread_mutex_lock(&reg->lock);
	p = do_parked_find(reg, key);
	if (p)
		*out = *p;
	pthread_mutex_unlock(&reg->lock);
	return p ? 0 : -ENOENT;
}

bool tmemd_clients_is_parked(void *ctx, const char *key)
{
	struct tmemd_parked p;

	return tmemd_clients_parked(ctx, key, &p) == 0;
}

int tmemd_clients_forget_parked(struct tmemd_clients *reg, const char *key)
{
	struct tmemd_parked *p;

	pthread_mutex_lock(&reg->lock);
	p = do_parked_find(reg, key);
	if (p)
		do_parked_del(reg, p);
	pthread_mutex_unlock(&reg->lock);
	return p ? 0 : -ENOENT;
}

unsigned tmemd_clients_expire_parked(struct tmemd_clients *reg, uint64_t now_sec,
				     uint64_t max_age_sec,
				     void (*gone)(void *ctx, const struct tmemd_parked *p),
				     void *ctx)
{
	unsigned n = 0;

	for (;;) {
		struct tmemd_parked p, *e = NULL;

		pthread_mutex_lock(&reg->lock);
		for (unsigned i = 0; i < reg->nr_parked && !e; i++)
			if (reg->parked[i].parked_at + max_age_sec <= now_sec)
				e = &reg->parked[i];
		if (e) {
			p = *e;
			do_parked_del(reg, e);
		}
		pthread_mutex_unlock(&reg->lock);
		if (!e)
			return n;
		if (store_drop_detached(reg->store, p.key) > 0) {
			pthread_mutex_lock(&reg->lock);
			reg->park.pools_expired += p.pools;
			reg->park.pages_expired += p.pages;
			pthread_mutex_unlock(&reg->lock);
		}
		if (gone)
			gone(ctx, &p);
		n++;
	}
}

int tmemd_clients_for_each_parked(struct tmemd_clients *reg,
				  int (*fn)(const struct tmemd_parked *, void *), void *ctx)
{
	struct tmemd_parked *copy;
	unsigned n;
	int rc = 0;

	pthread_mutex_lock(&reg->lock);
	n = reg->nr_parked;
	copy = n ? malloc(n * sizeof(*copy)) : NULL;
	if (copy)
		memcpy(copy, reg->parked, n * sizeof(*copy));
	pthread_mutex_unlock(&reg->lock);
	if (n && !copy)
		return -ENOMEM;
	for (unsigned i = 0; i < n && !rc; i++)
		rc = fn(&copy[i], ctx);
	free(copy);
	return rc;
}

uint64_t tmemd_clients_oldest_parked(struct tmemd_clients *reg)
{
	uint64_t oldest = 0;

	pthread_mutex_lock(&reg->lock);
	for (unsigned i = 0; i < reg->nr_parked; i++)
		if (!oldest || reg->parked[i].parked_at < oldest)
			oldest = reg->parked[i].parked_at;
	pthread_mutex_unlock(&reg->lock);
	return oldest;
}

void tmemd_clients_count_claimed(struct tmemd_clients *reg, uint32_t pools, uint64_t pages)
{
	pthread_mutex_lock(&reg->lock);
	reg->park.pools_claimed += pools;
	reg->park.pages_claimed += pages;
	pthread_mutex_unlock(&reg->lock);
}

void tmemd_clients_park_stats(struct tmemd_clients *reg, struct tmemd_park_stats *out)
{
	pthread_mutex_lock(&reg->lock);
	*out = reg->park;
	pthread_mutex_unlock(&reg->lock);
}

void tmemd_clients_set_migrate(struct tmemd_clients *reg, const struct tmemd_migrate_hooks *h,
			       void *ctx)
{
	reg->migrate = h;
	reg->migrate_ctx = ctx;
}

int tmemd_clients_pull(struct tmemd_clients *reg, const char *name,
		       const struct tmem_ident *ident)
{
	return reg->migrate ? reg->migrate->pull(reg->migrate_ctx, name, ident) : -ENOENT;
}

int tmemd_clients_park_for_peer(struct tmemd_client *c)
{
	struct tmemd_clients *reg = c->reg;
	struct timespec ts;

	if (reg->migrate)
		return reg->migrate->park(reg->migrate_ctx, c);
	/* No migration here: parked all the same, so that the client can
	 * come back to this tmemd for them (a peer never takes them). */
	clock_gettime(CLOCK_REALTIME, &ts);
	return tmemd_client_park(c, (uint64_t)ts.tv_sec, NULL);
}

bool tmemd_clients_may_pull(const struct tmemd_clients *reg)
{
	return reg->migrate && reg->migrate->pull;
}

void tmemd_clients_claimed(struct tmemd_clients *reg, const char *name)
{
	if (reg->migrate)
		reg->migrate->claimed(reg->migrate_ctx, name);
	else
		tmemd_clients_forget_parked(reg, name);
}

bool tmemd_clients_held(struct tmemd_clients *reg, const char *name)
{
	return reg->migrate && reg->migrate->held(reg->migrate_ctx, name);
}
