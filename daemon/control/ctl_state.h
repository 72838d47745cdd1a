/* SPDX-License-Identifier: MIT */
/*
 * The admin state that must survive a restart: per-client settings and
 * shared-pool authorisations, keyed by principal in canonical text
 * (proto/tmem_names.h: "uuid:U" for the Xen domain with UUID U, a NAME
 * for the domain of that xl name or the local client of that name).  Kept in memory here and in <state_dir>/state.json:
 *
 *   {"version":2,
 *    "clients":{"NAME":{"weight":200,"ephemeral_max_pages":null,...}},
 *    "shared_auth":[{"uuid":"...","client":"NAME"}]}
 *
 * Saved atomically: a temp file in the same dir, fsync, rename over
 * state.json, fsync the dir.  A file that does not parse, or holds an
 * unknown key, a wrong type or a value out of range, is an error: the
 * daemon refuses to start rather than silently forget an admin's quota.
 * A key that is not canonical principal text (a bare "5", "domid:05",
 * "domid:x") is such an error.  Since issue 25 tmemd stores a domain
 * by its name or "uuid:U", never by "domid:N"; a "domid:N" entry an
 * older tmemd wrote still loads and applies to whatever domain has that
 * id now, as tmemd.conf's [client domid:N] does.  Version 1 files
 * (tmemd before principals) load as they are: their "domid:N" meant
 * domain N then too, and a name, a Xen domain's xl name or a local
 * client's, means the same again; legacy_names counts those names for
 * the daemon's notice.
 */
#ifndef TMEMD_CTL_STATE_H
#define TMEMD_CTL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ctl_proto.h"
#include "tmem_policy.h"

#define CTL_STATE_VERSION 2
#define CTL_STATE_VERSION_OLDEST 1
#define CTL_STATE_MAX_CLIENTS 4096
/* The largest state file tmemd reads (man tmemd(8), FILES): 4096 clients
 * with every setting and 256 authorisations take about 1 MiB as tmemctl
 * writes them; a larger file is damaged or not tmemd's. */
#define CTL_STATE_MAX_BYTES (4u << 20)
#define CTL_STATE_MAX_TEXT "4 MiB"

/* One limit for shared-pool authorisations everywhere: what the store
 * holds (tmemd.conf's and state.json's together). */
#define CTL_STATE_MAX_AUTHS TMEM_MAX_SHARED_AUTH

#define CTL_STR(x) #x
#define CTL_XSTR(x) CTL_STR(x)
/* For messages: the limit, and that it counts every source. */
#define CTL_AUTH_LIMIT_TEXT "at most " CTL_XSTR(TMEM_MAX_SHARED_AUTH) \
	" (uuid, client) pairs, tmemd.conf's and tmemctl's together"

struct ctl_state_client {
	char name[TMEM_CLIENT_NAME_MAX];
	struct ctl_settings s;
};

struct ctl_state_auth {
	struct tmem_uuid uuid;
	char principal[TMEM_CLIENT_NAME_MAX];
};

struct ctl_state {
	struct ctl_state_client *clients;
	size_t nr_clients, cap_clients;
	struct ctl_state_auth *auths;
	size_t nr_auths, cap_auths;
	unsigned legacy_names;  /* local names read from a version 1 file */
};

/* Empties st (a zeroed struct is an empty state).  Accepts NULL. */
void ctl_state_free(struct ctl_state *st);

/* Loads path into an empty st.  A missing file is an empty state (0).
 * Otherwise 0, or -errno with err naming the file and the problem: a
 * file over CTL_STATE_MAX_BYTES is -EFBIG, read no further. */
int ctl_state_load(struct ctl_state *st, const char *path, struct ctl_err *err);
/* The same, asking stop(stop_ctx) between reads (tmemd's start, which a
 * SIGTERM must be able to cut short): -ECANCELED when it said stop. */
int ctl_state_load_stoppable(struct ctl_state *st, const char *path,
			     bool (*stop)(void *), void *stop_ctx, struct ctl_err *err);
/* Writes st to path atomically.  0 or -errno with err. */
int ctl_state_save(const struct ctl_state *st, const char *path,
		   struct ctl_err *err);

/* Writes doc (indented, sorted keys, a final newline) to path with the
 * given mode and group (gid (gid_t)-1: unchanged), atomically: a temp
 * file beside it, fsync, rename, fsync of the dir.  0 or -errno. */
int ctl_write_json_atomic(const char *path, json_t *doc, mode_t mode, gid_t gid);

/* The stored settings of name, or NULL. */
const struct ctl_settings *ctl_state_lookup(const struct ctl_state *st,
					    const char *name);
/* Copies the fields set in s over *out. */
void ctl_settings_apply(const struct ctl_settings *s,
			struct tmem_client_settings *out);
/* Merges the fields set in delta into name's entry (created if new). */
int ctl_state_update(struct ctl_state *st, const char *name,
		     const struct ctl_settings *delta);
/* Puts name's stored settings back to old (NULL: none stored), undoing
 * a ctl_state_update() the daemon could not apply. */
void ctl_state_restore(struct ctl_state *st, const char *name,
		       const struct ctl_settings *old);
/* Removes name's stored settings and every authorisation stored for it
 * as principal.  0, or -ENOENT when nothing was stored for name. */
int ctl_state_forget(struct ctl_state *st, const char *name);
/* Removes the settings in mask (CTL_HAS_*) stored under name; the entry
 * goes when none is left.  Returns the bits that were stored. */
unsigned ctl_state_unset(struct ctl_state *st, const char *name, unsigned mask);
/* Adds (allow) or removes an authorisation.  0, -ENOSPC when full. */
int ctl_state_auth(struct ctl_state *st, const struct tmem_uuid *uuid,
		   const char *principal, bool allow);

#endif /* TMEMD_CTL_STATE_H */
