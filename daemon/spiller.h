/* SPDX-License-Identifier: MIT */
/*
 * The host tier, on the daemon's side (issue 29): opening the file or
 * block device tmemd.conf's spill names, and a thread that keeps the
 * pool's free reserve by moving persistent pages there in the background
 * (policy/ tmem_policy_spill_reserve()), so that a put seldom has to
 * spill (or wait for a spill) itself.  pools/ does the moving and its
 * crash-consistency (pools/COMMIT.md, "Host tier"); a failed spill is
 * logged here, with the pages left in RAM.
 */
#ifndef TMEMD_SPILLER_H
#define TMEMD_SPILLER_H

#include <stdbool.h>
#include <stdint.h>

#include "tmem_policy.h"
#include "ticker.h"
#include "tmem_store.h"

/*
 * Open path for the tier: read-write, created 0600 if missing, locked
 * against a second tmemd.  discard: its header is zeroed first (with
 * --discard-arena: the tier belonged to the arena thrown away).  Returns
 * the fd, or -errno with a sentence in why.
 */
int tmemd_spill_open(const char *path, bool discard, char *why, size_t why_len);

struct tmemd_spiller {
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmemd_ticker ticker;
	uint64_t errors_seen;       /* the tier's write_errors already logged */
};

/* Nothing runs without a tier (store_tier_info().configured). */
int tmemd_spiller_start(struct tmemd_spiller *sp, struct tmem_store *store,
			struct tmem_policy *policy);
/* Run a pass now (a lower target, a full pool). */
void tmemd_spiller_kick(struct tmemd_spiller *sp);
void tmemd_spiller_stop(struct tmemd_spiller *sp);
static inline bool tmemd_spiller_running(const struct tmemd_spiller *sp)
{
	return sp->ticker.running;
}

#endif /* TMEMD_SPILLER_H */
