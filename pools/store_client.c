/* SPDX-License-Identifier: MIT */
/* Clients: creation, teardown and the page charge. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "short_lock.h"
#include "internal.h"

int client_alloc(struct tmem_store *s, const char *name,
		 struct tmem_client **out)
{
	struct tmem_client *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	if (short_lock_init(&c->lru_lock)) {
		free(c);
		return -ENOMEM;
	}
	c->store = s;
	c->id = s->next_client_id++;
	strcpy(c->name, name); /* length checked by the caller */
	c->lru_head = c->lru_tail = TMEM_NIL;
	c->plru_head = c->plru_tail = TMEM_NIL;
	atomic_store_explicit(&c->spill_max, TMEM_NO_CAP, memory_order_relaxed);
	atomic_store_explicit(&c->compress, compress_mode(&s->cfg.compress),
			      memory_order_relaxed);
	atomic_fetch_add_explicit(&s->struct_bytes, sizeof(*c), memory_order_relaxed);
	*out = c;
	return 0;
}

void client_free(struct tmem_client *c)
{
	if (!c)
		return;
	atomic_fetch_sub_explicit(&c->store->struct_bytes, sizeof(*c),
				  memory_order_relaxed);
	pthread_mutex_destroy(&c->lru_lock);
	free(c);
}

static bool name_ok(const char *name)
{
	size_t n;

	if (!name)
		return false;
	n = strnlen(name, TMEM_CLIENT_NAME_MAX);
	return n > 0 && n < TMEM_CLIENT_NAME_MAX;
}

static struct tmem_client *do_client_find(struct tmem_store *s, const char *name)
{
	for (struct tmem_client *c = s->clients; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

int do_client_rec_new(struct tmem_client *c, const struct tmem_ident *ident)
{
	struct tmem_store *s = c->store;
	struct tmem_client_rec *r;
	uint32_t i;

	if (s->crec_free != TMEM_NIL) {
		i = s->crec_free;
		s->crec_free = s->crec[i].free_next;
	} else if (s->hdr->client_bump < TMEM_MAX_CLIENTS) {
		i = s->hdr->client_bump;
		relaxed_set(&s->hdr->client_bump, i + 1);
	} else {
		return -ENOSPC;
	}
	r = &s->crec[i];
	r->id = c->id;
	memset(r->name, 0, sizeof(r->name));
	strcpy(r->name, c->name);
	memcpy(r->ident, ident->b, sizeof(r->ident));
	rec_set_state(&r->state, TMEM_REC_LIVE);
	c->rec = r;
	return 0;
}

void do_client_list_add(struct tmem_client *c)
{
	struct tmem_store *s = c->store;

	c->prev = NULL;
	c->next = s->clients;
	if (s->clients)
		s->clients->prev = c;
	s->clients = c;
	s->nr_clients++;
}

/* store->lock held: every pool of c goes, then c leaves the list.  The
 * record is marked DYING first, so that one store drops everything c
 * owns for recovery (COMMIT.md). */
static void do_client_destroy(struct tmem_client *c)
{
	struct tmem_store *s = c->store;

	if (c->rec)
		rec_set_state(&c->rec->state, TMEM_REC_DYING);
	do_client_set_detached(c, false);
	for (int32_t i = 0; i < (int32_t)TMEM_MAX_POOLS_PER_CLIENT; i++)
		if (atomic_load_explicit(&c->slots[i].ref, memory_order_relaxed))
			do_slot_drop(c, i);
	/* Its slots' counts are in c->ops now; the store keeps them. */
	counters_retire(&s->gone_ops[TMEM_KIND_EPH], &c->ops[TMEM_KIND_EPH]);
	counters_retire(&s->gone_ops[TMEM_KIND_PERS], &c->ops[TMEM_KIND_PERS]);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->nr_clients--;
	if (c->rec) {
		rec_set_state(&c->rec->state, TMEM_REC_FREE);
		c->rec->free_next = s->crec_free;
		s->crec_free = (uint32_t)(c->rec - s->crec);
	}
}

int store_client_create_ident(struct tmem_store *s, const char *name,
			      const struct tmem_ident *ident,
			      struct tmem_client **out)
{
	static const struct tmem_ident none;
	struct tmem_client *c, *old;
	int ret;

	if (!s || !out || !name_ok(name))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	old = do_client_find(s, name);
	if (old && old->detached) {
		/* A newcomer with a dead client's name starts fresh. */
		do_client_destroy(old);
		client_free(old);
		atomic_fetch_add_explicit(&s->clients_expired, 1, memory_order_relaxed);
	} else if (old || strcmp(s->shared_client->name, name) == 0) {
		ret = -EEXIST;
		goto out;
	}
	ret = client_alloc(s, name, &c);
	if (ret < 0)
		goto out;
	ret = do_client_rec_new(c, ident ? ident : &none);
	if (ret < 0) {
		client_free(c);
		goto out;
	}
	do_client_list_add(c);
	*out = c;
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int store_client_create(struct tmem_store *s, const char *name,
			struct tmem_client **out)
{
	return store_client_create_ident(s, name, NULL, out);
}

void store_client_destroy(struct tmem_client *c)
{
	struct tmem_store *s;

	if (!c || c == c->store->shared_client)
		return;
	s = c->store;
	pthread_mutex_lock(&s->lock);
	do_client_destroy(c);
	pthread_mutex_unlock(&s->lock);
	client_free(c);
}

int store_client_claim(struct tmem_store *s, const char *name,
		       const struct tmem_ident *ident, struct tmem_client **out)
{
	static const struct tmem_ident none;
	struct tmem_client *c;
	int ret = 0;

	if (!s || !out || !name_ok(name))
		return -EINVAL;
	if (!ident)
		ident = &none;
	pthread_mutex_lock(&s->lock);
	c = do_client_find(s, name);
	if (!c || !c->detached)
		ret = -ENOENT;
	else if (memcmp(c->rec->ident, ident->b, TMEM_IDENT_LEN) != 0)
		ret = -EPERM;
	if (ret == 0) {
		do_client_set_detached(c, false);
		atomic_fetch_add_explicit(&s->clients_reattached, 1, memory_order_relaxed);
		*out = c;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void store_client_detach(struct tmem_client *c)
{
	if (!c || c == c->store->shared_client)
		return;
	pthread_mutex_lock(&c->store->lock);
	do_client_set_detached(c, true);
	pthread_mutex_unlock(&c->store->lock);
}

void store_client_set_ident(struct tmem_client *c, const struct tmem_ident *ident)
{
	struct tmem_store *s = c->store;

	pthread_mutex_lock(&s->lock);
	if (c->rec) {
		memcpy(c->rec->ident + 1, ident->b + 1, TMEM_IDENT_LEN - 1);
		/* The commit: one byte, after the rest (release). */
		__atomic_store_n(&c->rec->ident[0], ident->b[0], __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&s->lock);
}

void store_client_ident(const struct tmem_client *c, struct tmem_ident *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (c && c->rec)
		memcpy(out->b, c->rec->ident, TMEM_IDENT_LEN);
}

int store_for_each_detached(struct tmem_store *s,
			    int (*fn)(const char *, const struct tmem_ident *, void *),
			    void *ctx)
{
	struct tmem_ident id;
	int ret = 0;

	if (!s || !fn)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	for (struct tmem_client *c = s->clients; c && ret == 0; c = c->next) {
		if (!c->detached)
			continue;
		memcpy(id.b, c->rec->ident, TMEM_IDENT_LEN);
		ret = fn(c->name, &id, ctx);
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int store_drop_detached(struct tmem_store *s, const char *name)
{
	struct tmem_client *c, *next;
	int n = 0;

	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	for (c = s->clients; c; c = next) {
		next = c->next;
		if (!c->detached || (name && strcmp(c->name, name) != 0))
			continue;
		do_client_destroy(c);
		client_free(c);
		n++;
	}
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add_explicit(&s->clients_expired, (uint64_t)n, memory_order_relaxed);
	return name && n == 0 ? -ENOENT : n;
}

int store_detached_page_counts(struct tmem_store *s, const char *name,
			       struct tmem_page_counts *out)
{
	struct tmem_client *c;
	int ret = -ENOENT;

	if (!s || !name || !out)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	c = do_client_find(s, name);
	if (c && c->detached) {
		store_client_page_counts(c, out);
		ret = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

uint32_t store_client_id(const struct tmem_client *c)
{
	return c ? c->id : 0;
}

const char *store_client_name(const struct tmem_client *c)
{
	return c ? c->name : NULL;
}

struct tmem_client *store_shared_client(struct tmem_store *s)
{
	return s ? s->shared_client : NULL;
}

/* Charge one page of kind k unless that would pass cap; exact under races. */
bool charge_try(struct tmem_client *c, enum tmem_kind k, uint64_t cap)
{
	uint64_t cur;

	if (cap == TMEM_NO_CAP) {
		atomic_fetch_add_explicit(&c->charged[k], 1, memory_order_relaxed);
		return true;
	}
	cur = atomic_load_explicit(&c->charged[k], memory_order_relaxed);
	do {
		if (cur >= cap)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&c->charged[k], &cur, cur + 1,
							memory_order_relaxed,
							memory_order_relaxed));
	return true;
}

void charge_drop(struct tmem_client *c, enum tmem_kind k)
{
	atomic_fetch_sub_explicit(&c->charged[k], 1, memory_order_relaxed);
}
