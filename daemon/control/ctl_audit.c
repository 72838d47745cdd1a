/* SPDX-License-Identifier: MIT */
/*
 * The audit trail: one log line for every state change asked of the
 * control server (set, freeze, thaw, flush, shared-auth, pool-size,
 * forget), who asked (the peer's uid and pid from SO_PEERCRED), what
 * exactly, and how it ended.  Under systemd it is a journal entry
 * (journalctl -u tmemd), like tmemd's other messages.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "ctl_internal.h"

static void add(char *buf, size_t len, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*n >= len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	*n = k < 0 ? len : *n + (size_t)k;
}

static void add_cap(char *buf, size_t len, size_t *n, const char *key, uint64_t cap)
{
	if (cap == TMEM_NO_CAP)
		add(buf, len, n, " %s=none", key);
	else
		add(buf, len, n, " %s=%llu", key, (unsigned long long)cap);
}

/* The request's arguments as key=value words. */
static void describe(const struct ctl_request *req, char *buf, size_t len)
{
	char cz[TMEM_COMPRESS_TEXT_MAX];
	char uuid[TMEM_UUID_TEXT];
	size_t n = 0;

	buf[0] = '\0';
	if (req->has & CTL_HAS_UUID) {
		tmem_uuid_format(&req->uuid, uuid);
		add(buf, len, &n, " %s", uuid);
	}
	if (req->has & CTL_HAS_CLIENT)
		add(buf, len, &n, " %s", req->client);
	if (req->has & CTL_HAS_WEIGHT)
		add(buf, len, &n, " weight=%u", (unsigned)req->s.v.weight);
	if (req->has & CTL_HAS_EPH_MAX)
		add_cap(buf, len, &n, "ephemeral_max_pages", req->s.v.ephemeral_max);
	if (req->has & CTL_HAS_PERS_MAX)
		add_cap(buf, len, &n, "persistent_max_pages", req->s.v.persistent_max);
	if (req->has & CTL_HAS_SPILL_MAX)
		add_cap(buf, len, &n, "spill_max_pages", req->s.v.spill_max);
	if (req->has & CTL_HAS_COMPRESS)
		add(buf, len, &n, " compress=%s", store_compress_format(&req->s.v.compress, cz, sizeof(cz)));
	if (req->has & CTL_HAS_REVOKE && req->revoke)
		add(buf, len, &n, " revoke");
	if (req->has & CTL_HAS_PAGES)
		add(buf, len, &n, " pages=%llu", (unsigned long long)req->pages);
}

void ctl_audit(struct tmemd_control *ctl, const struct ctl_conn *conn,
	       const struct ctl_request *req, int rc, const struct ctl_err *err)
{
	char args[256], msg[640];
	int prio = rc ? LOG_WARNING : LOG_NOTICE;

	describe(req, args, sizeof(args));
	snprintf(msg, sizeof(msg), "audit: uid %u (pid %d): %s%s: %s%s", (unsigned)conn->uid,
		 (int)conn->pid, ctl_cmd_name(req->cmd), args, rc ? "failed: " : "done",
		 rc ? err->msg : "");
	if (ctl->hooks.audit)
		ctl->hooks.audit(ctl->ctx, prio, conn->uid,
				 req->has & CTL_HAS_CLIENT ? req->client : NULL, msg);
	else
		ctl_log(ctl, prio, "%s", msg);
}
