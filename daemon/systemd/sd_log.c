/* SPDX-License-Identifier: MIT */
/*
 * The journal log sink.  systemd connects a service's stderr to journald
 * and says so in $JOURNAL_STREAM ("DEV:INO" of that stream).  When stderr
 * is that stream, entries go to the journal natively so CLIENT=, DOMID=
 * and POOL= are fields one can filter on (journalctl -u tmemd CLIENT=web1);
 * otherwise (a terminal, a test, a pipe) they are plain lines on stderr.
 * An entry the journal refuses (too big, journald busy) goes to stderr too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include "systemd/sd.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

bool tmemd_sd_stream_is_journal(const char *env, int fd)
{
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	if (!env || sscanf(env, "%llu:%llu%n", &dev, &ino, &end) != 2 ||
	    env[end] != '\0')
		return false;
	if (fstat(fd, &st) < 0)
		return false;
	return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void tmemd_sd_log_open(struct tmemd_sd_log *lg, enum tmemd_sd_log_target want,
		       int fd)
{
	lg->fd = fd;
	lg->fd_is_journal = tmemd_sd_stream_is_journal(getenv("JOURNAL_STREAM"), fd);
	if (want == TMEMD_SD_LOG_AUTO)
		want = lg->fd_is_journal && sd_booted() > 0 ? TMEMD_SD_LOG_JOURNAL
							      : TMEMD_SD_LOG_STDERR;
	/* sd_journal_sendv() drops entries silently when journald's socket
	 * is missing, so only choose the journal when it is there. */
	if (want == TMEMD_SD_LOG_JOURNAL && access(JOURNAL_SOCKET, W_OK) < 0)
		want = TMEMD_SD_LOG_STDERR;
	lg->target = want;
}

static const char *priority_name(int priority)
{
	static const char *const names[] = {
		[LOG_EMERG] = "emergency", [LOG_ALERT] = "alert",
		[LOG_CRIT] = "critical",   [LOG_ERR] = "error",
		[LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info",       [LOG_DEBUG] = "debug",
	};

	return names[priority & LOG_PRIMASK];
}

/* Journal fields are "NAME=value" strings; these buffers hold them. */
struct journal_entry {
	char message[1024], priority[16], client[80], domid[24], pool[32], peer[32];
	struct iovec iov[7];
	int n;
};

static void add_field(struct journal_entry *e, char *buf, size_t len,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void add_field(struct journal_entry *e, char *buf, size_t len,
		      const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	e->iov[e->n].iov_base = buf;
	e->iov[e->n].iov_len = n < 0 ? 0 : (size_t)n >= len ? len - 1 : (size_t)n;
	e->n++;
}

static int journal_write(int priority, const struct tmemd_sd_log_fields *f,
			 const char *msg)
{
	static char ident[] = "SYSLOG_IDENTIFIER=tmemd";
	struct journal_entry e = { .n = 0 };

	add_field(&e, e.message, sizeof(e.message), "MESSAGE=%s", msg);
	add_field(&e, e.priority, sizeof(e.priority), "PRIORITY=%d",
		  priority & LOG_PRIMASK);
	e.iov[e.n++] = (struct iovec){ .iov_base = ident, .iov_len = strlen(ident) };
	if (f->client)
		add_field(&e, e.client, sizeof(e.client), "CLIENT=%s", f->client);
	if (f->domid >= 0)
		add_field(&e, e.domid, sizeof(e.domid), "DOMID=%" PRId32, f->domid);
	if (f->pool >= 0)
		add_field(&e, e.pool, sizeof(e.pool), "POOL=%" PRId64, f->pool);
	if (f->has_peer)
		add_field(&e, e.peer, sizeof(e.peer), "PEER_UID=%" PRIu32, f->peer_uid);
	/* The parentheses call the function, not the macro that would add
	 * CODE_FILE= pointing at this file rather than the caller. */
	return (sd_journal_sendv)(e.iov, e.n);
}

/* One write(2) per line, so lines from several threads never interleave. */
static void line_write(const struct tmemd_sd_log *lg, int priority,
		       const struct tmemd_sd_log_fields *f, const char *msg)
{
	char line[1280], ctx[128] = "";
	int n = 0;

	if (f->client)
		n += snprintf(ctx + n, sizeof(ctx) - n, " client=%s", f->client);
	if (f->domid >= 0 && n < (int)sizeof(ctx))
		n += snprintf(ctx + n, sizeof(ctx) - n, " domid=%" PRId32, f->domid);
	if (f->pool >= 0 && n < (int)sizeof(ctx))
		n += snprintf(ctx + n, sizeof(ctx) - n, " pool=%" PRId64, f->pool);
	if (f->has_peer && n < (int)sizeof(ctx))
		snprintf(ctx + n, sizeof(ctx) - n, " peer_uid=%" PRIu32, f->peer_uid);
	if (lg->fd_is_journal) /* journald reads "<N>" as the priority */
		n = snprintf(line, sizeof(line), "<%d>%s%s%s\n",
			     priority & LOG_PRIMASK, msg, ctx[0] ? " --" : "", ctx);
	else
		n = snprintf(line, sizeof(line), "tmemd: %s: %s%s%s\n",
			     priority_name(priority), msg, ctx[0] ? " --" : "", ctx);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	/* Nothing sensible to do if stderr itself is gone. */
	if (write(lg->fd, line, (size_t)n) < 0)
		return;
}

void tmemd_sd_log_write(const struct tmemd_sd_log *lg, int priority,
			const struct tmemd_sd_log_fields *f, const char *msg)
{
	const struct tmemd_sd_log_fields none = TMEMD_SD_LOG_NO_FIELDS;

	if (!lg || !msg)
		return;
	if (!f)
		f = &none;
	/* A journal that refuses the entry (not running, full) must not
	 * swallow it: stderr is the last resort. */
	if (lg->target == TMEMD_SD_LOG_JOURNAL && journal_write(priority, f, msg) >= 0)
		return;
	line_write(lg, priority, f, msg);
}
