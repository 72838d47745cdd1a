/* SPDX-License-Identifier: MIT */
/*
 * policy/ internals shared by its files.  Not installed, not included
 * outside policy/.
 *
 * Lock order (outermost first):
 *   policy->resize_lock   one resize at a time
 *   policy->lock          client list, pclient->users/removing, defaults
 *   (pools/ locks)
 * policy->lock is held only for short scans of the client list, during
 * which the only pools/ call made is store_client_page_counts(), a read of
 * counters.  Evictions and puts call pools/ with no policy lock held; an
 * evictor pins its victim with pclient->users instead, and
 * tmem_policy_client_remove() waits for the pins to go.  A resize holds
 * only resize_lock (which nothing else takes) across its evictions and
 * store_resize().
 *
 * Settings live in atomics so that the put path reads them without a
 * lock; a put racing with a settings change sees the old or the new
 * value of each field.
 */
#ifndef TMEM_POLICY_INTERNAL_H
#define TMEM_POLICY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "tmem_policy.h"

/* Pages taken from one victim before the client list is scanned again. */
#define POLICY_EVICT_BATCH 16u

struct tmem_pclient {
	struct tmem_policy *policy;
	struct tmem_client *client;   /* owned, except for policy->shared */
	struct tmem_pclient *next;    /* policy->clients; under policy->lock */
	unsigned int users;           /* evictors pinning it; under policy->lock */
	bool removing;                /* unlinked, waiting for users; under policy->lock */
	_Atomic uint64_t ephemeral_max;
	_Atomic uint64_t persistent_max;
	_Atomic uint64_t spill_max;   /* pages; the store holds it in bytes */
	_Atomic uint32_t weight;
	struct tmem_compress compress; /* under policy->lock; applied to client */
	atomic_bool frozen;
};

struct tmem_policy {
	struct tmem_store *store;
	pthread_mutex_t lock;
	pthread_cond_t unpinned;      /* a removing pclient lost its last user */
	pthread_mutex_t resize_lock;
	struct tmem_pclient *clients; /* every client, policy->shared included */
	/* The store's built-in shared client, weighted like a default client. */
	struct tmem_pclient shared;
	struct tmem_client_settings defaults; /* under lock */
	uint64_t low_water_cfg;       /* 0 = 1/64 of the arena, >= 16 pages */
	atomic_flag refilling;        /* one inline refill at a time */
	/* For destroying half-built policies. */
	bool lock_ok, cond_ok, resize_lock_ok;
};

/* settings.c */
int policy_settings_check(const struct tmem_client_settings *s);
void pclient_store_settings(struct tmem_pclient *pc,
			    const struct tmem_client_settings *s);

/* evict.c */
uint64_t policy_low_water(const struct tmem_policy *policy,
			  uint64_t total_pages);
uint64_t policy_evict_weighted(struct tmem_policy *policy, uint64_t want);
uint64_t policy_evict_own(struct tmem_pclient *pc, uint64_t want);
uint64_t policy_refill(struct tmem_policy *policy, bool inline_put);

/* spill.c: up to pages persistent pages to the host tier, then a
 * compaction; store_spill()'s return.  _inline: a put's small batch,
 * true when something moved. */
int64_t policy_spill(struct tmem_policy *policy, uint64_t pages);
bool policy_spill_inline(struct tmem_policy *policy);

#endif /* TMEM_POLICY_INTERNAL_H */
