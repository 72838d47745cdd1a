/* SPDX-License-Identifier: MIT */
/*
 * Memory ordering for the shared ring, in one place, for both builds:
 * the kernel module gets the kernel's smp_* primitives, userspace gets
 * GCC's C11-model __atomic builtins (freestanding, no <stdatomic.h>
 * needed, and they work on the plain uint32_t fields of the ABI).
 *
 * The ring protocol needs exactly three orderings:
 *  - a producer fills entries, then publishes the index (release);
 *  - a consumer reads the index, then the entries it covers (acquire);
 *  - a side that is about to sleep publishes its *_event and then
 *    re-reads the peer's producer index; those two must not be
 *    reordered (store->load), or both sides can sleep with work queued.
 *    That is the full barrier.
 */
#ifndef TMEM_BARRIER_H
#define TMEM_BARRIER_H

#ifdef __KERNEL__
#include <asm/barrier.h>
#include <asm/processor.h>
#include <linux/compiler.h>
#include <linux/types.h>

/* Read the peer's index before reading anything it published. */
static inline uint32_t tmem_load_acquire(const uint32_t *p)
{
	return smp_load_acquire(p);
}

/* Make everything written so far visible before the new index. */
static inline void tmem_store_release(uint32_t *p, uint32_t v)
{
	smp_store_release(p, v);
}

/* A plain shared read or write that must happen exactly once. */
static inline uint32_t tmem_load_once(const uint32_t *p)
{
	return READ_ONCE(*p);
}

static inline void tmem_store_once(uint32_t *p, uint32_t v)
{
	WRITE_ONCE(*p, v);
}

/* Order an earlier store before a later load (the sleep handshake). */
static inline void tmem_full_barrier(void)
{
	smp_mb();
}

/* One step of a busy wait: lets a sibling hyperthread run. */
static inline void tmem_cpu_relax(void)
{
	cpu_relax();
}

#else /* userspace */

#include <stdint.h>

/* Read the peer's index before reading anything it published. */
static inline uint32_t tmem_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Make everything written so far visible before the new index. */
static inline void tmem_store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* A plain shared read or write that must happen exactly once. */
static inline uint32_t tmem_load_once(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void tmem_store_once(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Order an earlier store before a later load (the sleep handshake). */
static inline void tmem_full_barrier(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* One step of a busy wait: PAUSE on x86 (eases the sibling hyperthread
 * and the exit from the spin loop), elsewhere a compiler barrier so the
 * loop re-reads shared memory. */
static inline void tmem_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* __KERNEL__ */

#endif /* TMEM_BARRIER_H */
