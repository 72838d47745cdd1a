/* SPDX-License-Identifier: MIT */
/*
 * tmemctl shared-auth UUID CLIENT [--revoke]: allow CLIENT to join the
 * shared pool UUID (standard text form), or stop allowing it.  tmemd
 * checks the UUID; revoking stops future joins only.
 */
#include "args.h"
#include "tmem_names.h"

static void human(struct hout *o, json_t *r)
{
	fprintf(o->f, "%s %s shared pool %s\n", hstr(o, r, "client"),
		hbool(o, r, "authorised") ? "may join" : "may no longer join",
		hstr(o, r, "uuid"));
}

int cmd_shared_auth(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts = *gopts;
	bool revoke = false;
	const struct cmd_opt extra[] = {
		{ .name = "revoke", .flag = &revoke },
		{ NULL },
	};
	struct cmd_pos pos;
	int rc;

	if (!cmd_args(&opts, argc, argv, extra, 2, 2, &pos, &rc))
		return rc;
	if (!tmem_uuid_text_valid(pos.argv[0])) {
		usage_error("shared-auth: bad UUID \"%s\": want the 8-4-4-4-12 hex form, "
			    "e.g. 00112233-4455-6677-8899-aabbccddeeff", pos.argv[0]);
		return EXIT_USAGE;
	}
	if (!check_client("shared-auth", pos.argv[1]))
		return EXIT_USAGE;
	return run_request(&opts, "shared-auth",
			   json_pack("{s:s, s:s, s:b}", "uuid", pos.argv[0], "client",
				     pos.argv[1], "revoke", revoke), human);
}
