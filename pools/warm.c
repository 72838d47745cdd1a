/* SPDX-License-Identifier: MIT */
/*
 * Free frames faulted in ahead of the puts.  A frame given back to the
 * host (release.c) or never touched takes a page fault on its first
 * touch, and in a file a fallocate before it.  Taken by a put, that cost
 * lands on a ring worker, in the guest's latency, and after an idle
 * spell every put of a burst pays it.  So when the resident free frames
 * fall under half the mark (cfg->warm_frames), a thread of the store's
 * own takes a batch of released or untouched frames off the stacks (in
 * transit, as a release does: no put can be handed one), faults them in
 * without alloc_lock, and pushes them on the free stack.  A put that
 * outruns it takes its frame cold, as before, and counts it.
 * store_release_cold()'s keep lowers the mark, so the two never undo each
 * other's work: nothing is warmed under pressure (keep 0).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

/* Frames faulted in per pass: 8 MiB. */
#define WARM_BATCH 2048u
/* After a fault-in failed (a full tmpfs), the next try waits this long. */
#define WARM_RETRY_NS 100000000L

static void wait_retry(struct tmem_store *s)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += WARM_RETRY_NS;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	(void)pthread_cond_timedwait(&s->warm.cond, &s->alloc_lock, &until);
}

static void *warm_main(void *arg)
{
	struct tmem_store *s = arg;
	struct tmem_warm *w = &s->warm;

	pthread_mutex_lock(&s->alloc_lock);
	while (!w->stop) {
		uint32_t n;
		bool ok;

		/* Only when a put asks: nothing is warmed before it is used. */
		if (!s->frames.warm_asked) {
			pthread_cond_wait(&w->cond, &s->alloc_lock);
			continue;
		}
		n = frames_take_warm(&s->frames, w->batch, WARM_BATCH);
		if (n == 0)
			continue;
		pthread_mutex_unlock(&s->alloc_lock);
		ok = frames_each_run(&s->frames, w->batch, n, frames_populate) == 0;
		pthread_mutex_lock(&s->alloc_lock);
		frames_put_warm(&s->frames, w->batch, n, ok);
		pthread_cond_broadcast(&s->transit_cond);
		if (!ok && !w->stop)
			wait_retry(s);
	}
	pthread_mutex_unlock(&s->alloc_lock);
	return NULL;
}

/* With cfg->warm_frames, once the frames are set up (and recovered). */
int warm_start(struct tmem_store *s)
{
	struct tmem_warm *w = &s->warm;
	pthread_condattr_t ca;
	int ret;

	if (!s->cfg.warm_frames)
		return 0;
	w->batch = malloc(WARM_BATCH * sizeof(*w->batch));
	if (!w->batch)
		return -ENOMEM;
	pthread_condattr_init(&ca);
	ret = -pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (ret < 0)
		goto out_free;
	s->frames.warm_high = s->cfg.warm_frames;
	ret = -pthread_create(&w->thread, NULL, warm_main, s);
	if (ret < 0) {
		pthread_cond_destroy(&w->cond);
		goto out_free;
	}
	w->running = true;
	pthread_mutex_lock(&s->alloc_lock);
	s->frames.warm_cond = &w->cond;
	pthread_mutex_unlock(&s->alloc_lock);
	return 0;
out_free:
	free(w->batch);
	w->batch = NULL;
	return ret;
}

void warm_stop(struct tmem_store *s)
{
	struct tmem_warm *w = &s->warm;

	if (w->running) {
		pthread_mutex_lock(&s->alloc_lock);
		w->stop = true;
		s->frames.warm_cond = NULL;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&s->alloc_lock);
		pthread_join(w->thread, NULL);
		pthread_cond_destroy(&w->cond);
		w->running = false;
	}
	free(w->batch);
	w->batch = NULL;
}

/* alloc_lock held: the mark follows what a release keeps resident. */
void do_warm_set_mark(struct tmem_store *s, uint32_t keep)
{
	s->frames.warm_high = keep < s->cfg.warm_frames ? keep : s->cfg.warm_frames;
}
