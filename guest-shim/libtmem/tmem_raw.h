/* SPDX-License-Identifier: MIT */
/*
 * libtmem's low-level view of one connection to tmemd over the local
 * transport: the shared region and the doorbells, for a frontend that
 * drives the ring itself (the kernel shim's translation core, in its
 * userspace harness).  Most programs want tmem.h instead.
 *
 * The caller owns the ring protocol: it writes requests and req_prod,
 * honours req_event/rsp_event, and must never have more than nr_entries
 * requests outstanding.
 */
#ifndef TMEM_RAW_H
#define TMEM_RAW_H

#include <stdint.h>

#include "tmem_proto.h"

struct tmem_raw_ring {
	void *region;        /* tmem_region_size(nr_entries, nr_slots) bytes, shared */
	uint32_t nr_entries;
	uint32_t nr_slots;
	uint32_t client_id;  /* as tmemd reports it */
	int kick_fd;         /* eventfd: frontend -> backend doorbell */
	int sock_fd;         /* the guest.sock connection: backend -> frontend
			      * doorbells arrive on it; closing it disconnects */
};

/*
 * Connects to the guest socket at path, as client name, with a ring of
 * nr_entries entries and nr_slots data slots.  Returns 0 or -errno
 * (-ECONNREFUSED/-ENOENT when tmemd is not there, -EPROTO on a handshake
 * tmemd refused).
 */
int tmem_raw_connect(const char *path, const char *name, uint32_t nr_entries,
		     uint32_t nr_slots, struct tmem_raw_ring *out);
/* Rings the backend's doorbell. */
void tmem_raw_kick(const struct tmem_raw_ring *ring);
/*
 * Sleeps until the backend rings ours or timeout_ms passes (-1: forever).
 * Returns 1 woken, 0 timed out, -EPIPE when tmemd has gone, -errno.
 */
int tmem_raw_wait(const struct tmem_raw_ring *ring, int timeout_ms);
/* Unmaps and closes everything.  Accepts a ring that failed to connect. */
void tmem_raw_disconnect(struct tmem_raw_ring *ring);

#endif /* TMEM_RAW_H */
