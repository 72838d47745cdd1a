/* SPDX-License-Identifier: MIT */
/* tmemctl stats [--json|--prometheus]: the stats document. */
#include <stdio.h>

#include "args.h"

static void print_ops_table(json_t *clients)
{
	size_t i;
	json_t *c;

	printf("\n%-20s %10s %10s %8s %8s %8s %10s %10s %10s %8s %8s\n", "CLIENT", "PUTS",
	       "SUCC_PUTS", "F_QUOTA", "F_FULL", "F_FROZEN", "GETS", "SUCC_GETS",
	       "FLUSH_PG", "FLUSH_OB", "EVICT");
	json_array_foreach(clients, i, c) {
		printf("%-20s %10llu %10llu %8llu %8llu %8llu %10llu %10llu %10llu %8llu %8llu\n",
		       json_string_value(json_object_get(c, "name")),
		       (unsigned long long)jget_u64(c, "ops.puts"),
		       (unsigned long long)jget_u64(c, "ops.succ_puts"),
		       (unsigned long long)jget_u64(c, "ops.failed_puts.quota"),
		       (unsigned long long)jget_u64(c, "ops.failed_puts.full"),
		       (unsigned long long)jget_u64(c, "ops.failed_puts.frozen"),
		       (unsigned long long)jget_u64(c, "ops.gets"),
		       (unsigned long long)jget_u64(c, "ops.succ_gets"),
		       (unsigned long long)jget_u64(c, "ops.flush_pages"),
		       (unsigned long long)jget_u64(c, "ops.flush_objects"),
		       (unsigned long long)jget_u64(c, "ops.evictions"));
	}
}

static void print_shared(json_t *shared)
{
	size_t i, j;
	json_t *p, *a;

	if (json_array_size(shared) == 0)
		return;
	printf("\n%-36s %7s %10s  %s\n", "SHARED POOL", "SHARERS", "PAGES", "AUTHORISED");
	json_array_foreach(shared, i, p) {
		printf("%-36s %7llu %10llu ", json_string_value(json_object_get(p, "uuid")),
		       (unsigned long long)jget_u64(p, "sharers"),
		       (unsigned long long)jget_u64(p, "pages"));
		json_array_foreach(json_object_get(p, "authorised"), j, a)
			printf(" %s", json_string_value(a));
		putchar('\n');
	}
}

static void human(json_t *r)
{
	json_t *clients = json_object_get(r, "clients");

	print_pool_summary(stdout, json_object_get(r, "pool"));
	putchar('\n');
	print_clients_table(stdout, clients);
	print_ops_table(clients);
	print_shared(json_object_get(r, "shared_pools"));
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
	json_t *result;
	int rc;

	if (!cmd_args(&opts, argc, argv, extra, 0, 0, &pos, &rc))
		return rc;
	if (prometheus && opts.json) {
		usage_error("stats: --json and --prometheus exclude each other");
		return EXIT_USAGE;
	}
	if (!prometheus)
		return run_request(&opts, "stats", NULL, human);
	rc = ctl_call(&opts, "stats", NULL, &result);
	if (rc)
		return rc;
	rc = prom_write(stdout, result);
	json_decref(result);
	if (rc) {
		fprintf(stderr, "tmemctl: stats: unexpected stats document from tmemd\n");
		return EXIT_FAILED;
	}
	return EXIT_OK;
}
