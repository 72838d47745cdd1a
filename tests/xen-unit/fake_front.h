/* SPDX-License-Identifier: MIT */
/*
 * A userspace stand-in for the guest's xenbus frontend
 * (guest-shim/kernel/tmem_shim_xenbus.c) on the fake xenstore and
 * hypervisor: it grants its region and allocates a port once, publishes
 * them the way the module does, and posts requests on the ring.
 */
#ifndef FAKE_FRONT_H
#define FAKE_FRONT_H

#include <stdint.h>

#include "fake_hyp.h"
#include "fake_xs.h"
#include "tmem_proto.h"

#define FAKE_FRONT_MAX_PAGES 64

struct fake_front {
	struct fake_xs *xs;
	struct fake_hyp *hyp;
	uint32_t domid;
	uint32_t nr_entries, nr_slots, nr_pages;
	uint32_t refs[FAKE_FRONT_MAX_PAGES];
	uint32_t port;
	void *region;               /* the guest's view */
	char dir[96];               /* /local/domain/N/device/tmem/0 */
	uint64_t next_id;
};

/* A domain domid called name (NULL: no name node) with a ring of this
 * geometry, its grants and its port: what the module does at probe. */
void fake_front_init(struct fake_front *f, struct fake_xs *xs,
		     struct fake_hyp *hyp, uint32_t domid, const char *name,
		     uint32_t nr_entries, uint32_t nr_slots);

/* Backend is in InitWait: reset the region, publish, Initialised. */
void fake_front_publish(struct fake_front *f);
/* Writes the frontend's own node dir/name (as the domU); 0 or -errno. */
int fake_front_write(struct fake_front *f, const char *name, const char *value);
void fake_front_set_state(struct fake_front *f, int state);
/* The state node the backend wrote, or -1. */
int fake_front_backend_state(struct fake_front *f);

/* Posts req, rings the doorbell, waits up to 5 s for the response.
 * Returns its ret, or INT32_MIN on a timeout. */
int32_t fake_front_call(struct fake_front *f, struct tmem_req *req);

/* Slot n of the guest's region. */
void *fake_front_slot(struct fake_front *f, uint32_t n);

#endif /* FAKE_FRONT_H */
