/* SPDX-License-Identifier: MIT */
/*
 * Serving a ring, Xen style (io/ring.h): RING_COPY_REQUEST, overflow
 * check on the untrusted producer index, responses written over the
 * requests they answer, notification hold-off with rsp_event.
 */
#include <string.h>

#include "ring.h"

/* Publish responses every this many, so a pipelining frontend gets its
 * slots back while the batch is still being served. */
#define PUBLISH_EVERY 8u

static struct tmem_ring_hdr *hdr(struct tmemd_ring *r)
{
	return r->geo.region;
}

int tmemd_ring_check_fresh(void *region, uint32_t nr_entries, uint32_t nr_slots)
{
	struct tmem_ring_hdr *h = region;

	if (tmem_load_once(&h->magic) != TMEM_RING_MAGIC ||
	    tmem_load_once(&h->version) != TMEM_RING_VERSION ||
	    tmem_load_once(&h->nr_entries) != nr_entries ||
	    tmem_load_once(&h->nr_slots) != nr_slots ||
	    tmem_load_once(&h->slot_offset) != tmem_slot_offset(nr_entries) ||
	    tmem_load_once(&h->req_prod) != 0)
		return -TMEM_EPROTO;
	return 0;
}

void tmemd_ring_init(struct tmemd_ring *r)
{
	struct tmem_ring_hdr *h = hdr(r);

	r->req_cons = 0;
	r->rsp_prod_pvt = 0;
	r->rsp_published = 0;
	r->faulted = false;
	r->rb_pending = false;
	tmem_store_once(&h->rsp_prod, 0);
	tmem_store_release(&h->req_event, 1);
}

/* Line 0 must still say what was negotiated; the backend never uses it. */
static const char *geometry_changed(struct tmemd_ring *r)
{
	struct tmem_ring_hdr *h = hdr(r);

	if (tmem_load_once(&h->magic) != TMEM_RING_MAGIC)
		return "ring magic overwritten";
	if (tmem_load_once(&h->version) != TMEM_RING_VERSION ||
	    tmem_load_once(&h->nr_entries) != r->geo.nr_entries ||
	    tmem_load_once(&h->nr_slots) != r->geo.nr_slots ||
	    tmem_load_once(&h->slot_offset) != tmem_slot_offset(r->geo.nr_entries))
		return "ring geometry changed";
	return NULL;
}

static int fault(struct tmemd_ring *r, const char *why)
{
	if (!r->faulted) {
		r->faulted = true;
		r->ops->fault(r, why);
	}
	return -TMEM_EPROTO;
}

static void publish(struct tmemd_ring *r)
{
	struct tmem_ring_hdr *h = hdr(r);
	uint32_t old = r->rsp_published;

	if (old == r->rsp_prod_pvt)
		return;
	tmem_store_release(&h->rsp_prod, r->rsp_prod_pvt);
	r->rsp_published = r->rsp_prod_pvt;
	/* rsp_prod store before the rsp_event load: else the frontend may
	 * arm rsp_event after our load and sleep on a response we never
	 * signal. */
	tmem_full_barrier();
	if (tmem_ring_need_notify(old, r->rsp_prod_pvt,
				  tmem_load_once(&h->rsp_event)))
		r->ops->notify(r);
}

static void answer(struct tmemd_ring *r, union tmem_ring_entry *ents, uint32_t mask,
		   const struct tmem_req *req, int32_t ret)
{
	struct tmem_rsp rsp;

	tmemd_make_rsp(req, ret, &rsp);
	memcpy(&ents[r->rsp_prod_pvt & mask].rsp, &rsp, sizeof(rsp));
	r->rsp_prod_pvt++;
	r->requests++;
}

/* A get whose page is in the host tier: read it on a read-back thread,
 * into the request's slot, and answer when it is done. */
static void defer(struct tmemd_ring *r, const struct tmem_req *req)
{
	r->rb_req = *req;
	r->rb_job.dst = tmem_slot_ptr(r->geo.region, r->geo.nr_entries, req->slot);
	r->rb_pending = true;
	tmemd_readbacks_submit(r->readbacks, &r->rb_job);
}

/* Serves the next request; false when it waits for a read-back. */
static bool serve_one(struct tmemd_ring *r, union tmem_ring_entry *ents,
		      uint32_t mask)
{
	struct tmem_req req;
	int32_t ret;

	/* RING_COPY_REQUEST: one copy; the compiler barrier stops the copy
	 * being replaced by re-reads of shared memory. */
	memcpy(&req, &ents[r->req_cons & mask].req, sizeof(req));
	__asm__ __volatile__("" ::: "memory");
	r->req_cons++;
	if (!r->readbacks) {
		answer(r, ents, mask, &req, tmemd_dispatch(r->client, &req, &r->geo));
		return true;
	}
	ret = tmemd_dispatch_deferred(r->client, &req, &r->geo, &r->rb_job.rb);
	if (ret == TMEMD_DEFERRED) {
		defer(r, &req);
		return false;
	}
	answer(r, ents, mask, &req, ret);
	return true;
}

/* The read-back the ring waits for, answered once done: 1 answered now,
 * 0 none pending, -1 not done yet. */
static int resume(struct tmemd_ring *r, union tmem_ring_entry *ents, uint32_t mask)
{
	if (!r->rb_pending)
		return 0;
	/* Acquire: the page in the slot and ret are there. */
	if (!atomic_load_explicit(&r->rb_job.done, memory_order_acquire))
		return -1;
	r->rb_pending = false;
	answer(r, ents, mask, &r->rb_req, r->rb_job.ret);
	return 1;
}

int tmemd_ring_process(struct tmemd_ring *r, unsigned budget)
{
	union tmem_ring_entry *ents = tmem_ring_entries(r->geo.region);
	uint32_t mask = r->geo.nr_entries - 1;
	const char *why;
	uint32_t prod;
	unsigned n;
	int resumed;

	if (r->faulted)
		return -TMEM_EPROTO;
	why = geometry_changed(r);
	if (why)
		return fault(r, why);
	resumed = resume(r, ents, mask);
	if (resumed < 0)
		return 0;
	n = (unsigned)resumed;
	prod = tmem_load_acquire(&hdr(r)->req_prod);
	if (tmem_ring_prod_overflow(prod, r->rsp_prod_pvt, r->geo.nr_entries))
		return fault(r, "request producer index overflow");
	while (r->req_cons != prod && n < budget) {
		bool go_on = serve_one(r, ents, mask);

		if (go_on && ++n % PUBLISH_EVERY == 0)
			publish(r);
		if (!go_on)
			break;
	}
	publish(r);
	return (int)n;
}

bool tmemd_ring_pending(struct tmemd_ring *r)
{
	if (r->faulted)
		return false;
	if (r->rb_pending)
		return atomic_load_explicit(&r->rb_job.done, memory_order_acquire);
	return tmem_load_once(&hdr(r)->req_prod) != r->req_cons;
}

bool tmemd_ring_readback_busy(struct tmemd_ring *r)
{
	return r->rb_pending && !atomic_load_explicit(&r->rb_job.done, memory_order_acquire);
}

bool tmemd_ring_arm(struct tmemd_ring *r)
{
	if (r->faulted)
		return false;
	tmem_store_once(&hdr(r)->req_event, r->req_cons + 1);
	/* req_event store before the req_prod load (tmem_barrier.h). */
	tmem_full_barrier();
	return tmemd_ring_pending(r);
}
