// SPDX-License-Identifier: MIT
/* The unit tests' in-process backend; see fake_backend.h. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_backend.h"

static void fake_kick(void *ctx)
{
	struct fake_backend *f = ctx;

	pthread_mutex_lock(&f->mu);
	f->kicks++;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static struct fake_page *find(struct fake_backend *f, const struct tmem_req *q)
{
	int i;

	for (i = 0; i < FAKE_MAX_PAGES; i++) {
		struct fake_page *p = &f->pages[i];

		if (p->used && p->pool == q->pool_id && p->index == q->index &&
		    !memcmp(p->oid, q->oid, sizeof(p->oid)))
			return p;
	}
	return NULL;
}

static int pool_ok(struct fake_backend *f, int32_t pool)
{
	return pool >= 0 && pool < FAKE_MAX_POOLS && f->pool_used[pool];
}

static void drop_where(struct fake_backend *f, int32_t pool,
		       const uint64_t *oid)
{
	int i;

	for (i = 0; i < FAKE_MAX_PAGES; i++)
		if (f->pages[i].used && f->pages[i].pool == pool &&
		    (!oid || !memcmp(f->pages[i].oid, oid, 24)))
			f->pages[i].used = 0;
}

static int do_put(struct fake_backend *f, const struct tmem_req *q,
		  const void *slot)
{
	struct fake_page *p = find(f, q);
	int i;

	if (!p && fake_nr_pages(f) < f->capacity) {
		for (i = 0; i < FAKE_MAX_PAGES && f->pages[i].used; i++)
			;
		p = i < FAKE_MAX_PAGES ? &f->pages[i] : NULL;
	}
	if (!p) {
		return 0;
	}
	p->used = 1;
	p->pool = q->pool_id;
	memcpy(p->oid, q->oid, sizeof(p->oid));
	p->index = q->index;
	memcpy(p->data, slot, 4096);
	return 1;
}

static int do_get(struct fake_backend *f, const struct tmem_req *q,
		  void *slot)
{
	struct fake_page *p = find(f, q);

	if (!p)
		return 0;
	memcpy(slot, p->data, 4096);
	if (!(f->pool_flags[q->pool_id] &
	      (TMEM_POOL_PERSIST | TMEM_POOL_SHARED)))
		p->used = 0;	/* private ephemeral: exclusive get */
	return 1;
}

static int do_new_pool(struct fake_backend *f, const struct tmem_req *q)
{
	int i;

	for (i = 0; i < FAKE_MAX_POOLS; i++)
		if (!f->pool_used[i]) {
			f->pool_used[i] = 1;
			f->pool_flags[i] = q->flags;
			return i;
		}
	return -TMEM_ENOSPC;
}

/* One request, copied out of the ring once. */
static int32_t handle(struct fake_backend *f, const struct tmem_req *q)
{
	void *slot = q->slot < f->nr_slots ?
		tmem_slot_ptr(f->region, f->nr_entries, q->slot) : NULL;
	struct fake_page *p;

	if (q->op == TMEM_OP_NEW_POOL)
		return do_new_pool(f, q);
	if (!pool_ok(f, q->pool_id))
		return -TMEM_ENOENT;
	switch (q->op) {
	case TMEM_OP_DESTROY_POOL:
		drop_where(f, q->pool_id, NULL);
		f->pool_used[q->pool_id] = 0;
		return 1;
	case TMEM_OP_PUT_PAGE:
		return slot ? do_put(f, q, slot) : -TMEM_EINVAL;
	case TMEM_OP_GET_PAGE:
		return slot ? do_get(f, q, slot) : -TMEM_EINVAL;
	case TMEM_OP_FLUSH_PAGE:
		p = find(f, q);
		if (p)
			p->used = 0;
		return p != NULL;
	case TMEM_OP_FLUSH_OBJECT:
		drop_where(f, q->pool_id, q->oid);
		return 1;
	}
	return -TMEM_EINVAL;
}

/* Serves everything published; returns 1 if the frontend wants an irq. */
static int serve(struct fake_backend *f)
{
	struct tmem_ring_hdr *hdr = f->region;
	union tmem_ring_entry *ents = tmem_ring_entries(f->region);
	uint32_t prod = tmem_load_acquire(&hdr->req_prod);
	uint32_t old = tmem_load_once(&hdr->rsp_prod), rsp = old;

	while (f->req_cons != prod) {
		union tmem_ring_entry *e = &ents[f->req_cons & (f->nr_entries - 1)];
		struct tmem_req q;
		struct tmem_rsp r;

		memcpy(&q, &e->req, sizeof(q));
		f->req_cons++;
		memset(&r, 0, sizeof(r));
		r.id = f->mode == FAKE_BAD_ID ? q.id ^ (1ull << 40) : q.id;
		r.op = q.op;
		r.slot = q.slot;
		r.ret = handle(f, &q);
		f->requests++;
		memcpy(&ents[rsp++ & (f->nr_entries - 1)].rsp, &r, sizeof(r));
	}
	if (f->mode == FAKE_OVERFLOW)
		rsp += 3 * f->nr_entries;
	tmem_store_release(&hdr->rsp_prod, rsp);
	tmem_full_barrier();
	return tmem_ring_need_notify(old, rsp,
				     tmem_load_once(&hdr->rsp_event));
}

static void *fake_main(void *arg)
{
	struct fake_backend *f = arg;
	struct tmem_ring_hdr *hdr = f->region;
	struct timespec ts;
	int irq;

	pthread_mutex_lock(&f->mu);
	while (!f->stop) {
		irq = 0;
		if (f->mode != FAKE_MUTE)
			irq = serve(f);
		if (irq) {
			/* The event-channel interrupt, without our lock. */
			pthread_mutex_unlock(&f->mu);
			shim_ring_poll(&f->ring);
			pthread_mutex_lock(&f->mu);
			continue;
		}
		/* About to sleep: ask for a doorbell, then re-check. */
		tmem_store_once(&hdr->req_event, f->req_cons + 1);
		tmem_full_barrier();
		if (f->mode != FAKE_MUTE &&
		    tmem_load_acquire(&hdr->req_prod) != f->req_cons)
			continue;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 5 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&f->cv, &f->mu, &ts);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

int fake_start(struct fake_backend *f, uint32_t nr_entries, uint32_t nr_slots,
	       uint32_t capacity)
{
	size_t size = tmem_region_size(nr_entries, nr_slots);
	int ret;

	memset(f, 0, sizeof(*f));
	f->nr_entries = nr_entries;
	f->nr_slots = nr_slots;
	f->capacity = capacity < FAKE_MAX_PAGES ? capacity : FAKE_MAX_PAGES;
	f->region = aligned_alloc(4096, size);
	if (!f->region)
		return -ENOMEM;
	memset(f->region, 0, size);
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	shim_user_env_init(&f->uenv, fake_kick, f);
	shim_ring_init(&f->ring, &f->uenv.env);
	f->ring.timeout_ms = 3000;	/* generous: valgrind is slow */
	ret = shim_ring_attach(&f->ring, f->region, nr_entries, nr_slots);
	if (ret)
		return ret;
	/* The backend's header line, as tmemd writes it at connect. */
	tmem_store_once(&((struct tmem_ring_hdr *)f->region)->req_event, 1);
	if (pthread_create(&f->thread, NULL, fake_main, f))
		return -EAGAIN;
	return 0;
}

void fake_set_mode(struct fake_backend *f, int mode)
{
	pthread_mutex_lock(&f->mu);
	f->mode = mode;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

uint32_t fake_nr_pages(struct fake_backend *f)
{
	uint32_t i, n = 0;

	for (i = 0; i < FAKE_MAX_PAGES; i++)
		n += f->pages[i].used != 0;
	return n;
}

void fake_stop(struct fake_backend *f)
{
	pthread_mutex_lock(&f->mu);
	f->stop = 1;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
	pthread_join(f->thread, NULL);
	shim_ring_detach(&f->ring);
	shim_user_env_destroy(&f->uenv);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f->region);
}
