/* SPDX-License-Identifier: MIT */
/*
 * sd_notify(3) messages and watchdog pacing.  libsystemd does the socket
 * work ($NOTIFY_SOCKET, abstract or path, credentials); this file only
 * decides what to say and when.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "systemd/sd.h"

/* sd_notify returns > 0 when sent; fold that into 1 for the callers. */
static int notify(const char *state)
{
	int rc = sd_notify(0, state);

	return rc > 0 ? 1 : rc;
}

int tmemd_sd_ready(void)
{
	return notify("READY=1");
}

int tmemd_sd_stopping(void)
{
	return notify("STOPPING=1");
}

uint64_t tmemd_sd_now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int tmemd_sd_reloading(void)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
		 tmemd_sd_now_usec());
	return notify(msg);
}

int tmemd_sd_status(const char *fmt, ...)
{
	char msg[256] = "STATUS=";
	va_list ap;

	if (!fmt)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg + 7, sizeof(msg) - 7, fmt, ap);
	va_end(ap);
	return notify(msg);
}

int tmemd_sd_status_counts(unsigned clients, uint64_t ephemeral_pages,
			   uint64_t persistent_pages)
{
	return tmemd_sd_status("%u client%s, %" PRIu64 " pages (%" PRIu64
			       " ephemeral, %" PRIu64 " persistent)",
			       clients, clients == 1 ? "" : "s",
			       ephemeral_pages + persistent_pages,
			       ephemeral_pages, persistent_pages);
}

int tmemd_sd_watchdog_init(struct tmemd_sd_watchdog *wd, uint64_t now_usec)
{
	uint64_t usec = 0;
	int rc;

	if (!wd)
		return -EINVAL;
	wd->period_usec = 0;
	wd->due_usec = 0;
	rc = sd_watchdog_enabled(0, &usec);
	if (rc <= 0)
		return rc;
	/* Half the timeout, and never a zero period that would spin. */
	wd->period_usec = usec / 2 ? usec / 2 : 1;
	wd->due_usec = now_usec;
	return 1;
}

int tmemd_sd_watchdog_timeout_ms(const struct tmemd_sd_watchdog *wd,
				 uint64_t now_usec)
{
	uint64_t ms;

	if (!wd || !wd->period_usec)
		return -1;
	if (now_usec >= wd->due_usec)
		return 0;
	/* Round up so the loop does not wake just before the deadline. */
	ms = (wd->due_usec - now_usec + 999) / 1000;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

int tmemd_sd_watchdog_tick(struct tmemd_sd_watchdog *wd, uint64_t now_usec)
{
	if (!wd || !wd->period_usec || now_usec < wd->due_usec)
		return 0;
	wd->due_usec = now_usec + wd->period_usec;
	return notify("WATCHDOG=1");
}
