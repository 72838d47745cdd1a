/* SPDX-License-Identifier: MIT */
/*
 * The store's hot locks (the allocator's, a pool's, a client's LRU) are
 * held for a few hundred nanoseconds per op.  A plain glibc mutex puts a
 * worker that finds one taken to sleep at once: a futex wait and a
 * context switch that cost more than the wait itself, and on a host
 * with as many workers as CPUs the switch hands the CPU to a client
 * instead.  An adaptive mutex spins a bounded while first (measured:
 * two clients' pipelined lz4 puts on two workers went from 1.32-1.69 x
 * one client's to 1.56-1.78, median 1.67 in 19 runs; README
 * "Compression").
 */
#ifndef TMEM_POOLS_SHORT_LOCK_H
#define TMEM_POOLS_SHORT_LOCK_H

#include <errno.h>
#include <pthread.h>

/* 0 or -errno, as pthread_mutex_init's. */
static inline int short_lock_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int rc = pthread_mutexattr_init(&a);

	if (rc)
		return -rc;
	rc = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	if (!rc)
		rc = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return -rc;
}

#endif /* TMEM_POOLS_SHORT_LOCK_H */
