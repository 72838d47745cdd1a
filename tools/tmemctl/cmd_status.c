/* SPDX-License-Identifier: MIT */
/* tmemctl status: is tmemd there, and how full is its pool. */
#include <string.h>

#include "args.h"

/* "last reload: ok, 12 s ago: reloaded /etc/tmemd/tmemd.conf", or none. */
static void print_last_reload(struct hout *o, json_t *r)
{
	const char *result = hstr(o, r, "daemon.last_reload.result");

	if (!strcmp(result, "none")) {
		fprintf(o->f, "last reload: none since the start\n");
		return;
	}
	fprintf(o->f, "last reload: %s, %llu s ago: %s\n", result,
		(unsigned long long)hu64(o, r, "daemon.last_reload.seconds_ago"),
		hstr(o, r, "daemon.last_reload.message"));
}

static void human(struct hout *o, json_t *r)
{
	fprintf(o->f, "tmemd %s, pid %llu, up %llus, transport %s\n",
		hstr(o, r, "daemon.version"), (unsigned long long)hu64(o, r, "daemon.pid"),
		(unsigned long long)hu64(o, r, "daemon.uptime_seconds"),
		hstr(o, r, "daemon.transport"));
	fprintf(o->f, "runtime %s, state %s\n", hstr(o, r, "daemon.runtime_dir"),
		hstr(o, r, "daemon.state_dir"));
	print_pool_summary(o, r);
	fprintf(o->f, "clients: %llu\n", (unsigned long long)hu64(o, r, "clients"));
	print_last_reload(o, r);
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
