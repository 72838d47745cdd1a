/* SPDX-License-Identifier: MIT */
/* tmemctl status: is tmemd there, and how full is its pool. */
#include "args.h"

static void human(json_t *r)
{
	json_t *d = json_object_get(r, "daemon");

	printf("tmemd %s, pid %llu, up %llus, transport %s\n",
	       json_string_value(json_object_get(d, "version")),
	       (unsigned long long)jget_u64(d, "pid"),
	       (unsigned long long)jget_u64(d, "uptime_seconds"),
	       json_string_value(json_object_get(d, "transport")));
	printf("runtime %s, state %s\n", json_string_value(json_object_get(d, "runtime_dir")),
	       json_string_value(json_object_get(d, "state_dir")));
	print_pool_summary(stdout, json_object_get(r, "pool"));
	printf("clients: %llu\n", (unsigned long long)jget_u64(r, "clients"));
}

int cmd_status(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	struct cmd_pos pos;
	int rc;

	if (!cmd_args(&opts, argc, argv, NULL, 0, 0, &pos, &rc))
		return rc;
	return run_request(&opts, "status", NULL, human);
}
