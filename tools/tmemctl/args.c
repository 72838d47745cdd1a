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
#define OPT_EXTRA 0x100   /* getopt value of extra[i]: OPT_EXTRA + i */

/* The global options, accepted after the subcommand too. */
enum { OPT_SOCKET = 0x200, OPT_RUNTIME_DIR };

/* getopt's "a" or "a:" for every extra option with a short name. */
static void short_opts(const struct cmd_opt *extra, char *buf, size_t len)
{
	size_t n = 0;

	buf[n++] = ':';   /* a missing value returns ':' */
	for (const struct cmd_opt *o = extra; o && o->name && n + 3 < len; o++) {
		if (!o->short_name)
			continue;
		buf[n++] = o->short_name;
		if (o->value)
			buf[n++] = ':';
	}
	buf[n] = '\0';
}

static int extra_index(const struct cmd_opt *extra, int c)
{
	if (c >= OPT_EXTRA && c < OPT_EXTRA + MAX_OPTS)
		return c - OPT_EXTRA;
	for (int i = 0; extra && extra[i].name; i++)
		if (extra[i].short_name && extra[i].short_name == c)
			return i;
	return -1;
}

static void set_extra(const struct cmd_opt *o)
{
	if (o->value)
		*o->value = optarg;
	if (o->flag)
		*o->flag = true;
}

static bool bad_option(const struct tmemctl_cmd *cmd, int c, char **argv, int *exit_code)
{
	const char *text = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };

	/* For an unknown short option in a cluster, name just that letter. */
	if (optopt && text[0] == '-' && text[1] != '-')
		text = shortopt;
	usage_error("%s: %s '%s'", cmd->name, c == ':' ? "option needs a value:" :
		    "unrecognized option", text);
	fprintf(stderr, "Usage: tmemctl %s %s\n", cmd->name, cmd->usage);
	*exit_code = EXIT_USAGE;
	return false;
}

bool cmd_args(struct tmemctl_opts *opts, int argc, char **argv,
	      const struct cmd_opt *extra, int min_pos, int max_pos,
	      struct cmd_pos *pos, int *exit_code)
{
	struct option longopts[MAX_OPTS + 5] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR },
	};
	const struct tmemctl_cmd *cmd = find_cmd(argv[0]);
	char shorts[2 * MAX_OPTS + 2];
	int n = 4, c, i;

	for (const struct cmd_opt *o = extra; o && o->name && n < MAX_OPTS + 4; o++, n++)
		longopts[n] = (struct option){ o->name, o->value ? required_argument :
					       no_argument, NULL, OPT_EXTRA + n - 4 };
	short_opts(extra, shorts, sizeof(shorts));
	opterr = 0;  /* our messages name the program and the subcommand */
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		if (c == 'j') {
			opts->json = true;
		} else if (c == 'h') {
			printf("Usage: tmemctl %s %s\n  %s\n", cmd->name, cmd->usage, cmd->help);
			*exit_code = EXIT_OK;
			return false;
		} else if (c == OPT_SOCKET) {
			opts->socket = optarg;
		} else if (c == OPT_RUNTIME_DIR) {
			opts->runtime_dir = optarg;
		} else if ((i = extra_index(extra, c)) >= 0) {
			set_extra(&extra[i]);
		} else {
			return bad_option(cmd, c, argv, exit_code);
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
	struct tmem_principal p;
	int rc = tmem_principal_parse(client, 0, &p);

	if (rc == 0)
		return true;
	usage_error("%s: bad client \"%s\": %s", cmd, client, tmem_principal_strerror(rc));
	return false;
}

int run_request(const struct tmemctl_opts *opts, const char *cmd, json_t *args,
		human_fn human)
{
	json_t *result;
	int rc = tmemctl_call(opts, cmd, args, &result);

	if (rc)
		return rc;
	if (opts->json)
		return print_json(result);
	rc = print_reply(cmd, result, human);
	json_decref(result);
	return rc;
}
