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

#include "tmemctl.h"

struct metric {
	const char *name;
	const char *type;      /* "gauge" or "counter" */
	const char *help;
	const char *path;      /* dotted path in a client (or the pool) */
	const char *label;     /* an extra label "k=\"v\"", or NULL */
	bool optional;         /* null or absent: no sample (caps) */
};

static const struct metric pool_metrics[] = {
	{ .name = "tmem_pool_total_pages", .type = "gauge", .help = "Pages in the pool (arena).", .path = "total_pages" },
	{ .name = "tmem_pool_used_pages", .type = "gauge", .help = "Pages holding data.", .path = "used_pages" },
	{ .name = "tmem_pool_free_pages", .type = "gauge", .help = "Free pages.", .path = "free_pages" },
	{ .name = "tmem_pool_ephemeral_pages", .type = "gauge", .help = "Pages in ephemeral pools.", .path = "ephemeral_pages" },
	{ .name = "tmem_pool_persistent_pages", .type = "gauge", .help = "Pages in persistent pools.", .path = "persistent_pages" },
	{ .name = "tmem_pool_zero_pages", .type = "gauge", .help = "Zero-filled pages stored without data (0 until zero-page detection).", .path = "zero_pages" },
	{ .name = "tmem_pool_stored_bytes", .type = "gauge", .help = "Bytes of page data stored.", .path = "stored_bytes" },
	{ .name = "tmem_pool_metadata_bytes", .type = "gauge", .help = "Bytes of descriptors and tables.", .path = "metadata_bytes" },
	{ .name = "tmem_pool_evictions_total", .type = "counter", .help = "Ephemeral pages evicted.", .path = "evictions" },
	{ NULL },
};

#define CL(n, t, h, p) { .name = "tmem_" n, .type = t, .help = h, .path = p }

static const struct metric client_metrics[] = {
	CL("client_weight", "gauge", "Eviction weight.", "weight"),
	CL("client_frozen", "gauge", "1 when the client's puts are refused.", "frozen"),
	CL("client_compress", "gauge", "1 when compression is on.", "compress"),
	{ "tmem_client_ephemeral_max_pages", "gauge", "Ephemeral page cap (absent: none).",
	  "caps.ephemeral_max_pages", NULL, true },
	{ "tmem_client_persistent_max_pages", "gauge", "Persistent page cap (absent: none).",
	  "caps.persistent_max_pages", NULL, true },
	{ "tmem_client_pages", "gauge", "Pages charged to the client.", "pages.ephemeral",
	  "kind=\"ephemeral\"", false },
	{ "tmem_client_pages", NULL, NULL, "pages.persistent", "kind=\"persistent\"", false },
	CL("client_puts_total", "counter", "Put requests.", "ops.puts"),
	CL("client_succ_puts_total", "counter", "Pages stored.", "ops.succ_puts"),
	{ "tmem_client_failed_puts_total", "counter", "Puts refused, by reason.",
	  "ops.failed_puts.quota", "reason=\"quota\"", false },
	{ "tmem_client_failed_puts_total", NULL, NULL, "ops.failed_puts.full",
	  "reason=\"full\"", false },
	{ "tmem_client_failed_puts_total", NULL, NULL, "ops.failed_puts.frozen",
	  "reason=\"frozen\"", false },
	CL("client_gets_total", "counter", "Get requests.", "ops.gets"),
	CL("client_succ_gets_total", "counter", "Gets that hit.", "ops.succ_gets"),
	CL("client_failed_gets_total", "counter", "Gets that missed.", "ops.failed_gets"),
	CL("client_flush_pages_total", "counter", "Flush-page requests.", "ops.flush_pages"),
	CL("client_flush_objects_total", "counter", "Flush-object requests.", "ops.flush_objects"),
	CL("client_evictions_total", "counter", "The client's pages evicted.", "ops.evictions"),
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
	{ .name = "tmem_shared_pool_pages", .type = "gauge", .help = "Pages in the shared pool.", .path = "pages" },
	{ .name = "tmem_shared_pool_sharers", .type = "gauge", .help = "Clients that joined the shared pool.", .path = "sharers" },
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
	if (!json_is_integer(v) && !json_is_boolean(v))
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
	fprintf(out, " %lld\n", json_is_boolean(v) ? (long long)json_is_true(v) :
		(long long)json_integer_value(v));
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

int prom_write(FILE *out, json_t *stats)
{
	json_t *pool = json_object_get(stats, "pool");
	json_t *clients = json_object_get(stats, "clients");
	json_t *shared = json_object_get(stats, "shared_pools");
	json_t *ver = json_object_get(stats, "version");

	if (!json_is_integer(ver) || json_integer_value(ver) != 1 || !json_is_object(pool) ||
	    !json_is_array(clients) || !json_is_array(shared))
		return -EINVAL;
	if (families(out, pool_metrics, pool, NULL) ||
	    families(out, client_metrics, clients, client_labels) ||
	    families(out, shared_metrics, shared, uuid_labels))
		return -EINVAL;
	return fflush(out) ? -errno : 0;
}
