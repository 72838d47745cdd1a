/* SPDX-License-Identifier: MIT */
/*
 * The subcommands' option parsing, in one place: each subcommand lists
 * its options in a small table and says how many positional arguments
 * it takes; --json and --help are accepted everywhere.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tmem_names.h"

const struct tmemctl_cmd *find_cmd(const char *name);

#define MAX_OPTS 8

bool cmd_args(struct tmemctl_opts *opts, int argc, char **argv,
	      const struct cmd_opt *extra, int min_pos, int max_pos,
	      struct cmd_pos *pos, int *exit_code)
{
	struct option longopts[MAX_OPTS + 3] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
	};
	const struct tmemctl_cmd *cmd = find_cmd(argv[0]);
	int n = 2, c, idx;

	for (const struct cmd_opt *o = extra; o && o->name && n < MAX_OPTS + 2; o++, n++)
		longopts[n] = (struct option){ o->name, o->value ? required_argument :
					       no_argument, NULL, 'x' };
	opterr = 0;  /* our messages name the program and the subcommand */
	while ((c = getopt_long(argc, argv, ":", longopts, &idx)) != -1) {
		if (c == 'j') {
			opts->json = true;
		} else if (c == 'h') {
			printf("Usage: tmemctl %s %s\n  %s\n", cmd->name, cmd->usage, cmd->help);
			*exit_code = EXIT_OK;
			return false;
		} else if (c == 'x') {
			const struct cmd_opt *o = &extra[idx - 2];

			if (o->value)
				*o->value = optarg;
			if (o->flag)
				*o->flag = true;
		} else {
			usage_error("%s: %s '%s'", cmd->name, c == ':' ? "option needs a value:" :
				    "unrecognized option", argv[optind - 1]);
			fprintf(stderr, "Usage: tmemctl %s %s\n", cmd->name, cmd->usage);
			*exit_code = EXIT_USAGE;
			return false;
		}
	}
	pos->argc = argc - optind;
	pos->argv = argv + optind;
	if (pos->argc < min_pos || pos->argc > max_pos) {
		usage_error("%s: expected %s", cmd->name, cmd->usage);
		*exit_code = EXIT_USAGE;
		return false;
	}
	return true;
}

bool check_client(const char *cmd, const char *client)
{
	if (tmem_name_valid(client))
		return true;
	usage_error("%s: bad client \"%s\": want a domid or a name of " TMEM_NAME_RULE,
		    cmd, client);
	return false;
}

int run_request(const struct tmemctl_opts *opts, const char *cmd, json_t *args,
		human_fn human)
{
	json_t *result;
	int rc = ctl_call(opts, cmd, args, &result);

	if (rc)
		return rc;
	if (opts->json)
		return print_json(result);
	rc = print_reply(cmd, result, human);
	json_decref(result);
	return rc;
}
