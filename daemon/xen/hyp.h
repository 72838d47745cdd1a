/* SPDX-License-Identifier: MIT */
/*
 * What the Xen backend needs from the hypervisor besides the xenstore:
 * grant mapping (libxengnttab), interdomain event channels
 * (libxenevtchn) and the domain list (libxenctrl).  An ops table, so
 * tests back it with memfd pages and eventfds (tests/xen-unit/).
 *
 * Calls return 0 or -errno.  map/unmap and bind/unbind run on the main
 * thread; notify and ack also run on the worker serving the ring, so
 * they must be safe to call concurrently with each other.
 */
#ifndef TMEMD_XEN_HYP_H
#define TMEMD_XEN_HYP_H

#include <stdbool.h>
#include <stdint.h>

#define TMEMD_XEN_HANDLE_LEN 16  /* xen_domain_handle_t */

/* SHUTDOWN_* of Xen's public/sched.h: why a domain shut down. */
#define TMEMD_XEN_SHUTDOWN_POWEROFF 0
#define TMEMD_XEN_SHUTDOWN_REBOOT 1
#define TMEMD_XEN_SHUTDOWN_SUSPEND 2  /* xl save, xl migrate: it goes on elsewhere */
#define TMEMD_XEN_SHUTDOWN_CRASH 3
#define TMEMD_XEN_SHUTDOWN_WATCHDOG 4

struct tmemd_xen_dominfo {
	uint32_t domid;
	uint8_t handle[TMEMD_XEN_HANDLE_LEN]; /* the toolstack's UUID for it */
	bool dying;      /* being destroyed: tear down, do not connect */
	bool shutdown;   /* shut down, not yet destroyed */
	unsigned shutdown_reason; /* TMEMD_XEN_SHUTDOWN_*, when shutdown */
};

/* What the elastic pool reads of Xen's memory (xen/balloon.c). */
struct tmemd_xen_meminfo {
	uint64_t free_pages;  /* free in Xen (xc_physinfo) */
	uint64_t total_pages; /* the host's (xc_physinfo) */
	uint64_t tot_pages;   /* the domain's pages now */
	uint64_t max_pages;   /* its maximum (dom0: dom0_mem=...,max:) */
};

struct tmemd_evtchn; /* one bound port; the implementation's */

struct tmemd_hyp_ops {
	/* Maps count granted pages of domid, in refs order, at one
	 * contiguous address. */
	int (*map)(void *h, uint32_t domid, const uint32_t *refs,
		   uint32_t count, void **addr);
	void (*unmap)(void *h, void *addr, uint32_t count);
	/* Binds domid's unbound port remote to a new local port. */
	int (*bind)(void *h, uint32_t domid, uint32_t remote,
		    struct tmemd_evtchn **out);
	void (*unbind)(void *h, struct tmemd_evtchn *ch);
	/* Readable while a doorbell from the peer is pending. */
	int (*evtchn_fd)(struct tmemd_evtchn *ch);
	int (*notify)(struct tmemd_evtchn *ch);
	/* Consumes a pending doorbell and re-enables the port. */
	void (*ack)(struct tmemd_evtchn *ch);
	/* Up to max running domains, ascending; returns how many. */
	int (*list_domains)(void *h, struct tmemd_xen_dominfo *out,
			    unsigned max);
	/* Optional (NULL: the pool does not balloon): Xen's free memory and
	 * domain domid's pages. */
	int (*mem_info)(void *h, uint32_t domid, struct tmemd_xen_meminfo *out);
	void (*close)(void *h);
};

struct tmemd_hyp {
	const struct tmemd_hyp_ops *ops;
	void *h;
};

/* The libxengnttab/libxenevtchn/libxenctrl implementation (hyp_lib.c). */
int tmemd_hyp_open_lib(struct tmemd_hyp *out);

#endif /* TMEMD_XEN_HYP_H */
