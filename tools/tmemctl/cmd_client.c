/* SPDX-License-Identifier: MIT */
/*
 * tmemctl freeze|thaw|flush CLIENT: the three verbs that take only a
 * client.  flush drops the client's ephemeral pages only; persistent
 * pages are never dropped by an admin (tmemctl(8)).
 */
#include "args.h"

static void human_state(struct hout *o, json_t *r)
{
	fprintf(o->f, "%s: done%s\n", hstr(o, r, "client"),
		hbool(o, r, "connected") ? "" : " (not connected; applied when it connects)");
}

static void human_flush(struct hout *o, json_t *r)
{
	fprintf(o->f, "%s: dropped %llu ephemeral pages, kept %llu persistent pages\n",
		hstr(o, r, "client"), (unsigned long long)hu64(o, r, "evicted_pages"),
		(unsigned long long)hu64(o, r, "persistent_pages_kept"));
}

static int client_verb(const struct tmemctl_opts *gopts, int argc, char **argv,
		       human_fn human)
{
	struct tmemctl_opts opts = *gopts;
	struct cmd_pos pos;
	int rc;

	if (!cmd_args(&opts, argc, argv, NULL, 1, 1, &pos, &rc))
		return rc;
	if (!check_client(argv[0], pos.argv[0]))
		return EXIT_USAGE;
	return run_request(&opts, argv[0], json_pack("{s:s}", "client", pos.argv[0]),
			   human);
}

int cmd_freeze(const struct tmemctl_opts *opts, int argc, char **argv)
{
	return client_verb(opts, argc, argv, human_state);
}

int cmd_thaw(const struct tmemctl_opts *opts, int argc, char **argv)
{
	return client_verb(opts, argc, argv, human_state);
}

int cmd_flush(const struct tmemctl_opts *opts, int argc, char **argv)
{
	return client_verb(opts, argc, argv, human_flush);
}

static void human_forget(struct hout *o, json_t *r)
{
	fprintf(o->f, "%s: stored settings and authorisations removed\n", hstr(o, r, "client"));
}

int cmd_forget(const struct tmemctl_opts *opts, int argc, char **argv)
{
	return client_verb(opts, argc, argv, human_forget);
}
