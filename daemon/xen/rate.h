/* SPDX-License-Identifier: MIT */
/*
 * How often one domain may connect.  Each connect maps its grants and
 * binds its event channel, each disconnect undoes it; a guest toggling
 * its xenbus state between Closed and Initialised would make tmemd do
 * that without limit.  A token bucket per domain (GCRA form: one
 * timestamp) allows XEN_RECONNECT_BURST connects at once, then one per
 * XEN_RECONNECT_INTERVAL_NS; a connect over the rate is deferred, not
 * refused, so a guest that reconnects a few times is only slowed.
 * Pure: the caller passes the time (CLOCK_MONOTONIC ns).
 */
#ifndef TMEMD_XEN_RATE_H
#define TMEMD_XEN_RATE_H

#include <stdint.h>

#define XEN_RECONNECT_BURST 5u
#define XEN_RECONNECT_INTERVAL_NS 1000000000ull /* 1 s */

struct xen_rate {
	uint64_t tat_ns; /* when the bucket would be full again; 0: full */
};

/* A connect at now: 0 when it may go ahead (and is counted), else how
 * many ns until one may. */
uint64_t xen_rate_take(struct xen_rate *r, uint64_t now_ns);

#endif /* TMEMD_XEN_RATE_H */
