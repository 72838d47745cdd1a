/* SPDX-License-Identifier: MIT */
/*
 * tmemd's side of systemd: readiness and watchdog notifications
 * (sd_notify) and a log sink that writes structured journal entries.
 *
 * Notifications: each function returns 1 when the message was sent, 0 when
 * tmemd does not run under a service manager (no $NOTIFY_SOCKET), or
 * -errno.  The environment is left as it is, so they can be called again.
 *
 * The protocol tmemd follows (tmemd.service is Type=notify):
 *   start:   tmemd_sd_ready() once guest.sock, control.sock and the
 *            transports are up;
 *   running: tmemd_sd_status_counts() when the counts change (or on each
 *            watchdog tick), tmemd_sd_watchdog_tick() from the event loop;
 *   SIGHUP:  tmemd_sd_reloading(), re-read the config, tmemd_sd_ready();
 *   stop:    tmemd_sd_stopping() before tearing down clients.
 */
#ifndef TMEMD_SD_H
#define TMEMD_SD_H

#include <stdbool.h>
#include <stdint.h>

int tmemd_sd_ready(void);
int tmemd_sd_stopping(void);
/* RELOADING=1 with MONOTONIC_USEC=now, as systemd 253+ wants for
 * Type=notify-reload; systemd 252 ignores the extra field. */
int tmemd_sd_reloading(void);
int tmemd_sd_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* STATUS=N clients, P pages (E ephemeral, S persistent) */
int tmemd_sd_status_counts(unsigned clients, uint64_t ephemeral_pages,
			   uint64_t persistent_pages);

/*
 * The fd store.  take: the fd systemd passed back under name (LISTEN_FDS
 * and LISTEN_FDNAMES, then unset), or -ENOENT; every passed fd is made
 * close-on-exec.  put: FDSTORE=1 with FDNAME=name; 1 sent, 0 not under
 * systemd.  systemd keeps the fd across restarts (crash, OOM kill,
 * systemctl restart) only if the unit sets FileDescriptorStoreMax=, and
 * drops it when the service is fully stopped.
 */
int tmemd_sd_fdstore_take(const char *name);
int tmemd_sd_fdstore_put(int fd, const char *name);

/* CLOCK_MONOTONIC in microseconds, the clock the watchdog runs on. */
uint64_t tmemd_sd_now_usec(void);

/*
 * Watchdog pacing for an event loop that sleeps in epoll_wait:
 *
 *	tmemd_sd_watchdog_init(&wd, now);
 *	for (;;) {
 *		n = epoll_wait(ep, ev, max, tmemd_sd_watchdog_timeout_ms(&wd, now));
 *		...handle events...
 *		tmemd_sd_watchdog_tick(&wd, tmemd_sd_now_usec());
 *	}
 *
 * A stalled loop stops pinging and systemd restarts tmemd.  Pings go out
 * every half WATCHDOG_USEC, as sd_watchdog_enabled(3) advises.
 */
struct tmemd_sd_watchdog {
	uint64_t period_usec; /* 0: no watchdog asked for */
	uint64_t due_usec;    /* CLOCK_MONOTONIC time of the next ping */
};

/* Reads WATCHDOG_USEC/WATCHDOG_PID.  1 enabled, 0 not, -errno (bad env). */
int tmemd_sd_watchdog_init(struct tmemd_sd_watchdog *wd, uint64_t now_usec);
/* epoll timeout until the next ping: -1 (none due, ever) or >= 0 ms. */
int tmemd_sd_watchdog_timeout_ms(const struct tmemd_sd_watchdog *wd,
				 uint64_t now_usec);
/* Sends WATCHDOG=1 when due.  1 sent, 0 not due or disabled, -errno. */
int tmemd_sd_watchdog_tick(struct tmemd_sd_watchdog *wd, uint64_t now_usec);

/*
 * Log sink.  Under systemd with stderr connected to the journal
 * ($JOURNAL_STREAM names stderr), entries go to the journal with
 * PRIORITY=, SYSLOG_IDENTIFIER=tmemd and the fields below; anywhere else,
 * and if the journal refuses an entry, one line goes to stderr.
 */
enum tmemd_sd_log_target {
	TMEMD_SD_LOG_AUTO,    /* journal when stderr is a journal stream */
	TMEMD_SD_LOG_STDERR,
	TMEMD_SD_LOG_JOURNAL,
};

/* Structured fields of one entry; NULL or negative means "not about one". */
struct tmemd_sd_log_fields {
	const char *client; /* CLIENT= the client's name */
	int32_t domid;      /* DOMID= Xen domain id */
	int64_t pool;       /* POOL= pool id */
	bool has_peer;      /* an audit entry: PEER_UID= is set */
	uint32_t peer_uid;  /* PEER_UID= the control peer's uid (SO_PEERCRED) */
};

#define TMEMD_SD_LOG_NO_FIELDS \
	((struct tmemd_sd_log_fields){ .client = NULL, .domid = -1, .pool = -1 })

struct tmemd_sd_log {
	enum tmemd_sd_log_target target; /* STDERR or JOURNAL, once opened */
	int fd;                          /* stderr, for lines and fallback */
	bool fd_is_journal;              /* lines get a <N> priority prefix */
};

/* Picks the target (want: AUTO, STDERR or JOURNAL) and the fd.  Cannot fail. */
void tmemd_sd_log_open(struct tmemd_sd_log *lg, enum tmemd_sd_log_target want,
		       int fd);
/* priority: LOG_ERR..LOG_DEBUG (syslog.h; tmemd_log_level uses the same). */
void tmemd_sd_log_write(const struct tmemd_sd_log *lg, int priority,
			const struct tmemd_sd_log_fields *f, const char *msg);

/* True when env ("DEV:INO", as $JOURNAL_STREAM) names the file fd is. */
bool tmemd_sd_stream_is_journal(const char *env, int fd);

#endif /* TMEMD_SD_H */
