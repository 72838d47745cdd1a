/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "reload.h"

static bool has_auth(const struct tmemd_config *cfg, const char *name,
		     const struct tmem_uuid *u)
{
	const struct tmemd_client_conf *cc = tmemd_config_client(cfg, name);

	for (unsigned i = 0; cc && i < cc->nr_auth; i++)
		if (cc->auth[i].lo == u->lo && cc->auth[i].hi == u->hi)
			return true;
	return false;
}

/* Grants in to what from lacks (allow), or revokes (allow = false). */
static int apply_auth(struct tmem_store *store, const struct tmemd_config *in,
		      const struct tmemd_config *from, bool allow)
{
	for (unsigned i = 0; i < in->nr_clients; i++) {
		const struct tmemd_client_conf *cc = &in->clients[i];

		for (unsigned j = 0; j < cc->nr_auth; j++) {
			int rc;

			if (has_auth(from, cc->name, &cc->auth[j]))
				continue;
			rc = tmem_shared_auth(store, &cc->auth[j], cc->name, allow);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int tmemd_reload(struct tmemd_config *cfg, const char *path,
		 struct tmemd_clients *reg, char *err, size_t errlen)
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
		rc = apply_auth(store, cfg, &next, false);
		if (!rc)
			rc = apply_auth(store, &next, cfg, true);
		if (rc)
			snprintf(err, errlen, "%s: shared-auth: %s", path, strerror(-rc));
	}
	if (rc) {
		tmemd_config_free(&next);
		return rc;
	}
	/* Running values of [tmemd] stay (command line included). */
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
