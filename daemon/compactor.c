/* SPDX-License-Identifier: MIT */
/* Background compaction (compactor.h). */
#include "compactor.h"

#define COMPACT_PERIOD_MS 1000

static void compact(void *store)
{
	(void)store_compact(store); /* counted in the store's stats */
}

int tmemd_compactor_start(struct tmemd_compactor *k, struct tmem_store *store)
{
	return tmemd_ticker_start(&k->ticker, COMPACT_PERIOD_MS, compact, store);
}

void tmemd_compactor_stop(struct tmemd_compactor *k)
{
	tmemd_ticker_stop(&k->ticker);
}
