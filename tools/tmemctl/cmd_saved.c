/* SPDX-License-Identifier: MIT */
/*
 * tmemctl saved [--json] [CLIENT]: does tmem pay?  What it saved, per
 * client and in total, from the stats document (issue 30):
 *
 *   disk reads avoided   ephemeral gets that hit (cleancache)
 *   swap writes avoided  persistent puts stored (frontswap stores)
 *   swap reads avoided   persistent gets that hit (frontswap loads)
 *   compression          logical bytes stored minus what they take
 *
 * and what it cost: tmemd's CPU time, from "status".  A client's figures
 * are its own pools' (shared pools are charged to no client); the total
 * is the pool's, which counts the ops of clients gone too, so it is the
 * figure to take rates of.  tmemctl(8) gives the PromQL for each.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tmem_proto.h"

/* obj's integer at prefix.key, or NULL. */
static json_t *at(json_t *obj, const char *prefix, const char *key)
{
	char p[96];
	json_t *v;

	snprintf(p, sizeof(p), "%s.%s", prefix, key);
	v = jpath(obj, p);
	return json_is_integer(v) ? v : NULL;
}

/* The saved view of one client or of the pool: its ops by kind under
 * eph_ops and pers_ops, its bytes under data.  NULL when a figure is
 * missing (an older tmemd). */
static json_t *saved_json(json_t *obj, const char *eph_ops, const char *pers_ops,
			  const char *data)
{
	json_t *disk = at(obj, eph_ops, "succ_gets"), *swap_out = at(obj, pers_ops, "succ_puts");
	json_t *swap_in = at(obj, pers_ops, "succ_gets"), *logical = at(obj, data, "logical_bytes");
	json_t *compr = at(obj, data, "compressed_bytes");

	if (!disk || !swap_out || !swap_in || !logical || !compr)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}",
			 "disk_reads_avoided_pages", json_integer_value(disk),
			 "swap_writes_avoided_pages", json_integer_value(swap_out),
			 "swap_reads_avoided_pages", json_integer_value(swap_in),
			 "logical_bytes", json_integer_value(logical),
			 "compressed_bytes", json_integer_value(compr),
			 "compression_saved_bytes",
			 json_integer_value(logical) - json_integer_value(compr));
}

/* The whole view from the stats document and the status reply. */
static json_t *build(json_t *stats, json_t *status)
{
	json_t *clients = json_array(), *c, *total, *cpu = jpath(status, "daemon.cpu_seconds");
	size_t i;

	json_array_foreach(json_object_get(stats, "clients"), i, c) {
		json_t *s = saved_json(c, "ops_by_kind.ephemeral", "ops_by_kind.persistent", "data");

		if (!s || json_object_set(s, "client", json_object_get(c, "name")) ||
		    json_array_append_new(clients, s)) {
			json_decref(s);
			json_decref(clients);
			return NULL;
		}
	}
	total = saved_json(json_object_get(stats, "pool"), "ops.ephemeral", "ops.persistent",
			   "data");
	if (!total || !json_is_number(cpu)) {
		json_decref(total);
		json_decref(clients);
		return NULL;
	}
	return json_pack("{s:o, s:o, s:f}", "clients", clients, "total", total, "cpu_seconds",
			 json_number_value(cpu));
}

static void row(struct hout *o, const char *name, json_t *s)
{
	char data[16], compr[16], saved[16];

	fmt_bytes(data, sizeof(data), hu64(o, s, "logical_bytes"));
	fmt_bytes(compr, sizeof(compr), hu64(o, s, "compressed_bytes"));
	fmt_bytes(saved, sizeof(saved), hu64(o, s, "compression_saved_bytes"));
	fprintf(o->f, "%-20s %12llu %12llu %12llu %9s %9s %9s\n", name,
		(unsigned long long)hu64(o, s, "disk_reads_avoided_pages"),
		(unsigned long long)hu64(o, s, "swap_writes_avoided_pages"),
		(unsigned long long)hu64(o, s, "swap_reads_avoided_pages"), data, compr, saved);
}

static void human(struct hout *o, json_t *v)
{
	json_t *c;
	size_t i;

	fprintf(o->f, "%-20s %12s %12s %12s %9s %9s %9s\n", "CLIENT", "DISK-READS", "SWAP-WRITES",
		"SWAP-READS", "DATA", "COMPR", "SAVED");
	json_array_foreach(json_object_get(v, "clients"), i, c)
		row(o, json_string_value(json_object_get(c, "client")), c);
	row(o, "(total since start)", json_object_get(v, "total"));
	fprintf(o->f, "\nAvoided: pages (4 KiB) the guests did not read from disk or swap, or "
		"write to swap.\nDATA logical, COMPR compressed, SAVED = DATA - COMPR.  "
		"Cost: tmemd used %.1f s of CPU.\n", json_real_value(json_object_get(v, "cpu_seconds")));
}

int cmd_saved(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	struct tmemctl_conn conn;
	struct cmd_pos pos;
	json_t *stats = NULL, *status = NULL, *view;
	int rc;

	if (!cmd_args(&opts, argc, argv, NULL, 0, 1, &pos, &rc))
		return rc;
	if (pos.argc && !check_client("saved", pos.argv[0]))
		return EXIT_USAGE;
	rc = tmemctl_open(&opts, &conn);
	if (rc)
		return rc;
	rc = tmemctl_request(&conn, "stats",
			     pos.argc ? json_pack("{s:s}", "client", pos.argv[0]) : NULL, &stats);
	if (!rc)
		rc = tmemctl_request(&conn, "status", NULL, &status);
	tmemctl_close(&conn);
	if (rc)
		goto out;
	view = build(stats, status);
	if (!view) {
		fprintf(stderr, "tmemctl: saved: tmemd's reply lacks a figure (tmemd and tmemctl "
			"versions differ?)\n");
		rc = EXIT_FAILED;
		goto out;
	}
	rc = opts.json ? print_json(view) : print_reply("saved", view, human);
	if (!opts.json)
		json_decref(view);
out:
	json_decref(stats);
	json_decref(status);
	return rc;
}
