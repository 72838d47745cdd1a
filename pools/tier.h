/* SPDX-License-Identifier: MIT */
/*
 * tier.c and spill.c: the host tier under the pool (issue 29).  Cold
 * persistent pages move there, still encoded as stored, and a get reads
 * them back; the format is durable.h's (ZENT_TIER, struct
 * tmem_tier_hdr), the protocol pools/COMMIT.md's "Host tier".  Used by
 * zs.c (a tier entry's length, map, free, recovery), object.c (a page
 * that changes while a spill copies it), guest_ops.c (read-back), stats.c.
 *
 * Space is a bitmap of TMEM_TIER_UNIT-byte units after the header,
 * derived: recovery rebuilds it from the entries that name the tier.
 * Units are handed out next-fit from a cursor, so the objects of one
 * spill land side by side and go out in one write.
 *
 * Lock order: spill_lock (one spill at a time), then the store's locks
 * (COMMIT.md), then lock, innermost (after alloc_lock).
 */
#ifndef TMEM_POOLS_TIER_H
#define TMEM_POOLS_TIER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "durable.h"

struct tmem_store;
struct tmem_store_config;

#define TMEM_TIER_BATCH 1024u   /* pages copied and written at a time: some 4 MiB */
#define TMEM_TIER_GROUP 4096u   /* pages one fdatasync covers at most: 16 MiB raw */
#define TMEM_LAT_BUCKETS 128u   /* latency histogram: bucket b covers [2^(b/4), 2^((b+1)/4)) ns */

/* A latency histogram, relaxed atomics (p50/p99 from it: lat_quantile()). */
struct tmem_lat_hist {
	_Atomic uint64_t b[TMEM_LAT_BUCKETS];
};
void lat_record(struct tmem_lat_hist *h, uint64_t ns);
/* The q-quantile (0 < q < 1) in ns, the bucket's upper bound; 0 when empty. */
uint64_t lat_quantile(const struct tmem_lat_hist *h, double q);

/* A unit range freed while a read-back may be reading it (see readers). */
struct tier_extent {
	uint64_t unit, n;
};

/* s->spill_mark[page]: a page a spill has copied and not yet committed
 * is COPIED; a removal or a replace of it on the way makes it DIRTY, and
 * the spill then leaves it in RAM (its descriptor, even its handle, may
 * be someone else's by the commit).  Set and read under the page's pool
 * lock, cleared when the spill ends. */
enum { SPILL_MARK_NONE, SPILL_MARK_COPIED, SPILL_MARK_DIRTY };

struct tmem_tier {
	int fd;                    /* not owned; -1: no tier */
	uint64_t bytes;            /* header included */
	uint64_t nunits;
	struct tmem_tier_hdr hdr;  /* as on the device */
	pthread_mutex_t spill_lock;
	/* spill.c's struct staging: the victims of the two groups on their
	 * way (TMEM_TIER_GROUP each) and the copies of one batch's pages
	 * (TMEM_TIER_BATCH, some 4 MiB), made on the first spill and kept: a
	 * new one each time would be faulted in each time; spill_lock. */
	void *staging;
	pthread_mutex_t lock;      /* the fields down to pending */
	uint64_t *map;             /* 1 = unit in use */
	uint64_t used_units;
	uint64_t cursor;           /* next-fit */
	uint32_t readers;          /* read-backs in progress, without a pool lock */
	struct tier_extent *pending; /* freed while readers > 0 */
	uint32_t nr_pending, cap_pending;
	_Atomic uint32_t spilling; /* pages marked in s->spill_mark */
	/* Counters, relaxed. */
	_Atomic uint64_t pages;        /* pages in the tier now */
	_Atomic uint64_t obj_bytes;    /* their encoded bytes */
	_Atomic uint64_t spilled;      /* pages ever written and committed */
	_Atomic uint64_t spilled_bytes;
	_Atomic uint64_t writes;       /* write calls */
	_Atomic uint64_t write_errors; /* spills that failed: pages stayed in RAM */
	_Atomic uint64_t aborted;      /* pages that changed during their spill */
	_Atomic uint64_t readbacks;
	_Atomic uint64_t read_errors;
	_Atomic uint64_t spill_nsec;   /* time in spills: copy, write, sync, commit */
	int last_error;                /* -errno of the last failed spill; lock */
	/* After the device said ENOSPC: no spill is tried before this
	 * (CLOCK_MONOTONIC ns) unless units are freed; lock. */
	uint64_t full_until;
	struct tmem_lat_hist lat;
};

/* ---- tier.c -------------------------------------------------------------- */
/*
 * Before recovery: check the tier named by cfg against the arena (s->hdr)
 * and build its runtime state; format a blank one.  adopted: the arena
 * came from the file (its entries may name the tier).  -EBADMSG with a
 * sentence in why when the tier is damaged, of another arena or size, or
 * missing while the arena names it; -errno of the I/O.
 */
int tier_open(struct tmem_store *s, const struct tmem_store_config *cfg, bool adopted,
	      char *why, size_t why_len);
void tier_close(struct tmem_store *s);
static inline bool tier_on(const struct tmem_tier *t)
{
	return t->fd >= 0;
}
/* Units for len encoded bytes and their header. */
static inline uint64_t tier_units(uint32_t len)
{
	return (TMEM_ZS_HDR + len + TMEM_TIER_UNIT - 1) / TMEM_TIER_UNIT;
}
/* Lock held: n units, next-fit; -ENOSPC. */
int do_tier_alloc(struct tmem_tier *t, uint64_t n, uint64_t *unit);
/* Lock held: give units back (deferred while a read-back runs). */
void do_tier_free(struct tmem_tier *t, uint64_t unit, uint64_t n);
/* Any thread: free the object a ZENT_TIER entry names (alloc_lock held). */
void tier_free_entry(struct tmem_store *s, uint64_t ent);
/* Recovery: claim the units entry ent names; false when out of range,
 * malformed or claimed already (the page is dropped). */
bool tier_recover_claim(struct tmem_store *s, uint64_t ent);
/* The object of entry ent for page into buf (TMEM_ZS_HDR + its length
 * bytes); checks that its header names page and its hash: 0, or -EIO. */
int tier_read_obj(struct tmem_tier *t, uint64_t ent, uint32_t page, void *buf);
/* The same with preadv2() flags: with RWF_NOWAIT, -EAGAIN when the bytes
 * are not all in the page cache (nothing was decided). */
int tier_read_obj_flags(struct tmem_tier *t, uint64_t ent, uint32_t page, void *buf, int flags);
/* Decode a page read back: ent's bytes at obj + TMEM_ZS_HDR into dst; 0 or -EIO. */
int tier_decode(uint64_t ent, const void *obj, void *dst);
/* A read-back without the pool lock: pin before dropping it, unpin after. */
void tier_pin(struct tmem_tier *t);
void tier_unpin(struct tmem_tier *t);
/* Pool lock held: page is being removed or replaced (a spill in flight
 * must not commit it). */
void tier_page_changed(struct tmem_store *s, uint32_t page);

static inline bool ent_is_tier(uint64_t e)
{
	return e & ZENT_TIER;
}

#endif /* TMEM_POOLS_TIER_H */
