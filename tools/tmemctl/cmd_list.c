/* SPDX-License-Identifier: MIT */
/* tmemctl list: the connected clients and their settings. */
#include "args.h"

static void human(struct hout *o, json_t *r)
{
	print_clients_table(o, harray(o, r, "clients"));
}

int cmd_list(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	struct cmd_pos pos;
	int rc;

	if (!cmd_args(&opts, argc, argv, NULL, 0, 0, &pos, &rc))
		return rc;
	return run_request(&opts, "list", NULL, human);
}
