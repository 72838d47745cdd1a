/* SPDX-License-Identifier: MIT */
/*
 * Back-off for a listening socket when accept() fails for want of file
 * descriptors (EMFILE, ENFILE) or memory.  The connection stays in the
 * backlog, so a level-triggered listener is ready again at once: without
 * a pause the loop spins at full CPU and logs every failure.  So the
 * caller stops watching the socket for a pause (50 ms, doubling to
 * 1.6 s while failures go on, reset by a successful accept), a timerfd
 * says when to watch it again, and the failure is logged at most once
 * every 10 s with a count of the ones not logged (tmemd_log_limit, also
 * for the connections a listener refuses).
 *
 * Header-only: the local transport and the control server (a library
 * of its own) both use it.  Single-threaded, like their loops.
 */
#ifndef TMEMD_ACCEPT_PAUSE_H
#define TMEMD_ACCEPT_PAUSE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define TMEMD_ACCEPT_PAUSE_MIN_MS 50u
#define TMEMD_ACCEPT_PAUSE_MAX_MS 1600u
#define TMEMD_ACCEPT_LOG_EVERY_NS 10000000000ull /* 10 s */

/* At most one report per TMEMD_ACCEPT_LOG_EVERY_NS of one kind of event
 * a peer can cause at will (a refused connection, a failed accept). */
struct tmemd_log_limit {
	uint64_t next_ns;     /* CLOCK_MONOTONIC: no report before */
	unsigned not_logged;  /* events since the last report */
};

/* True when the event may be logged now; *not_logged then says how
 * many were not since the last report. */
static inline bool tmemd_log_limit_ok(struct tmemd_log_limit *l, unsigned *not_logged)
{
	struct timespec now;
	uint64_t now_ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	now_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	if (now_ns < l->next_ns) {
		l->not_logged++;
		return false;
	}
	l->next_ns = now_ns + TMEMD_ACCEPT_LOG_EVERY_NS;
	*not_logged = l->not_logged;
	l->not_logged = 0;
	return true;
}

struct tmemd_accept_pause {
	int timer_fd;       /* timerfd: readable when the pause is over; -1 */
	unsigned delay_ms;  /* the last pause; 0 after a successful accept */
	bool paused;        /* the caller is not watching its socket */
	struct tmemd_log_limit log; /* of the failures */
};

/* Whether accept()'s errno means "out of descriptors or memory". */
static inline bool tmemd_accept_exhausted(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

/* 0 or -errno. */
static inline int tmemd_accept_pause_init(struct tmemd_accept_pause *p)
{
	*p = (struct tmemd_accept_pause){
		.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC),
	};
	return p->timer_fd < 0 ? -errno : 0;
}

static inline void tmemd_accept_pause_fini(struct tmemd_accept_pause *p)
{
	if (p->timer_fd >= 0)
		close(p->timer_fd);
	p->timer_fd = -1;
}

/*
 * accept() failed with an exhausted errno: the caller stops watching
 * its socket until timer_fd fires.  Returns true when the caller should
 * log the failure now; *not_logged then says how many it did not log
 * before.  Returns false also when the timer cannot be armed, after
 * clearing paused (the caller then keeps watching, as before).
 */
static inline bool tmemd_accept_pause_start(struct tmemd_accept_pause *p,
					    unsigned *not_logged)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	p->delay_ms = p->delay_ms ? 2 * p->delay_ms : TMEMD_ACCEPT_PAUSE_MIN_MS;
	if (p->delay_ms > TMEMD_ACCEPT_PAUSE_MAX_MS)
		p->delay_ms = TMEMD_ACCEPT_PAUSE_MAX_MS;
	its.it_value.tv_sec = p->delay_ms / 1000;
	its.it_value.tv_nsec = (long)(p->delay_ms % 1000) * 1000000L;
	p->paused = timerfd_settime(p->timer_fd, 0, &its, NULL) == 0;
	return tmemd_log_limit_ok(&p->log, not_logged);
}

/* timer_fd fired: the caller watches its socket again. */
static inline void tmemd_accept_pause_end(struct tmemd_accept_pause *p)
{
	uint64_t expirations;

	if (read(p->timer_fd, &expirations, sizeof(expirations)) < 0) {
		/* EAGAIN: a stale wake-up; the pause is over all the same. */
	}
	p->paused = false;
}

/* A successful accept: the next failure starts from the shortest pause. */
static inline void tmemd_accept_ok(struct tmemd_accept_pause *p)
{
	p->delay_ms = 0;
}

#endif /* TMEMD_ACCEPT_PAUSE_H */
