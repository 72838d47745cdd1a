/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_registry.h"
#include "log.h"
#include "tmem_names.h"

struct tmemd_clients {
	pthread_mutex_t lock;         /* guards head */
	struct tmemd_client *head;
	struct tmem_store *store;
	struct tmem_policy *policy;
	const struct tmemd_config *cfg;
	tmemd_settings_hook hook;     /* main thread only */
	void *hook_ctx;
	bool keep;                    /* stopping: detach, do not destroy */
	/* Atomic, relaxed: counted by any thread. */
	uint64_t refused[TMEMD_NR_REFUSAL_KINDS][TMEMD_NR_REASONS];
};

/* The reasons counted, in stats order; the last is every other code. */
static const struct {
	int32_t code;
	const char *name;
} reasons[TMEMD_NR_REASONS] = {
	{ -TMEM_EPROTO, "EPROTO" }, { -TMEM_EINVAL, "EINVAL" }, { -TMEM_EPERM, "EPERM" },
	{ -TMEM_EEXIST, "EEXIST" }, { -TMEM_EUSERS, "EUSERS" }, { -TMEM_ENOMEM, "ENOMEM" },
	{ -TMEM_ENOSPC, "ENOSPC" }, { -TMEM_ENOSYS, "ENOSYS" }, { -TMEM_ERANGE, "ERANGE" },
	{ -TMEM_ENOENT, "ENOENT" }, { -TMEM_EBUSY, "EBUSY" },
	{ TMEMD_REASON_TIMEOUT, "timeout" }, { TMEMD_REASON_LIMIT, "limit" },
	{ 0, "other" },
};

const char *tmemd_refusal_reason_name(unsigned i)
{
	return i < TMEMD_NR_REASONS ? reasons[i].name : NULL;
}

void tmemd_clients_count_refusal(struct tmemd_clients *reg, enum tmemd_refusal_kind kind,
				 int32_t code)
{
	unsigned i = 0;

	while (i < TMEMD_NR_REASONS - 1 && reasons[i].code != code)
		i++;
	__atomic_fetch_add(&reg->refused[kind][i], 1, __ATOMIC_RELAXED);
}

void tmemd_clients_refusals(struct tmemd_clients *reg,
			    uint64_t counts[TMEMD_NR_REFUSAL_KINDS][TMEMD_NR_REASONS])
{
	for (unsigned k = 0; k < TMEMD_NR_REFUSAL_KINDS; k++)
		for (unsigned i = 0; i < TMEMD_NR_REASONS; i++)
			counts[k][i] = __atomic_load_n(&reg->refused[k][i], __ATOMIC_RELAXED);
}

int tmemd_clients_create(struct tmem_store *store, struct tmem_policy *policy,
			 const struct tmemd_config *cfg,
			 struct tmemd_clients **out)
{
	struct tmemd_clients *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return -ENOMEM;
	pthread_mutex_init(&reg->lock, NULL);
	reg->store = store;
	reg->policy = policy;
	reg->cfg = cfg;
	*out = reg;
	return 0;
}

void tmemd_clients_destroy(struct tmemd_clients *reg)
{
	if (!reg)
		return;
	while (reg->head)
		tmemd_client_remove(reg->head);
	pthread_mutex_destroy(&reg->lock);
	free(reg);
}

static struct tmemd_client *do_find(struct tmemd_clients *reg,
				    const char *name)
{
	for (struct tmemd_client *c = reg->head; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* The principal text a client is keyed by: a domain's "domid:N" (its
 * name is a label), a local client's name. */
static void principal_key(const char *name, int domid, char key[TMEM_CLIENT_NAME_MAX])
{
	struct tmem_principal p = { .kind = TMEM_PRINCIPAL_XEN, .domid = (unsigned)domid };

	if (domid < 0)
		snprintf(key, TMEM_CLIENT_NAME_MAX, "%s", name);
	else
		tmem_principal_format(&p, key);
}

/*
 * Older tmemd matched a domain by its xenstore name, so a [client web1]
 * section meant for domain web1 now sets the local client web1 only:
 * say so when such a domain attaches, rather than drop its quota
 * without a word.
 */
static void warn_name_section(const struct tmemd_clients *reg, const char *label,
			      int domid)
{
	if (domid >= 0 && reg->cfg && tmemd_config_client(reg->cfg, label))
		tmemd_log_limited(TMEMD_LOG_WARNING, TMEMD_RL_DOMID(domid),
				  "domain %d (%s): tmemd.conf's [client %s] is for the local "
				  "client %s, not this domain; a domain's section is "
				  "[client domid:%d]", domid, label, label, label, domid);
}

/* tmemd.conf's settings for a client (by principal), then the hook's. */
static void settings_for(struct tmemd_clients *reg, const char *name,
			 int domid, struct tmem_client_settings *out)
{
	tmemd_config_client_settings(reg->cfg, name, out);
	if (reg->hook)
		reg->hook(reg->hook_ctx, name, domid, out);
}

/* A resumed client's pools all came from its own NEW_POOLs. */
static int note_owned(const struct tmem_pool_info *pi, void *ctx)
{
	uint32_t *owned = ctx;

	if (pi->id >= 0 && pi->id < 32)
		*owned |= 1u << pi->id;
	return 0;
}

int tmemd_client_add(struct tmemd_clients *reg, const char *name,
		     const char *transport, int domid,
		     struct tmemd_client **out)
{
	bool resumed;

	return tmemd_client_attach(reg, name, transport, domid, NULL, out, &resumed);
}

int tmemd_client_attach(struct tmemd_clients *reg, const char *name,
			const char *transport, int domid,
			const struct tmem_ident *ident,
			struct tmemd_client **out, bool *resumed)
{
	struct tmem_client_settings settings;
	struct tmemd_client *c;
	int rc;

	if (domid < 0 ? tmemd_check_client_name(name) :
	    (unsigned)domid > TMEM_DOMID_MAX || !tmem_name_valid(name))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->reg = reg;
	c->transport = transport;
	c->domid = domid;
	principal_key(name, domid, c->name);
	/* A domain's label is a name it could have in xenstore; one given
	 * as its principal (a claim knows no other) shows as dom<N>. */
	if (domid >= 0 && !tmem_local_name_valid(name))
		snprintf(c->label, sizeof(c->label), "dom%d", domid);
	else
		snprintf(c->label, sizeof(c->label), "%s", name);
	settings_for(reg, c->name, domid, &settings);
	warn_name_section(reg, name, domid);

	pthread_mutex_lock(&reg->lock);
	if (do_find(reg, c->name)) {
		rc = -EEXIST;
		goto out_unlock;
	}
	rc = tmem_policy_client_attach(reg->policy, c->name, ident, &settings, &c->pc,
				       resumed);
	if (rc)
		goto out_unlock;
	c->sc = tmem_pclient_store_client(c->pc);
	if (resumed && *resumed)
		store_client_for_each_pool(c->sc, note_owned, &c->owned_pools);
	c->next = reg->head;
	reg->head = c;
out_unlock:
	pthread_mutex_unlock(&reg->lock);
	if (rc) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void tmemd_client_remove(struct tmemd_client *c)
{
	struct tmemd_clients *reg;

	if (!c)
		return;
	reg = c->reg;
	pthread_mutex_lock(&reg->lock);
	for (struct tmemd_client **pp = &reg->head; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (reg->keep)
		tmem_policy_client_detach(c->pc);
	else
		tmem_policy_client_remove(c->pc);
	pthread_mutex_unlock(&reg->lock);
	free(c);
}

void tmemd_clients_keep_on_stop(struct tmemd_clients *reg)
{
	pthread_mutex_lock(&reg->lock);
	reg->keep = true;
	pthread_mutex_unlock(&reg->lock);
}

int tmemd_clients_for_each(struct tmemd_clients *reg,
			   int (*fn)(struct tmemd_client *, void *), void *ctx)
{
	int rc = 0;

	pthread_mutex_lock(&reg->lock);
	for (struct tmemd_client *c = reg->head; c && !rc; c = c->next)
		rc = fn(c, ctx);
	pthread_mutex_unlock(&reg->lock);
	return rc;
}

struct tmemd_client *tmemd_clients_find(struct tmemd_clients *reg,
					const char *name)
{
	struct tmemd_client *c;

	pthread_mutex_lock(&reg->lock);
	c = do_find(reg, name);
	pthread_mutex_unlock(&reg->lock);
	return c;
}

void tmemd_clients_set_settings_hook(struct tmemd_clients *reg,
				     tmemd_settings_hook hook, void *ctx)
{
	reg->hook = hook;
	reg->hook_ctx = ctx;
}

int tmemd_clients_reapply(struct tmemd_clients *reg)
{
	struct tmem_client_settings now, want;
	int rc = 0;

	pthread_mutex_lock(&reg->lock);
	for (struct tmemd_client *c = reg->head; c; c = c->next) {
		int r;

		tmem_policy_client_get(c->pc, &now);
		settings_for(reg, c->name, c->domid, &want);
		want.frozen = now.frozen;
		r = tmem_policy_client_set(c->pc, &want);
		if (r && !rc)
			rc = r;
	}
	pthread_mutex_unlock(&reg->lock);
	return rc;
}

struct tmem_store *tmemd_clients_store(const struct tmemd_clients *reg)
{
	return reg->store;
}

struct tmem_policy *tmemd_clients_policy(const struct tmemd_clients *reg)
{
	return reg->policy;
}
