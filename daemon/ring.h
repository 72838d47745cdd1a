/* SPDX-License-Identifier: MIT */
/*
 * The backend half of one shared ring, independent of the transport.
 * A transport maps the region, fills in the geometry it negotiated and
 * an ops table for its doorbell, and hands the ring to a worker
 * (workers.h).  The worker calls tmemd_ring_process() whenever the ring
 * may have work.
 *
 * Nothing in the shared region is trusted: the geometry used is the
 * private copy below, producer indices are read once and checked for
 * overflow, each request is copied out once, and the backend's own
 * indices are kept privately and only ever written to shared memory.
 */
#ifndef TMEMD_RING_H
#define TMEMD_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "client_registry.h"
#include "dispatch.h"
#include "readback.h"
#include "tmem_proto.h"

struct tmemd_ring;
struct tmemd_worker;

struct tmemd_ring_ops {
	/* Ring the frontend's doorbell (eventfd write, evtchn notify). */
	void (*notify)(struct tmemd_ring *ring);
	/*
	 * Clear our doorbell after the worker's poll saw kick_fd ready; it
	 * must not block.  NULL: kick_fd is never read and the worker polls
	 * it edge-triggered, for a doorbell whose open file description the
	 * frontend shares (it could clear O_NONBLOCK and drain it, and a
	 * read would then block the worker for good).
	 */
	void (*ack)(struct tmemd_ring *ring);
	/*
	 * The frontend corrupted its ring (reason says how).  Called once,
	 * from the worker; the transport logs and schedules the disconnect
	 * on its own thread.  The worker stops serving the ring at once.
	 */
	void (*fault)(struct tmemd_ring *ring, const char *reason);
};

struct tmemd_ring {
	/* Set by the transport before attaching; constant afterwards. */
	struct tmemd_slots geo;       /* region and negotiated geometry */
	struct tmemd_client *client;
	const struct tmemd_ring_ops *ops;
	void *priv;                   /* the transport's connection */
	int kick_fd;                  /* pollable doorbell from the frontend */

	/* Private to the serving worker. */
	uint32_t req_cons;            /* next request to read */
	uint32_t rsp_prod_pvt;        /* responses written (== req_cons between batches) */
	uint32_t rsp_published;       /* last rsp_prod stored to shared memory */
	bool faulted;
	uint64_t requests;            /* served, for stats and tests */
	/*
	 * A get read back from the host tier off this thread (readback.h):
	 * responses go in order, so the ring waits (rb_pending) until the
	 * job is done, and the worker serves its other rings meanwhile.
	 * readbacks NULL: read-backs are done inline (tests).  Set by
	 * workers.c at attach.
	 */
	struct tmemd_readbacks *readbacks;
	struct tmemd_readback_job rb_job;
	struct tmem_req rb_req;       /* the get it answers */
	bool rb_pending;

	/* Owned by workers.c. */
	struct tmemd_worker *worker;
	struct tmemd_ring *wnext;
	bool attached;
	/* Worker thread only: doorbells that woke it for nothing. */
	bool kicked;                  /* its doorbell rang since the last pass */
	unsigned idle_kicks;          /* kicks in a row that found no request */
	uint64_t muted_until;         /* CLOCK_MONOTONIC; 0: doorbell watched */
	uint64_t mute_ns;             /* the last mute's length */
};

/*
 * Writes the backend's header line (rsp_prod = 0, req_event = 1) and
 * resets the private indices.  Call before the frontend is told it is
 * connected.
 */
/*
 * Checks a freshly mapped region before it is served: line 0 must repeat
 * the geometry negotiated out of band, and no request may be posted yet.
 * 0 or -TMEM_EPROTO.
 */
int tmemd_ring_check_fresh(void *region, uint32_t nr_entries, uint32_t nr_slots);
void tmemd_ring_init(struct tmemd_ring *ring);

/*
 * Serves up to budget requests.  Returns how many were served (0: none
 * waiting) or -TMEM_EPROTO when the ring is corrupt (ops->fault has then
 * been called and the ring must not be served again).
 */
int tmemd_ring_process(struct tmemd_ring *ring, unsigned budget);

/*
 * Before sleeping: asks for a doorbell on the next request (req_event)
 * and re-checks.  Returns true when requests are already waiting, so
 * the caller must not sleep.
 */
bool tmemd_ring_arm(struct tmemd_ring *ring);

/* True when the frontend has published requests not yet served (and
 * the ring is not waiting for a read-back), or a read-back is done. */
bool tmemd_ring_pending(struct tmemd_ring *ring);
/* True while a read-back of the ring's is not done (detach waits). */
bool tmemd_ring_readback_busy(struct tmemd_ring *ring);

#endif /* TMEMD_RING_H */
