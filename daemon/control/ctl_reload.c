/* SPDX-License-Identifier: MIT */
/*
 * What the control server knows about the daemon's config reloads: the
 * authorisations a reload must keep (those an admin stored, which take
 * precedence over the file), and the last reload's result for "status".
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "ctl_internal.h"

/* A walk over the attached clients for the settings tmemctl stored that
 * differ from what the file now gives (note_overrides()). */
struct override_walk {
	struct tmemd_control *ctl;
	const char *path;
	char *list;
	size_t len, used;
};

static void note_one(struct override_walk *w, const char *client, const char *key,
		     const char *file, const char *stored, const char *flag)
{
	ctl_log(w->ctl, LOG_WARNING, "%s: %s: %s = %s, but %s set by tmemctl stays in force; "
		"tmemctl unset %s --%s goes back to the file", w->path, client, key, file,
		stored, client, flag);
	if (w->used < w->len)
		w->used += (size_t)snprintf(w->list + w->used, w->len - w->used, "%s%s %s",
					    w->used ? ", " : "", client, key);
}

/* A cap as tmemd.conf writes it: "none" or "NK". */
static const char *cap_text(uint64_t pages, char *buf, size_t len)
{
	if (pages == TMEM_NO_CAP)
		return "none";
	snprintf(buf, len, "%lluK", (unsigned long long)pages * (TMEM_PAGE_SIZE / 1024));
	return buf;
}

static int override_cb(const struct tmemd_control_client *cl, void *arg)
{
	struct override_walk *w = arg;
	unsigned both = cl->names ? ctl_stored_has(w->ctl, cl->names) & cl->file_has : 0;
	struct tmem_client_settings s;
	char a[TMEM_COMPRESS_TEXT_MAX + 32], b[TMEM_COMPRESS_TEXT_MAX + 32];

	if (!both)
		return 0;
	tmem_policy_client_get(cl->pc, &s);
	if ((both & CTL_HAS_WEIGHT) && s.weight != cl->file.weight) {
		snprintf(a, sizeof(a), "%u", cl->file.weight);
		snprintf(b, sizeof(b), "%u", s.weight);
		note_one(w, cl->name, "weight", a, b, "weight");
	}
	if ((both & CTL_HAS_EPH_MAX) && s.ephemeral_max != cl->file.ephemeral_max)
		note_one(w, cl->name, "ephemeral-max", cap_text(cl->file.ephemeral_max, a, sizeof(a)),
			 cap_text(s.ephemeral_max, b, sizeof(b)), "ephemeral-max");
	if ((both & CTL_HAS_PERS_MAX) && s.persistent_max != cl->file.persistent_max)
		note_one(w, cl->name, "persistent-max",
			 cap_text(cl->file.persistent_max, a, sizeof(a)),
			 cap_text(s.persistent_max, b, sizeof(b)), "persistent-max");
	if ((both & CTL_HAS_SPILL_MAX) && s.spill_max != cl->file.spill_max)
		note_one(w, cl->name, "spill-max", cap_text(cl->file.spill_max, a, sizeof(a)),
			 cap_text(s.spill_max, b, sizeof(b)), "spill-max");
	if ((both & CTL_HAS_COMPRESS) &&
	    memcmp(&s.compress, &cl->file.compress, sizeof(s.compress)))
		note_one(w, cl->name, "compress", tmem_compress_format(&cl->file.compress, a, sizeof(a)),
			 tmem_compress_format(&s.compress, b, sizeof(b)), "compress");
	return 0;
}

/*
 * After a good reload: each attached client's setting that tmemctl
 * stored and the file now sets otherwise is logged, and listed for
 * "status" (issue 30: the stored value won silently and the reload
 * said "ok").
 */
static void note_overrides(struct tmemd_control *ctl, const char *path)
{
	struct override_walk w = { .ctl = ctl, .path = path, .list = ctl->reload.overridden,
				   .len = sizeof(ctl->reload.overridden) };

	ctl->reload.overridden[0] = '\0';
	ctl->hooks.for_each_client(ctl->ctx, override_cb, &w);
}

bool tmemd_control_auth_stored(const struct tmemd_control *ctl,
			       const struct tmem_uuid *uuid, const char *principal)
{
	for (size_t i = 0; i < ctl->state.nr_auths; i++) {
		const struct ctl_state_auth *a = &ctl->state.auths[i];

		if (a->uuid.lo == uuid->lo && a->uuid.hi == uuid->hi &&
		    !strcmp(a->principal, principal))
			return true;
	}
	return false;
}

void tmemd_control_note_reload(struct tmemd_control *ctl, int rc, const char *message,
			       const char *restart_pending)
{
	if (!rc && ctl->hooks.for_each_client)
		note_overrides(ctl, "tmemd.conf");
	if (restart_pending)
		snprintf(ctl->reload.restart_pending, sizeof(ctl->reload.restart_pending), "%s",
			 restart_pending);
	ctl->reload.done = true;
	ctl->reload.rc = rc;
	clock_gettime(CLOCK_MONOTONIC, &ctl->reload.when);
	snprintf(ctl->reload.message, sizeof(ctl->reload.message), "%s", message ? message : "");
}

/* "arena, workers" as ["arena", "workers"] (sep: the separators). */
static json_t *pending_json(const char *list, const char *sep)
{
	json_t *arr = json_array();
	char buf[sizeof(((struct tmemd_control *)0)->reload.overridden)];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *k = strtok_r(buf, sep, &save); arr && k; k = strtok_r(NULL, sep, &save))
		if (json_array_append_new(arr, json_string(k + strspn(k, " ")))) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

json_t *ctl_reload_json(const struct tmemd_control *ctl)
{
	struct timespec now;

	if (!ctl->reload.done)
		return json_pack("{s:s, s:n, s:n, s:[], s:[]}", "result", "none", "seconds_ago",
				 "message", "restart_pending", "overridden");
	clock_gettime(CLOCK_MONOTONIC, &now);
	return json_pack("{s:s, s:I, s:s, s:o, s:o}", "result", ctl->reload.rc ? "failed" : "ok",
			 "seconds_ago", (json_int_t)(now.tv_sec - ctl->reload.when.tv_sec),
			 "message", ctl->reload.message,
			 "restart_pending", pending_json(ctl->reload.restart_pending, ", "),
			 "overridden", pending_json(ctl->reload.overridden, ","));
}
