/* SPDX-License-Identifier: MIT */
/*
 * The command handlers, one per command, chosen from a table by the
 * parsed command.  Requests arrive validated (ctl_proto.c); handlers only
 * check what needs the daemon's state (does the client exist, does the
 * policy accept the value).
 *
 * Write commands change the running policy/store first, then the state
 * file.  If saving fails the change is in force but not persistent; the
 * reply is an error that says so, so an admin never believes a setting
 * survives a restart when it will not.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ctl_internal.h"

typedef int (*ctl_handler)(struct tmemd_control *, const struct ctl_request *,
			   json_t **, struct ctl_err *);

/* What the per-client callbacks below (run under the daemon's lock) do. */
struct client_op {
	const struct ctl_settings *s;  /* for apply_cb */
	char name[TMEM_CLIENT_NAME_MAX];
	uint64_t evicted;              /* for flush_cb */
	struct tmem_page_counts left;
};

static int name_cb(const struct tmemd_control_client *cl, void *arg)
{
	struct client_op *op = arg;

	snprintf(op->name, sizeof(op->name), "%s", cl->name);
	return 0;
}

static int save(struct tmemd_control *ctl, struct ctl_err *err)
{
	int rc = ctl_state_save(&ctl->state, ctl->state_path, err);

	if (rc)
		ctl_err_prefix(err, "applied but not saved (lost on restart)");
	return rc;
}

static int apply_cb(const struct tmemd_control_client *cl, void *arg)
{
	struct client_op *op = arg;
	struct tmem_client_settings cur;

	name_cb(cl, arg);
	tmem_policy_client_get(cl->pc, &cur);
	ctl_settings_apply(op->s, &cur);
	return tmem_policy_client_set(cl->pc, &cur);
}

/* The live commands' answer for a name no attached client has. */
static int not_attached(struct ctl_err *err, const char *spec)
{
	return ctl_err_set(err, ENOENT, "no attached client \"%s\" (not a running domain's "
			   "xl name, uuid:U or domid, nor a local client)", spec);
}

/* Merges s into what is stored under key (not saved yet). */
static int record(struct tmemd_control *ctl, const char *key, const struct ctl_settings *s,
		  struct ctl_err *err)
{
	int rc = ctl_state_update(&ctl->state, key, s);

	if (rc)
		return ctl_err_set(err, -rc, "client %s: cannot record settings: %s", key,
				   strerror(-rc));
	return 0;
}

static bool is_domid(const char *spec)
{
	return !strncmp(spec, TMEM_DOMID_PREFIX, TMEM_DOMID_PREFIX_LEN);
}

/*
 * The principal a setting or an authorisation for spec is stored under:
 * spec itself, except that a domid names a domain only while it runs
 * (xl save, restore and migrate give it a new one, and another domain
 * may take it next), so "domid:N" is stored under the attached domain
 * N's own key (its uuid:U).  -ENOENT with err when no domain N is.
 */
static int store_key(struct tmemd_control *ctl, const char *spec,
		     char key[TMEM_CLIENT_NAME_MAX], struct ctl_err *err)
{
	struct client_op op = { 0 };

	snprintf(key, TMEM_CLIENT_NAME_MAX, "%s", spec);
	if (!is_domid(spec))
		return 0;
	if (ctl->hooks.with_client(ctl->ctx, spec, name_cb, &op) == -ENOENT)
		return ctl_err_set(err, ENOENT, "no Xen domain %s is attached; a domain that "
				   "is not running is named by its xl name or uuid:U",
				   spec + TMEM_DOMID_PREFIX_LEN);
	snprintf(key, TMEM_CLIENT_NAME_MAX, "%s", op.name);
	return 0;
}

/*
 * set -a: every connected client gets the settings now, and nothing is
 * stored (issue 30: "set -a" stored an entry for every transient local
 * client).  As xl tmem-set -a; a reload or a restart goes back to what
 * is stored and to tmemd.conf.
 */
static int set_live(struct tmemd_control *ctl, const struct ctl_request *req, const char *key,
		    json_t **result, struct ctl_err *err)
{
	struct client_op op = { .s = &req->s };
	int rc = ctl->hooks.with_client(ctl->ctx, key, apply_cb, &op);

	if (rc == -ENOENT)
		return not_attached(err, key);
	if (rc)
		return ctl_err_set(err, -rc, "client %s: the policy refused these settings: %s",
				   op.name, strerror(-rc));
	*result = json_pack("{s:s, s:b, s:b}", "client", op.name, "connected", true, "stored",
			    false);
	return 0;
}

/*
 * set: stores s under spec's key (store_key()), then gives every
 * attached client it names its settings again, so the most specific
 * principal's entry stays in force (a domain's uuid:U over its xl name
 * over domid:N).  Stored whether or not such a client is attached now:
 * a name or uuid:U given before the domain exists applies when it
 * appears.  A policy that refuses the settings leaves nothing stored.
 */
static int ctl_cmd_set(struct tmemd_control *ctl, const struct ctl_request *req,
		       json_t **result, struct ctl_err *err)
{
	struct client_op op = { .s = &req->s };
	const struct ctl_settings *cur;
	struct ctl_settings old;
	char key[TMEM_CLIENT_NAME_MAX];
	bool had;
	int rc = store_key(ctl, req->client, key, err);

	if (rc)
		return rc;
	if (req->live)
		return set_live(ctl, req, key, result, err);
	cur = ctl_state_lookup(&ctl->state, key);
	had = cur != NULL;
	if (had)
		old = *cur;
	rc = record(ctl, key, &req->s, err);
	if (rc)
		return rc;
	if (ctl->hooks.reapply)
		rc = ctl->hooks.reapply(ctl->ctx);
	else
		rc = ctl->hooks.with_client(ctl->ctx, key, apply_cb, &op);
	if (rc && rc != -ENOENT) {
		ctl_state_restore(&ctl->state, key, had ? &old : NULL);
		if (ctl->hooks.reapply)
			ctl->hooks.reapply(ctl->ctx);
		return ctl_err_set(err, -rc, "client %s: the policy refused these settings: "
				   "%s", key, strerror(-rc));
	}
	rc = save(ctl, err);
	if (rc)
		return rc;
	*result = json_pack("{s:s, s:b, s:b}", "client", key, "connected", ctl_attached(ctl, key),
			    "stored", true);
	return 0;
}

/* The settings names of mask, for a reply. */
static json_t *keys_json(unsigned mask)
{
	json_t *arr = json_array();

	for (unsigned bit = 1; arr && bit & CTL_SETTINGS_MASK; bit <<= 1)
		if ((mask & bit) && json_array_append_new(arr, json_string(ctl_setting_name(bit)))) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

/*
 * unset: removes settings tmemctl stored under spec's key, so tmemd.conf's
 * values (or the defaults) are in force again, at once for an attached
 * client (issue 30: a stored value beat the file with no way back but
 * forget, which an attached client refused).
 */
static int ctl_cmd_unset(struct tmemd_control *ctl, const struct ctl_request *req,
			 json_t **result, struct ctl_err *err)
{
	const struct ctl_settings *cur;
	struct ctl_settings old;
	char key[TMEM_CLIENT_NAME_MAX];
	unsigned removed;
	int rc = store_key(ctl, req->client, key, err);

	if (rc)
		return rc;
	cur = ctl_state_lookup(&ctl->state, key);
	if (!cur || !(cur->has & req->keys))
		return ctl_err_set(err, ENOENT, "tmemctl stored none of these settings for "
				   "client %s: the values in force are tmemd.conf's or the "
				   "defaults", key);
	old = *cur;
	removed = ctl_state_unset(&ctl->state, key, req->keys);
	rc = ctl->hooks.reapply ? ctl->hooks.reapply(ctl->ctx) : 0;
	if (rc) {
		ctl_state_restore(&ctl->state, key, &old);
		if (!ctl_state_lookup(&ctl->state, key))
			ctl_state_update(&ctl->state, key, &old);
		if (ctl->hooks.reapply)
			ctl->hooks.reapply(ctl->ctx);
		return ctl_err_set(err, -rc, "client %s: the policy refused the file's settings: "
				   "%s", key, strerror(-rc));
	}
	rc = save(ctl, err);
	if (rc)
		return rc;
	*result = json_pack("{s:s, s:b, s:o}", "client", key, "connected", ctl_attached(ctl, key),
			    "removed", keys_json(removed));
	return 0;
}

/*
 * freeze/thaw: a live command, for an attached client only; the flag is
 * stored under the client's own key, so it holds across a restart of
 * tmemd and follows a domain across save, restore and migration.
 */
static int ctl_cmd_freeze_thaw(struct tmemd_control *ctl, const struct ctl_request *req,
			       json_t **result, struct ctl_err *err)
{
	struct ctl_settings s = {
		.has = CTL_HAS_FROZEN,
		.v.frozen = req->cmd == CTL_FREEZE,
	};
	struct client_op op = { .s = &s };
	int rc = ctl->hooks.with_client(ctl->ctx, req->client, apply_cb, &op);

	if (rc == -ENOENT)
		return not_attached(err, req->client);
	if (rc)
		return ctl_err_set(err, -rc, "client %s: the policy refused: %s", op.name,
				   strerror(-rc));
	/* Thawed is the default: nothing to store (issue 30: "thaw -a"
	 * left an entry for every transient local client). */
	if (req->cmd == CTL_THAW)
		ctl_state_unset(&ctl->state, op.name, CTL_HAS_FROZEN);
	else
		rc = record(ctl, op.name, &s, err);
	if (rc)
		return rc;
	rc = save(ctl, err);
	if (rc)
		return rc;
	*result = json_pack("{s:s, s:b, s:b}", "client", op.name, "connected", true, "frozen",
			    req->cmd == CTL_FREEZE);
	return 0;
}

/*
 * Drops every ephemeral page the client is charged for, oldest first.
 * Persistent pages are never dropped by an admin: only the guest's own
 * flush, pool destroy or its teardown removes them (DESIGN.md).  Bounded
 * by what was there, so a guest putting meanwhile cannot keep the
 * daemon's loop here.
 */
static int flush_cb(const struct tmemd_control_client *cl, void *arg)
{
	struct tmem_client *c = tmem_pclient_store_client(cl->pc);
	struct client_op *op = arg;
	int rc = 0;

	name_cb(cl, arg);
	store_client_page_counts(c, &op->left);
	/* Counted as admin_flushes, not evictions: evictions are the
	 * memory-pressure signal (issue 30). */
	while (op->evicted < op->left.ephemeral && (rc = (int)store_client_admin_flush_n(c, 1)) == 1)
		op->evicted++;
	store_client_page_counts(c, &op->left);
	return rc < 0 ? rc : 0;
}

static int ctl_cmd_flush(struct tmemd_control *ctl, const struct ctl_request *req,
			 json_t **result, struct ctl_err *err)
{
	struct client_op op = { 0 };
	int rc = ctl->hooks.with_client(ctl->ctx, req->client, flush_cb, &op);

	if (rc == -ENOENT)
		return not_attached(err, req->client);
	if (rc)
		return ctl_err_set(err, -rc, "flush %s: %s", op.name, strerror(-rc));
	*result = json_pack("{s:s, s:I, s:I, s:I}", "client", op.name,
			    "evicted_pages", (json_int_t)op.evicted,
			    "ephemeral_pages_left", (json_int_t)op.left.ephemeral,
			    "persistent_pages_kept", (json_int_t)op.left.persistent);
	return 0;
}

/*
 * shared-auth: stored, and given to the store, under spec's key
 * (store_key()); the daemon then hands it on to each attached client
 * spec names (grants_changed).  A revoke of domid:N also takes back an
 * authorisation an older tmemd stored under "domid:N" itself.
 */
static int ctl_cmd_shared_auth(struct tmemd_control *ctl, const struct ctl_request *req,
			       json_t **result, struct ctl_err *err)
{
	char uuid[TMEM_UUID_TEXT], key[TMEM_CLIENT_NAME_MAX];
	bool legacy = req->revoke && is_domid(req->client) &&
		      tmemd_control_stored_auths(ctl, req->client, NULL, 0) > 0;
	int rc = store_key(ctl, req->client, key, err);

	if (rc && !legacy)
		return rc;
	if (rc)  /* only the old entry to take back */
		snprintf(key, sizeof(key), "%s", req->client);
	tmem_uuid_format(&req->uuid, uuid);
	rc = store_shared_auth(ctl->hooks.store, &req->uuid, key, !req->revoke);
	if (rc)
		return ctl_err_set(err, -rc, "shared-auth %s %s: %s", uuid, key,
				   rc == -ENOSPC ? "tmemd holds " CTL_AUTH_LIMIT_TEXT
				   "; revoke one first" : strerror(-rc));
	rc = ctl_state_auth(&ctl->state, &req->uuid, key, !req->revoke);
	if (rc == 0 && legacy && strcmp(key, req->client)) {
		store_shared_auth(ctl->hooks.store, &req->uuid, req->client, false);
		rc = ctl_state_auth(&ctl->state, &req->uuid, req->client, false);
	}
	if (ctl->hooks.grants_changed)
		ctl->hooks.grants_changed(ctl->ctx);
	if (rc)
		return ctl_err_set(err, -rc, "shared-auth: cannot record: %s", strerror(-rc));
	rc = save(ctl, err);
	if (rc)
		return rc;
	*result = json_pack("{s:s, s:s, s:b}", "uuid", uuid, "client", key,
			    "authorised", !req->revoke);
	return 0;
}

/* Not persisted: the pool size at start comes from tmemd's config. */
static int ctl_cmd_pool_size(struct tmemd_control *ctl, const struct ctl_request *req,
			     json_t **result, struct ctl_err *err)
{
	struct tmem_arena_counts a;
	int rc = tmem_policy_resize(ctl->hooks.policy, req->pages);

	if (rc == -EBUSY) {
		/* Say the minimum (issue 30): policy/resize.c keeps a page
		 * of pool for each persistent page, whatever compression
		 * saves, and evicts ephemeral ones to fit. */
		store_arena_counts(ctl->hooks.store, &a);
		return ctl_err_set(err, EBUSY, "cannot shrink to %llu pages: the %llu persistent "
				   "pages need %llu pages (%llu KiB), the smallest the pool can "
				   "be now", (unsigned long long)req->pages,
				   (unsigned long long)a.persistent, (unsigned long long)a.persistent,
				   (unsigned long long)(a.persistent * (TMEM_PAGE_SIZE / 1024)));
	}
	if (rc == -EINVAL)
		return ctl_err_set(err, EINVAL, "%llu pages is more than the host's RAM, "
				   "the most tmemd can grow its pool to",
				   (unsigned long long)req->pages);
	if (rc)
		return ctl_err_set(err, -rc, "pool-size: %s", strerror(-rc));
	store_arena_counts(ctl->hooks.store, &a);
	*result = json_pack("{s:I, s:I}", "total_pages", (json_int_t)a.total_pages,
			    "free_pages", (json_int_t)a.free_pages);
	return 0;
}

/* tmemctl release: what xend did before it ballooned dom0 down. */
static int ctl_cmd_release(struct tmemd_control *ctl, const struct ctl_request *req,
			   json_t **result, struct ctl_err *err)
{
	uint64_t released = 0;
	int rc;

	if (!ctl->hooks.release)
		return ctl_err_set(err, EOPNOTSUPP, "release: this tmemd has no elastic pool");
	rc = ctl->hooks.release(ctl->ctx, req->pages * TMEM_PAGE_SIZE, &released);
	if (rc)
		return ctl_err_set(err, -rc, "release: %s", strerror(-rc));
	*result = json_pack("{s:I, s:I, s:o}", "asked_bytes",
			    (json_int_t)(req->pages * TMEM_PAGE_SIZE),
			    "released_bytes", (json_int_t)released, "memory", ctl_memory_json(ctl));
	return 0;
}

static int count_client(const struct tmemd_control_client *cl, void *arg)
{
	(void)cl;
	++*(unsigned *)arg;
	return 0;
}

/* CPU time tmemd has used, user and system, all threads: what tmem
 * costs the host (issue 30), beside what it saves. */
static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0.0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int ctl_cmd_status(struct tmemd_control *ctl, const struct ctl_request *req,
			  json_t **result, struct ctl_err *err)
{
	struct tmemd_control_park_stats park = { 0 };
	struct timespec now;
	unsigned clients = 0;

	(void)req;
	(void)err;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ctl->hooks.for_each_client(ctl->ctx, count_client, &clients);
	if (ctl->hooks.park_stats)
		ctl->hooks.park_stats(ctl->ctx, &park);
	*result = json_pack(
		"{s:i, s:{s:s, s:i, s:I, s:I, s:f, s:s, s:s, s:s, s:s, s:o}, s:o, s:o, s:i, s:i, s:i, s:o}",
		"version", TMEMD_CONTROL_PROTO_VERSION,
		"daemon", "version", ctl->version, "pid", (int)getpid(),
		"uptime_seconds", (json_int_t)(now.tv_sec - ctl->started.tv_sec),
		"start_time_seconds", (json_int_t)ctl->started_wall,
		"cpu_seconds", cpu_seconds(),
		"transport", ctl->transport, "runtime_dir", ctl->runtime_dir,
		"state_dir", ctl->state_dir, "control_socket", ctl->sock_path,
		"last_reload", ctl_reload_json(ctl),
		"pool", ctl_pool_json(ctl), "memory", ctl_memory_json(ctl),
		"clients", (int)clients, "parked_clients", (int)park.parked,
		"control_connections", (int)ctl->nr_conns,
		"restart", ctl_restart_json(ctl));
	return 0;
}

/* The client "list CLIENT" or "stats CLIENT" names (NULL: every one),
 * or -ENOENT with err when it names none. */
static int only_client(struct tmemd_control *ctl, const struct ctl_request *req,
		       const char **only, struct ctl_err *err)
{
	struct client_op op = { 0 };

	*only = NULL;
	if (!(req->has & CTL_HAS_CLIENT))
		return 0;
	if (ctl->hooks.with_client(ctl->ctx, req->client, name_cb, &op) == -ENOENT)
		return not_attached(err, req->client);
	*only = req->client;
	return 0;
}

static int ctl_cmd_stats(struct tmemd_control *ctl, const struct ctl_request *req,
			 json_t **result, struct ctl_err *err)
{
	const char *only;
	int rc = only_client(ctl, req, &only, err);

	if (!rc)
		*result = ctl_stats_document(ctl, only);
	return rc;
}

static int ctl_cmd_list(struct tmemd_control *ctl, const struct ctl_request *req,
			json_t **result, struct ctl_err *err)
{
	const char *only;
	int rc = only_client(ctl, req, &only, err);

	if (rc)
		return rc;
	*result = ctl_list_document(ctl, only);
	if (*result && req->all && (json_object_set_new(*result, "stored", ctl_stored_json(ctl)) ||
				    json_object_set_new(*result, "parked", ctl_parked_json(ctl)) ||
				    json_object_set_new(*result, "recovered",
							ctl_recovered_json(ctl)) ||
				    json_object_set_new(*result, "grants", ctl_grants_json(ctl)))) {
		json_decref(*result);
		*result = NULL;
	}
	return 0;
}

static const ctl_handler handlers[CTL_CMD_NR] = {
	[CTL_STATUS] = ctl_cmd_status,
	[CTL_STATS] = ctl_cmd_stats,
	[CTL_LIST] = ctl_cmd_list,
	[CTL_SET] = ctl_cmd_set,
	[CTL_FREEZE] = ctl_cmd_freeze_thaw,
	[CTL_THAW] = ctl_cmd_freeze_thaw,
	[CTL_FLUSH] = ctl_cmd_flush,
	[CTL_SHARED_AUTH] = ctl_cmd_shared_auth,
	[CTL_POOL_SIZE] = ctl_cmd_pool_size,
	[CTL_RELEASE] = ctl_cmd_release,
	[CTL_FORGET] = ctl_cmd_forget,
	[CTL_UNSET] = ctl_cmd_unset,
	[CTL_MIGRATE_CHECK] = ctl_cmd_migrate_check,
	[CTL_MIGRATE_PUSH] = ctl_cmd_migrate_push,
};

int ctl_cmd_run(struct tmemd_control *ctl, const struct ctl_request *req,
		json_t **result, struct ctl_err *err)
{
	int rc;

	*result = NULL;
	if ((unsigned)req->cmd >= CTL_CMD_NR || !handlers[req->cmd])
		return ctl_err_set(err, EOPNOTSUPP, "unknown command");
	rc = handlers[req->cmd](ctl, req, result, err);
	if (rc == 0 && !*result)
		return ctl_err_set(err, ENOMEM, "out of memory");
	return rc;
}
