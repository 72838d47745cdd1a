/* SPDX-License-Identifier: MIT */
/*
 * The settings stored for clients, attached or not, and the parked
 * clients: "list --all" shows them (a typo in a client name would
 * otherwise sit in state.json forever, invisible), and "forget CLIENT"
 * removes them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl_internal.h"

static int noop_cb(const struct tmemd_control_client *cl, void *arg)
{
	(void)cl;
	(void)arg;
	return 0;
}

bool ctl_attached(struct tmemd_control *ctl, const char *key)
{
	return ctl->hooks.with_client(ctl->ctx, key, noop_cb, NULL) == 0;
}

/* The uuids stored for principal, as text. */
static json_t *auths_of(const struct ctl_state *st, const char *principal)
{
	char text[TMEM_UUID_TEXT];
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < st->nr_auths; i++) {
		if (strcmp(st->auths[i].principal, principal))
			continue;
		tmem_uuid_format(&st->auths[i].uuid, text);
		if (json_array_append_new(arr, json_string(text))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static int add_entry(struct tmemd_control *ctl, json_t *arr, const char *name,
		     const struct ctl_settings *s)
{
	json_t *settings = json_object();

	if (!settings || (s && ctl_settings_dump(s, settings))) {
		json_decref(settings);
		return -ENOMEM;
	}
	return json_array_append_new(arr, json_pack("{s:s, s:b, s:o, s:o}", "name", name,
						     "attached", ctl_attached(ctl, name),
						     "settings", settings,
						     "shared_auth", auths_of(&ctl->state, name)));
}

json_t *ctl_stored_json(struct tmemd_control *ctl)
{
	const struct ctl_state *st = &ctl->state;
	json_t *arr = json_array();
	int rc = arr ? 0 : -ENOMEM;

	for (size_t i = 0; !rc && i < st->nr_clients; i++)
		rc = add_entry(ctl, arr, st->clients[i].name, &st->clients[i].s);
	/* Principals with authorisations but no settings, each once. */
	for (size_t i = 0; !rc && i < st->nr_auths; i++) {
		const char *p = st->auths[i].principal;
		bool seen = ctl_state_lookup(st, p) != NULL;

		for (size_t j = 0; !seen && j < i; j++)
			seen = !strcmp(st->auths[j].principal, p);
		if (!seen)
			rc = add_entry(ctl, arr, p, NULL);
	}
	if (rc) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

/* Revokes in the store what forget removes from the state, but not what
 * the config file grants (that stays, as after a restart). */
static int revoke_stored(struct tmemd_control *ctl, const char *key)
{
	for (size_t i = 0; i < ctl->state.nr_auths; i++) {
		const struct ctl_state_auth *a = &ctl->state.auths[i];
		int rc;

		if (strcmp(a->principal, key) ||
		    (ctl->hooks.file_grants && ctl->hooks.file_grants(ctl->ctx, &a->uuid, key)))
			continue;
		rc = store_shared_auth(ctl->hooks.store, &a->uuid, key, false);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * forget: the stored settings and authorisations of exactly the
 * principal given (a "domid:N" an older tmemd stored included), and the
 * parked client it names with its pages.  Refused while a client it
 * names is attached: its settings are in force.
 */
int ctl_cmd_forget(struct tmemd_control *ctl, const struct ctl_request *req,
		   json_t **result, struct ctl_err *err)
{
	const char *key = req->client; /* canonical (ctl_proto.c) */
	char parked_key[TMEM_CLIENT_NAME_MAX] = "";
	uint64_t parked_pages = 0, recovered_pages = 0;
	bool stored, parked = false, recovered;
	int rc;

	if (ctl_attached(ctl, key))
		return ctl_err_set(err, EBUSY, "client %s is attached and its settings are in "
				   "force; forget it once it has gone, or go back to tmemd.conf's "
				   "values now with tmemctl unset %s", key, key);
	rc = revoke_stored(ctl, key);
	if (rc)
		return ctl_err_set(err, -rc, "forget %s: %s", key, strerror(-rc));
	stored = ctl_state_forget(&ctl->state, key) == 0;
	if (stored && ctl->hooks.grants_changed)
		ctl->hooks.grants_changed(ctl->ctx);
	if (ctl->hooks.forget_parked)
		parked = ctl->hooks.forget_parked(ctl->ctx, key, parked_key, &parked_pages) == 0;
	/* A client a start recovered that has not come back: freed now,
	 * not at the end of reattach-grace (issue 30). */
	recovered = ctl_drop_recovered(ctl, key, &recovered_pages) == 0;
	if (!stored && !parked && !recovered)
		return ctl_err_set(err, ENOENT, "nothing is stored, parked or recovered for "
				   "client \"%s\"", key);
	if (stored) {
		rc = ctl_state_save(&ctl->state, ctl->state_path, err);
		if (rc)
			return ctl_err_prefix(err, "forgotten until the next restart, not saved");
	}
	*result = json_pack("{s:s, s:b, s:o, s:I, s:b, s:I}", "client", key, "stored", stored,
			    "parked", parked ? json_string(parked_key) : json_null(),
			    "parked_pages_dropped", (json_int_t)parked_pages,
			    "recovered", recovered,
			    "recovered_pages_dropped", (json_int_t)recovered_pages);
	return 0;
}

/* The parked clients, for "list --all" and the stats document. */
struct parked_walk {
	json_t *arr;
	uint64_t now;
};

static int parked_cb(const struct tmemd_control_parked *p, void *arg)
{
	struct parked_walk *w = arg;

	return json_array_append_new(w->arr, json_pack(
		"{s:s, s:s, s:I, s:i, s:I, s:I}", "client", p->key, "name", p->label,
		"pages", (json_int_t)p->pages, "pools", (int)p->pools,
		"parked_at_seconds", (json_int_t)p->parked_at,
		"age_seconds", (json_int_t)(w->now > p->parked_at ? w->now - p->parked_at : 0)));
}

json_t *ctl_parked_json(struct tmemd_control *ctl)
{
	struct parked_walk w = { .arr = json_array() };
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	w.now = (uint64_t)now.tv_sec;
	if (w.arr && ctl->hooks.for_each_parked &&
	    ctl->hooks.for_each_parked(ctl->ctx, parked_cb, &w)) {
		json_decref(w.arr);
		return NULL;
	}
	return w.arr;
}
