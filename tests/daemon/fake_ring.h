/* SPDX-License-Identifier: MIT */
/*
 * A ring in plain memory, for the request path without a transport: the
 * header a guest writes at connect, and ring ops that only count what the
 * backend asks of the transport.  test_daemon_unit and fuzz_dispatch
 * serve it with tmemd_ring_process().
 */
#ifndef TMEMD_TEST_FAKE_RING_H
#define TMEMD_TEST_FAKE_RING_H

#include <stdint.h>

#include "ring.h"

struct fake_ring {
	struct tmemd_ring ring;   /* ring.priv points back here */
	int notified;             /* doorbells the backend rang */
	int faulted;              /* faults it reported */
};

/* Zeroes region (tmem_region_size(entries, slots) bytes), writes a
 * valid ring header in it and sets fr->ring up to serve it for c. */
void fake_ring_init(struct fake_ring *fr, void *region, uint32_t entries,
		    uint32_t slots, struct tmemd_client *c);

#endif /* TMEMD_TEST_FAKE_RING_H */
