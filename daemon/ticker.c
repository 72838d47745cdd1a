/* SPDX-License-Identifier: MIT */
/* Background housekeeping threads (ticker.h). */
#include <errno.h>
#include <time.h>

#include "ticker.h"

static void *ticker_main(void *arg)
{
	struct tmemd_ticker *t = arg;
	struct timespec at;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		if (!t->kicked) {
			clock_gettime(CLOCK_MONOTONIC, &at);
			at.tv_sec += t->period_ms / 1000;
			at.tv_nsec += (long)(t->period_ms % 1000) * 1000000L;
			if (at.tv_nsec >= 1000000000L) {
				at.tv_sec++;
				at.tv_nsec -= 1000000000L;
			}
			(void)pthread_cond_timedwait(&t->wake, &t->lock, &at);
			if (t->stop)
				break;
		}
		t->kicked = false;
		pthread_mutex_unlock(&t->lock);
		t->fn(t->ctx);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int tmemd_ticker_start(struct tmemd_ticker *t, unsigned period_ms, void (*fn)(void *ctx),
		       void *ctx)
{
	pthread_condattr_t ca;
	int rc;

	t->fn = fn;
	t->ctx = ctx;
	t->period_ms = period_ms;
	t->stop = t->kicked = false;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->wake, &ca);
	pthread_condattr_destroy(&ca);
	rc = pthread_create(&t->thread, NULL, ticker_main, t);
	t->running = rc == 0;
	if (rc) {
		pthread_cond_destroy(&t->wake);
		pthread_mutex_destroy(&t->lock);
	}
	return -rc;
}

void tmemd_ticker_kick(struct tmemd_ticker *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->lock);
	t->kicked = true;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
}

void tmemd_ticker_stop(struct tmemd_ticker *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	t->running = false;
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
}
