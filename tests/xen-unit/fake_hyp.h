/* SPDX-License-Identifier: MIT */
/*
 * A hypervisor for the Xen backend without Xen (struct tmemd_hyp_ops):
 * each fake domain's memory is a memfd, a grant reference names one of
 * its pages and "mapping" grants mmaps those pages (MAP_SHARED) into one
 * contiguous range, so backend and test share memory exactly as dom0
 * and a domU do.  An event channel is a pair of eventfds.
 */
#ifndef FAKE_HYP_H
#define FAKE_HYP_H

#include <stdbool.h>
#include <stdint.h>

#include "xen/hyp.h"

struct fake_hyp;

struct fake_hyp *fake_hyp_new(void);
void fake_hyp_free(struct fake_hyp *fh);

/* An ops handle for the backend; its close() only marks it closed. */
struct tmemd_hyp fake_hyp_handle(struct fake_hyp *fh);

/* Domains: add one with nr_pages of memory (mapped at *mem for the
 * test's "guest" side), mark it dying, or remove it. */
int fake_hyp_add_domain(struct fake_hyp *fh, uint32_t domid,
			uint32_t nr_pages, void **mem);
void fake_hyp_set_dying(struct fake_hyp *fh, uint32_t domid);
void fake_hyp_remove_domain(struct fake_hyp *fh, uint32_t domid);
/* The domain shut down for reason (TMEMD_XEN_SHUTDOWN_*). */
void fake_hyp_set_shutdown(struct fake_hyp *fh, uint32_t domid, unsigned reason);
/* Its handle (the toolstack's UUID): a restored domain keeps the old one. */
void fake_hyp_set_handle(struct fake_hyp *fh, uint32_t domid,
			 const uint8_t handle[TMEMD_XEN_HANDLE_LEN]);
void fake_hyp_get_handle(struct fake_hyp *fh, uint32_t domid,
			 uint8_t handle[TMEMD_XEN_HANDLE_LEN]);

/* Grants domid's page to dom0; returns the reference. */
uint32_t fake_hyp_grant(struct fake_hyp *fh, uint32_t domid, uint32_t page);
/* Allocates an unbound port of domid for dom0; returns it. */
uint32_t fake_hyp_alloc_port(struct fake_hyp *fh, uint32_t domid);
/* The guest's ends of a port: kick (guest -> backend) to write,
 * wake (backend -> guest) to read. */
int fake_hyp_port_kick_fd(struct fake_hyp *fh, uint32_t domid, uint32_t port);
int fake_hyp_port_wake_fd(struct fake_hyp *fh, uint32_t domid, uint32_t port);

/* Pages the backend has mapped now, and ports it has bound now. */
unsigned fake_hyp_mapped_pages(struct fake_hyp *fh);
/* Successful grant maps so far (each connect maps once). */
unsigned fake_hyp_map_calls(struct fake_hyp *fh);
unsigned fake_hyp_bound_ports(struct fake_hyp *fh);

#endif /* FAKE_HYP_H */
