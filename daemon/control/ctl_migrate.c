/* SPDX-License-Identifier: MIT */
/*
 * migrate-check and migrate-push (tmemctl(8)): what an admin asks of
 * migration between hosts, handed to the daemon's hooks, which wait for
 * the peer.  The answer says what was found, so a failed check still
 * tells which of reachable, authenticated and room failed.
 */
#include <errno.h>
#include <string.h>

#include "ctl_internal.h"

int ctl_cmd_migrate_check(struct tmemd_control *ctl, const struct ctl_request *req,
			  json_t **result, struct ctl_err *err)
{
	struct tmemd_control_migrate_check c = { 0 };
	char why[200] = "";
	int rc;

	if (!ctl->hooks.migrate_check)
		return ctl_err_set(err, EOPNOTSUPP, "no migration configured (migrate-key)");
	rc = ctl->hooks.migrate_check(ctl->ctx, req->client, req->peer, &c, why, sizeof(why));
	if (rc == -EOPNOTSUPP || rc == -ENOENT)
		return ctl_err_set(err, -rc, "%s", why);
	*result = json_pack("{s:s, s:s, s:b, s:b, s:b, s:o, s:o, s:o, s:s}", "client",
			    req->client, "peer", req->peer, "reachable", c.reachable,
			    "authenticated", c.authenticated, "room", c.room,
			    "pages", json_integer((json_int_t)c.pages),
			    "stored_pages", json_integer((json_int_t)c.stored_pages),
			    "peer_free_pages", json_integer((json_int_t)c.peer_free_pages),
			    "problem", rc ? why : (c.room ? "" : "not enough free pages there"));
	return 0;
}

int ctl_cmd_migrate_push(struct tmemd_control *ctl, const struct ctl_request *req,
			 json_t **result, struct ctl_err *err)
{
	char why[200] = "";
	uint64_t pages = 0;
	int rc;

	if (!ctl->hooks.migrate_push)
		return ctl_err_set(err, EOPNOTSUPP, "no migration configured (migrate-key)");
	rc = ctl->hooks.migrate_push(ctl->ctx, req->client, req->peer, &pages, why, sizeof(why));
	if (rc)
		return ctl_err_set(err, -rc, "%s", why);
	*result = json_pack("{s:s, s:s, s:o}", "client", req->client, "peer", req->peer,
			    "pages", json_integer((json_int_t)pages));
	return 0;
}

json_t *ctl_migrate_stats_json(struct tmemd_control *ctl)
{
	struct tmemd_control_migrate_stats m = { 0 };

	if (ctl->hooks.migrate_stats)
		ctl->hooks.migrate_stats(ctl->ctx, &m);
	return json_pack("{s:b, s:{s:o, s:o}, s:{s:o, s:o, s:o}, s:{s:o, s:o, s:o}, s:o, s:o, s:o}",
			 "enabled", m.enabled,
			 "transfers", "out", json_integer((json_int_t)m.transfers_out),
			 "in", json_integer((json_int_t)m.transfers_in),
			 "sent", "pages", json_integer((json_int_t)m.pages_sent),
			 "bytes", json_integer((json_int_t)m.bytes_sent),
			 "transfer_seconds", json_real((double)m.send_ns / 1e9),
			 "received", "pages", json_integer((json_int_t)m.pages_received),
			 "bytes", json_integer((json_int_t)m.bytes_received),
			 "transfer_seconds", json_real((double)m.transfer_ns / 1e9),
			 "refused", json_integer((json_int_t)m.refused),
			 "failed_pulls", json_integer((json_int_t)m.failed_pulls),
			 "peers_unreachable", json_integer((json_int_t)m.unreachable));
}
