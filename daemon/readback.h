/* SPDX-License-Identifier: MIT */
/*
 * Read-backs from the host tier off the ring workers (issue 29): a get
 * of a spilled page is started by the worker (pools/
 * store_get_page_start(): counted, the tier pinned, no lock held), read
 * here by a small pool of threads, and answered by the worker when it
 * is done.  Responses on a ring go in order (the ABI: libtmem and the
 * shim match them by position), so that ring waits for its read-back;
 * the worker meanwhile serves its other rings.
 */
#ifndef TMEMD_READBACK_H
#define TMEMD_READBACK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tmem_store.h"

#define TMEMD_READBACK_THREADS 2u

struct tmemd_readback_job {
	struct tmem_readback rb;
	void *dst;                     /* the ring's data slot */
	int32_t ret;                   /* store_readback_finish()'s */
	/* Called once done is set, with the job no longer touched: the
	 * ring it is in may go as soon as done is seen. */
	void (*wake)(void *ctx);
	void *wake_ctx;
	atomic_bool done;
	struct tmemd_readback_job *next;
};

struct tmemd_readbacks;

int tmemd_readbacks_create(unsigned threads, struct tmemd_readbacks **out);
/* Queues job (done false until it is read). */
void tmemd_readbacks_submit(struct tmemd_readbacks *p, struct tmemd_readback_job *job);
/* Finishes what is queued, then joins the threads.  Accepts NULL. */
void tmemd_readbacks_destroy(struct tmemd_readbacks *p);

#endif /* TMEMD_READBACK_H */
