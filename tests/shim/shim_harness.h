/* SPDX-License-Identifier: MIT */
/*
 * The translation core's userspace home: the same core the module runs,
 * on libtmem's raw ring over tmemd's local transport.  What the kernel
 * does with xenbus and an event-channel interrupt, the harness does with
 * two threads:
 *   - the connection thread (xenbus's part): connects to guest.sock
 *     with the session of its last connection, attaches the ring, maps
 *     its pools onto the ones tmemd kept (shim_ops_resume, as the
 *     frontend does with the backend's resumed-pools node), and after
 *     tmemd goes away retries every 20 ms until a new tmemd answers on
 *     the same path;
 *   - the irq thread (the event-channel handler's part): sleeps on the
 *     wake eventfd, reaps responses; on -EPIPE it detaches the ring,
 *     which fails every waiter, as the frontend does on Closing.
 */
#ifndef SHIM_HARNESS_H
#define SHIM_HARNESS_H

#include <pthread.h>

#include "shim_blk.h"
#include "shim_env_user.h"
#include "shim_ops.h"
#include "raw_internal.h"
#include "tmem_raw.h"

struct shim_harness {
	struct shim_user_env uenv;
	pthread_mutex_t conn_mu;	/* raw ring fds vs kick */
	struct shim_ring ring;
	struct shim_ops ops;
	struct tmem_raw_ring raw;
	struct tmem_raw_session sess;	/* the last connection's */
	int raw_live;
	char path[256];
	uint32_t nr_entries;
	uint32_t nr_slots;
	pthread_t conn_thread;
	int stop;			/* atomic */
	int ready;			/* atomic: attached and pools recreated */
	uint64_t connects;		/* atomic */
	uint64_t resumes;		/* atomic: connections tmemd resumed */
};

/*
 * Starts the connection thread for the guest socket at path, with
 * persistent requests waiting up to persist_wait_ms for a reconnect (as
 * the module's persist_wait_ms).  Returns 0 or -errno; it does not wait
 * for the connection (see shim_harness_wait).
 */
int shim_harness_start(struct shim_harness *h, const char *path,
		       uint32_t nr_entries, uint32_t nr_slots,
		       uint32_t persist_wait_ms);
/* Waits until connected with at least min_connects connections so far. */
int shim_harness_wait(struct shim_harness *h, uint64_t min_connects,
		      int timeout_ms);
/* Waits until no request is in flight (async puts reaped). */
int shim_harness_quiesce(struct shim_harness *h, int timeout_ms);
void shim_harness_stop(struct shim_harness *h);

#endif /* SHIM_HARNESS_H */
