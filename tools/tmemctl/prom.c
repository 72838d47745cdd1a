/* SPDX-License-Identifier: MIT */
/*
 * The stats document in the Prometheus text exposition format (0.0.4),
 * for node_exporter's textfile collector or a scraper.  Each metric is a
 * row in a table: name, type, help, and where its value lives in the
 * stats document; a family's samples are written together after its
 * HELP and TYPE lines, as the format requires.  Per-client metrics carry
 * the labels client (its name) and domid ("" for a local client).
 * tmemctl(8) lists every metric.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tmem_proto.h"
#include "tmemctl.h"

struct metric {
	const char *name;
	const char *type;      /* "gauge" or "counter"; NULL: the family above */
	const char *help;
	const char *path;      /* dotted path in a client (or the pool) */
	const char *label;     /* an extra label "k=\"v\"", or NULL */
	bool optional;         /* null or absent: no sample (caps) */
	unsigned scale;        /* the value times this: 4096 turns pages into bytes */
};

#define PAGE TMEM_PAGE_SIZE

/* A family's first row (t: gauge or counter), and a further labelled row. */
#define M(n, t, h, p, l, sc) { .name = n, .type = t, .help = h, .path = p, .label = l, .scale = sc }
#define MORE(n, p, l, sc) { .name = n, .path = p, .label = l, .scale = sc }
/* A cap: no sample when null (no cap). */
#define CAP(n, h, p) { .name = n, .type = "gauge", .help = h, .path = p, .optional = true, \
		       .scale = PAGE }
#define CL(n, t, h, p) M("tmem_" n, t, h, p, NULL, 1)
/* A family that may be absent (a tmemd from before it). */
#define TIER(n, t, h, p, sc) { .name = n, .type = t, .help = h, .path = p, .optional = true, \
			       .scale = sc }
/* A gauge that may be absent (null) or a real number. */
#define OPT(n, h, p) { .name = n, .type = "gauge", .help = h, .path = p, .optional = true, \
		       .scale = 1 }

/*
 * Base units in the names (bytes, not pages), as Prometheus wants; zswap's
 * names where they mean the same (pool_limit_hit, reject_*).  Issue 30:
 * one name per figure, and every _bytes HELP starts with what it counts:
 * "Logical bytes" (4096 a page, however it is stored: zram's DATA),
 * "Compressed bytes" (what the pages take: zram's COMPR) or "Physical
 * bytes" (memory: pool frames, zram's TOTAL, or the process's).
 * tests/control/test_admin_truth checks each against a known load.
 */
#define KIND_EPH "kind=\"ephemeral\""
#define KIND_PERS "kind=\"persistent\""
static const struct metric pool_metrics[] = {
	M("tmem_pool_size_bytes", "gauge", "Physical bytes: the pool (arena) size.", "total_pages",
	  NULL, PAGE),
	M("tmem_pool_used_bytes", "gauge",
	  "Physical bytes of pool frames in use: compressed spans and raw pages (zram mem_used_total, TOTAL).",
	  "used_pages", NULL, PAGE),
	M("tmem_pool_free_bytes", "gauge", "Physical bytes of free pool frames.", "free_pages", NULL,
	  PAGE),
	M("tmem_pool_freeable_bytes", "gauge",
	  "Physical bytes the host could take back at once: frames ephemeral pages hold, and free frames not given back yet (xl tmem-freeable).",
	  "freeable_pages", NULL, PAGE),
	M("tmem_pool_logical_bytes", "gauge",
	  "Logical bytes of the pages stored, by kind of pool (zram orig_data_size, DATA).",
	  "data.ephemeral.logical_bytes", KIND_EPH, 1),
	MORE("tmem_pool_logical_bytes", "data.persistent.logical_bytes", KIND_PERS, 1),
	M("tmem_pool_compressed_bytes", "gauge",
	  "Compressed bytes the pages take, by kind: 4096 a raw page, 0 a same-filled one (zram compr_data_size, COMPR).",
	  "data.ephemeral.compressed_bytes", KIND_EPH, 1),
	MORE("tmem_pool_compressed_bytes", "data.persistent.compressed_bytes", KIND_PERS, 1),
	OPT("tmem_pool_compression_ratio", "Logical bytes per compressed byte (DATA / COMPR).",
	    "data.compression_ratio"),
	M("tmem_pool_same_filled_bytes", "gauge",
	  "Logical bytes of same-filled pages (zero pages among them), stored as one word.",
	  "compression.same_pages", NULL, PAGE),
	M("tmem_pool_huge_bytes", "gauge",
	  "Logical bytes of incompressible pages, stored raw (zram: huge pages).",
	  "compression.huge_pages", NULL, PAGE),
	M("tmem_pool_metadata_bytes", "gauge",
	  "Physical bytes of descriptors and tables, besides the pool.", "metadata_bytes", NULL, 1),
	M("tmem_pool_allocator_overhead_bytes", "gauge",
	  "Physical bytes of spans not holding data: object headers, size-class rounding, span tails.",
	  "allocator.overhead_bytes", NULL, 1),
	M("tmem_pool_fragmentation_bytes", "gauge", "Physical bytes of free slots in live spans.",
	  "allocator.fragmentation_bytes", NULL, 1),
	M("tmem_pool_compactions_total", "counter", "Compaction runs that moved pages.",
	  "allocator.compactions", NULL, 1),
	M("tmem_pool_compacted_bytes_total", "counter",
	  "Logical bytes of pages moved by compaction (zram: pages compacted).",
	  "allocator.pages_compacted", NULL, PAGE),
	M("tmem_pool_evictions_total", "counter",
	  "Ephemeral pages evicted to make room (memory pressure; admin flushes are not counted).",
	  "evictions", NULL, 1),
	M("tmem_pool_admin_flushes_total", "counter",
	  "Ephemeral pages dropped by tmemctl flush.", "ops.ephemeral.admin_flushes", NULL, 1),
	/* Totals over every client, those gone included: rates over a day. */
	M("tmem_pool_puts_total", "counter", "Put requests, by kind of pool, clients gone included.",
	  "ops.ephemeral.puts", KIND_EPH, 1),
	MORE("tmem_pool_puts_total", "ops.persistent.puts", KIND_PERS, 1),
	M("tmem_pool_succ_puts_total", "counter",
	  "Pages stored, by kind of pool, clients gone included (persistent: swap writes avoided).",
	  "ops.ephemeral.succ_puts", KIND_EPH, 1),
	MORE("tmem_pool_succ_puts_total", "ops.persistent.succ_puts", KIND_PERS, 1),
	M("tmem_pool_gets_total", "counter", "Get requests, by kind of pool, clients gone included.",
	  "ops.ephemeral.gets", KIND_EPH, 1),
	MORE("tmem_pool_gets_total", "ops.persistent.gets", KIND_PERS, 1),
	M("tmem_pool_succ_gets_total", "counter",
	  "Gets that hit, by kind, clients gone included (ephemeral: disk reads avoided; persistent: swap reads avoided).",
	  "ops.ephemeral.succ_gets", KIND_EPH, 1),
	MORE("tmem_pool_succ_gets_total", "ops.persistent.succ_gets", KIND_PERS, 1),
	/* The host tier (issue 29): absent from an older tmemd. */
	TIER("tmem_tier_size_bytes", "gauge",
	     "Physical bytes of disk: the host tier's size less its header (0: no tier).",
	     "tier.capacity_bytes", 1),
	TIER("tmem_tier_used_bytes", "gauge",
	     "Physical bytes of disk: the host tier's space in use (64-byte units).",
	     "tier.used_bytes", 1),
	TIER("tmem_tier_free_bytes", "gauge", "Physical bytes of disk: the host tier's free space.",
	     "tier.free_bytes", 1),
	TIER("tmem_tier_logical_bytes", "gauge",
	     "Logical bytes of the persistent pages in the host tier.", "tier.pages", PAGE),
	TIER("tmem_tier_stored_bytes", "gauge",
	     "Compressed bytes of the pages in the host tier (as they were stored in memory).",
	     "tier.stored_bytes", 1),
	TIER("tmem_tier_spilled_logical_bytes_total", "counter",
	     "Logical bytes of the pages moved to the host tier.", "tier.spilled_pages", PAGE),
	TIER("tmem_tier_spilled_bytes_total", "counter",
	     "Compressed bytes of the pages moved to the host tier.", "tier.spilled_bytes", 1),
	TIER("tmem_tier_readbacks_total", "counter", "Gets served from the host tier.",
	     "tier.readbacks", 1),
	TIER("tmem_tier_readback_p50_seconds", "gauge",
	     "Median read-back latency since start (a quarter-octave histogram bound).",
	     "tier.readback_p50_seconds", 1),
	TIER("tmem_tier_readback_p99_seconds", "gauge",
	     "99th percentile read-back latency since start (a quarter-octave histogram bound).",
	     "tier.readback_p99_seconds", 1),
	TIER("tmem_tier_write_errors_total", "counter",
	     "Spills that failed (ENOSPC, EIO): their pages stayed in memory.", "tier.write_errors",
	     1),
	TIER("tmem_tier_read_errors_total", "counter", "Read-backs that failed with EIO.",
	     "tier.read_errors", 1),
	{ NULL },
};

/* From the stats' restart object: what this start of tmemd recovered. */
static const struct metric restart_metrics[] = {
	M("tmem_restart_survives", "gauge",
	  "1 when the pages live in a file or systemd's fd store and survive a restart.",
	  "survives_restart", NULL, 1),
	M("tmem_restart_recovered_bytes", "gauge",
	  "Logical bytes of pages this start of tmemd recovered from its arena.",
	  "pages_recovered", NULL, PAGE),
	M("tmem_restart_recovered_persistent_bytes", "gauge",
	  "Logical bytes of persistent pages this start recovered.",
	  "persistent_pages_recovered", NULL, PAGE),
	M("tmem_restart_clients_recovered", "gauge", "Clients this start found in its arena.",
	  "clients_recovered", NULL, 1),
	M("tmem_restart_clients_detached", "gauge",
	  "Recovered clients not back yet (freed after reattach-grace).",
	  "clients_detached", NULL, 1),
	M("tmem_restart_adoptions_total", "counter",
	  "Times this arena has been adopted by a starting tmemd.", "starts", NULL, 1),
	M("tmem_restart_clients_reattached_total", "counter",
	  "Recovered clients that came back.", "clients_reattached", NULL, 1),
	M("tmem_restart_clients_expired_total", "counter",
	  "Recovered clients freed: not back within reattach-grace, or their name taken.",
	  "clients_expired", NULL, 1),
	{ NULL },
};

/* From the stats' memory object: the elastic pool (tmemd(8), MEMORY), all
 * physical bytes of host memory. */
#define RECLAIM(t, h, what, sc)                                                      \
	M("tmem_memory_reclaim_" t "_total", "counter", h, "reclaim.pressure." what,  \
	  "cause=\"pressure\"", sc),                                                  \
	MORE("tmem_memory_reclaim_" t "_total", "reclaim.low_free." what,             \
	     "cause=\"low_free\"", sc),                                               \
	MORE("tmem_memory_reclaim_" t "_total", "reclaim.toolstack." what,            \
	     "cause=\"toolstack\"", sc),                                              \
	MORE("tmem_memory_reclaim_" t "_total", "reclaim.admin." what, "cause=\"admin\"", sc)
static const struct metric memory_metrics[] = {
	M("tmem_memory_ceiling_bytes", "gauge", "Physical bytes the pool may hold at most (memory).",
	  "ceiling_bytes", NULL, 1),
	M("tmem_memory_target_bytes", "gauge",
	  "Physical bytes the pool may hold now: the ceiling, less what the host cannot spare.",
	  "target_bytes", NULL, 1),
	M("tmem_memory_used_bytes", "gauge", "Physical bytes of pool frames in use.", "used_bytes", NULL, 1),
	M("tmem_memory_peak_bytes", "gauge", "Physical bytes in use at most since start (zram mem_used_max).",
	  "peak_bytes", NULL, 1),
	M("tmem_memory_resident_bytes", "gauge",
	  "Physical bytes the pool holds: frames in use and free frames not given back yet.",
	  "resident_bytes", NULL, 1),
	M("tmem_memory_released_bytes_total", "counter", "Physical bytes of free frames given back to the host.",
	  "released_bytes", NULL, 1),
	M("tmem_memory_warmed_bytes_total", "counter",
	  "Physical bytes of free frames faulted in ahead of the puts.", "warmed_bytes", NULL, 1),
	M("tmem_memory_cold_take_bytes_total", "counter",
	  "Physical bytes of frames a put took not resident, paying their first touch.",
	  "cold_take_bytes", NULL, 1),
	M("tmem_memory_host_available_bytes", "gauge",
	  "Physical bytes the host could spare at the last sample (MemAvailable, or under a cgroup limit).",
	  "host.available_bytes", NULL, 1),
	M("tmem_memory_stall_percent", "gauge",
	  "Share of the last tick the host stalled on memory (PSI some).",
	  "host.stall_percent", NULL, 1),
	M("tmem_memory_target_changes_total", "counter", "Times the target moved.",
	  "target_changes", NULL, 1),
	RECLAIM("events", "Times the target fell, by cause.", "events", 1),
	RECLAIM("evicted_bytes", "Logical bytes of the ephemeral pages evicted as the target fell, "
		"by cause.", "pages", PAGE),
	{ NULL },
};

static const struct metric client_metrics[] = {
	CL("client_weight", "gauge", "Eviction weight.", "weight"),
	CL("client_frozen", "gauge", "1 when the client's puts are refused.", "frozen"),
	M("tmem_client_logical_bytes", "gauge",
	  "Logical bytes of the client's pages in its own pools, by kind (shared pools: tmem_shared_pool_*).",
	  "data.ephemeral.logical_bytes", KIND_EPH, 1),
	MORE("tmem_client_logical_bytes", "data.persistent.logical_bytes", KIND_PERS, 1),
	M("tmem_client_compressed_bytes", "gauge",
	  "Compressed bytes the client's pages take in its own pools, by kind.",
	  "data.ephemeral.compressed_bytes", KIND_EPH, 1),
	MORE("tmem_client_compressed_bytes", "data.persistent.compressed_bytes", KIND_PERS, 1),
	OPT("tmem_client_compression_ratio", "Logical bytes per compressed byte, its own pools.",
	    "data.compression_ratio"),
	CAP("tmem_client_ephemeral_max_bytes", "Logical bytes: the ephemeral cap (absent: none).",
	    "caps.ephemeral_max_pages"),
	CAP("tmem_client_persistent_max_bytes", "Logical bytes: the persistent cap (absent: none).",
	    "caps.persistent_max_pages"),
	CAP("tmem_client_spill_max_bytes",
	    "Compressed bytes the client may have in the host tier (absent: no limit).",
	    "caps.spill_max_pages"),
	TIER("tmem_client_tier_logical_bytes", "gauge",
	     "Logical bytes of the client's persistent pages in the host tier.", "tier.pages", PAGE),
	TIER("tmem_client_tier_stored_bytes", "gauge",
	     "Compressed bytes of the client's pages in the host tier.", "tier.stored_bytes", 1),
	TIER("tmem_client_tier_spilled_logical_bytes_total", "counter",
	     "Logical bytes of the client's pages moved to the host tier.", "tier.spilled_pages",
	     PAGE),
	TIER("tmem_client_tier_readbacks_total", "counter",
	     "The client's gets served from the host tier.", "tier.readbacks", 1),
	TIER("tmem_client_tier_readback_p50_seconds", "gauge",
	     "The client's median read-back latency (a quarter-octave histogram bound).",
	     "tier.readback_p50_seconds", 1),
	TIER("tmem_client_tier_readback_p99_seconds", "gauge",
	     "The client's 99th percentile read-back latency (a histogram bound).",
	     "tier.readback_p99_seconds", 1),
	CL("client_puts_total", "counter", "Put requests.", "ops.puts"),
	CL("client_succ_puts_total", "counter", "Pages stored.", "ops.succ_puts"),
	CL("client_pool_limit_hit_total", "counter", "Puts refused: the pool was full.",
	   "ops.failed_puts.full"),
	CL("client_reject_quota_total", "counter", "Puts refused: over the client's cap.",
	   "ops.failed_puts.quota"),
	CL("client_reject_frozen_total", "counter", "Puts refused: the client is frozen.",
	   "ops.failed_puts.frozen"),
	CL("client_gets_total", "counter", "Get requests.", "ops.gets"),
	CL("client_succ_gets_total", "counter", "Gets that hit.", "ops.succ_gets"),
	CL("client_failed_gets_total", "counter", "Gets that missed.", "ops.failed_gets"),
	CL("client_page_flushes_total", "counter", "Flush-page requests.", "ops.flush_pages"),
	CL("client_object_flushes_total", "counter", "Flush-object requests.", "ops.flush_objects"),
	CL("client_evictions_total", "counter",
	   "The client's pages evicted to make room (not admin flushes).", "ops.evictions"),
	CL("client_admin_flushes_total", "counter", "The client's pages dropped by tmemctl flush.",
	   "ops.admin_flushes"),
	CL("cleancache_succ_gets_total", "counter", "cleancache: gets that hit.", "cleancache.succ_gets"),
	CL("cleancache_failed_gets_total", "counter", "cleancache: gets that missed.", "cleancache.failed_gets"),
	CL("cleancache_puts_total", "counter", "cleancache: puts.", "cleancache.puts"),
	CL("cleancache_flushes_total", "counter", "cleancache: page and inode flushes.", "cleancache.flushes"),
	CL("frontswap_succ_stores_total", "counter", "frontswap: stores accepted.", "frontswap.succ_stores"),
	CL("frontswap_failed_stores_total", "counter", "frontswap: stores refused.", "frontswap.failed_stores"),
	CL("frontswap_loads_total", "counter", "frontswap: loads that hit.", "frontswap.loads"),
	CL("frontswap_invalidates_total", "counter", "frontswap: page and area invalidates.", "frontswap.invalidates"),
	{ NULL },
};

static const struct metric shared_metrics[] = {
	M("tmem_shared_pool_logical_bytes", "gauge",
	  "Logical bytes of the shared pool's pages (charged to no client).", "logical_bytes", NULL, 1),
	M("tmem_shared_pool_compressed_bytes", "gauge",
	  "Compressed bytes the shared pool's pages take.", "compressed_bytes", NULL, 1),
	M("tmem_shared_pool_sharers", "gauge", "Clients that joined the shared pool.", "sharers",
	  NULL, 1),
	{ NULL },
};

/* From the stats' parked object: domains parked for xl save, restore
 * and migrate (tmemd(8)), and what became of their persistent pools. */
static const struct metric parked_metrics[] = {
	M("tmem_parked_clients", "gauge",
	  "Clients parked now: suspended domains whose persistent pages wait for their restore.",
	  "clients", NULL, 1),
	M("tmem_parked_pools_total", "counter",
	  "Persistent pools parked, claimed by the restored domain, or expired unclaimed.",
	  "pools.parked", "event=\"parked\"", 1),
	MORE("tmem_parked_pools_total", "pools.claimed", "event=\"claimed\"", 1),
	MORE("tmem_parked_pools_total", "pools.expired", "event=\"expired\"", 1),
	M("tmem_parked_bytes_total", "counter",
	  "Logical bytes of persistent pages parked, claimed by the restored domain, or expired unclaimed.",
	  "pages.parked", "event=\"parked\"", PAGE),
	MORE("tmem_parked_bytes_total", "pages.claimed", "event=\"claimed\"", PAGE),
	MORE("tmem_parked_bytes_total", "pages.expired", "event=\"expired\"", PAGE),
	{ NULL },
};

/* Label value escaping: backslash, double quote and newline. */
static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

/* One sample.  labels: the client/uuid part, already formatted, or "". */
static int sample(FILE *out, const struct metric *m, json_t *obj,
		  void (*labels)(FILE *, json_t *))
{
	json_t *v = jpath(obj, m->path);
	bool any = labels || m->label;

	if (m->optional && (!v || json_is_null(v)))
		return 0;
	if (!json_is_integer(v) && !json_is_boolean(v) && !json_is_real(v))
		return -EINVAL;
	fputs(m->name, out);
	if (any)
		fputc('{', out);
	if (labels)
		labels(out, obj);
	if (m->label)
		fprintf(out, "%s%s", labels ? "," : "", m->label);
	if (any)
		fputc('}', out);
	if (json_is_real(v))
		fprintf(out, " %.4f\n", json_real_value(v) * (double)m->scale);
	else
		fprintf(out, " %lld\n", json_is_boolean(v) ? (long long)json_is_true(v) :
			(long long)json_integer_value(v) * m->scale);
	return 0;
}

static void client_labels(FILE *out, json_t *c)
{
	json_t *domid = json_object_get(c, "domid");

	fputs("client=\"", out);
	put_escaped(out, json_string_value(json_object_get(c, "name")));
	if (json_is_integer(domid))
		fprintf(out, "\",domid=\"%lld\"", (long long)json_integer_value(domid));
	else
		fputs("\",domid=\"\"", out);
}

static void uuid_labels(FILE *out, json_t *p)
{
	fputs("uuid=\"", out);
	put_escaped(out, json_string_value(json_object_get(p, "uuid")));
	fputc('"', out);
}

/* Every family in table over every object of arr (or obj alone). */
static int families(FILE *out, const struct metric *table, json_t *arr,
		    void (*labels)(FILE *, json_t *))
{
	for (const struct metric *m = table; m->name; m++) {
		size_t i;
		json_t *o;

		if (m->type)
			fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help,
				m->name, m->type);
		if (!labels) {
			if (sample(out, m, arr, NULL))
				return -EINVAL;
			continue;
		}
		json_array_foreach(arr, i, o)
			if (sample(out, m, o, labels))
				return -EINVAL;
	}
	return 0;
}

/* tmem_build_info and tmem_start_time_seconds, from the status reply. */
static int daemon_families(FILE *out, json_t *status)
{
	json_t *version = jpath(status, "daemon.version");
	json_t *start = jpath(status, "daemon.start_time_seconds");
	json_t *cpu = jpath(status, "daemon.cpu_seconds");

	if (!json_is_string(version) || !json_is_integer(start))
		return -EINVAL;
	fputs("# HELP tmem_build_info tmemd's version, as a label; the value is 1.\n"
	      "# TYPE tmem_build_info gauge\ntmem_build_info{version=\"", out);
	put_escaped(out, json_string_value(version));
	fprintf(out, "\",tmemctl_version=\"%s\"} 1\n", TMEMCTL_VERSION);
	fprintf(out, "# HELP tmem_start_time_seconds When tmemd started, in seconds since "
		"the Unix epoch.\n# TYPE tmem_start_time_seconds gauge\n"
		"tmem_start_time_seconds %lld\n", (long long)json_integer_value(start));
	/* What tmem costs the host, beside what it saves (absent from an
	 * older tmemd: no sample). */
	if (json_is_number(cpu))
		fprintf(out, "# HELP tmem_daemon_cpu_seconds_total CPU time tmemd has used, user "
			"and system, all threads.\n# TYPE tmem_daemon_cpu_seconds_total counter\n"
			"tmem_daemon_cpu_seconds_total %.3f\n", json_number_value(cpu));
	return 0;
}

/*
 * tmem_refused_handshakes_total and tmem_bad_requests_total, one sample
 * per reason, from the stats' refusals object (absent from an older
 * tmemd: no samples).  Exact counts: tmemd rate-limits its log lines
 * about refusals, never these.
 */
static int refusal_families(FILE *out, json_t *refusals)
{
	static const struct {
		const char *name, *key, *help;
	} fam[] = {
		{ "tmem_refused_handshakes_total", "handshakes",
		  "Guest handshakes refused, by the code answered (timeout: no hello in time; "
		  "limit: refused at accept)." },
		{ "tmem_bad_requests_total", "requests",
		  "Guest requests refused as malformed before the store saw them, by code." },
	};

	if (!refusals)
		return 0;
	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		json_t *o = json_object_get(refusals, fam[i].key), *v;
		const char *reason;

		if (!json_is_object(o))
			return -EINVAL;
		fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", fam[i].name, fam[i].help,
			fam[i].name);
		json_object_foreach(o, reason, v) {
			if (!json_is_integer(v))
				return -EINVAL;
			if (!strcmp(reason, "total"))
				continue;
			fprintf(out, "%s{reason=\"", fam[i].name);
			put_escaped(out, reason);
			fprintf(out, "\"} %lld\n", (long long)json_integer_value(v));
		}
	}
	return 0;
}

int prom_write(FILE *out, json_t *stats, json_t *status)
{
	json_t *pool = json_object_get(stats, "pool");
	json_t *clients = json_object_get(stats, "clients");
	json_t *shared = json_object_get(stats, "shared_pools");
	json_t *restart = json_object_get(stats, "restart");
	json_t *parked = json_object_get(stats, "parked");
	json_t *ver = json_object_get(stats, "version");

	if (!json_is_integer(ver) || json_integer_value(ver) != 1 || !json_is_object(pool) ||
	    !json_is_array(clients) || !json_is_array(shared) || !json_is_object(restart) ||
	    !json_is_object(parked))
		return -EINVAL;
	if (daemon_families(out, status) || families(out, pool_metrics, pool, NULL) ||
	    families(out, restart_metrics, restart, NULL) ||
	    (json_is_object(json_object_get(stats, "memory")) &&
	     families(out, memory_metrics, json_object_get(stats, "memory"), NULL)) ||
	    families(out, parked_metrics, parked, NULL) ||
	    families(out, client_metrics, clients, client_labels) ||
	    families(out, shared_metrics, shared, uuid_labels) ||
	    refusal_families(out, json_object_get(stats, "refusals")))
		return -EINVAL;
	return fflush(out) ? -errno : 0;
}
