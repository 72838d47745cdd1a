/* SPDX-License-Identifier: MIT */
/*
 * The main thread's event loop: epoll over the listening sockets, the
 * client connections and a signalfd.  Ring traffic never passes through
 * it (workers.c serves rings); it only handles connects, disconnects,
 * signals and, later, the control socket.
 *
 * Handlers run on the main thread, one at a time.
 */
#ifndef TMEMD_LOOP_H
#define TMEMD_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct tmemd_loop;
struct tmemd_watch;

/* events: EPOLLIN/EPOLLHUP/... as epoll reported them. */
typedef void (*tmemd_watch_fn)(struct tmemd_watch *w, uint32_t events);

struct tmemd_watch {
	int fd;
	tmemd_watch_fn fn;
	void *data;
};

/* What a signal handler does; returning true stops the loop. */
typedef bool (*tmemd_signal_fn)(int signo, void *data);

/*
 * Creates the loop; blocks SIGTERM, SIGINT, SIGUSR1, SIGHUP and SIGPIPE
 * for the calling thread (create it before any other thread so they
 * inherit the mask) and routes the first three to on_signal.
 */
int tmemd_loop_create(tmemd_signal_fn on_signal, void *data,
		      struct tmemd_loop **out);
void tmemd_loop_destroy(struct tmemd_loop *loop);

/* w must stay valid until removed.  Returns 0 or -errno.  Once
 * tmemd_loop_del() returns, the loop never touches w again, not even for
 * an event already fetched in the batch being dispatched: any handler
 * may delete, then free, any watch. */
int tmemd_loop_add(struct tmemd_loop *loop, struct tmemd_watch *w,
		   uint32_t events);
void tmemd_loop_del(struct tmemd_loop *loop, struct tmemd_watch *w);

/*
 * Optional periodic work (the systemd watchdog): before each sleep the
 * loop asks timeout_ms() how long it may sleep (-1: until an event),
 * and calls tick() after every wake-up, timed out or not.
 */
struct tmemd_loop_timer {
	int (*timeout_ms)(void *ctx);
	void (*tick)(void *ctx);
	void *ctx;
};
void tmemd_loop_set_timer(struct tmemd_loop *loop,
			  const struct tmemd_loop_timer *timer);

/* CLOCK_MONOTONIC in nanoseconds: the daemon's one clock for deadlines
 * and spin windows. */
uint64_t tmemd_now_ns(void);

/* Runs until a signal handler returns true (and may then run again).
 * 0 or -errno. */
int tmemd_loop_run(struct tmemd_loop *loop);

#endif /* TMEMD_LOOP_H */
