/* SPDX-License-Identifier: MIT */
/*
 * The host tier's line of stats and top (issue 29): its space, what is
 * in it, and how long read-backs take.  Nothing without a tier.
 */
#include "tmemctl.h"

static void usec(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%.0f us", (double)ns / 1000.0);
}

void print_tier_summary(struct hout *o, json_t *doc)
{
	char used[16], cap[16], stored[16], p50[16], p99[16];
	json_t *t = jpath(doc, "pool.tier");

	if (!json_is_true(json_object_get(t, "configured")))
		return;
	fmt_bytes(used, sizeof(used), hu64(o, doc, "pool.tier.used_bytes"));
	fmt_bytes(cap, sizeof(cap), hu64(o, doc, "pool.tier.capacity_bytes"));
	fmt_bytes(stored, sizeof(stored), hu64(o, doc, "pool.tier.stored_bytes"));
	usec(p50, sizeof(p50), hu64(o, doc, "pool.tier.readback_p50_ns"));
	usec(p99, sizeof(p99), hu64(o, doc, "pool.tier.readback_p99_ns"));
	fprintf(o->f, "host tier: %s of %s used, %llu pages (%s stored), %llu spilled ever, "
		"%llu read-backs (p50 %s, p99 %s)%s\n", used, cap,
		(unsigned long long)hu64(o, doc, "pool.tier.pages"), stored,
		(unsigned long long)hu64(o, doc, "pool.tier.spilled_pages"),
		(unsigned long long)hu64(o, doc, "pool.tier.readbacks"), p50, p99,
		hu64(o, doc, "pool.tier.write_errors") ? "  [spills failed: see the log]" : "");
}
