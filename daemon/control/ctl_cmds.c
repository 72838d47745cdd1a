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

/* set/freeze/thaw: apply s to the client if connected, then store it. */
static int change_settings(struct tmemd_control *ctl, const char *spec,
			   const struct ctl_settings *s, json_t **result,
			   struct ctl_err *err)
{
	struct client_op op = { .s = s };
	const char *key = spec; /* canonical (ctl_proto.c): one key per principal */
	int rc, found;

	found = ctl->hooks.with_client(ctl->ctx, spec, apply_cb, &op);
	if (found && found != -ENOENT)
		return ctl_err_set(err, -found, "client %s: the policy refused "
				   "these settings: %s", key, strerror(-found));
	rc = ctl_state_update(&ctl->state, key, s);
	if (rc)
		return ctl_err_set(err, -rc, "client %s: cannot record settings: %s",
				   key, strerror(-rc));
	rc = save(ctl, err);
	if (rc)
		return rc;
	*result = json_pack("{s:s, s:b}", "client", key, "connected", found == 0);
	return 0;
}

static int ctl_cmd_set(struct tmemd_control *ctl, const struct ctl_request *req,
		       json_t **result, struct ctl_err *err)
{
	return change_settings(ctl, req->client, &req->s, result, err);
}

static int ctl_cmd_freeze_thaw(struct tmemd_control *ctl, const struct ctl_request *req,
			       json_t **result, struct ctl_err *err)
{
	struct ctl_settings s = {
		.has = CTL_HAS_FROZEN,
		.v.frozen = req->cmd == CTL_FREEZE,
	};

	return change_settings(ctl, req->client, &s, result, err);
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
	while (op->evicted < op->left.ephemeral && (rc = store_client_evict_oldest(c)) == 1)
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
		return ctl_err_set(err, ENOENT, "no connected client \"%s\"", req->client);
	if (rc)
		return ctl_err_set(err, -rc, "flush %s: %s", op.name, strerror(-rc));
	*result = json_pack("{s:s, s:I, s:I, s:I}", "client", op.name,
			    "evicted_pages", (json_int_t)op.evicted,
			    "ephemeral_pages_left", (json_int_t)op.left.ephemeral,
			    "persistent_pages_kept", (json_int_t)op.left.persistent);
	return 0;
}

static int ctl_cmd_shared_auth(struct tmemd_control *ctl, const struct ctl_request *req,
			       json_t **result, struct ctl_err *err)
{
	const char *key = req->client; /* canonical: "domid:5" reaches domain 5 only */
	char uuid[TMEM_UUID_TEXT];
	int rc;

	tmem_uuid_format(&req->uuid, uuid);
	rc = store_shared_auth(ctl->hooks.store, &req->uuid, key, !req->revoke);
	if (rc)
		return ctl_err_set(err, -rc, "shared-auth %s %s: %s", uuid, key,
				   rc == -ENOSPC ? "tmemd holds " CTL_AUTH_LIMIT_TEXT
				   "; revoke one first" : strerror(-rc));
	rc = ctl_state_auth(&ctl->state, &req->uuid, key, !req->revoke);
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

	if (rc == -EBUSY)
		return ctl_err_set(err, EBUSY, "cannot shrink to %llu pages: the "
				   "persistent pages alone need more",
				   (unsigned long long)req->pages);
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

static int count_client(const struct tmemd_control_client *cl, void *arg)
{
	(void)cl;
	++*(unsigned *)arg;
	return 0;
}

static int ctl_cmd_status(struct tmemd_control *ctl, const struct ctl_request *req,
			  json_t **result, struct ctl_err *err)
{
	struct timespec now;
	unsigned clients = 0;

	(void)req;
	(void)err;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ctl->hooks.for_each_client(ctl->ctx, count_client, &clients);
	*result = json_pack(
		"{s:i, s:{s:s, s:i, s:I, s:I, s:s, s:s, s:s, s:s, s:o}, s:o, s:i, s:i, s:o}",
		"version", TMEMD_CONTROL_PROTO_VERSION,
		"daemon", "version", ctl->version, "pid", (int)getpid(),
		"uptime_seconds", (json_int_t)(now.tv_sec - ctl->started.tv_sec),
		"start_time_seconds", (json_int_t)ctl->started_wall,
		"transport", ctl->transport, "runtime_dir", ctl->runtime_dir,
		"state_dir", ctl->state_dir, "control_socket", ctl->sock_path,
		"last_reload", ctl_reload_json(ctl),
		"pool", ctl_pool_json(ctl),
		"clients", (int)clients, "control_connections", (int)ctl->nr_conns,
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
		return ctl_err_set(err, ENOENT, "no connected client \"%s\"", req->client);
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
	if (*result && req->all && json_object_set_new(*result, "stored", ctl_stored_json(ctl))) {
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
	[CTL_FORGET] = ctl_cmd_forget,
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
