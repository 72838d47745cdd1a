// SPDX-License-Identifier: MIT
/* The core's userspace environment; see shim_env_user.h. */
#include <sched.h>
#include <time.h>

#include "shim_env_user.h"

uint64_t shim_user_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static unsigned long env_lock(void *priv)
{
	struct shim_user_env *u = priv;

	pthread_mutex_lock(&u->core_lock);
	return 0;
}

static void env_unlock(void *priv, unsigned long flags)
{
	struct shim_user_env *u = priv;

	(void)flags;
	pthread_mutex_unlock(&u->core_lock);
}

static uint64_t env_now_ms(void *priv)
{
	(void)priv;
	return shim_user_now_ms();
}

static int env_sleep(void *priv, int (*done)(void *arg), void *arg,
		     unsigned int timeout_ms)
{
	struct shim_user_env *u = priv;
	struct timespec ts;
	int ok;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000u;
	ts.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	/* done() is checked under wait_mu, and wake takes wait_mu: no lost wake. */
	pthread_mutex_lock(&u->wait_mu);
	while (!(ok = done(arg)))
		if (pthread_cond_timedwait(&u->wait_cv, &u->wait_mu, &ts))
			break;
	pthread_mutex_unlock(&u->wait_mu);
	return ok || done(arg);
}

static void env_wake(void *priv)
{
	struct shim_user_env *u = priv;

	pthread_mutex_lock(&u->wait_mu);
	pthread_cond_broadcast(&u->wait_cv);
	pthread_mutex_unlock(&u->wait_mu);
}

static void env_kick(void *priv)
{
	struct shim_user_env *u = priv;

	u->kick(u->kick_ctx);
}

static void env_relax(void *priv)
{
	(void)priv;
	sched_yield();
}

static void env_copy_to_slot(void *priv, void *slot, const void *page)
{
	(void)priv;
	memcpy(slot, page, TMEM_PAGE_SIZE);
}

static void env_copy_from_slot(void *priv, void *page, const void *slot)
{
	(void)priv;
	memcpy(page, slot, TMEM_PAGE_SIZE);
}

static void env_zero_page(void *priv, void *page)
{
	(void)priv;
	memset(page, 0, TMEM_PAGE_SIZE);
}

static const struct shim_env_ops user_env_ops = {
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

void shim_user_env_init(struct shim_user_env *u, void (*kick)(void *ctx),
			void *kick_ctx)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&u->core_lock, NULL);
	pthread_mutex_init(&u->wait_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&u->wait_cv, &ca);
	pthread_condattr_destroy(&ca);
	u->kick = kick;
	u->kick_ctx = kick_ctx;
	u->env.ops = &user_env_ops;
	u->env.priv = u;
}

void shim_user_env_destroy(struct shim_user_env *u)
{
	pthread_cond_destroy(&u->wait_cv);
	pthread_mutex_destroy(&u->wait_mu);
	pthread_mutex_destroy(&u->core_lock);
}
