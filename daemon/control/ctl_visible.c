/* SPDX-License-Identifier: MIT */
/*
 * State no tmemctl command made, shown anyway (issue 30): the clients a
 * start recovered from its arena that have not come back yet (they hold
 * pages until reattach-grace; "forget" frees one now), and the shared-pool
 * grants in force, tmemd.conf's as well as tmemctl's, each with where it
 * comes from.  "list --all" and the stats document use these.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"

/* The names of the detached clients: collected under the store lock,
 * which the walk's callback may not call into the store under. */
struct name_list {
	char (*names)[TMEM_CLIENT_NAME_MAX];
	size_t nr, cap;
};

static int add_name(const char *name, const struct tmem_ident *ident, void *arg)
{
	struct name_list *l = arg;

	(void)ident;
	if (l->nr == l->cap)
		return -ENOSPC;
	snprintf(l->names[l->nr++], TMEM_CLIENT_NAME_MAX, "%s", name);
	return 0;
}

json_t *ctl_recovered_json(struct tmemd_control *ctl)
{
	struct name_list l = { .names = calloc(TMEM_MAX_CLIENTS, TMEM_CLIENT_NAME_MAX),
			       .cap = TMEM_MAX_CLIENTS };
	json_t *arr = json_array();

	if (!arr || !l.names || store_for_each_detached(ctl->hooks.store, add_name, &l) < 0)
		goto fail;
	for (size_t i = 0; i < l.nr; i++) {
		struct tmem_page_counts pc;

		if (store_detached_page_counts(ctl->hooks.store, l.names[i], &pc))
			continue;  /* claimed or freed meanwhile */
		if (json_array_append_new(arr, json_pack("{s:s, s:{s:I, s:I}}", "client",
							 l.names[i], "pages", "ephemeral",
							 (json_int_t)pc.ephemeral, "persistent",
							 (json_int_t)pc.persistent)))
			goto fail;
	}
	free(l.names);
	return arr;
fail:
	free(l.names);
	json_decref(arr);
	return NULL;
}

int ctl_drop_recovered(struct tmemd_control *ctl, const char *key, uint64_t *pages)
{
	struct tmem_page_counts pc;

	if (store_detached_page_counts(ctl->hooks.store, key, &pc))
		return -ENOENT;
	*pages = pc.ephemeral + pc.persistent;
	return store_drop_detached(ctl->hooks.store, key) == 1 ? 0 : -ENOENT;
}

static bool stored_grant(const struct ctl_state *st, const struct tmem_uuid *u, const char *p)
{
	for (size_t i = 0; i < st->nr_auths; i++)
		if (st->auths[i].uuid.lo == u->lo && st->auths[i].uuid.hi == u->hi &&
		    !strcmp(st->auths[i].principal, p))
			return true;
	return false;
}

/* Where a grant in force comes from: "tmemd.conf", "tmemctl" or both. */
static const char *grant_source(struct tmemd_control *ctl, const struct tmem_uuid *u,
				const char *p)
{
	bool file = ctl->hooks.file_grants && ctl->hooks.file_grants(ctl->ctx, u, p);
	bool stored = stored_grant(&ctl->state, u, p);

	return file && stored ? "tmemd.conf and tmemctl" : file ? "tmemd.conf" :
	       stored ? "tmemctl" : "tmemd";
}

struct grant_walk {
	json_t *arr;
	const struct tmem_uuid *only;   /* NULL: every uuid */
};

static int grant_cb(const struct tmem_uuid *u, const char *principal, void *arg)
{
	struct grant_walk *w = arg;
	char text[TMEM_UUID_TEXT];

	if (w->only) {
		if (u->lo != w->only->lo || u->hi != w->only->hi)
			return 0;
		return json_array_append_new(w->arr, json_string(principal));
	}
	tmem_uuid_format(u, text);
	return json_array_append_new(w->arr, json_pack("{s:s, s:s}", "uuid", text, "client",
						       principal));
}

json_t *ctl_grants_json(struct tmemd_control *ctl)
{
	struct grant_walk w = { .arr = json_array() };
	json_t *g;
	size_t i;

	if (!w.arr || store_for_each_shared_auth(ctl->hooks.store, grant_cb, &w)) {
		json_decref(w.arr);
		return NULL;
	}
	/* The source, after the walk: file_grants reads the daemon's config. */
	json_array_foreach(w.arr, i, g) {
		struct tmem_uuid u;

		if (tmem_uuid_parse(json_string_value(json_object_get(g, "uuid")), &u) ||
		    json_object_set_new(g, "from", json_string(grant_source(ctl, &u,
				json_string_value(json_object_get(g, "client")))))) {
			json_decref(w.arr);
			return NULL;
		}
	}
	return w.arr;
}

json_t *ctl_authorised_json(struct tmemd_control *ctl, const struct tmem_uuid *uuid)
{
	struct grant_walk w = { .arr = json_array(), .only = uuid };

	if (!w.arr || store_for_each_shared_auth(ctl->hooks.store, grant_cb, &w)) {
		json_decref(w.arr);
		return NULL;
	}
	return w.arr;
}
