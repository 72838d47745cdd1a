/* SPDX-License-Identifier: MIT */
/*
 * tmemctl freeze|thaw|flush CLIENT|-a and forget CLIENT: the verbs that
 * take only a client (-a/--all: every connected one).  freeze, thaw and
 * flush act on an attached client only (tmemd refuses any other name);
 * forget drops what is stored for a client and a parked one.  flush drops the client's ephemeral pages only; persistent
 * pages are never dropped by an admin (tmemctl(8)).
 */
#include "args.h"

/* What freeze and thaw did, in words (issue 30: "done" said nothing). */
static void human_state(struct hout *o, json_t *r)
{
	if (hbool(o, r, "frozen"))
		fprintf(o->f, "%s: frozen: its puts are refused until tmemctl thaw; its gets and "
			"flushes are served, and its pages stay\n", hstr(o, r, "client"));
	else
		fprintf(o->f, "%s: thawed: its puts are accepted again\n", hstr(o, r, "client"));
}

static void human_flush(struct hout *o, json_t *r)
{
	fprintf(o->f, "%s: dropped %llu ephemeral pages, kept %llu persistent pages\n",
		hstr(o, r, "client"), (unsigned long long)hu64(o, r, "evicted_pages"),
		(unsigned long long)hu64(o, r, "persistent_pages_kept"));
}

/* verb CLIENT, or verb -a|--all (all_ok: freeze, thaw, flush). */
static int client_verb(const struct tmemctl_opts *gopts, int argc, char **argv,
		       human_fn human, bool all_ok)
{
	struct tmemctl_opts opts = *gopts;
	bool all = false;
	const struct cmd_opt extra[] = {
		{ .name = "all", .flag = &all, .short_name = 'a' },
		{ NULL },
	};
	struct cmd_pos pos;
	int rc;

	if (!cmd_args(&opts, argc, argv, all_ok ? extra : NULL, 0, 1, &pos, &rc))
		return rc;
	if (all && pos.argc == 0)
		return run_request_all(&opts, argv[0], NULL, human);
	if (all || pos.argc == 0) {
		usage_error("%s: expected %s", argv[0], all ? "CLIENT or --all, not both" :
			    all_ok ? "CLIENT or --all" : "CLIENT");
		return EXIT_USAGE;
	}
	if (!check_client(argv[0], pos.argv[0]))
		return EXIT_USAGE;
	return run_request(&opts, argv[0], json_pack("{s:s}", "client", pos.argv[0]),
			   human);
}

int cmd_freeze(const struct tmemctl_opts *opts, int argc, char **argv)
{
	return client_verb(opts, argc, argv, human_state, true);
}

int cmd_thaw(const struct tmemctl_opts *opts, int argc, char **argv)
{
	return client_verb(opts, argc, argv, human_state, true);
}

int cmd_flush(const struct tmemctl_opts *opts, int argc, char **argv)
{
	return client_verb(opts, argc, argv, human_flush, true);
}

static void human_forget(struct hout *o, json_t *r)
{
	json_t *parked = json_object_get(r, "parked");

	if (hbool(o, r, "stored"))
		fprintf(o->f, "%s: stored settings and authorisations removed\n",
			hstr(o, r, "client"));
	if (json_is_string(parked))
		fprintf(o->f, "%s: parked client %s dropped with its %llu persistent pages\n",
			hstr(o, r, "client"), json_string_value(parked),
			(unsigned long long)hu64(o, r, "parked_pages_dropped"));
	/* Absent from an older tmemd. */
	if (json_is_true(json_object_get(r, "recovered")))
		fprintf(o->f, "%s: recovered client freed with its %llu pages, before "
			"reattach-grace\n", hstr(o, r, "client"),
			(unsigned long long)hu64(o, r, "recovered_pages_dropped"));
}

int cmd_forget(const struct tmemctl_opts *opts, int argc, char **argv)
{
	return client_verb(opts, argc, argv, human_forget, false);
}
