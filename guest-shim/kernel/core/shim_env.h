/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The environment the translation core runs in.  The core (ring frontend,
 * cleancache/frontswap translation, the block path's page map) is plain C
 * that compiles both into tmem_shim.ko and into the userspace harness in
 * tests/shim/.  Everything that differs between the two lives behind
 * struct shim_env_ops:
 *
 *   kernel (tmem_shim_env.c)       userspace (tests/shim/shim_env_user.c)
 *   spin_lock_irqsave               pthread mutex
 *   wait_event_timeout on a wq      pthread cond with a deadline
 *   wake_up_all from the evtchn irq cond broadcast from the "irq" thread
 *   notify_remote_via_irq           tmem_raw_kick (eventfd)
 *   kmap + memcpy                   memcpy
 */
#ifndef SHIM_ENV_H
#define SHIM_ENV_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/errno.h>
#include <linux/string.h>
#else
#include <stdint.h>
#include <stddef.h>
#include <errno.h>
#include <string.h>
#endif

#include "tmem_proto.h"

struct shim_env_ops {
	/*
	 * The core's one lock.  It may be taken with interrupts off and
	 * from the event-channel interrupt, so the kernel version saves
	 * and disables interrupts; the returned flags go back to unlock.
	 */
	unsigned long (*lock)(void *priv);
	void (*unlock)(void *priv, unsigned long flags);
	/*
	 * Sleeps until done(arg) is true or timeout_ms passes.  Returns
	 * non-zero when done(arg) held.  Called without the lock, from
	 * a context that may sleep.
	 */
	int (*sleep)(void *priv, int (*done)(void *arg), void *arg,
		     unsigned int timeout_ms);
	/* Wakes every sleeper; called without the lock. */
	void (*wake)(void *priv);
	/* Rings the backend's doorbell. */
	void (*kick)(void *priv);
	/* One step of a busy wait (cpu_relax). */
	void (*relax)(void *priv);
	/* Milliseconds from a monotonic clock, for bounded busy waits. */
	uint64_t (*now_ms)(void *priv);
	/*
	 * Copies one 4096-byte page between a caller's page and a slot.
	 * "page" is opaque to the core: a struct page * in the kernel
	 * (mapped here), a plain buffer in userspace.
	 */
	void (*copy_to_slot)(void *priv, void *slot, const void *page);
	void (*copy_from_slot)(void *priv, void *page, const void *slot);
	/* Fills a caller's page with zeros (a read of a hole). */
	void (*zero_page)(void *priv, void *page);
};

struct shim_env {
	const struct shim_env_ops *ops;
	void *priv;
};

/*
 * Statistics counters are bumped from several CPUs without the lock;
 * a relaxed atomic add keeps them exact without ordering anything.
 */
static inline void shim_stat_inc(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static inline uint64_t shim_stat_read(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

#endif /* SHIM_ENV_H */
