/* SPDX-License-Identifier: MIT */
/* Background compaction (compactor.h). */
#include <errno.h>
#include <time.h>

#include "compactor.h"

#define COMPACT_PERIOD_SEC 1

static void *compactor_main(void *arg)
{
	struct tmemd_compactor *k = arg;
	struct timespec at;

	pthread_mutex_lock(&k->lock);
	while (!k->stop) {
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_sec += COMPACT_PERIOD_SEC;
		if (pthread_cond_timedwait(&k->wake, &k->lock, &at) != ETIMEDOUT)
			continue;
		pthread_mutex_unlock(&k->lock);
		(void)store_compact(k->store); /* counted in the store's stats */
		pthread_mutex_lock(&k->lock);
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

int tmemd_compactor_start(struct tmemd_compactor *k, struct tmem_store *store)
{
	pthread_condattr_t ca;
	int rc;

	k->store = store;
	k->stop = false;
	pthread_mutex_init(&k->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->wake, &ca);
	pthread_condattr_destroy(&ca);
	rc = pthread_create(&k->thread, NULL, compactor_main, k);
	k->running = rc == 0;
	return -rc;
}

void tmemd_compactor_stop(struct tmemd_compactor *k)
{
	if (!k->running)
		return;
	pthread_mutex_lock(&k->lock);
	k->stop = true;
	pthread_cond_signal(&k->wake);
	pthread_mutex_unlock(&k->lock);
	pthread_join(k->thread, NULL);
	k->running = false;
	pthread_cond_destroy(&k->wake);
	pthread_mutex_destroy(&k->lock);
}
