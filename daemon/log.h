/* SPDX-License-Identifier: MIT */
/*
 * tmemd's log: one line per event on stderr, with a level prefix.  Only
 * daemon/ logs.  A function either logs an error or returns it, never
 * both.  The journal backend (sd_journal) replaces the sink later
 * without changing callers.
 */
#ifndef TMEMD_LOG_H
#define TMEMD_LOG_H

enum tmemd_log_level {
	TMEMD_LOG_ERR = 3,
	TMEMD_LOG_WARNING = 4,
	TMEMD_LOG_NOTICE = 5,
	TMEMD_LOG_INFO = 6,
	TMEMD_LOG_DEBUG = 7,
};

/* The one mutable global besides the parsed options (STYLE.md, 9). */
extern int tmemd_log_level;

void tmemd_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...) tmemd_log(TMEMD_LOG_ERR, __VA_ARGS__)
#define log_warn(...) tmemd_log(TMEMD_LOG_WARNING, __VA_ARGS__)
#define log_notice(...) tmemd_log(TMEMD_LOG_NOTICE, __VA_ARGS__)
#define log_info(...) tmemd_log(TMEMD_LOG_INFO, __VA_ARGS__)
#define log_debug(...) tmemd_log(TMEMD_LOG_DEBUG, __VA_ARGS__)

#endif /* TMEMD_LOG_H */
