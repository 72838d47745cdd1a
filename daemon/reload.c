/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "reload.h"

/*
 * Grants in to what from lacks (allow), or revokes (allow = false).  A
 * revoke spares what an admin stored with tmemctl shared-auth (keep):
 * stored settings take precedence over the file, as at a restart.
 */
static int apply_auth(struct tmem_store *store, const struct tmemd_config *in,
		      const struct tmemd_config *from, bool allow,
		      const struct tmemd_reload_keep *keep)
{
	for (unsigned i = 0; i < in->nr_clients; i++) {
		const struct tmemd_client_conf *cc = &in->clients[i];

		for (unsigned j = 0; j < cc->nr_auth; j++) {
			int rc;

			if (tmemd_config_grants(from, cc->name, &cc->auth[j]))
				continue;
			if (!allow && keep && keep->auth_stored &&
			    keep->auth_stored(keep->ctx, &cc->auth[j], cc->name))
				continue;
			rc = store_shared_auth(store, &cc->auth[j], cc->name, allow);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/*
 * The [tmemd] keys keep their running values until a restart: say so for
 * each one the file now sets to something else, or the admin would
 * believe the reload applied it.  A key still at its built-in value
 * counts as not set.
 */
static void note_restart_keys(const struct tmemd_config *run, const struct tmemd_config *next,
			      const char *path)
{
	struct tmemd_config dflt;

	tmemd_config_init(&dflt);
	if (next->memory_bytes && next->memory_bytes != run->memory_bytes)
		log_warn("%s: memory = %llu KiB needs a restart (running with %llu KiB)", path,
			 (unsigned long long)(next->memory_bytes >> 10),
			 (unsigned long long)(run->memory_bytes >> 10));
	if (next->workers && next->workers != run->workers)
		log_warn("%s: workers = %u needs a restart (running with %u)", path,
			 next->workers, run->workers);
	if (strcmp(next->transport, dflt.transport) && strcmp(next->transport, run->transport))
		log_warn("%s: transport = %s needs a restart (running with %s)", path,
			 next->transport, run->transport);
	if (next->runtime_dir[0] && strcmp(next->runtime_dir, run->runtime_dir))
		log_warn("%s: runtime-dir = %s needs a restart (running with %s)", path,
			 next->runtime_dir, run->runtime_dir);
	if (next->state_dir[0] && strcmp(next->state_dir, run->state_dir))
		log_warn("%s: state-dir = %s needs a restart", path, next->state_dir);
	tmemd_config_free(&dflt);
}

int tmemd_reload(struct tmemd_config *cfg, const char *path,
		 struct tmemd_clients *reg, const struct tmemd_reload_keep *keep,
		 char *err, size_t errlen)
{
	struct tmem_store *store = tmemd_clients_store(reg);
	struct tmemd_config next;
	int rc;

	if (!path)
		return 0; /* started without a file: nothing to re-read */
	tmemd_config_init(&next);
	rc = tmemd_config_load_file(&next, path, err, errlen);
	if (!rc) {
		rc = tmem_policy_set_defaults(tmemd_clients_policy(reg), &next.defaults);
		if (rc)
			snprintf(err, errlen, "%s: defaults refused: %s", path, strerror(-rc));
	}
	if (!rc) {
		rc = apply_auth(store, cfg, &next, false, keep);
		if (!rc)
			rc = apply_auth(store, &next, cfg, true, NULL);
		if (rc)
			snprintf(err, errlen, "%s: shared-auth: %s", path, strerror(-rc));
	}
	if (rc) {
		tmemd_config_free(&next);
		return rc;
	}
	/* Running values of [tmemd] stay (command line included). */
	note_restart_keys(cfg, &next, path);
	memcpy(next.state_dir, cfg->state_dir, sizeof(next.state_dir));
	next.memory_bytes = cfg->memory_bytes;
	next.workers = cfg->workers;
	memcpy(next.runtime_dir, cfg->runtime_dir, sizeof(next.runtime_dir));
	memcpy(next.transport, cfg->transport, sizeof(next.transport));
	tmemd_config_free(cfg);
	*cfg = next;
	rc = tmemd_clients_reapply(reg);
	if (rc)
		snprintf(err, errlen, "%s: client settings refused: %s", path, strerror(-rc));
	return rc;
}
