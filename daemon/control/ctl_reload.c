/* SPDX-License-Identifier: MIT */
/*
 * What the control server knows about the daemon's config reloads: the
 * authorisations a reload must keep (those an admin stored, which take
 * precedence over the file), and the last reload's result for "status".
 */
#include <stdio.h>
#include <string.h>

#include "ctl_internal.h"

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
	if (restart_pending)
		snprintf(ctl->reload.restart_pending, sizeof(ctl->reload.restart_pending), "%s",
			 restart_pending);
	ctl->reload.done = true;
	ctl->reload.rc = rc;
	clock_gettime(CLOCK_MONOTONIC, &ctl->reload.when);
	snprintf(ctl->reload.message, sizeof(ctl->reload.message), "%s", message ? message : "");
}

/* "arena, workers" as ["arena", "workers"]. */
static json_t *pending_json(const char *list)
{
	json_t *arr = json_array();
	char buf[sizeof(((struct tmemd_control *)0)->reload.restart_pending)];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *k = strtok_r(buf, ", ", &save); arr && k; k = strtok_r(NULL, ", ", &save))
		if (json_array_append_new(arr, json_string(k))) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

json_t *ctl_reload_json(const struct tmemd_control *ctl)
{
	struct timespec now;

	if (!ctl->reload.done)
		return json_pack("{s:s, s:n, s:n, s:[]}", "result", "none", "seconds_ago",
				 "message", "restart_pending");
	clock_gettime(CLOCK_MONOTONIC, &now);
	return json_pack("{s:s, s:I, s:s, s:o}", "result", ctl->reload.rc ? "failed" : "ok",
			 "seconds_ago", (json_int_t)(now.tv_sec - ctl->reload.when.tv_sec),
			 "message", ctl->reload.message,
			 "restart_pending", pending_json(ctl->reload.restart_pending));
}
