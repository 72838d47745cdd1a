/* SPDX-License-Identifier: MIT */
/*
 * An in-process tmem backend for the core's unit tests: a thread that
 * serves the ring in a malloc'd region with a tiny page store, following
 * the ring rules of tmem(7) (hold-off on both sides), and "interrupts"
 * the frontend by calling shim_ring_poll, as the event-channel handler
 * does.  Misbehaviours on demand: stay mute, answer with a wrong id, or
 * publish an impossible rsp_prod.  Unlike tmemd it runs under the
 * sanitizers and valgrind.
 */
#ifndef FAKE_BACKEND_H
#define FAKE_BACKEND_H

#include <pthread.h>

#include "shim_env_user.h"
#include "shim_ring.h"

#define FAKE_MAX_PAGES 256
#define FAKE_MAX_POOLS 16

enum fake_mode {
	FAKE_NORMAL = 0,
	FAKE_MUTE,	/* consume nothing */
	FAKE_BAD_ID,	/* answer every request with a wrong id */
	FAKE_OVERFLOW,	/* publish rsp_prod far beyond the requests */
};

struct fake_page {
	int used;
	int32_t pool;
	uint64_t oid[3];
	uint32_t index;
	uint8_t data[4096];
};

struct fake_backend {
	struct shim_user_env uenv;
	struct shim_ring ring;
	void *region;
	uint32_t nr_entries;
	uint32_t nr_slots;
	uint32_t capacity;		/* pages it accepts; puts beyond: 0 */

	pthread_mutex_t mu;		/* guards everything below */
	pthread_cond_t cv;
	pthread_t thread;
	int stop;
	int mode;
	uint32_t kicks;			/* doorbells received */
	uint32_t req_cons;
	uint32_t pool_flags[FAKE_MAX_POOLS];
	int pool_used[FAKE_MAX_POOLS];
	struct fake_page pages[FAKE_MAX_PAGES];
	uint32_t requests;		/* handled */
};

/* Allocates the region, attaches the ring, starts the thread. */
int fake_start(struct fake_backend *f, uint32_t nr_entries, uint32_t nr_slots,
	       uint32_t capacity);
void fake_set_mode(struct fake_backend *f, int mode);
/* Stops the thread, detaches and frees. */
void fake_stop(struct fake_backend *f);
/* Pages stored now. */
uint32_t fake_nr_pages(struct fake_backend *f);

#endif /* FAKE_BACKEND_H */
