/* SPDX-License-Identifier: MIT */
/*
 * The elastic pool's figures as the control server shows them ("memory"
 * in status and stats).  Every size is physical bytes of host memory
 * (frames of 4 KiB), never logical page counts: what tmem costs the host.
 */
#include "fallow_json.h"

static json_t *reclaim_json(const struct tmemd_fallow_stats *s)
{
	json_t *o = json_object();

	for (int c = 0; o && c < TMEMD_NR_RECLAIM_CAUSES; c++)
		json_object_set_new(o, tmemd_reclaim_cause_name(c),
				    json_pack("{s:I, s:I}", "events",
					      (json_int_t)s->reclaim_events[c], "pages",
					      (json_int_t)s->reclaim_pages[c]));
	return o;
}

static json_t *xen_json(const struct tmemd_fallow_stats *s)
{
	if (!s->xen)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:I}",
			 "free_bytes", (json_int_t)s->x.xen_free,
			 "dom0_bytes", (json_int_t)s->x.dom0_now,
			 "dom0_target_bytes", (json_int_t)s->x.dom0_target,
			 "dom0_max_bytes", (json_int_t)s->x.dom0_max,
			 "ballooned_bytes", (json_int_t)s->ballooned);
}

json_t *tmemd_fallow_json(const struct tmemd_fallow *f)
{
	struct tmemd_fallow_stats s;

	if (!f)
		return NULL;
	tmemd_fallow_stats(f, &s);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:{s:I, s:b, s:b, s:f, s:b}, "
			 "s:I, s:b, s:b, s:o, s:o}",
			 "ceiling_bytes", (json_int_t)s.ceiling,
			 "target_bytes", (json_int_t)s.target,
			 "used_bytes", (json_int_t)s.used,
			 "peak_bytes", (json_int_t)s.peak,
			 "resident_bytes", (json_int_t)s.resident,
			 "released_bytes", (json_int_t)s.released_bytes,
			 "warmed_bytes", (json_int_t)s.warmed_bytes,
			 "cold_take_bytes", (json_int_t)s.cold_take_bytes,
			 "host", "available_bytes", (json_int_t)s.host_available,
			 "cgroup_limited", s.cgroup_limited, "psi", s.have_psi,
			 "stall_percent", s.stall_pct, "pressure", s.pressure,
			 "target_changes", (json_int_t)s.target_changes,
			 "refusing_persistent", s.refusing_persistent,
			 "spilling", s.spilling,
			 "reclaim", reclaim_json(&s), "xen", xen_json(&s));
}
