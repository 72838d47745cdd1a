/* SPDX-License-Identifier: MIT */
/*
 * tmemd's log.  Only daemon/ logs.  A function either logs an error or
 * returns it, never both.  The sink is daemon/systemd/'s: under systemd
 * (stderr is the journal stream) structured journal entries with
 * PRIORITY=, SYSLOG_IDENTIFIER=tmemd and, for client and pool events,
 * CLIENT=, DOMID= and POOL= (PEER_UID= for audit entries); anywhere else
 * one line per event on stderr.
 */
#ifndef TMEMD_LOG_H
#define TMEMD_LOG_H

#include <stdint.h>

#include "ratelimit.h"

enum tmemd_log_level {
	TMEMD_LOG_ERR = 3,
	TMEMD_LOG_WARNING = 4,
	TMEMD_LOG_NOTICE = 5,
	TMEMD_LOG_INFO = 6,
	TMEMD_LOG_DEBUG = 7,
};

/* The one mutable global besides the parsed options (STYLE.md, 9). */
extern int tmemd_log_level;

/*
 * Chooses the sink (journal or stderr) once; main() calls it first.  A
 * message logged before is written as if it had been called (the sink
 * opens on first use), so tests and tools need not call it.
 */
void tmemd_log_open(void);

void tmemd_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* An event about one client (and pool): client is its name, domid -1
 * for a local client, pool -1 when not about one pool. */
void tmemd_log_client(int level, const char *client, int domid, int64_t pool,
		      const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* An audit entry: a state change a control peer asked for, with its uid
 * (PEER_UID= in the journal) and the client it names (CLIENT=, or NULL). */
void tmemd_log_audit(int level, uint32_t peer_uid, const char *client, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * The same, rate-limited (ratelimit.h): for every line a client, a guest
 * or a control peer can cause.  Per message site (fmt) and per source
 * (TMEMD_RL_UID(), TMEMD_RL_DOMID(), tmemd_rl_name(), or
 * TMEMD_RL_NO_SOURCE); a line held back costs a mutex and a table
 * look-up, a line below the log level nothing.
 */
void tmemd_log_limited(int level, uint64_t source, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same for a site other than fmt: a line relayed from a library
 * (the control server's), whose own format string is the site. */
void tmemd_log_limited_at(int level, const char *site, uint64_t source, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* tmemd_log_client(), limited per site and per client: by domid when
 * domid >= 0, else by client name. */
void tmemd_log_client_limited(int level, const char *client, int domid, int64_t pool,
			      const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define log_err(...) tmemd_log(TMEMD_LOG_ERR, __VA_ARGS__)
#define log_warn(...) tmemd_log(TMEMD_LOG_WARNING, __VA_ARGS__)
#define log_notice(...) tmemd_log(TMEMD_LOG_NOTICE, __VA_ARGS__)
#define log_info(...) tmemd_log(TMEMD_LOG_INFO, __VA_ARGS__)
#define log_debug(...) tmemd_log(TMEMD_LOG_DEBUG, __VA_ARGS__)

#endif /* TMEMD_LOG_H */
