/* SPDX-License-Identifier: MIT */
/* tmemd's log, over the systemd sink (journal or stderr lines). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "systemd/sd.h"

int tmemd_log_level = TMEMD_LOG_INFO;

static struct tmemd_sd_log sink;
static pthread_once_t sink_once = PTHREAD_ONCE_INIT;
/* The log's rate limits (ratelimit.h), under limit_lock. */
static struct tmemd_ratelimit limits;
static pthread_mutex_t limit_lock = PTHREAD_MUTEX_INITIALIZER;

static void sink_open(void)
{
	tmemd_sd_log_open(&sink, TMEMD_SD_LOG_AUTO, STDERR_FILENO);
}

void tmemd_log_open(void)
{
	pthread_once(&sink_once, sink_open);
}

static void vlog(int level, const struct tmemd_sd_log_fields *f,
		 const char *fmt, va_list ap)
{
	char msg[512];

	if (level > tmemd_log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	tmemd_log_open();
	tmemd_sd_log_write(&sink, level, f, msg);
}

/* Whether a limited line may go out; *suppressed as tmemd_ratelimit(). */
static bool limit_ok(const char *site, uint64_t source, uint32_t *suppressed)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&limit_lock);
	ok = tmemd_ratelimit(&limits, site, source,
			     (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, suppressed);
	pthread_mutex_unlock(&limit_lock);
	return ok;
}

static void vlog_limited(int level, const struct tmemd_sd_log_fields *f, const char *site,
			 uint64_t source, const char *fmt, va_list ap)
{
	uint32_t suppressed;
	char msg[160];

	if (level > tmemd_log_level || !limit_ok(site, source, &suppressed))
		return;
	if (suppressed) {
		snprintf(msg, sizeof(msg), "%u similar messages suppressed (\"%.100s\")",
			 (unsigned)suppressed, site);
		tmemd_log_open();
		tmemd_sd_log_write(&sink, level, f, msg);
	}
	vlog(level, f, fmt, ap);
}

void tmemd_log_limited(int level, uint64_t source, const char *fmt, ...)
{
	const struct tmemd_sd_log_fields f = TMEMD_SD_LOG_NO_FIELDS;
	va_list ap;

	va_start(ap, fmt);
	vlog_limited(level, &f, fmt, source, fmt, ap);
	va_end(ap);
}

void tmemd_log_limited_at(int level, const char *site, uint64_t source, const char *fmt, ...)
{
	const struct tmemd_sd_log_fields f = TMEMD_SD_LOG_NO_FIELDS;
	va_list ap;

	va_start(ap, fmt);
	vlog_limited(level, &f, site, source, fmt, ap);
	va_end(ap);
}

void tmemd_log_client_limited(int level, const char *client, int domid, int64_t pool,
			      const char *fmt, ...)
{
	const struct tmemd_sd_log_fields f = { .client = client, .domid = domid,
					       .pool = pool };
	va_list ap;

	va_start(ap, fmt);
	vlog_limited(level, &f, fmt,
		     domid >= 0 ? TMEMD_RL_DOMID(domid) : tmemd_rl_name(client), fmt, ap);
	va_end(ap);
}

void tmemd_log(int level, const char *fmt, ...)
{
	const struct tmemd_sd_log_fields f = TMEMD_SD_LOG_NO_FIELDS;
	va_list ap;

	va_start(ap, fmt);
	vlog(level, &f, fmt, ap);
	va_end(ap);
}

void tmemd_log_client(int level, const char *client, int domid, int64_t pool,
		      const char *fmt, ...)
{
	const struct tmemd_sd_log_fields f = { .client = client, .domid = domid,
					       .pool = pool };
	va_list ap;

	va_start(ap, fmt);
	vlog(level, &f, fmt, ap);
	va_end(ap);
}

void tmemd_log_audit(int level, uint32_t peer_uid, const char *client, const char *fmt, ...)
{
	const struct tmemd_sd_log_fields f = { .client = client, .domid = -1, .pool = -1,
					       .has_peer = true, .peer_uid = peer_uid };
	va_list ap;

	va_start(ap, fmt);
	vlog(level, &f, fmt, ap);
	va_end(ap);
}
