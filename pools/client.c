/* SPDX-License-Identifier: MIT */
/* Clients: creation, teardown and the page charge. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

int client_alloc(struct tmem_store *s, const char *name,
		 struct tmem_client **out)
{
	struct tmem_client *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	if (pthread_mutex_init(&c->lru_lock, NULL) != 0) {
		free(c);
		return -ENOMEM;
	}
	c->store = s;
	c->id = s->next_client_id++;
	strcpy(c->name, name); /* length checked by the caller */
	c->lru_head = c->lru_tail = TMEM_NIL;
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

static bool do_name_taken(struct tmem_store *s, const char *name)
{
	if (strcmp(s->shared_client->name, name) == 0)
		return true;
	for (struct tmem_client *c = s->clients; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return true;
	return false;
}

int tmem_client_create(struct tmem_store *s, const char *name,
		       struct tmem_client **out)
{
	struct tmem_client *c;
	int ret;

	if (!s || !out || !name_ok(name))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	if (do_name_taken(s, name)) {
		ret = -EEXIST;
		goto out;
	}
	ret = client_alloc(s, name, &c);
	if (ret < 0)
		goto out;
	c->next = s->clients;
	if (s->clients)
		s->clients->prev = c;
	s->clients = c;
	s->nr_clients++;
	*out = c;
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void tmem_client_destroy(struct tmem_client *c)
{
	struct tmem_store *s;

	if (!c || c == c->store->shared_client)
		return;
	s = c->store;
	pthread_mutex_lock(&s->lock);
	for (int32_t i = 0; i < (int32_t)TMEM_MAX_POOLS_PER_CLIENT; i++)
		if (atomic_load_explicit(&c->slots[i].ref, memory_order_relaxed))
			do_slot_drop(c, i);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->nr_clients--;
	pthread_mutex_unlock(&s->lock);
	client_free(c);
}

uint32_t tmem_client_id(const struct tmem_client *c)
{
	return c ? c->id : 0;
}

const char *tmem_client_name(const struct tmem_client *c)
{
	return c ? c->name : NULL;
}

struct tmem_client *tmem_store_shared_client(struct tmem_store *s)
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

void tmem_client_page_counts(const struct tmem_client *c,
			     struct tmem_page_counts *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	out->ephemeral = atomic_load_explicit(&c->charged[TMEM_KIND_EPH],
					      memory_order_relaxed);
	out->persistent = atomic_load_explicit(&c->charged[TMEM_KIND_PERS],
					       memory_order_relaxed);
}
