/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"

struct tmemd_loop {
	int epfd;
	struct tmemd_watch sigw;
	tmemd_signal_fn on_signal;
	void *data;
	bool stop;
	struct tmemd_loop_timer timer; /* fields NULL: none */
	/* The batch being dispatched: tmemd_loop_del() clears the events
	 * of a deleted watch still waiting in it (see tmemd_loop_run). */
	struct epoll_event *batch;
	int batch_next, batch_len;
};

static void on_signalfd(struct tmemd_watch *w, uint32_t events)
{
	struct tmemd_loop *loop = w->data;
	struct signalfd_siginfo si;

	(void)events;
	while (read(w->fd, &si, sizeof(si)) == sizeof(si))
		if (loop->on_signal((int)si.ssi_signo, loop->data))
			loop->stop = true;
}

int tmemd_loop_create(tmemd_signal_fn on_signal, void *data,
		      struct tmemd_loop **out)
{
	struct tmemd_loop *loop = calloc(1, sizeof(*loop));
	sigset_t set;
	int rc;

	if (!loop)
		return -ENOMEM;
	loop->sigw.fd = -1;
	loop->on_signal = on_signal;
	loop->data = data;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0)
		goto fail_errno;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	rc = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (rc) {
		errno = rc;
		goto fail_errno;
	}
	sigdelset(&set, SIGPIPE);
	loop->sigw.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (loop->sigw.fd < 0)
		goto fail_errno;
	loop->sigw.fn = on_signalfd;
	loop->sigw.data = loop;
	rc = tmemd_loop_add(loop, &loop->sigw, EPOLLIN);
	if (rc)
		goto fail;
	*out = loop;
	return 0;
fail_errno:
	rc = -errno;
fail:
	tmemd_loop_destroy(loop);
	return rc;
}

void tmemd_loop_destroy(struct tmemd_loop *loop)
{
	if (!loop)
		return;
	if (loop->sigw.fd >= 0)
		close(loop->sigw.fd);
	if (loop->epfd >= 0)
		close(loop->epfd);
	free(loop);
}

int tmemd_loop_add(struct tmemd_loop *loop, struct tmemd_watch *w,
		   uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, w->fd, &ev))
		return -errno;
	return 0;
}

void tmemd_loop_del(struct tmemd_loop *loop, struct tmemd_watch *w)
{
	/* Fails only if fd was never added; nothing to undo then. */
	(void)epoll_ctl(loop->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	/* The caller may free w as soon as this returns, so no later event
	 * of the current batch may still point at it. */
	for (int i = loop->batch_next; i < loop->batch_len; i++)
		if (loop->batch[i].data.ptr == w)
			loop->batch[i].data.ptr = NULL;
}

void tmemd_loop_set_timer(struct tmemd_loop *loop,
			  const struct tmemd_loop_timer *timer)
{
	loop->timer = *timer;
}

int tmemd_loop_run(struct tmemd_loop *loop)
{
	struct epoll_event evs[32];

	loop->stop = false;  /* it may run again after a handler stopped it */
	while (!loop->stop) {
		int timeout = loop->timer.timeout_ms ?
			      loop->timer.timeout_ms(loop->timer.ctx) : -1;
		int n = epoll_wait(loop->epfd, evs, 32, timeout);

		if (loop->timer.tick)
			loop->timer.tick(loop->timer.ctx);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* A handler may delete and free any watch, another one's
		 * too (the handshake timer frees late connections whose
		 * hang-up may sit later in this batch): tmemd_loop_del()
		 * clears the deleted watch's pending events, skipped here. */
		loop->batch = evs;
		loop->batch_len = n;
		for (int i = 0; i < n; i++) {
			struct tmemd_watch *w = evs[i].data.ptr;

			loop->batch_next = i + 1;
			if (w)
				w->fn(w, evs[i].events);
		}
		loop->batch_len = loop->batch_next = 0;
	}
	return 0;
}

uint64_t tmemd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
