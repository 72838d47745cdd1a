/* SPDX-License-Identifier: MIT */
#include "xen/rate.h"

uint64_t xen_rate_take(struct xen_rate *r, uint64_t now_ns)
{
	const uint64_t span = (XEN_RECONNECT_BURST - 1) * XEN_RECONNECT_INTERVAL_NS;

	if (r->tat_ns < now_ns)
		r->tat_ns = now_ns;
	if (r->tat_ns - now_ns > span)
		return r->tat_ns - now_ns - span;
	r->tat_ns += XEN_RECONNECT_INTERVAL_NS;
	return 0;
}
