/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config_check.h"
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
 * The [tmemd] keys that keep their running values until a restart, each
 * by its offset in the config: a reload names every one the file now
 * sets to something else, in the log and in "status", or the admin would
 * believe the reload applied it (issue 30).  xen-domains, parked-max-age,
 * the local-max-* keys and the elastic pool's memory-reserve,
 * memory-grow-delay and xen-reserve (main.c) are not here: they apply on
 * reload.
 */
enum key_kind { KEY_STR, KEY_NUM, KEY_OCTAL, KEY_BYTES };

static const struct restart_key {
	const char *name;
	size_t off, size;
	enum key_kind kind;
} restart_keys[] = {
#define KEY(n, field, kind) \
	{ n, offsetof(struct tmemd_config, field), sizeof(((struct tmemd_config *)0)->field), kind }
	KEY("memory", memory_bytes, KEY_BYTES),
	KEY("workers", workers, KEY_NUM),
	KEY("transport", transport, KEY_STR),
	KEY("runtime-dir", runtime_dir, KEY_STR),
	KEY("state-dir", state_dir, KEY_STR),
	KEY("arena", arena_path, KEY_STR),
	KEY("control-admin-group", control_admin_group, KEY_STR),
	KEY("control-socket-mode", control_socket_mode, KEY_OCTAL),
	KEY("control-max-per-uid", control_max_per_uid, KEY_NUM),
	KEY("reattach-grace", reattach_grace_sec, KEY_NUM),
	KEY("compress-threshold", compress_threshold, KEY_NUM),
	KEY("spill", spill_path, KEY_STR),
	KEY("spill-size", spill_bytes, KEY_BYTES),
#undef KEY
};

/* The key's value in c as text; "" for unset (0 or empty). */
static void key_text(const struct restart_key *k, const struct tmemd_config *c, char *buf,
		     size_t len)
{
	const char *p = (const char *)c + k->off;
	unsigned long long v;

	if (k->kind == KEY_STR) {
		snprintf(buf, len, "%.*s", (int)k->size, p);
		return;
	}
	if (k->size == sizeof(uint64_t))
		v = *(const uint64_t *)(const void *)p;
	else
		v = *(const uint32_t *)(const void *)p;
	if (!v)
		buf[0] = '\0';
	else if (k->kind == KEY_OCTAL)
		snprintf(buf, len, "%04llo", v);
	else if (k->kind == KEY_BYTES)
		snprintf(buf, len, "%lluK", v >> 10);
	else
		snprintf(buf, len, "%llu", v);
}

/*
 * Names in pending (comma-separated) each restart-only key next sets to
 * a value other than run's, logs each with both values, then gives next
 * the running values: the config keeps saying what is in force.  A key
 * the file leaves at its built-in value counts as not set (the command
 * line may have set the running one).
 */
static void keep_restart_keys(const struct tmemd_config *run, struct tmemd_config *next,
			      const char *path, char *pending, size_t pendlen)
{
	struct tmemd_config dflt;
	size_t used = 0;

	tmemd_config_init(&dflt);
	if (pending && pendlen)
		pending[0] = '\0';
	for (size_t i = 0; i < sizeof(restart_keys) / sizeof(restart_keys[0]); i++) {
		const struct restart_key *k = &restart_keys[i];
		char want[300], have[300], base[300];

		key_text(k, next, want, sizeof(want));
		key_text(k, run, have, sizeof(have));
		key_text(k, &dflt, base, sizeof(base));
		if (want[0] && strcmp(want, base) && strcmp(want, have)) {
			log_warn("%s: %s = %s needs a restart (running with %s)%s", path, k->name,
				 want, have[0] ? have : "its default",
				 k->off == offsetof(struct tmemd_config, arena_path)
				 ? "; the pages stay in the running arena and are not moved: "
				   "the next start begins with an empty pool" : "");
			if (pending && used < pendlen)
				used += (size_t)snprintf(pending + used, pendlen - used, "%s%s",
							 used ? ", " : "", k->name);
		}
		memcpy((char *)next + k->off, (const char *)run + k->off, k->size);
	}
	tmemd_config_free(&dflt);
}

/*
 * The file must pass what its next start would check (config_check.h):
 * a reload that says ok to a file the next restart refuses is the bug of
 * issue 30.  Keys the file leaves out take the running values, as the
 * command line may have set them.
 */
static int check_next(const struct tmemd_config *run, const struct tmemd_config *next,
		      const char *path, char *err, size_t errlen)
{
	struct tmemd_config c = *next;
	char why[400];
	int rc;

	if (!c.memory_bytes)
		c.memory_bytes = run->memory_bytes;
	if (!c.runtime_dir[0])
		memcpy(c.runtime_dir, run->runtime_dir, sizeof(c.runtime_dir));
	if (!strcmp(c.transport, "auto"))
		memcpy(c.transport, run->transport, sizeof(c.transport));
	if (!c.arena_path[0])
		memcpy(c.arena_path, run->arena_path, sizeof(c.arena_path));
	rc = tmemd_config_check(&c, why, sizeof(why));
	if (rc)
		snprintf(err, errlen, "%s: %s", path, why);
	return rc;
}

int tmemd_reload(struct tmemd_config *cfg, const char *path,
		 struct tmemd_clients *reg, const struct tmemd_reload_keep *keep,
		 char *pending, size_t pendlen, char *err, size_t errlen)
{
	struct tmem_store *store = tmemd_clients_store(reg);
	struct tmemd_config next;
	int rc;

	if (!path)
		return 0; /* started without a file: nothing to re-read */
	tmemd_config_init(&next);
	rc = tmemd_config_load_file(&next, path, err, errlen);
	if (!rc)
		rc = check_next(cfg, &next, path, err, errlen);
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
	keep_restart_keys(cfg, &next, path, pending, pendlen);
	tmemd_config_free(cfg);
	*cfg = next;
	rc = tmemd_clients_reapply(reg);
	if (rc)
		snprintf(err, errlen, "%s: client settings refused: %s", path, strerror(-rc));
	return rc;
}
