/* SPDX-License-Identifier: MIT */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_front.h"

static void must(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "fake_front: %s: %d\n", what, rc);
		abort();
	}
}

void fake_front_init(struct fake_front *f, struct fake_xs *xs,
		     struct fake_hyp *hyp, uint32_t domid, const char *name,
		     uint32_t nr_entries, uint32_t nr_slots)
{
	char path[128];

	memset(f, 0, sizeof(*f));
	f->xs = xs;
	f->hyp = hyp;
	f->domid = domid;
	f->nr_entries = nr_entries;
	f->nr_slots = nr_slots;
	f->nr_pages = (uint32_t)(tmem_region_size(nr_entries, nr_slots) / TMEM_PAGE_SIZE);
	if (f->nr_pages > FAKE_FRONT_MAX_PAGES)
		abort();
	/* The guest's region is pages 0..n-1 of its memory, one spare. */
	must(fake_hyp_add_domain(hyp, domid, f->nr_pages + 1, &f->region), "add domain");
	for (uint32_t i = 0; i < f->nr_pages; i++)
		f->refs[i] = fake_hyp_grant(hyp, domid, i);
	f->port = fake_hyp_alloc_port(hyp, domid);
	snprintf(f->dir, sizeof(f->dir), "/local/domain/%u/device/tmem/0", domid);
	/* What the toolstack writes: /local/domain/N and its device dir,
	 * dom0's, readable by the domain (libxl's roperm). */
	snprintf(path, sizeof(path), "/local/domain/%u", domid);
	must(fake_xs_handle(xs).ops->mkdir_perms(xs, 0, path,
		(struct tmemd_xs_perm[]){ { 0, TMEMD_XS_PERM_NONE },
					  { domid, TMEMD_XS_PERM_READ } }, 2), "mkdir");
	snprintf(path, sizeof(path), "/local/domain/%u/device", domid);
	must(fake_xs_handle(xs).ops->mkdir_perms(xs, 0, path,
		(struct tmemd_xs_perm[]){ { 0, TMEMD_XS_PERM_NONE },
					  { domid, TMEMD_XS_PERM_READ } }, 2), "mkdir");
	if (name) {
		snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
		must(fake_xs_write_as(xs, 0, path, name), "name");
	}
}

int fake_front_write(struct fake_front *f, const char *name, const char *value)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	return fake_xs_write_as(f->xs, f->domid, path, value);
}

void fake_front_set_state(struct fake_front *f, int state)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", state);
	must(fake_front_write(f, "state", v), "state");
}

int fake_front_backend_state(struct fake_front *f)
{
	char path[160], *be = NULL, *v = NULL;
	int state = -1;

	/* Read as the domU does: through its backend link. */
	snprintf(path, sizeof(path), "%s/backend", f->dir);
	if (fake_xs_read_as(f->xs, f->domid, path, &be))
		return -1;
	snprintf(path, sizeof(path), "%s/state", be);
	if (!fake_xs_read_as(f->xs, f->domid, path, &v))
		state = atoi(v);
	free(be);
	free(v);
	return state;
}

void fake_front_publish(struct fake_front *f)
{
	struct tmem_ring_hdr *h = f->region;
	char name[24], v[24];

	memset(f->region, 0, (size_t)f->nr_pages * TMEM_PAGE_SIZE);
	h->magic = TMEM_RING_MAGIC;
	h->version = TMEM_RING_VERSION;
	h->nr_entries = f->nr_entries;
	h->nr_slots = f->nr_slots;
	h->slot_offset = tmem_slot_offset(f->nr_entries);
	h->rsp_event = 1;
	f->next_id = 0;
	snprintf(v, sizeof(v), "%u", TMEM_RING_VERSION);
	must(fake_front_write(f, "protocol-version", v), "version");
	snprintf(v, sizeof(v), "%u", f->nr_entries);
	must(fake_front_write(f, "ring-entries", v), "entries");
	snprintf(v, sizeof(v), "%u", f->nr_slots);
	must(fake_front_write(f, "nr-slots", v), "slots");
	snprintf(v, sizeof(v), "%u", f->nr_pages);
	must(fake_front_write(f, "ring-pages", v), "pages");
	for (uint32_t i = 0; i < f->nr_pages; i++) {
		snprintf(name, sizeof(name), "ring-ref%u", i);
		snprintf(v, sizeof(v), "%u", f->refs[i]);
		must(fake_front_write(f, name, v), "ref");
	}
	snprintf(v, sizeof(v), "%u", f->port);
	must(fake_front_write(f, "event-channel", v), "port");
	fake_front_set_state(f, 3);
}

void *fake_front_slot(struct fake_front *f, uint32_t n)
{
	return tmem_slot_ptr(f->region, f->nr_entries, n);
}

int32_t fake_front_call(struct fake_front *f, struct tmem_req *req)
{
	struct tmem_ring_hdr *h = f->region;
	union tmem_ring_entry *e = tmem_ring_entries(f->region);
	uint32_t prod = tmem_load_once(&h->req_prod);
	int kick = fake_hyp_port_kick_fd(f->hyp, f->domid, f->port);
	int wake = fake_hyp_port_wake_fd(f->hyp, f->domid, f->port);
	uint64_t one = 1, v;

	req->id = ++f->next_id;
	memcpy(&e[prod & (f->nr_entries - 1)].req, req, sizeof(*req));
	tmem_store_once(&h->rsp_event, prod + 1);
	tmem_store_release(&h->req_prod, prod + 1);
	if (write(kick, &one, sizeof(one)) < 0)
		abort();
	for (int i = 0; i < 500; i++) {
		struct pollfd p = { .fd = wake, .events = POLLIN };

		if (tmem_load_acquire(&h->rsp_prod) == prod + 1)
			return e[prod & (f->nr_entries - 1)].rsp.ret;
		if (poll(&p, 1, 10) > 0 && read(wake, &v, sizeof(v)) < 0)
			abort();
	}
	return INT32_MIN;
}
