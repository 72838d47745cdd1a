/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The frontend half of the tmem ring (proto/tmem_proto.h), independent
 * of the kernel: tags for requests in flight, data-slot allocation,
 * posting with the req_event hold-off, reaping responses and waiting.
 *
 * Requests carry id = gen << 32 | tag.  A tag indexes tags[]; gen is the
 * connection generation, bumped on every attach and detach, so a
 * response from an old connection, or a waiter that slept across a
 * reconnect, is recognised and dropped.
 *
 * Locking: one lock, the environment's, protects the whole struct
 * (it is an irq-safe spinlock in the kernel).  Page copies into and out
 * of slots happen under it too: the region may be replaced by a
 * reconnect, and a 4 KiB copy is short.  Public functions take the
 * lock; do_*() functions expect it held.
 */
#ifndef SHIM_RING_H
#define SHIM_RING_H

#include "shim_env.h"

#define SHIM_MAX_ENTRIES 256u
#define SHIM_MAX_SLOTS 256u
#define SHIM_MAP_WORDS(n) (((n) + 63u) / 64u)

enum shim_tag_state {
	SHIM_TAG_FREE = 0,
	SHIM_TAG_PENDING,	/* posted, no response yet */
	SHIM_TAG_DONE,		/* response in, waiter has not collected it */
	SHIM_TAG_ABANDONED,	/* waiter timed out; reaper frees on response */
};

struct shim_tag {
	uint32_t state;		/* enum shim_tag_state */
	uint32_t async;		/* nobody waits: the reaper frees it */
	uint32_t slot;		/* data slot held, or TMEM_NO_SLOT */
	int32_t ret;		/* the response's ret, once DONE */
};

/* Event counts; read without the lock, so they are approximate. */
struct shim_ring_stats {
	uint64_t posted;	/* requests written to the ring */
	uint64_t completed;	/* responses reaped */
	uint64_t kicks;		/* doorbells rung */
	uint64_t bad_responses;	/* responses with an unknown id: dropped */
	uint64_t timeouts;	/* waits that gave up */
	uint64_t no_slot;	/* async posts that found no free data slot */
	uint64_t corrupt;	/* rings dropped for a bad rsp_prod */
};

struct shim_ring {
	struct shim_env env;
	/* Tuning; set before the first attach. */
	uint32_t spin_loops;	/* polls before sleeping on the doorbell */
	uint32_t timeout_ms;	/* a request never waits longer */

	/* Everything below is protected by the env lock. */
	void *region;
	struct tmem_ring_hdr *hdr;
	uint32_t nr_entries;
	uint32_t nr_slots;
	uint32_t req_prod_pvt;	/* requests written, not necessarily published */
	uint32_t rsp_cons;	/* responses consumed */
	uint32_t gen;
	uint32_t connected;
	uint32_t frees;		/* tags freed so far: waiters for room watch it */
	uint64_t tag_map[SHIM_MAP_WORDS(SHIM_MAX_ENTRIES)];	/* 1 = in use */
	uint64_t slot_map[SHIM_MAP_WORDS(SHIM_MAX_SLOTS)];	/* 1 = in use */
	struct shim_tag tags[SHIM_MAX_ENTRIES];
	struct shim_ring_stats stats;
};

/* Sets up a disconnected ring.  Defaults: 200 spins, 5000 ms timeout. */
void shim_ring_init(struct shim_ring *r, const struct shim_env *env);
/*
 * Starts using region (tmem_region_size(nr_entries, nr_slots) bytes):
 * writes the frontend's header lines and starts a new generation.
 * Returns 0 or -EINVAL for a geometry the core cannot hold.
 */
int shim_ring_attach(struct shim_ring *r, void *region, uint32_t nr_entries,
		     uint32_t nr_slots);
/*
 * Writes the frontend's header lines (geometry, req_prod = 0) into a
 * region not in use, so it can be handed to a backend before the ring
 * is attached.  attach does this too.
 */
void shim_ring_write_header(void *region, uint32_t nr_entries,
			    uint32_t nr_slots);
/* Stops using the region; every waiter returns -ENOTCONN. */
void shim_ring_detach(struct shim_ring *r);
/* Current generation if connected, 0 if not. */
uint32_t shim_ring_gen(struct shim_ring *r);
/*
 * Reaps responses and wakes waiters.  The event-channel interrupt
 * handler calls it; waiters call it while they spin.
 */
void shim_ring_poll(struct shim_ring *r);
/*
 * Synchronous request on connection gen: copies src (a page) into a
 * slot, or receives the page into dst when the response says 1.  Waits
 * for a free tag/slot and for the response, spinning then sleeping, at
 * most timeout_ms.  Returns the response's ret, -ENOTCONN when not
 * connected (or the connection changed), -ETIMEDOUT.
 */
int shim_ring_call(struct shim_ring *r, uint32_t gen,
		   const struct tmem_req *req, const void *src, void *dst);

/* One request of a batch: the caller fills req, src and dst. */
struct shim_call {
	struct tmem_req req;
	const void *src;	/* page to send, or NULL */
	void *dst;		/* page to receive into, or NULL */
	int ret;		/* out: as shim_ring_call returns */
	uint32_t tag;		/* the ring's, while in flight */
};

/*
 * shim_ring_call for several requests at once, so that under
 * virtualisation a batch costs one doorbell and one wake-up, not one
 * per page.  Posts as many of calls[0..n) as there are free tags and
 * slots (waiting for room for the first), publishes them together,
 * kicks at most once and waits for all of them.  Returns how many it
 * handled (>= 1; each has ret set), or -ENOTCONN / -ETIMEDOUT when it
 * could post none.  The caller loops for the rest.
 */
int shim_ring_call_batch(struct shim_ring *r, uint32_t gen,
			 struct shim_call *calls, uint32_t n);
/*
 * Fire-and-forget PUT: copies src into a free slot, posts, returns 0.
 * Never waits: -EBUSY when no slot or tag is free, -ENOTCONN.
 */
int shim_ring_post_put(struct shim_ring *r, uint32_t gen,
		       const struct tmem_req *req, const void *src);
/*
 * Fire-and-forget request without data (flushes).  Callable with
 * interrupts off.  When the ring is full: returns -EBUSY at once if
 * !may_spin, else busy-polls for a free entry, at most timeout_ms.
 * Returns 0, -ENOTCONN, -EBUSY or -ETIMEDOUT.
 */
int shim_ring_post_nodata(struct shim_ring *r, uint32_t gen,
			  const struct tmem_req *req, int may_spin);

#endif /* SHIM_RING_H */
