/* SPDX-License-Identifier: MIT */
/*
 * The core's environment in userspace (core/shim_env.h): a mutex for
 * the core lock, a condition variable for sleep/wake, and a doorbell
 * callback.  Shared by the harness on tmemd and the unit tests' fake
 * backend.
 */
#ifndef SHIM_ENV_USER_H
#define SHIM_ENV_USER_H

#include <pthread.h>

#include "shim_env.h"

struct shim_user_env {
	struct shim_env env;
	pthread_mutex_t core_lock;	/* the core's env lock */
	pthread_mutex_t wait_mu;	/* sleep/wake; never held with core_lock */
	pthread_cond_t wait_cv;
	void (*kick)(void *ctx);	/* the doorbell */
	void *kick_ctx;
};

void shim_user_env_init(struct shim_user_env *u, void (*kick)(void *ctx),
			void *kick_ctx);
void shim_user_env_destroy(struct shim_user_env *u);
/* Monotonic milliseconds. */
uint64_t shim_user_now_ms(void);

#endif /* SHIM_ENV_USER_H */
