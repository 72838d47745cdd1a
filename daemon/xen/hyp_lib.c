/* SPDX-License-Identifier: MIT */
/*
 * struct tmemd_hyp_ops over libxengnttab, libxenevtchn and libxenctrl,
 * as gnttest.c in the nested-Xen reference does it.  One grant handle
 * maps every ring; each bound port gets its own event channel handle, so
 * its fd is the ring's own doorbell for the worker's epoll.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <xenctrl.h>
#include <xenevtchn.h>
#include <xengnttab.h>

#include "xen/hyp.h"
#include "xen/lib_errno.h"

struct hyp_lib {
	xengnttab_handle *gnt;
	xc_interface *xc;
};

struct tmemd_evtchn {
	xenevtchn_handle *xe;
	evtchn_port_t local;
};

static int lib_map(void *h, uint32_t domid, const uint32_t *refs,
		   uint32_t count, void **addr)
{
	struct hyp_lib *hl = h;
	void *p;

	errno = 0;
	/* All or nothing: a partial failure leaves nothing mapped. */
	p = xengnttab_map_domain_grant_refs(hl->gnt, count, domid,
					    (uint32_t *)refs,
					    PROT_READ | PROT_WRITE);
	if (!p)
		return err_or(EFAULT);
	*addr = p;
	return 0;
}

static void lib_unmap(void *h, void *addr, uint32_t count)
{
	struct hyp_lib *hl = h;

	if (addr)
		xengnttab_unmap(hl->gnt, addr, count);
}

static void lib_unbind(void *h, struct tmemd_evtchn *ch)
{
	(void)h;
	if (!ch)
		return;
	if (ch->xe) {
		xenevtchn_unbind(ch->xe, ch->local);
		xenevtchn_close(ch->xe);
	}
	free(ch);
}

static int lib_bind(void *h, uint32_t domid, uint32_t remote,
		    struct tmemd_evtchn **out)
{
	struct tmemd_evtchn *ch = calloc(1, sizeof(*ch));
	xenevtchn_port_or_error_t p;
	int rc;

	(void)h;
	if (!ch)
		return -ENOMEM;
	errno = 0;
	ch->xe = xenevtchn_open(NULL, 0);
	if (!ch->xe) {
		rc = err_or(ENODEV);
		free(ch);
		return rc;
	}
	errno = 0;
	p = xenevtchn_bind_interdomain(ch->xe, domid, remote);
	if (p < 0) {
		rc = err_or(EINVAL);
		xenevtchn_close(ch->xe);
		free(ch);
		return rc;
	}
	ch->local = (evtchn_port_t)p;
	/* ack() reads pending ports; it must never block the worker. */
	fcntl(xenevtchn_fd(ch->xe), F_SETFL, O_NONBLOCK);
	*out = ch;
	return 0;
}

static int lib_evtchn_fd(struct tmemd_evtchn *ch)
{
	return xenevtchn_fd(ch->xe);
}

static int lib_notify(struct tmemd_evtchn *ch)
{
	errno = 0;
	return xenevtchn_notify(ch->xe, ch->local) == 0 ? 0 : err_or(EIO);
}

static void lib_ack(struct tmemd_evtchn *ch)
{
	xenevtchn_port_or_error_t p;

	/* A port is masked when it fires; unmask it after consuming. */
	while ((p = xenevtchn_pending(ch->xe)) >= 0)
		xenevtchn_unmask(ch->xe, (evtchn_port_t)p);
}

static int lib_list_domains(void *h, struct tmemd_xen_dominfo *out,
			    unsigned max)
{
	struct hyp_lib *hl = h;
	xc_domaininfo_t info[64];
	uint32_t next = 0;
	unsigned n = 0;

	while (n < max) {
		unsigned want = max - n < 64 ? max - n : 64;
		int got = xc_domain_getinfolist(hl->xc, next, want, info);

		if (got < 0)
			return err_or(EIO);
		for (int i = 0; i < got; i++) {
			out[n] = (struct tmemd_xen_dominfo){
				.domid = info[i].domain,
				.dying = info[i].flags & XEN_DOMINF_dying,
				.shutdown = info[i].flags & XEN_DOMINF_shutdown,
				.shutdown_reason = info[i].flags >> XEN_DOMINF_shutdownshift &
						   XEN_DOMINF_shutdownmask,
			};
			_Static_assert(sizeof(info[i].handle) == TMEMD_XEN_HANDLE_LEN,
				       "xen_domain_handle_t");
			memcpy(out[n++].handle, info[i].handle, TMEMD_XEN_HANDLE_LEN);
		}
		if ((unsigned)got < want)
			break;
		next = info[got - 1].domain + 1u;
	}
	return (int)n;
}

static int lib_mem_info(void *h, uint32_t domid, struct tmemd_xen_meminfo *out)
{
	struct hyp_lib *hl = h;
	xc_physinfo_t phys = { 0 };
	xc_domaininfo_t info;

	if (xc_physinfo(hl->xc, &phys) < 0)
		return err_or(EIO);
	if (xc_domain_getinfolist(hl->xc, domid, 1, &info) != 1 || info.domain != domid)
		return err_or(ENOENT);
	out->free_pages = phys.free_pages;
	out->total_pages = phys.total_pages;
	out->tot_pages = info.tot_pages;
	out->max_pages = info.max_pages;
	return 0;
}

static void hyp_lib_close(void *h)
{
	struct hyp_lib *hl = h;

	if (!hl)
		return;
	if (hl->gnt)
		xengnttab_close(hl->gnt);
	if (hl->xc)
		xc_interface_close(hl->xc);
	free(hl);
}

static const struct tmemd_hyp_ops hyp_lib_ops = {
	.map = lib_map,
	.unmap = lib_unmap,
	.bind = lib_bind,
	.unbind = lib_unbind,
	.evtchn_fd = lib_evtchn_fd,
	.notify = lib_notify,
	.ack = lib_ack,
	.list_domains = lib_list_domains,
	.mem_info = lib_mem_info,
	.close = hyp_lib_close,
};

int tmemd_hyp_open_lib(struct tmemd_hyp *out)
{
	struct hyp_lib *hl = calloc(1, sizeof(*hl));
	int rc;

	if (!hl)
		return -ENOMEM;
	errno = 0;
	hl->gnt = xengnttab_open(NULL, 0);
	if (!hl->gnt) {
		rc = err_or(ENODEV);
		goto fail;
	}
	errno = 0;
	hl->xc = xc_interface_open(NULL, NULL, 0);
	if (!hl->xc) {
		rc = err_or(ENODEV);
		goto fail;
	}
	*out = (struct tmemd_hyp){ .ops = &hyp_lib_ops, .h = hl };
	return 0;
fail:
	hyp_lib_close(hl);
	return rc;
}
