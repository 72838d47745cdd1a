/* SPDX-License-Identifier: MIT */
/*
 * Giving memory back: free frames that stayed cold for a whole interval
 * are punched out of the arena (MADV_REMOVE in a memfd or tmpfs file,
 * MADV_DONTNEED in anonymous memory), so tmemd's resident memory follows
 * what is stored, not the pool's ceiling.  The frames taken off the free
 * stack are punched without alloc_lock, in sorted runs (one call a run,
 * not one a frame), while they are on no stack at all, so no put can be
 * handed a frame that is being punched.  A frame is free when it is
 * punched: no published record names it (COMMIT.md), so recovery never
 * reads its zeroes.  A punched frame is reused only when no resident
 * frame is free; its first touch then faults it back in.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* Frames moved per alloc_lock hold: 16 MiB of frames. */
#define RELEASE_BATCH 4096u

uint64_t store_release_cold(struct tmem_store *s, uint64_t keep_pages)
{
	uint32_t keep = keep_pages > UINT32_MAX ? UINT32_MAX : (uint32_t)keep_pages;
	uint32_t *batch, cold, n;
	uint64_t released = 0;
	int ret = 0;

	if (!s)
		return 0;
	batch = malloc(RELEASE_BATCH * sizeof(*batch));
	if (!batch)
		return 0;
	pthread_mutex_lock(&s->alloc_lock);
	do_warm_set_mark(s, keep);
	cold = frames_cold_begin(&s->frames);
	while (ret == 0 &&
	       (n = frames_take_cold(&s->frames, &cold, keep, batch, RELEASE_BATCH))) {
		pthread_mutex_unlock(&s->alloc_lock);
		ret = frames_each_run(&s->frames, batch, n, frames_punch);
		pthread_mutex_lock(&s->alloc_lock);
		frames_put_released(&s->frames, batch, n, ret == 0);
		pthread_cond_broadcast(&s->transit_cond);
		if (ret == 0)
			released += n;
	}
	pthread_mutex_unlock(&s->alloc_lock);
	free(batch);
	return released;
}

void store_set_target(struct tmem_store *s, uint64_t pages)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->alloc_lock);
	frames_set_target(&s->frames, pages > UINT32_MAX ? UINT32_MAX : (uint32_t)pages);
	pthread_mutex_unlock(&s->alloc_lock);
}
