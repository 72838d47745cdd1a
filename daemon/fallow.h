/* SPDX-License-Identifier: MIT */
/*
 * The elastic pool: tmem lives in memory the host is not using.  Every
 * tick (a second; a quarter of one while the host is short) it reads
 * what the host can spare (host_mem.h) and sets the pool's target, the
 * frames it may hold in use (tmem_policy_set_target()):
 *
 *   target = min(ceiling, in use + available - reserve)
 *
 * Under pressure (memory stalls of PSI over STALL_PCT of two ticks running, or
 * available memory under the reserve) the target falls at once, by an
 * eighth of what is in use per tick while stalls go on: ephemeral pages
 * go, by the clients' weights; persistent ones are never dropped (puts
 * are refused above the target instead).  It grows back only after
 * grow_delay without pressure, an eighth of the ceiling per tick at
 * most, and only past a hysteresis band, so it does not flap.  Free
 * frames that stay cold for a tick are given back to the host
 * (store_release_cold()).
 *
 * Under Xen, free memory is Xen's: the host hooks (xen/balloon.c) let the
 * pool grow by raising dom0's balloon target, up to dom0's maximum and
 * keeping xen_reserve free, and make it give memory back when the
 * toolstack lowers that target (xl create's autoballoon).
 *
 * Runs on the main thread (a timerfd in the loop), like the control
 * server that reads its figures.
 */
#ifndef TMEMD_FALLOW_H
#define TMEMD_FALLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "host_mem.h"
#include "loop.h"
#include "tmem_policy.h"

/* Why the target fell (reclaim counters). */
enum tmemd_reclaim_cause {
	TMEMD_RECLAIM_PRESSURE,  /* PSI memory stalls */
	TMEMD_RECLAIM_LOW_FREE,  /* available memory under the reserve */
	TMEMD_RECLAIM_TOOLSTACK, /* Xen: dom0's balloon target lowered */
	TMEMD_RECLAIM_ADMIN,     /* tmemctl release */
	TMEMD_NR_RECLAIM_CAUSES
};
const char *tmemd_reclaim_cause_name(enum tmemd_reclaim_cause c);

/* What the Xen transport adds: Xen's free memory and dom0's balloon. */
struct tmemd_fallow_xen {
	uint64_t xen_free;     /* bytes free in Xen */
	uint64_t dom0_now;     /* dom0's memory now (its pages), bytes */
	uint64_t dom0_target;  /* its balloon target, bytes */
	uint64_t dom0_max;     /* its maximum (dom0_mem=...,max:), bytes */
};
struct tmemd_fallow_host_ops {
	int (*sample)(void *ctx, struct tmemd_fallow_xen *out);
	int (*set_dom0_target)(void *ctx, uint64_t bytes);
	/* Where tools read what tmem could free at once (xenstore). */
	void (*publish_freeable)(void *ctx, uint64_t bytes);
};

struct tmemd_fallow_config {
	uint64_t ceiling;        /* bytes: the memory key, auto's host RAM */
	bool autosize;           /* memory = auto */
	uint64_t arena_max;      /* bytes the arena may grow to (auto under Xen) */
	uint64_t reserve;        /* memory-reserve: bytes left to the host */
	uint64_t xen_reserve;    /* xen-reserve: bytes left free in Xen */
	unsigned grow_delay_sec; /* memory-grow-delay */
	/* The arena file (--arena), or NULL: its filesystem's free space
	 * bounds the target too, with room for the descriptors. */
	const char *arena_path;
	/* Optional: a target the persistent pages do not fit under; with a
	 * host tier, the spiller meets it (spiller.h). */
	void (*over_target)(void *ctx);
	void *over_ctx;
};

struct tmemd_fallow_stats {
	uint64_t ceiling, target;        /* bytes */
	uint64_t used, peak, resident;   /* frames in use, their peak, memory held */
	uint64_t released_bytes;         /* free frames given back, ever */
	uint64_t warmed_bytes;           /* free frames faulted in ahead of the puts, ever */
	uint64_t cold_take_bytes;        /* frames a put took not resident, ever */
	uint64_t host_available;         /* last sample, bytes (cgroup-limited or not) */
	bool cgroup_limited, have_psi, pressure;
	double stall_pct;                /* PSI "some" over the last tick */
	uint64_t target_changes;
	uint64_t reclaim_events[TMEMD_NR_RECLAIM_CAUSES];
	uint64_t reclaim_pages[TMEMD_NR_RECLAIM_CAUSES];
	bool refusing_persistent;        /* persistent pages alone fill the target */
	bool spilling;                   /* a host tier takes what is over (over_target) */
	bool xen;
	struct tmemd_fallow_xen x;       /* last Xen sample */
	uint64_t ballooned;              /* bytes tmemd raised dom0's target by, net */
};

struct tmemd_fallow;

int tmemd_fallow_start(const struct tmemd_fallow_config *cfg,
		       struct tmem_store *store, struct tmem_policy *policy,
		       struct tmemd_loop *loop, struct tmemd_fallow **out);
/* Under Xen: the host hooks (NULL to drop them). */
void tmemd_fallow_set_host(struct tmemd_fallow *f, const struct tmemd_fallow_host_ops *ops,
			   void *ctx);
/* A reload: the reserves and grow_delay of cfg apply from the next tick
 * (the ceiling and the arena stay until a restart). */
void tmemd_fallow_reconfigure(struct tmemd_fallow *f, const struct tmemd_fallow_config *cfg);
/* One tick now, as the timer would (tests). */
void tmemd_fallow_tick(struct tmemd_fallow *f);
/* Xen: dom0's balloon target changed (a watch fired): act now. */
void tmemd_fallow_kick(struct tmemd_fallow *f);
/* tmemctl release: lower the target by bytes at once and hold it for
 * grow_delay; under Xen, dom0's balloon target falls as much.  Returns
 * 0 (*released: the bytes given back) or -errno. */
int tmemd_fallow_release(struct tmemd_fallow *f, uint64_t bytes, uint64_t *released);
void tmemd_fallow_stats(const struct tmemd_fallow *f, struct tmemd_fallow_stats *out);
/* Accepts NULL. */
void tmemd_fallow_stop(struct tmemd_fallow *f);

#endif /* TMEMD_FALLOW_H */
