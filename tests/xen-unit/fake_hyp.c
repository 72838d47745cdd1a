/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_hyp.h"
#include "tmem_proto.h"

#define MAX_DOMS 16
#define MAX_GRANTS 4096
#define MAX_PORTS 64
#define GRANT_BASE 8    /* refs below are never handed out */

struct fdom {
	bool used, dying, shutdown;
	unsigned shutdown_reason;
	uint32_t domid;
	uint8_t handle[TMEMD_XEN_HANDLE_LEN];
	int memfd;
	uint32_t nr_pages;
	void *mem;
};

struct grant {
	bool used;
	uint32_t domid, page;
};

struct tmemd_evtchn {
	bool used, bound;
	uint32_t domid, port;
	int kick_fd, wake_fd;
};

struct fake_hyp {
	struct fdom doms[MAX_DOMS];
	struct grant grants[MAX_GRANTS];
	struct tmemd_evtchn ports[MAX_PORTS];
	unsigned mapped, bound;
	unsigned maps;              /* map calls that succeeded, ever */
	uint32_t domains_made;      /* ever: each domain's handle differs */
};

struct fake_hyp *fake_hyp_new(void)
{
	return calloc(1, sizeof(struct fake_hyp));
}

static struct fdom *dom(struct fake_hyp *fh, uint32_t domid)
{
	for (int i = 0; i < MAX_DOMS; i++)
		if (fh->doms[i].used && fh->doms[i].domid == domid)
			return &fh->doms[i];
	return NULL;
}

static void free_dom(struct fake_hyp *fh, struct fdom *d)
{
	for (int i = 0; i < MAX_PORTS; i++) {
		struct tmemd_evtchn *p = &fh->ports[i];

		if (p->used && p->domid == d->domid) {
			close(p->kick_fd);
			close(p->wake_fd);
			memset(p, 0, sizeof(*p));
		}
	}
	for (int i = 0; i < MAX_GRANTS; i++)
		if (fh->grants[i].used && fh->grants[i].domid == d->domid)
			fh->grants[i].used = false;
	munmap(d->mem, (size_t)d->nr_pages * TMEM_PAGE_SIZE);
	close(d->memfd);
	memset(d, 0, sizeof(*d));
}

void fake_hyp_free(struct fake_hyp *fh)
{
	if (!fh)
		return;
	for (int i = 0; i < MAX_DOMS; i++)
		if (fh->doms[i].used)
			free_dom(fh, &fh->doms[i]);
	free(fh);
}

int fake_hyp_add_domain(struct fake_hyp *fh, uint32_t domid,
			uint32_t nr_pages, void **mem)
{
	size_t size = (size_t)nr_pages * TMEM_PAGE_SIZE;

	for (int i = 0; i < MAX_DOMS; i++) {
		struct fdom *d = &fh->doms[i];

		if (d->used)
			continue;
		d->memfd = memfd_create("fake-domain", MFD_CLOEXEC);
		if (d->memfd < 0 || ftruncate(d->memfd, (off_t)size))
			return -errno;
		d->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			      d->memfd, 0);
		if (d->mem == MAP_FAILED)
			return -errno;
		d->used = true;
		d->domid = domid;
		/* A handle per domain made, as the toolstack's UUIDs: a
		 * domain that reuses a domid has another. */
		fh->domains_made++;
		memset(d->handle, 0, sizeof(d->handle));
		memcpy(d->handle, &domid, sizeof(domid));
		memcpy(d->handle + 4, &fh->domains_made, sizeof(fh->domains_made));
		d->nr_pages = nr_pages;
		*mem = d->mem;
		return 0;
	}
	return -ENOSPC;
}

void fake_hyp_set_dying(struct fake_hyp *fh, uint32_t domid)
{
	dom(fh, domid)->dying = true;
}

void fake_hyp_set_shutdown(struct fake_hyp *fh, uint32_t domid, unsigned reason)
{
	dom(fh, domid)->shutdown = true;
	dom(fh, domid)->shutdown_reason = reason;
}

void fake_hyp_set_handle(struct fake_hyp *fh, uint32_t domid,
			 const uint8_t handle[TMEMD_XEN_HANDLE_LEN])
{
	memcpy(dom(fh, domid)->handle, handle, TMEMD_XEN_HANDLE_LEN);
}

void fake_hyp_get_handle(struct fake_hyp *fh, uint32_t domid,
			 uint8_t handle[TMEMD_XEN_HANDLE_LEN])
{
	memcpy(handle, dom(fh, domid)->handle, TMEMD_XEN_HANDLE_LEN);
}

void fake_hyp_remove_domain(struct fake_hyp *fh, uint32_t domid)
{
	free_dom(fh, dom(fh, domid));
}

uint32_t fake_hyp_grant(struct fake_hyp *fh, uint32_t domid, uint32_t page)
{
	for (uint32_t i = GRANT_BASE; i < MAX_GRANTS; i++) {
		if (!fh->grants[i].used) {
			fh->grants[i] = (struct grant){ .used = true,
							.domid = domid, .page = page };
			return i;
		}
	}
	abort();
}

uint32_t fake_hyp_alloc_port(struct fake_hyp *fh, uint32_t domid)
{
	for (uint32_t i = 1; i < MAX_PORTS; i++) {
		struct tmemd_evtchn *p = &fh->ports[i];

		if (p->used)
			continue;
		*p = (struct tmemd_evtchn){
			.used = true, .domid = domid, .port = i,
			.kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC),
			.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC),
		};
		return i;
	}
	abort();
}

static struct tmemd_evtchn *port(struct fake_hyp *fh, uint32_t domid,
				 uint32_t nr)
{
	if (nr == 0 || nr >= MAX_PORTS || !fh->ports[nr].used ||
	    fh->ports[nr].domid != domid)
		return NULL;
	return &fh->ports[nr];
}

int fake_hyp_port_kick_fd(struct fake_hyp *fh, uint32_t domid, uint32_t nr)
{
	return port(fh, domid, nr)->kick_fd;
}

int fake_hyp_port_wake_fd(struct fake_hyp *fh, uint32_t domid, uint32_t nr)
{
	return port(fh, domid, nr)->wake_fd;
}

unsigned fake_hyp_map_calls(struct fake_hyp *fh)
{
	return fh->maps;
}

unsigned fake_hyp_mapped_pages(struct fake_hyp *fh)
{
	return fh->mapped;
}

unsigned fake_hyp_bound_ports(struct fake_hyp *fh)
{
	return fh->bound;
}

/* ---- the ops the backend sees ---- */

static int op_map(void *h, uint32_t domid, const uint32_t *refs,
		  uint32_t count, void **addr)
{
	struct fake_hyp *fh = h;
	struct fdom *d = dom(fh, domid);
	size_t size = (size_t)count * TMEM_PAGE_SIZE;
	uint8_t *base;

	if (!d || count == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < count; i++)
		if (refs[i] >= MAX_GRANTS || !fh->grants[refs[i]].used ||
		    fh->grants[refs[i]].domid != domid)
			return -EINVAL; /* all or nothing, like gntdev */
	base = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	for (uint32_t i = 0; i < count; i++) {
		off_t off = (off_t)fh->grants[refs[i]].page * TMEM_PAGE_SIZE;

		if (mmap(base + (size_t)i * TMEM_PAGE_SIZE, TMEM_PAGE_SIZE,
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 d->memfd, off) == MAP_FAILED) {
			munmap(base, size);
			return -EFAULT;
		}
	}
	fh->mapped += count;
	fh->maps++;
	*addr = base;
	return 0;
}

static void op_unmap(void *h, void *addr, uint32_t count)
{
	struct fake_hyp *fh = h;

	munmap(addr, (size_t)count * TMEM_PAGE_SIZE);
	fh->mapped -= count;
}

static int op_bind(void *h, uint32_t domid, uint32_t remote,
		   struct tmemd_evtchn **out)
{
	struct fake_hyp *fh = h;
	struct tmemd_evtchn *p = port(fh, domid, remote);

	if (!p || p->bound)
		return -EINVAL;
	p->bound = true;
	fh->bound++;
	*out = p;
	return 0;
}

static void op_unbind(void *h, struct tmemd_evtchn *ch)
{
	struct fake_hyp *fh = h;

	if (!ch)
		return;
	ch->bound = false;
	fh->bound--;
}

static int op_evtchn_fd(struct tmemd_evtchn *ch)
{
	return ch->kick_fd;
}

static int op_notify(struct tmemd_evtchn *ch)
{
	uint64_t one = 1;

	return write(ch->wake_fd, &one, sizeof(one)) < 0 ? -errno : 0;
}

static void op_ack(struct tmemd_evtchn *ch)
{
	uint64_t v;

	if (read(ch->kick_fd, &v, sizeof(v)) < 0)
		v = 0; /* nothing pending */
}

static int op_list_domains(void *h, struct tmemd_xen_dominfo *out,
			   unsigned max)
{
	struct fake_hyp *fh = h;
	unsigned n = 0;

	/* Domain 0 is always there. */
	if (max > 0)
		out[n++] = (struct tmemd_xen_dominfo){ .domid = 0 };
	for (int i = 0; i < MAX_DOMS && n < max; i++)
		if (fh->doms[i].used) {
			out[n] = (struct tmemd_xen_dominfo){
				.domid = fh->doms[i].domid,
				.dying = fh->doms[i].dying,
				.shutdown = fh->doms[i].shutdown,
				.shutdown_reason = fh->doms[i].shutdown_reason,
			};
			memcpy(out[n++].handle, fh->doms[i].handle, TMEMD_XEN_HANDLE_LEN);
		}
	return (int)n;
}

static void op_close(void *h)
{
	(void)h;
}

static const struct tmemd_hyp_ops fake_ops = {
	.map = op_map,
	.unmap = op_unmap,
	.bind = op_bind,
	.unbind = op_unbind,
	.evtchn_fd = op_evtchn_fd,
	.notify = op_notify,
	.ack = op_ack,
	.list_domains = op_list_domains,
	.close = op_close,
};

struct tmemd_hyp fake_hyp_handle(struct fake_hyp *fh)
{
	return (struct tmemd_hyp){ .ops = &fake_ops, .h = fh };
}
