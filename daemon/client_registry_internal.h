/* SPDX-License-Identifier: MIT */
/* Shared by client_registry.c and client_park.c. */
#ifndef TMEMD_CLIENT_REGISTRY_INTERNAL_H
#define TMEMD_CLIENT_REGISTRY_INTERNAL_H

#include "client_registry.h"

struct tmemd_clients {
	pthread_mutex_t lock;         /* guards head, parked, park */
	struct tmemd_client *head;
	struct tmem_store *store;
	struct tmem_policy *policy;
	const struct tmemd_config *cfg;
	tmemd_settings_hook hook;     /* main thread only */
	void *hook_ctx;
	tmemd_attach_hook attach_hook; /* main thread only */
	void *attach_ctx;
	bool keep;                    /* stopping: detach, do not destroy */
	const struct tmemd_migrate_hooks *migrate; /* set once at start */
	void *migrate_ctx;
	struct tmemd_parked *parked;  /* client_park.c */
	unsigned nr_parked, cap_parked;
	struct tmemd_park_stats park;
	/* Atomic, relaxed: counted by any thread. */
	uint64_t refused[TMEMD_NR_REFUSAL_KINDS][TMEMD_NR_REASONS];
};

/* reg->lock held: the attached client registered under name, or NULL. */
struct tmemd_client *do_find(struct tmemd_clients *reg, const char *name);

#endif /* TMEMD_CLIENT_REGISTRY_INTERNAL_H */
