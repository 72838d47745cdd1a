/* SPDX-License-Identifier: MIT */
/*
 * policy/: who may store what when host memory is scarce.  Per-client
 * caps, weights, freeze, admission of puts, weighted fair eviction and
 * resizing the arena.  Like pools/, it does no I/O and never logs.
 *
 * The daemon sends every PUT_PAGE through tmem_policy_put(); the other
 * guest ops go straight to pools/ through tmem_pclient_store_client().
 */
#ifndef TMEM_POLICY_H
#define TMEM_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "tmem_proto.h"
#include "tmem_store.h"

struct tmem_policy;
struct tmem_pclient;

#define TMEM_DEFAULT_WEIGHT 100
#define TMEM_MAX_WEIGHT 10000

struct tmem_client_settings {
	uint64_t ephemeral_max;  /* pages; TMEM_NO_CAP for none */
	uint64_t persistent_max; /* pages; TMEM_NO_CAP for none */
	/* Bytes as stored in the host tier, in pages of 4 KiB; TMEM_NO_CAP
	 * for none (store_client_set_spill_max()). */
	uint64_t spill_max;
	uint32_t weight;         /* 1..TMEM_MAX_WEIGHT */
	struct tmem_compress compress; /* default lz4, as zswap */
	bool frozen;
};

struct tmem_policy_config {
	struct tmem_client_settings defaults;
	/* Free pages to keep in reserve so that most puts do not evict
	 * inline; 0 picks a default (1/64 of the arena, at least 16 pages). */
	uint64_t low_water_pages;
};

/* Fills cfg with the built-in defaults: no caps, weight 100. */
void tmem_policy_config_defaults(struct tmem_policy_config *cfg);

int tmem_policy_create(struct tmem_store *store,
		       const struct tmem_policy_config *cfg,
		       struct tmem_policy **out);
/* Accepts NULL.  Clients must have been removed first. */
void tmem_policy_destroy(struct tmem_policy *policy);

/*
 * Register a client: creates its tmem_client in the store.  settings may
 * be NULL for the defaults.  -EINVAL on bad settings.
 */
int tmem_policy_client_add(struct tmem_policy *policy, const char *name,
			   const struct tmem_client_settings *settings,
			   struct tmem_pclient **out);
/*
 * The same for a client that may have been recovered from a restarted
 * store: with an identity, a detached store client of that name and
 * identity is claimed back with its pools and pages (*resumed = true);
 * otherwise a new one is made, a detached namesake going first.  ident
 * NULL never claims; resumed NULL never claims either, only records the
 * identity (a transport whose clients cannot resume yet).
 */
int tmem_policy_client_attach(struct tmem_policy *policy, const char *name,
			      const struct tmem_ident *ident,
			      const struct tmem_client_settings *settings,
			      struct tmem_pclient **out, bool *resumed);
/* Destroys the store client too (all its private pages go).  Accepts NULL. */
void tmem_policy_client_remove(struct tmem_pclient *pc);
/* tmemd is stopping, not the client leaving: the store client is left
 * detached, with its pages, for the next start to claim.  Accepts NULL. */
void tmem_policy_client_detach(struct tmem_pclient *pc);
struct tmem_client *tmem_pclient_store_client(struct tmem_pclient *pc);

int tmem_policy_client_set(struct tmem_pclient *pc,
			   const struct tmem_client_settings *settings);
void tmem_policy_client_get(const struct tmem_pclient *pc,
			    struct tmem_client_settings *out);

/* Changes the defaults for clients added later.  -EINVAL on bad values. */
int tmem_policy_set_defaults(struct tmem_policy *policy,
			     const struct tmem_client_settings *settings);
/*
 * Lowering a cap below a client's current usage evicts nothing at once:
 * its next ephemeral put evicts its own oldest pages down to the cap,
 * and its persistent puts are refused until it flushes below the cap.
 * The shared client (owner of shared pools' pages) is weighted with the
 * default weight for eviction and has no caps.
 */

/*
 * A frozen client's put removes any older page at that handle (through
 * store_discard_page(), so it is not counted as a guest flush_page)
 * before it returns 0: put-put-get coherency.  An ephemeral put over the client's cap
 * evicts the client's own oldest pages and stores; with a cap of 0 it
 * is refused.  A put into a full arena evicts ephemeral pages, anyone's,
 * by weight; it is refused (full) only when nothing evictable is left.
 *
 * Admit and store one page.  Returns 1 stored, 0 refused (frozen, over
 * the persistent cap, or no room even after evicting every evictable
 * ephemeral page), or -errno from pools/.  Counts the refusal reason.
 */
int tmem_policy_put(struct tmem_pclient *pc, int32_t pool_id,
		    const struct tmem_oid *oid, uint32_t index,
		    const void *src);

/*
 * Resize the arena.  Growing is immediate; shrinking evicts ephemeral
 * pages as needed and returns -EBUSY, changing nothing, when the
 * persistent pages alone exceed new_pages.
 */
int tmem_policy_resize(struct tmem_policy *policy, uint64_t new_pages);

/*
 * The elastic target (policy/target.c): at most pages frames in use from
 * now on, 0 for the whole arena.  Lowering it evicts ephemeral pages
 * (weighted) and compacts until the frames in use fit; *evicted (may be
 * NULL) gets the pages evicted.  -EBUSY when persistent (or busy) pages
 * alone do not fit: the target holds anyway, so persistent puts are
 * refused until it rises (or, with a host tier, move pages there, and
 * tmem_policy_spill_reserve() meets the target), and nothing stored is
 * lost.
 */
int tmem_policy_set_target(struct tmem_policy *policy, uint64_t pages,
			   uint64_t *evicted);

/*
 * Evicts ephemeral pages until free pages reach the low-water mark.
 * When the reserve is short it evicts at least a small batch (16 pages),
 * so the puts that follow need not evict.  Puts call this themselves;
 * the daemon may also call it from an idle moment.
 */
void tmem_policy_refill_reserve(struct tmem_policy *policy);

/*
 * The host tier (pools/ store_spill()): when the frames in use are over
 * the target (tmem_policy_set_target()) or leave less than the low-water
 * mark free, and no ephemeral page is left to evict, moves persistent
 * pages there, as many as are over (compressed pages free less than a
 * frame each: call again until it returns 0).  Blocks on the tier's
 * device: for the daemon's spiller thread, not a ring worker or the event
 * loop.  Returns the pages moved, 0 when none needed to, or
 * store_spill()'s -errno (-ENODEV without a tier, -ENOSPC the tier full,
 * a write error).
 */
int64_t tmem_policy_spill_reserve(struct tmem_policy *policy);

/*
 * Added by policy/:
 *
 * The low-water mark now in effect, in pages: the configured value or
 * the default, never more than half the current arena.
 */
uint64_t tmem_policy_low_water(struct tmem_policy *policy);

/* Sets or clears only the frozen flag (tmemctl freeze/thaw).  -EINVAL on NULL. */
int tmem_policy_freeze(struct tmem_pclient *pc, bool frozen);

#endif /* TMEM_POLICY_H */
