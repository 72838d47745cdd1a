// SPDX-License-Identifier: GPL-2.0
/*
 * The core's environment in the kernel (core/shim_env.h): an irq-safe
 * spinlock, because cleancache put_page arrives with interrupts off and
 * the event-channel handler reaps under the same lock; a wait queue
 * woken from that handler; notify_remote_via_irq as the doorbell.
 */
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <xen/events.h>

#include "tmem_shim.h"

static unsigned long env_lock(void *priv)
{
	struct tmem_shim *s = priv;
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	return flags;
}

static void env_unlock(void *priv, unsigned long flags)
{
	struct tmem_shim *s = priv;

	spin_unlock_irqrestore(&s->lock, flags);
}

static int env_sleep(void *priv, int (*done)(void *arg), void *arg,
		     unsigned int timeout_ms)
{
	struct tmem_shim *s = priv;

	return wait_event_timeout(s->wq, done(arg),
				  msecs_to_jiffies(timeout_ms)) > 0 ||
	       done(arg);
}

static void env_wake(void *priv)
{
	struct tmem_shim *s = priv;

	wake_up_all(&s->wq);
}

static void env_kick(void *priv)
{
	struct tmem_shim *s = priv;
	int irq = READ_ONCE(s->irq);

	if (irq > 0)
		notify_remote_via_irq(irq);
}

static void env_relax(void *priv)
{
	cpu_relax();
}

/* A clock that works with interrupts off (put_page's busy paths). */
static u64 env_now_ms(void *priv)
{
	return div_u64(ktime_get_mono_fast_ns(), NSEC_PER_MSEC);
}

static void env_copy_to_slot(void *priv, void *slot, const void *page)
{
	void *va = kmap_local_page((struct page *)page);

	memcpy(slot, va, PAGE_SIZE);
	kunmap_local(va);
}

static void env_copy_from_slot(void *priv, void *page, const void *slot)
{
	void *va = kmap_local_page((struct page *)page);

	memcpy(va, slot, PAGE_SIZE);
	kunmap_local(va);
}

static void env_zero_page(void *priv, void *page)
{
	clear_highpage((struct page *)page);
}

static const struct shim_env_ops kernel_env_ops = {
	.lock = env_lock,
	.unlock = env_unlock,
	.sleep = env_sleep,
	.wake = env_wake,
	.kick = env_kick,
	.relax = env_relax,
	.now_ms = env_now_ms,
	.copy_to_slot = env_copy_to_slot,
	.copy_from_slot = env_copy_from_slot,
	.zero_page = env_zero_page,
};

void tmem_shim_env_init(struct tmem_shim *s)
{
	BUILD_BUG_ON(PAGE_SIZE != TMEM_PAGE_SIZE);
	spin_lock_init(&s->lock);
	init_waitqueue_head(&s->wq);
	s->env.ops = &kernel_env_ops;
	s->env.priv = s;
	shim_ring_init(&s->ring, &s->env);
	shim_ops_init(&s->ops, &s->ring);
}
