/* SPDX-License-Identifier: MIT */
/* tmemctl stats [--json|--prometheus]: the stats document. */
#include <stdio.h>

#include "args.h"

static void print_ops_table(struct hout *o, json_t *clients)
{
	size_t i;
	json_t *c;

	fprintf(o->f, "\n%-20s %10s %10s %8s %8s %8s %10s %10s %10s %8s %8s\n", "CLIENT", "PUTS",
	       "SUCC_PUTS", "F_QUOTA", "F_FULL", "F_FROZEN", "GETS", "SUCC_GETS",
	       "FLUSH_PG", "FLUSH_OB", "EVICT");
	json_array_foreach(clients, i, c) {
		fprintf(o->f, "%-20s %10llu %10llu %8llu %8llu %8llu %10llu %10llu %10llu "
			"%8llu %8llu\n", hstr(o, c, "name"),
		       (unsigned long long)hu64(o, c, "ops.puts"),
		       (unsigned long long)hu64(o, c, "ops.succ_puts"),
		       (unsigned long long)hu64(o, c, "ops.failed_puts.quota"),
		       (unsigned long long)hu64(o, c, "ops.failed_puts.full"),
		       (unsigned long long)hu64(o, c, "ops.failed_puts.frozen"),
		       (unsigned long long)hu64(o, c, "ops.gets"),
		       (unsigned long long)hu64(o, c, "ops.succ_gets"),
		       (unsigned long long)hu64(o, c, "ops.flush_pages"),
		       (unsigned long long)hu64(o, c, "ops.flush_objects"),
		       (unsigned long long)hu64(o, c, "ops.evictions"));
	}
}

static void print_shared(struct hout *o, json_t *shared)
{
	size_t i, j;
	json_t *p, *a;

	if (json_array_size(shared) == 0)
		return;
	fprintf(o->f, "\n%-36s %7s %10s  %s\n", "SHARED POOL", "SHARERS", "PAGES",
		"AUTHORISED");
	json_array_foreach(shared, i, p) {
		fprintf(o->f, "%-36s %7llu %10llu ", hstr(o, p, "uuid"),
		       (unsigned long long)hu64(o, p, "sharers"),
		       (unsigned long long)hu64(o, p, "pages"));
		json_array_foreach(harray(o, p, "authorised"), j, a)
			fprintf(o->f, " %s", json_is_string(a) ? json_string_value(a) : "?");
		fputc('\n', o->f);
	}
}

static void human(struct hout *o, json_t *r)
{
	json_t *clients = harray(o, r, "clients");

	print_pool_summary(o, r);
	print_memory_summary(o, r);
	print_tier_summary(o, r);
	fputc('\n', o->f);
	print_clients_table(o, clients);
	print_ops_table(o, clients);
	print_shared(o, harray(o, r, "shared_pools"));
	print_parked(o, harray(o, r, "parked.list"));
	if (json_object_get(r, "recovered"))  /* absent from an older tmemd */
		print_recovered(o, harray(o, r, "recovered"));
}

/* Both replies on one connection: --prometheus needs the daemon's version
 * and start time from "status" beside the stats document. */
static int stats_and_status(const struct tmemctl_opts *opts, json_t *args, json_t **stats,
			    json_t **status)
{
	struct tmemctl_conn conn;
	int rc = tmemctl_open(opts, &conn);

	*stats = *status = NULL;
	if (rc) {
		json_decref(args);
		return rc;
	}
	rc = tmemctl_request(&conn, "stats", args, stats);
	if (!rc)
		rc = tmemctl_request(&conn, "status", NULL, status);
	tmemctl_close(&conn);
	if (rc) {
		json_decref(*stats);
		*stats = NULL;
	}
	return rc;
}

int cmd_stats(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	bool prometheus = false;
	const struct cmd_opt extra[] = {
		{ .name = "prometheus", .flag = &prometheus },
		{ NULL },
	};
	struct cmd_pos pos;
	json_t *result, *args, *status;
	int rc;

	if (!cmd_args(&opts, argc, argv, extra, 0, 1, &pos, &rc))
		return rc;
	if (prometheus && opts.json) {
		usage_error("stats: --json and --prometheus exclude each other");
		return EXIT_USAGE;
	}
	if (pos.argc && !check_client("stats", pos.argv[0]))
		return EXIT_USAGE;
	args = pos.argc ? json_pack("{s:s}", "client", pos.argv[0]) : NULL;
	if (!prometheus)
		return run_request(&opts, "stats", args, human);
	rc = stats_and_status(&opts, args, &result, &status);
	if (rc)
		return rc;
	rc = prom_write(stdout, result, status);
	json_decref(result);
	json_decref(status);
	if (rc) {
		fprintf(stderr, "tmemctl: stats: unexpected stats document from tmemd\n");
		return EXIT_FAILED;
	}
	return EXIT_OK;
}
