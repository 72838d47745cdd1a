/* SPDX-License-Identifier: MIT */
/* tmemd's log, over the systemd sink (journal or stderr lines). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "systemd/sd.h"

int tmemd_log_level = TMEMD_LOG_INFO;

static struct tmemd_sd_log sink;
static pthread_once_t sink_once = PTHREAD_ONCE_INIT;

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
