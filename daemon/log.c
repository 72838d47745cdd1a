/* SPDX-License-Identifier: MIT */
/* The stderr log sink.  One fprintf per line so threads do not interleave. */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

int tmemd_log_level = TMEMD_LOG_INFO;

static const char *level_name(int level)
{
	switch (level) {
	case TMEMD_LOG_ERR:
		return "error";
	case TMEMD_LOG_WARNING:
		return "warning";
	case TMEMD_LOG_NOTICE:
		return "notice";
	case TMEMD_LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

void tmemd_log(int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (level > tmemd_log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "tmemd: %s: %s\n", level_name(level), line);
}
