// SPDX-License-Identifier: MIT
/* The read cache's model check under random racing requests; see rcache_stress.h. */
#include <stdlib.h>
#include <string.h>

#include "rcache_stress.h"

#define BLOCK 4096u
#define MAX_THREADS 8

/* The model: one writer per block at a time, and what it completed. */
struct model {
	struct shim_rcache *rc;
	struct fake_disk *d;
	pthread_mutex_t *wlock;		/* per block */
	uint64_t *last_ver;		/* under wlock */
	uint64_t *done_ver;		/* atomic: newest completed write */
};

struct worker {
	struct model *m;
	const struct rc_stress_opts *o;
	uint64_t ops;
	uint32_t rng;
	struct rc_stress_result res;
	pthread_t tid;
};

static uint32_t next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* A write (or discard) of n blocks: disk first, then the cache, then done. */
static void do_write(struct worker *w, uint64_t blk, uint32_t n)
{
	struct shim_call calls[SHIM_RC_BATCH];
	struct model *m = w->m;
	uint64_t ver[SHIM_RC_BATCH];
	uint32_t i;

	for (i = 0; i < n; i++) {	/* ascending: no lock cycles */
		pthread_mutex_lock(&m->wlock[blk + i]);
		ver[i] = ++m->last_ver[blk + i];
		fake_disk_write(m->d, blk + i, ver[i]);
	}
	shim_rc_invalidate(m->rc, blk, n, calls);
	for (i = 0; i < n; i++) {
		__atomic_store_n(&m->done_ver[blk + i], ver[i],
				 __ATOMIC_RELEASE);
		pthread_mutex_unlock(&m->wlock[blk + i]);
	}
}

static void do_read(struct worker *w, uint64_t blk, uint32_t n)
{
	static __thread uint8_t buf[SHIM_RC_BATCH][BLOCK];
	struct shim_call calls[SHIM_RC_BATCH];
	struct shim_rc_disk disk = fake_disk_ops(w->m->d);
	uint64_t min[SHIM_RC_BATCH], ver;
	void *pages[SHIM_RC_BATCH];
	uint32_t i;

	for (i = 0; i < n; i++) {
		min[i] = __atomic_load_n(&w->m->done_ver[blk + i],
					 __ATOMIC_ACQUIRE);
		pages[i] = buf[i];
	}
	if (shim_rc_read(w->m->rc, blk, pages, n, calls, &disk)) {
		w->res.errors++;
		return;
	}
	w->res.blocks_read += n;
	for (i = 0; i < n; i++) {
		if (fake_disk_check(buf[i], blk + i, &ver))
			w->res.corrupt++;
		else if (ver < min[i])
			w->res.stale++;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t nb = w->m->d->nr_blocks, k;

	for (k = 0; k < w->ops; k++) {
		uint32_t r = next_rand(&w->rng), n = 1 + r % w->o->max_n;
		uint64_t blk = next_rand(&w->rng) % nb;

		if (n > nb - blk)
			n = (uint32_t)(nb - blk);
		switch ((r >> 8) % 10) {
		case 0:
			w->res.discards++;
			do_write(w, blk, n);
			break;
		case 1:
		case 2:
			w->res.writes++;
			do_write(w, blk, n);
			break;
		default:
			w->res.reads++;
			do_read(w, blk, n);
		}
	}
	return NULL;
}

static void add(struct rc_stress_result *to, const struct rc_stress_result *r)
{
	to->reads += r->reads;
	to->writes += r->writes;
	to->discards += r->discards;
	to->blocks_read += r->blocks_read;
	to->stale += r->stale;
	to->corrupt += r->corrupt;
	to->errors += r->errors;
}

static int run_workers(struct model *m, const struct rc_stress_opts *o,
		       struct rc_stress_result *res)
{
	struct worker *w = calloc(o->threads, sizeof(*w));
	uint32_t i, started = 0;

	if (!w)
		return -ENOMEM;
	for (i = 0; i < o->threads; i++) {
		w[i].m = m;
		w[i].o = o;
		w[i].ops = o->ops / o->threads + (i < o->ops % o->threads);
		w[i].rng = o->seed * 7919u + i * 104729u + 1;
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]))
			break;
		started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(w[i].tid, NULL);
		add(res, &w[i].res);
	}
	free(w);
	return started == o->threads ? 0 : -EAGAIN;
}

int rc_stress_run(struct shim_rcache *rc, struct fake_disk *d,
		  const struct rc_stress_opts *opts,
		  struct rc_stress_result *res)
{
	struct model m = { .rc = rc, .d = d };
	uint64_t b, nb = d->nr_blocks;
	int ret = -ENOMEM;

	memset(res, 0, sizeof(*res));
	if (!opts->threads || opts->threads > MAX_THREADS || !opts->max_n ||
	    opts->max_n > SHIM_RC_BATCH)
		return -EINVAL;
	m.wlock = calloc(nb, sizeof(*m.wlock));
	m.last_ver = calloc(nb, sizeof(*m.last_ver));
	m.done_ver = calloc(nb, sizeof(*m.done_ver));
	if (m.wlock && m.last_ver && m.done_ver) {
		for (b = 0; b < nb; b++)
			pthread_mutex_init(&m.wlock[b], NULL);
		ret = run_workers(&m, opts, res);
		for (b = 0; b < nb; b++)
			pthread_mutex_destroy(&m.wlock[b]);
	}
	free(m.wlock);
	free(m.last_ver);
	free(m.done_ver);
	return ret;
}
