/* SPDX-License-Identifier: MIT */
/*
 * Background compaction of the store's compressed pages: a thread that
 * runs store_compact() once a second, so fragmentation left by
 * flushes and evictions is given back without waiting for a put to run
 * out of room (pools/ also compacts then, and on shrink).  It costs a
 * scan of the size classes' part-filled spans when there is nothing to
 * move.
 */
#ifndef TMEMD_COMPACTOR_H
#define TMEMD_COMPACTOR_H

#include "ticker.h"

#include "tmem_store.h"

struct tmemd_compactor {
	struct tmemd_ticker ticker;
};

/* 0, or -errno when the thread cannot start (tmemd runs without it). */
int tmemd_compactor_start(struct tmemd_compactor *k, struct tmem_store *store);
/* Stops and joins the thread; accepts one that never started. */
void tmemd_compactor_stop(struct tmemd_compactor *k);

#endif
