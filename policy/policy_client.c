/* SPDX-License-Identifier: MIT */
/* The policy object and its client list. */
#include <errno.h>
#include <stdlib.h>

#include "policy_internal.h"

static void pclient_init(struct tmem_pclient *pc, struct tmem_policy *policy,
			 struct tmem_client *client,
			 const struct tmem_client_settings *s)
{
	pc->policy = policy;
	pc->client = client;
	pc->next = NULL;
	pc->users = 0;
	pc->removing = false;
	pclient_store_settings(pc, s);
}

int tmem_policy_create(struct tmem_store *store,
		       const struct tmem_policy_config *cfg,
		       struct tmem_policy **out)
{
	struct tmem_policy_config defcfg;
	struct tmem_policy *p;
	struct tmem_client *shared;
	int rc;

	if (!store || !out)
		return -EINVAL;
	if (!cfg) {
		tmem_policy_config_defaults(&defcfg);
		cfg = &defcfg;
	}
	rc = policy_settings_check(&cfg->defaults);
	if (rc)
		return rc;
	shared = store_shared_client(store);
	if (!shared)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->store = store;
	p->defaults = cfg->defaults;
	p->low_water_cfg = cfg->low_water_pages;
	atomic_flag_clear(&p->refilling);
	rc = -pthread_mutex_init(&p->lock, NULL);
	if (rc)
		goto out;
	p->lock_ok = true;
	rc = -pthread_cond_init(&p->unpinned, NULL);
	if (rc)
		goto out;
	p->cond_ok = true;
	rc = -pthread_mutex_init(&p->resize_lock, NULL);
	if (rc)
		goto out;
	p->resize_lock_ok = true;
	pclient_init(&p->shared, p, shared, &cfg->defaults);
	atomic_store(&p->shared.ephemeral_max, TMEM_NO_CAP);
	atomic_store(&p->shared.persistent_max, TMEM_NO_CAP);
	atomic_store(&p->shared.frozen, false);
	p->clients = &p->shared;
	*out = p;
	return 0;
out:
	tmem_policy_destroy(p);
	return rc;
}

/* Removes clients the caller forgot, so nothing leaks. */
void tmem_policy_destroy(struct tmem_policy *policy)
{
	if (!policy)
		return;
	while (policy->clients)
		tmem_policy_client_remove(policy->clients);
	if (policy->resize_lock_ok)
		pthread_mutex_destroy(&policy->resize_lock);
	if (policy->cond_ok)
		pthread_cond_destroy(&policy->unpinned);
	if (policy->lock_ok)
		pthread_mutex_destroy(&policy->lock);
	free(policy);
}

/* A recovered store client back, or a new one. */
static int claim_or_create_client(struct tmem_store *store, const char *name,
				  const struct tmem_ident *ident,
				  struct tmem_client **client, bool *resumed)
{
	if (resumed)
		*resumed = false;
	if (ident && resumed && store_client_claim(store, name, ident, client) == 0) {
		*resumed = true;
		return 0;
	}
	return store_client_create_ident(store, name, ident, client);
}

int tmem_policy_client_add(struct tmem_policy *policy, const char *name,
			   const struct tmem_client_settings *settings,
			   struct tmem_pclient **out)
{
	bool resumed;

	return tmem_policy_client_attach(policy, name, NULL, settings, out, &resumed);
}

int tmem_policy_client_attach(struct tmem_policy *policy, const char *name,
			      const struct tmem_ident *ident,
			      const struct tmem_client_settings *settings,
			      struct tmem_pclient **out, bool *resumed)
{
	struct tmem_client_settings s;
	struct tmem_pclient *pc;
	struct tmem_client *client;
	int rc;

	if (!policy || !name || !out)
		return -EINVAL;
	if (settings) {
		rc = policy_settings_check(settings);
		if (rc)
			return rc;
	}
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	rc = claim_or_create_client(policy->store, name, ident, &client, resumed);
	if (rc) {
		free(pc);
		return rc;
	}
	pthread_mutex_lock(&policy->lock);
	s = settings ? *settings : policy->defaults;
	pclient_init(pc, policy, client, &s);
	pc->next = policy->clients;
	policy->clients = pc;
	pthread_mutex_unlock(&policy->lock);
	*out = pc;
	return 0;
}

static void do_unlink(struct tmem_policy *policy, struct tmem_pclient *pc)
{
	struct tmem_pclient **pp;

	for (pp = &policy->clients; *pp; pp = &(*pp)->next) {
		if (*pp == pc) {
			*pp = pc->next;
			break;
		}
	}
}

/*
 * Unlinks first so no new evictor picks it, then waits for the evictors
 * already working on it; only then may the store client go.  Returns
 * false for the built-in shared client, which the store owns.
 */
static bool client_quiesce(struct tmem_pclient *pc)
{
	struct tmem_policy *policy = pc->policy;

	pthread_mutex_lock(&policy->lock);
	do_unlink(policy, pc);
	pc->removing = true;
	while (pc->users)
		pthread_cond_wait(&policy->unpinned, &policy->lock);
	pthread_mutex_unlock(&policy->lock);
	return pc != &policy->shared;
}

void tmem_policy_client_remove(struct tmem_pclient *pc)
{
	if (!pc || !client_quiesce(pc))
		return;
	store_client_destroy(pc->client);
	free(pc);
}

void tmem_policy_client_detach(struct tmem_pclient *pc)
{
	if (!pc || !client_quiesce(pc))
		return;
	store_client_detach(pc->client);
	free(pc);
}

struct tmem_client *tmem_pclient_store_client(struct tmem_pclient *pc)
{
	return pc ? pc->client : NULL;
}
