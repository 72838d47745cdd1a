/* SPDX-License-Identifier: MIT */
/*
 * tmemctl migrate-check CLIENT HOST:PORT and migrate-push CLIENT
 * HOST:PORT: migration between hosts (tmem(7)).  check says whether
 * CLIENT's pages can follow it to the tmemd at HOST:PORT (reachable,
 * authenticated, room) and exits 1 if not; push sends a parked client
 * there now.
 */
#include <string.h>

#include "args.h"

static const char *yes(bool b)
{
	return b ? "yes" : "NO";
}

static void human_check(struct hout *o, json_t *r)
{
	const char *problem = hstr(o, r, "problem");

	fprintf(o->f, "%s -> %s\n  reachable:      %s\n  authenticated:  %s\n"
		"  room:           %s (%llu pages here, %llu as stored, %llu free there)\n",
		hstr(o, r, "client"), hstr(o, r, "peer"),
		yes(hbool(o, r, "reachable")),
		yes(hbool(o, r, "authenticated")),
		yes(hbool(o, r, "room")),
		(unsigned long long)hu64(o, r, "pages"),
		(unsigned long long)hu64(o, r, "stored_pages"),
		(unsigned long long)hu64(o, r, "peer_free_pages"));
	if (problem && *problem)
		fprintf(o->f, "  problem:        %s\n", problem);
}

static void human_push(struct hout *o, json_t *r)
{
	fprintf(o->f, "%s: %llu persistent pages now at %s\n", hstr(o, r, "client"),
		(unsigned long long)hu64(o, r, "pages"), hstr(o, r, "peer"));
}

static int migrate_args(const struct tmemctl_opts *gopts, int argc, char **argv,
			const char *cmd, struct tmemctl_opts *opts, json_t **args)
{
	struct cmd_pos pos;
	int rc;

	*opts = *gopts;
	if (!cmd_args(opts, argc, argv, NULL, 2, 2, &pos, &rc))
		return rc;
	if (!check_client(cmd, pos.argv[0]))
		return EXIT_USAGE;
	if (!strchr(pos.argv[1], ':')) {
		usage_error("%s: want HOST:PORT, got '%s'", cmd, pos.argv[1]);
		return EXIT_USAGE;
	}
	*args = json_pack("{s:s, s:s}", "client", pos.argv[0], "peer", pos.argv[1]);
	return EXIT_OK;
}

/* Exit 1 when the pages cannot follow (the reply says which check failed). */
int cmd_migrate_check(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts;
	json_t *args = NULL, *result;
	bool room;
	int rc = migrate_args(gopts, argc, argv, "migrate-check", &opts, &args);

	if (rc)
		return rc;
	rc = tmemctl_call(&opts, "migrate-check", args, &result);
	if (rc)
		return rc;
	room = json_is_true(json_object_get(result, "room"));
	if (opts.json) {
		rc = print_json(result);
	} else {
		rc = print_reply("migrate-check", result, human_check);
		json_decref(result);
	}
	return rc ? rc : (room ? EXIT_OK : 1);
}

int cmd_migrate_push(const struct tmemctl_opts *gopts, int argc, char **argv)
{
	struct tmemctl_opts opts;
	json_t *args = NULL;
	int rc = migrate_args(gopts, argc, argv, "migrate-push", &opts, &args);

	return rc ? rc : run_request(&opts, "migrate-push", args, human_push);
}
