/* SPDX-License-Identifier: MIT */
/*
 * pools/' one clock helper: recovery's timing (CLOCK_MONOTONIC) and the
 * arena's created and recovered times (CLOCK_REALTIME, stored in
 * microseconds).  Included by durable.c and recover.c.
 */
#ifndef TMEM_POOLS_CLOCK_H
#define TMEM_POOLS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_nsec(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* TMEM_POOLS_CLOCK_H */
