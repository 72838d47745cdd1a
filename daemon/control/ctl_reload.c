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

void tmemd_control_note_reload(struct tmemd_control *ctl, int rc, const char *message)
{
	ctl->reload.done = true;
	ctl->reload.rc = rc;
	clock_gettime(CLOCK_MONOTONIC, &ctl->reload.when);
	snprintf(ctl->reload.message, sizeof(ctl->reload.message), "%s", message ? message : "");
}

json_t *ctl_reload_json(const struct tmemd_control *ctl)
{
	struct timespec now;

	if (!ctl->reload.done)
		return json_pack("{s:s, s:n, s:n}", "result", "none", "seconds_ago", "message");
	clock_gettime(CLOCK_MONOTONIC, &now);
	return json_pack("{s:s, s:I, s:s}", "result", ctl->reload.rc ? "failed" : "ok",
			 "seconds_ago", (json_int_t)(now.tv_sec - ctl->reload.when.tv_sec),
			 "message", ctl->reload.message);
}
