/* SPDX-License-Identifier: MIT */
/*
 * tmemctl unset CLIENT|-a [--weight] [--ephemeral-max] [--persistent-max]
 *                         [--compress] [--frozen] [--spill-max]
 * Removes settings tmemctl stored for CLIENT (with no option: all of
 * them), so tmemd.conf's values, or the defaults, are in force again, at
 * once for an attached client (issue 30: a stored value beat the file,
 * with no way back).
 */
#include "args.h"

static void human(struct hout *o, json_t *r)
{
	json_t *removed = harray(o, r, "removed"), *k;
	size_t i;

	fprintf(o->f, "%s: removed", hstr(o, r, "client"));
	json_array_foreach(removed, i, k)
		fprintf(o->f, "%s %s", i ? "," : "", json_is_string(k) ? json_string_value(k) : "?");
	fprintf(o->f, "; tmemd.conf's values (or the defaults) %s\n",
		hbool(o, r, "connected") ? "are in force" : "apply when it connects");
}

int cmd_unset(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	bool all = false, flag[6] = { false };
	static const char *const keys[6] = { "weight", "ephemeral_max_pages",
					     "persistent_max_pages", "compress", "frozen",
					     "spill_max_pages" };
	const struct cmd_opt extra[] = {
		{ .name = "all", .flag = &all, .short_name = 'a' },
		{ .name = "weight", .flag = &flag[0] },
		{ .name = "ephemeral-max", .flag = &flag[1] },
		{ .name = "persistent-max", .flag = &flag[2] },
		{ .name = "compress", .flag = &flag[3] },
		{ .name = "frozen", .flag = &flag[4] },
		{ .name = "spill-max", .flag = &flag[5] },
		{ NULL },
	};
	struct cmd_pos pos;
	json_t *args, *names;
	bool any = false;
	int rc;

	if (!cmd_args(&opts, argc, argv, extra, 0, 1, &pos, &rc))
		return rc;
	if (all == (pos.argc == 1)) {
		usage_error("unset: expected CLIENT or --all%s", all ? ", not both" : "");
		return EXIT_USAGE;
	}
	if (!all && !check_client("unset", pos.argv[0]))
		return EXIT_USAGE;
	for (int i = 0; i < 6; i++)
		any = any || flag[i];
	names = json_array();
	for (int i = 0; i < 6; i++)
		if (flag[i] || !any)
			json_array_append_new(names, json_string(keys[i]));
	args = json_pack("{s:s, s:o}", "client", all ? "" : pos.argv[0], "keys", names);
	if (all)
		return run_request_all(&opts, "unset", args, human);
	return run_request(&opts, "unset", args, human);
}
