/* SPDX-License-Identifier: MIT */
/*
 * A background thread that calls fn(ctx) every period_ms, and at once
 * when kicked: the daemon's housekeepers that may block on the store or
 * a device (compaction, the host tier's spiller) and so must not run on
 * the event loop or a ring worker.
 */
#ifndef TMEMD_TICKER_H
#define TMEMD_TICKER_H

#include <pthread.h>
#include <stdbool.h>

struct tmemd_ticker {
	void (*fn)(void *ctx);
	void *ctx;
	unsigned period_ms;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool running, stop, kicked;
};

/* 0, or -errno when the thread cannot start. */
int tmemd_ticker_start(struct tmemd_ticker *t, unsigned period_ms, void (*fn)(void *ctx),
		       void *ctx);
/* Run fn now (once more, if it is running). */
void tmemd_ticker_kick(struct tmemd_ticker *t);
/* Stops and joins the thread; accepts one that never started. */
void tmemd_ticker_stop(struct tmemd_ticker *t);

#endif
