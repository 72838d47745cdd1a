/* SPDX-License-Identifier: MIT */
/*
 * Attach and detach are requests to the worker (a list under w->lock
 * plus a wake-up on w->cmd_fd); the worker applies them between passes,
 * so its ring list is only ever walked by its own thread.  Detach waits
 * on w->cond until the worker has let go.
 *
 * Lock order: w->lock only; never held while serving a ring.
 *
 * Kick storms: a ring whose doorbell keeps waking the worker with
 * nothing on the ring (MUTE_AFTER kicks in a row) has its doorbell muted
 * (not polled) for a while, MUTE_MIN_NS doubling to MUTE_MAX_NS while it
 * goes on.  Its ring is still served on every pass the worker makes for
 * anyone, and at the latest when the mute ends (the worker's sleep has
 * that timeout), so only the storming client waits; the others'
 * doorbells still wake the worker at once.  A kick that finds a request
 * ends the count.  So one client's doorbells cost at most a wake-up per
 * mute, whatever their rate.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"
#include "tmem_barrier.h"
#include "workers.h"

#define BATCH 64u
#define MUTE_AFTER 64u
#define MUTE_MIN_NS 1000000ull   /* 1 ms */
#define MUTE_MAX_NS 16000000ull  /* 16 ms */

struct tmemd_worker {
	pthread_t thread;
	bool started;
	int epfd;
	int cmd_fd;                 /* eventfd: commands waiting */
	pthread_mutex_t lock;       /* guards the fields below */
	pthread_cond_t cond;
	struct tmemd_ring *to_add;  /* via wnext */
	struct tmemd_ring *to_del[16];
	unsigned nr_del;
	unsigned nr_rings;          /* attached or pending; atomic (placement reads it unlocked) */
	bool stop;
	int cmd_pending;            /* atomic: a spinning worker checks it */

	/* Worker thread only. */
	struct tmemd_ring *rings;   /* via wnext */
	uint64_t spin_ns;
};

struct tmemd_workers {
	unsigned nr;
	struct tmemd_worker *w;
	struct tmemd_readbacks *readbacks; /* the host tier's reads, off the workers */
};

static uint32_t doorbell_events(const struct tmemd_ring *r)
{
	/* A doorbell nobody acks is never read, so it stays readable:
	 * only a new kick may wake us (tmemd_ring_ops.ack). */
	return r->ops->ack ? EPOLLIN : EPOLLIN | EPOLLET;
}

static void do_unlink(struct tmemd_worker *w, struct tmemd_ring *ring)
{
	for (struct tmemd_ring **pp = &w->rings; *pp; pp = &(*pp)->wnext) {
		if (*pp == ring) {
			*pp = ring->wnext;
			break;
		}
	}
	(void)epoll_ctl(w->epfd, EPOLL_CTL_DEL, ring->kick_fd, NULL);
	ring->attached = false;
	__atomic_sub_fetch(&w->nr_rings, 1, __ATOMIC_RELAXED);
}

/* Applies queued attach/detach requests.  Returns false to stop. */
static bool apply_cmds(struct tmemd_worker *w)
{
	uint64_t v;
	bool run;

	if (read(w->cmd_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("worker: reading its command eventfd: %m");
	pthread_mutex_lock(&w->lock);
	__atomic_store_n(&w->cmd_pending, 0, __ATOMIC_RELAXED);
	while (w->to_add) {
		struct tmemd_ring *r = w->to_add;
		struct epoll_event ev = { .events = doorbell_events(r), .data.ptr = r };

		w->to_add = r->wnext;
		r->wnext = w->rings;
		w->rings = r;
		r->attached = true;
		r->kicked = false;
		r->idle_kicks = 0;
		r->muted_until = r->mute_ns = 0;
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, r->kick_fd, &ev)) {
			r->faulted = true; /* never served; the transport drops it */
			r->ops->fault(r, "cannot poll its doorbell");
		}
	}
	for (unsigned i = 0; i < w->nr_del; i++)
		do_unlink(w, w->to_del[i]);
	w->nr_del = 0;
	run = !w->stop;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return run;
}

/* Stops polling r's doorbell for a while (see the top of the file). */
static void mute(struct tmemd_worker *w, struct tmemd_ring *r)
{
	struct epoll_event ev = { .events = 0, .data.ptr = r };

	r->mute_ns = r->mute_ns ? 2 * r->mute_ns : MUTE_MIN_NS;
	if (r->mute_ns > MUTE_MAX_NS)
		r->mute_ns = MUTE_MAX_NS;
	if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, r->kick_fd, &ev) == 0)
		r->muted_until = tmemd_now_ns() + r->mute_ns;
}

static void unmute_due(struct tmemd_worker *w, uint64_t now)
{
	for (struct tmemd_ring *r = w->rings; r; r = r->wnext) {
		struct epoll_event ev = { .events = doorbell_events(r), .data.ptr = r };

		if (!r->muted_until || r->muted_until > now)
			continue;
		r->muted_until = 0;
		if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, r->kick_fd, &ev))
			log_warn("worker: cannot watch a doorbell again: %m");
	}
}

/* Counts r's kicks that found nothing; n is what the pass served. */
static void count_kick(struct tmemd_worker *w, struct tmemd_ring *r, int n)
{
	if (n > 0) {
		r->idle_kicks = 0;
		r->mute_ns = 0;
	} else if (r->kicked && ++r->idle_kicks >= MUTE_AFTER && !r->muted_until) {
		mute(w, r);
	}
	r->kicked = false;
}

static unsigned serve_all(struct tmemd_worker *w)
{
	unsigned did = 0;

	for (struct tmemd_ring *r = w->rings; r; r = r->wnext) {
		int n = tmemd_ring_process(r, BATCH);

		count_kick(w, r, n);
		if (n > 0)
			did += (unsigned)n;
	}
	return did;
}

/* Arms every ring; true when one already has work (do not sleep). */
static bool arm_all(struct tmemd_worker *w)
{
	bool busy = false;

	for (struct tmemd_ring *r = w->rings; r; r = r->wnext)
		busy |= tmemd_ring_arm(r);
	return busy;
}

/* How long the worker may sleep: until the first mute ends, or -1. */
static int sleep_ms(struct tmemd_worker *w)
{
	uint64_t first = 0, now;

	for (struct tmemd_ring *r = w->rings; r; r = r->wnext)
		if (r->muted_until && (!first || r->muted_until < first))
			first = r->muted_until;
	if (!first)
		return -1;
	now = tmemd_now_ns();
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

static void sleep_on_doorbells(struct tmemd_worker *w)
{
	struct epoll_event evs[16];
	int n = epoll_wait(w->epfd, evs, 16, sleep_ms(w));

	for (int i = 0; i < n; i++) {
		struct tmemd_ring *r = evs[i].data.ptr;

		if (!r)
			continue;
		r->kicked = true;
		if (r->ops->ack)
			r->ops->ack(r);
	}
	unmute_due(w, tmemd_now_ns());
}

/*
 * Adaptive window: work that arrived during a spin after a gap of g
 * says gaps like g are common, so the window grows to cover 2g; a spin
 * that ended in sleep halves it.  Bounded both ways.
 */
static void adapt(struct tmemd_worker *w, bool spin_hit, uint64_t gap)
{
	if (spin_hit) {
		if (2 * gap > w->spin_ns)
			w->spin_ns = 2 * gap;
	} else {
		w->spin_ns /= 2;
	}
	if (w->spin_ns < TMEMD_SPIN_MIN_NS)
		w->spin_ns = TMEMD_SPIN_MIN_NS;
	if (w->spin_ns > TMEMD_SPIN_MAX_NS)
		w->spin_ns = TMEMD_SPIN_MAX_NS;
}

static void *worker_main(void *arg)
{
	struct tmemd_worker *w = arg;
	uint64_t last_work = tmemd_now_ns();

	w->spin_ns = TMEMD_SPIN_MAX_NS;
	for (;;) {
		uint64_t t;

		if (__atomic_load_n(&w->cmd_pending, __ATOMIC_RELAXED) &&
		    !apply_cmds(w))
			break;
		if (serve_all(w)) {
			t = tmemd_now_ns();
			adapt(w, true, t - last_work);
			last_work = t;
			continue;
		}
		t = tmemd_now_ns();
		if (t - last_work < w->spin_ns) {
			/* Past the first few µs, give the CPU away between
			 * polls: when clients and workers outnumber CPUs,
			 * the thread we wait for may need this one. */
			if (t - last_work > TMEMD_SPIN_YIELD_NS)
				sched_yield();
			else
				tmem_cpu_relax();
			continue;
		}
		if (arm_all(w))
			continue;
		adapt(w, false, 0);
		sleep_on_doorbells(w);
		last_work = tmemd_now_ns(); /* the spin window restarts after a wake */
		if (!apply_cmds(w))
			break;
	}
	return NULL;
}

static void worker_kick(struct tmemd_worker *w)
{
	uint64_t one = 1;

	__atomic_store_n(&w->cmd_pending, 1, __ATOMIC_RELAXED);
	if (write(w->cmd_fd, &one, sizeof(one)) < 0)
		log_warn("worker: cannot wake it: %m");
}

/* A read-back of one of w's rings is done: serve it. */
static void readback_done(void *ctx)
{
	worker_kick(ctx);
}

static void worker_fini(struct tmemd_worker *w)
{
	if (w->started) {
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_mutex_unlock(&w->lock);
		worker_kick(w);
		pthread_join(w->thread, NULL);
	}
	if (w->cmd_fd >= 0)
		close(w->cmd_fd);
	if (w->epfd >= 0)
		close(w->epfd);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

static int worker_init(struct tmemd_worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int rc;

	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->cmd_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->epfd < 0 || w->cmd_fd < 0)
		return -errno;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->cmd_fd, &ev))
		return -errno;
	rc = pthread_create(&w->thread, NULL, worker_main, w);
	if (rc)
		return -rc;
	w->started = true;
	return 0;
}

int tmemd_workers_create(unsigned nr, struct tmemd_workers **out)
{
	struct tmemd_workers *ws;
	int rc = 0;

	if (nr == 0)
		return -EINVAL;
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -ENOMEM;
	ws->w = calloc(nr, sizeof(*ws->w));
	if (!ws->w) {
		free(ws);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nr; i++)
		ws->w[i].epfd = ws->w[i].cmd_fd = -1;
	rc = tmemd_readbacks_create(TMEMD_READBACK_THREADS, &ws->readbacks);
	for (unsigned i = 0; i < nr && !rc; i++, ws->nr++)
		rc = worker_init(&ws->w[i]);
	if (rc) {
		tmemd_workers_destroy(ws);
		return rc;
	}
	*out = ws;
	return 0;
}

void tmemd_workers_destroy(struct tmemd_workers *ws)
{
	if (!ws)
		return;
	for (unsigned i = 0; i < ws->nr; i++)
		worker_fini(&ws->w[i]);
	tmemd_readbacks_destroy(ws->readbacks);
	free(ws->w);
	free(ws);
}

int tmemd_workers_attach(struct tmemd_workers *ws, struct tmemd_ring *ring)
{
	struct tmemd_worker *best = &ws->w[0];

	/* nr_rings is read unlocked only to choose; a stale value just
	 * places the ring less evenly. */
	for (unsigned i = 1; i < ws->nr; i++)
		if (__atomic_load_n(&ws->w[i].nr_rings, __ATOMIC_RELAXED) <
		    __atomic_load_n(&best->nr_rings, __ATOMIC_RELAXED))
			best = &ws->w[i];
	ring->readbacks = ws->readbacks;
	ring->rb_job.wake = readback_done;
	ring->rb_job.wake_ctx = best;
	pthread_mutex_lock(&best->lock);
	ring->worker = best;
	ring->wnext = best->to_add;
	best->to_add = ring;
	__atomic_add_fetch(&best->nr_rings, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&best->lock);
	worker_kick(best);
	return 0;
}

void tmemd_workers_detach(struct tmemd_workers *ws, struct tmemd_ring *ring)
{
	struct tmemd_worker *w = ring->worker;

	(void)ws;
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	/* Wait for a free del slot, and for a pending add to land first. */
	while (w->nr_del == sizeof(w->to_del) / sizeof(w->to_del[0]) ||
	       !ring->attached) {
		worker_kick(w);
		pthread_cond_wait(&w->cond, &w->lock);
	}
	w->to_del[w->nr_del++] = ring;
	while (ring->attached) {
		worker_kick(w);
		pthread_cond_wait(&w->cond, &w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	/* A read-back writes into the ring's slot: the ring may go only
	 * once it is done (a device read; the worker no longer serves it). */
	while (tmemd_ring_readback_busy(ring))
		usleep(100);
	ring->worker = NULL;
}
