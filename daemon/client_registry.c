/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_registry_internal.h"
#include "log.h"
#include "tmem_names.h"


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
	free(reg->parked);
	pthread_mutex_destroy(&reg->lock);
	free(reg);
}

struct tmemd_client *do_find(struct tmemd_clients *reg, const char *name)
{
	for (struct tmemd_client *c = reg->head; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static bool uuid_known(const struct tmem_uuid *u)
{
	return u->lo || u->hi;
}

void tmemd_domain_key(const struct tmemd_domain_id *dom, char key[TMEM_CLIENT_NAME_MAX])
{
	struct tmem_principal p = { .kind = TMEM_PRINCIPAL_UUID, .uuid = dom->uuid };

	if (!uuid_known(&dom->uuid)) {
		p.kind = TMEM_PRINCIPAL_XEN;
		p.domid = dom->domid;
	}
	tmem_principal_format(&p, key);
}

bool tmemd_ident_same_guest(const struct tmem_ident *a, const struct tmem_ident *b)
{
	const size_t rest = TMEMD_XEN_IDENT_DOMID + sizeof(uint32_t);

	if (a->b[0] != TMEMD_XEN_IDENT_MARK || b->b[0] != TMEMD_XEN_IDENT_MARK)
		return !memcmp(a->b, b->b, TMEM_IDENT_LEN);
	return !memcmp(a->b + rest, b->b + rest, TMEM_IDENT_LEN - rest);
}

void tmemd_client_names(const struct tmemd_client *c, struct tmemd_client_names *out,
			char bufs[2][TMEM_CLIENT_NAME_MAX])
{
	struct tmem_principal p = { .kind = TMEM_PRINCIPAL_XEN, .domid = (unsigned)c->domid };
	unsigned n = 0;

	memset(out, 0, sizeof(*out));
	out->key = c->name;
	out->domid = c->domid;
	if (c->domid < 0) {
		out->by[n++] = c->name;
		return;
	}
	tmem_principal_format(&p, bufs[0]);
	out->by[n++] = bufs[0];
	if (tmem_local_name_valid(c->label))
		out->by[n++] = c->label;
	if (uuid_known(&c->uuid)) {
		p = (struct tmem_principal){ .kind = TMEM_PRINCIPAL_UUID, .uuid = c->uuid };
		tmem_principal_format(&p, bufs[1]);
		out->by[n++] = bufs[1];
	}
}

/* tmemd.conf's settings for a client (each name in turn), then the hook's. */
static void settings_for(struct tmemd_clients *reg, const struct tmemd_client *c,
			 struct tmem_client_settings *out)
{
	char bufs[2][TMEM_CLIENT_NAME_MAX];
	struct tmemd_client_names names;

	tmemd_client_names(c, &names, bufs);
	tmemd_config_client_settings(reg->cfg, NULL, out);
	for (unsigned i = 0; names.by[i]; i++)
		tmemd_config_client_apply(reg->cfg, names.by[i], out);
	if (reg->hook)
		reg->hook(reg->hook_ctx, &names, out);
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

/* Registers c (its names filled in) under c->name. */
static int do_register(struct tmemd_clients *reg, struct tmemd_client *c,
		       const struct tmem_ident *ident, bool *resumed)
{
	struct tmem_client_settings settings;
	int rc;

	settings_for(reg, c, &settings);
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
	return rc;
}

int tmemd_client_attach(struct tmemd_clients *reg, const char *name,
			const char *transport, int domid,
			const struct tmem_ident *ident,
			struct tmemd_client **out, bool *resumed)
{
	struct tmemd_domain_id dom = { .domid = (uint32_t)domid, .name = name };
	struct tmemd_client *c;
	int rc;

	if (domid >= 0) /* a domain known by its id alone */
		return tmemd_client_attach_domain(reg, &dom, ident, out, resumed);
	if (tmemd_check_client_name(name))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->reg = reg;
	c->transport = transport;
	c->domid = -1;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->label, sizeof(c->label), "%s", name);
	rc = do_register(reg, c, ident, resumed);
	if (rc) {
		free(c);
		return rc;
	}
	if (reg->attach_hook)
		reg->attach_hook(reg->attach_ctx, c);
	*out = c;
	return 0;
}

int tmemd_client_attach_domain(struct tmemd_clients *reg,
			       const struct tmemd_domain_id *dom,
			       const struct tmem_ident *ident,
			       struct tmemd_client **out, bool *resumed)
{
	struct tmemd_client *c;
	int rc;

	if (dom->domid > TMEM_DOMID_MAX || (dom->name && dom->name[0] &&
					    !tmem_name_valid(dom->name)))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->reg = reg;
	c->transport = "xen";
	c->domid = (int)dom->domid;
	c->uuid = dom->uuid;
	if (dom->key && tmem_name_valid(dom->key))
		snprintf(c->name, sizeof(c->name), "%s", dom->key);
	else
		tmemd_domain_key(dom, c->name);
	/* A domain's label is its xl name when that is a usable one. */
	if (dom->name && tmem_local_name_valid(dom->name))
		snprintf(c->label, sizeof(c->label), "%s", dom->name);
	else
		snprintf(c->label, sizeof(c->label), "dom%u", dom->domid);
	rc = do_register(reg, c, ident, resumed);
	if (rc) {
		free(c);
		return rc;
	}
	if (reg->attach_hook)
		reg->attach_hook(reg->attach_ctx, c);
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

int tmemd_client_relabel(struct tmemd_client *c, const char *name)
{
	struct tmemd_clients *reg = c->reg;
	struct tmem_client_settings now, want;

	pthread_mutex_lock(&reg->lock);
	if (name && tmem_local_name_valid(name))
		snprintf(c->label, sizeof(c->label), "%s", name);
	else
		snprintf(c->label, sizeof(c->label), "dom%d", c->domid);
	pthread_mutex_unlock(&reg->lock);
	tmem_policy_client_get(c->pc, &now);
	settings_for(reg, c, &want);
	want.frozen = now.frozen;
	return tmem_policy_client_set(c->pc, &want);
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

void tmemd_clients_set_attach_hook(struct tmemd_clients *reg,
				   tmemd_attach_hook hook, void *ctx)
{
	reg->attach_hook = hook;
	reg->attach_ctx = ctx;
}

int tmemd_clients_reapply(struct tmemd_clients *reg)
{
	struct tmem_client_settings now, want;
	int rc = 0;

	pthread_mutex_lock(&reg->lock);
	for (struct tmemd_client *c = reg->head; c; c = c->next) {
		int r;

		tmem_policy_client_get(c->pc, &now);
		settings_for(reg, c, &want);
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
