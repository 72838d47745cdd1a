/* SPDX-License-Identifier: MIT */
/* Per-client settings: defaults, validation, runtime changes. */
#include <errno.h>
#include <string.h>

#include "policy_internal.h"

void tmem_policy_config_defaults(struct tmem_policy_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->defaults.ephemeral_max = TMEM_NO_CAP;
	cfg->defaults.persistent_max = TMEM_NO_CAP;
	cfg->defaults.spill_max = TMEM_NO_CAP;
	cfg->defaults.weight = TMEM_DEFAULT_WEIGHT;
	cfg->defaults.compress.algo = TMEM_COMPRESS_LZ4;
	cfg->low_water_pages = 0;
}

/* Caps take any value (0 = may store nothing); only the weight has a range. */
int policy_settings_check(const struct tmem_client_settings *s)
{
	if (!s)
		return -EINVAL;
	if (s->weight < 1 || s->weight > TMEM_MAX_WEIGHT)
		return -EINVAL;
	if (!store_compress_valid(&s->compress))
		return -EINVAL;
	return 0;
}

void pclient_store_settings(struct tmem_pclient *pc,
			    const struct tmem_client_settings *s)
{
	atomic_store(&pc->ephemeral_max, s->ephemeral_max);
	atomic_store(&pc->persistent_max, s->persistent_max);
	atomic_store(&pc->spill_max, s->spill_max);
	(void)store_client_set_spill_max(pc->client, s->spill_max >= TMEM_NO_CAP / TMEM_PAGE_SIZE
							     ? TMEM_NO_CAP
							     : s->spill_max * TMEM_PAGE_SIZE);
	atomic_store(&pc->weight, s->weight);
	pc->compress = s->compress;
	(void)store_client_set_compress(pc->client, &s->compress); /* checked */
	atomic_store(&pc->frozen, s->frozen);
}

/*
 * Lowering a cap below current usage evicts nothing now: the client's
 * next ephemeral put evicts down to the cap, and persistent puts are
 * refused until the guest flushes below it.
 */
int tmem_policy_client_set(struct tmem_pclient *pc,
			   const struct tmem_client_settings *settings)
{
	int rc;

	if (!pc)
		return -EINVAL;
	rc = policy_settings_check(settings);
	if (rc)
		return rc;
	/* The lock only orders concurrent setters, so a get after two sets
	 * sees one of them whole. */
	pthread_mutex_lock(&pc->policy->lock);
	pclient_store_settings(pc, settings);
	pthread_mutex_unlock(&pc->policy->lock);
	return 0;
}

void tmem_policy_client_get(const struct tmem_pclient *pc,
			    struct tmem_client_settings *out)
{
	struct tmem_pclient *mpc = (struct tmem_pclient *)pc;

	if (!pc || !out)
		return;
	pthread_mutex_lock(&mpc->policy->lock);
	out->ephemeral_max = atomic_load(&mpc->ephemeral_max);
	out->persistent_max = atomic_load(&mpc->persistent_max);
	out->spill_max = atomic_load(&mpc->spill_max);
	out->weight = atomic_load(&mpc->weight);
	out->compress = mpc->compress;
	out->frozen = atomic_load(&mpc->frozen);
	pthread_mutex_unlock(&mpc->policy->lock);
}

/* The shared client follows the default weight; its caps stay unset. */
int tmem_policy_set_defaults(struct tmem_policy *policy,
			     const struct tmem_client_settings *settings)
{
	int rc;

	if (!policy)
		return -EINVAL;
	rc = policy_settings_check(settings);
	if (rc)
		return rc;
	pthread_mutex_lock(&policy->lock);
	policy->defaults = *settings;
	atomic_store(&policy->shared.weight, settings->weight);
	pthread_mutex_unlock(&policy->lock);
	return 0;
}

int tmem_policy_freeze(struct tmem_pclient *pc, bool frozen)
{
	if (!pc)
		return -EINVAL;
	atomic_store(&pc->frozen, frozen);
	return 0;
}
