/* SPDX-License-Identifier: MIT */
/*
 * The host tier's stats in the control protocol (issue 29): the store's
 * under "pool" as "tier", each client's and each pool's as "tier".  Byte
 * counts are as stored (compressed); latencies are quarter-octave
 * histogram bounds (pools/tmem_store.h), in nanoseconds.
 */
#include "ctl_internal.h"

static json_t *jint(uint64_t v)
{
	return json_integer((json_int_t)v);
}

json_t *ctl_tier_stats_json(const struct tmem_tier_stats *st)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:f}",
			 "pages", jint(st->pages), "stored_bytes", jint(st->bytes),
			 "spilled_pages", jint(st->spilled), "readbacks", jint(st->readbacks),
			 "readback_p50_ns", jint(st->readback_p50_ns),
			 "readback_p99_ns", jint(st->readback_p99_ns),
			 "readback_p50_seconds", (double)st->readback_p50_ns / 1e9,
			 "readback_p99_seconds", (double)st->readback_p99_ns / 1e9);
}

json_t *ctl_client_tier_json(const struct tmem_client_info *info)
{
	json_t *doc = ctl_tier_stats_json(&info->tier);

	if (doc && json_object_set_new(doc, "free_bytes", jint(info->tier_free_bytes))) {
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}

json_t *ctl_tier_json(struct tmem_store *store)
{
	struct tmem_tier_info ti;
	json_t *doc;

	store_tier_info(store, &ti);
	doc = ctl_tier_stats_json(&ti.st);
	if (doc && json_object_update_new(doc, json_pack(
			"{s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i}",
			"configured", ti.configured,
			"capacity_bytes", jint(ti.capacity_bytes),
			"used_bytes", jint(ti.used_bytes),
			"free_bytes", jint(ti.free_bytes),
			"spilled_bytes", jint(ti.spilled_bytes),
			"writes", jint(ti.writes),
			"write_errors", jint(ti.write_errors),
			"aborted_pages", jint(ti.aborted),
			"read_errors", jint(ti.read_errors),
			"spill_nsec", jint(ti.spill_nsec),
			"last_errno", -ti.last_error))) {
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}
