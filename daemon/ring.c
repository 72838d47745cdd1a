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

static void serve_one(struct tmemd_ring *r, union tmem_ring_entry *ents,
		      uint32_t mask)
{
	struct tmem_req req;
	struct tmem_rsp rsp;

	/* RING_COPY_REQUEST: one copy; the compiler barrier stops the copy
	 * being replaced by re-reads of shared memory. */
	memcpy(&req, &ents[r->req_cons & mask].req, sizeof(req));
	__asm__ __volatile__("" ::: "memory");
	r->req_cons++;
	tmemd_make_rsp(&req, tmemd_dispatch(r->client, &req, &r->geo), &rsp);
	memcpy(&ents[r->rsp_prod_pvt & mask].rsp, &rsp, sizeof(rsp));
	r->rsp_prod_pvt++;
	r->requests++;
}

int tmemd_ring_process(struct tmemd_ring *r, unsigned budget)
{
	union tmem_ring_entry *ents = tmem_ring_entries(r->geo.region);
	uint32_t mask = r->geo.nr_entries - 1;
	const char *why;
	uint32_t prod;
	unsigned n = 0;

	if (r->faulted)
		return -TMEM_EPROTO;
	why = geometry_changed(r);
	if (why)
		return fault(r, why);
	prod = tmem_load_acquire(&hdr(r)->req_prod);
	if (tmem_ring_prod_overflow(prod, r->rsp_prod_pvt, r->geo.nr_entries))
		return fault(r, "request producer index overflow");
	while (r->req_cons != prod && n < budget) {
		serve_one(r, ents, mask);
		if (++n % PUBLISH_EVERY == 0)
			publish(r);
	}
	publish(r);
	return (int)n;
}

bool tmemd_ring_pending(struct tmemd_ring *r)
{
	if (r->faulted)
		return false;
	return tmem_load_once(&hdr(r)->req_prod) != r->req_cons;
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
