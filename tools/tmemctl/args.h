/* SPDX-License-Identifier: MIT */
/* Subcommand option parsing; see args.c. */
#ifndef TMEMCTL_ARGS_H
#define TMEMCTL_ARGS_H

#include "tmemctl.h"

/* A long option: value != NULL takes an argument, flag != NULL is set to
 * true; short_name (0: none) is its one-letter form, e.g. 'a' for --all. */
struct cmd_opt {
	const char *name;
	const char **value;
	bool *flag;
	char short_name;
};

struct cmd_pos {
	int argc;
	char **argv;
};

/*
 * Parses argv (argv[0] = the subcommand) with --json, --help, the global
 * --socket and --runtime-dir (accepted after the subcommand too) and
 * extra (NULL-name terminated, at most 8).  true to go on; false with *exit_code set
 * (after --help, or a usage error already printed).
 */
bool cmd_args(struct tmemctl_opts *opts, int argc, char **argv,
	      const struct cmd_opt *extra, int min_pos, int max_pos,
	      struct cmd_pos *pos, int *exit_code);



/* A CLIENT argument: true, or false with a usage error printed (the
 * caller exits EXIT_USAGE), so a name tmemd would refuse is a usage error
 * here, with tmemd.conf's rule. */
bool check_client(const char *cmd, const char *client);

/*
 * The common shape of a subcommand: parse (extra options, positionals),
 * then the caller builds args and calls run_request(), which prints the
 * result as JSON (--json) or with human(). */
int run_request(const struct tmemctl_opts *opts, const char *cmd, json_t *args,
		human_fn human);
/* cmd_pool_size.c: COMMAND SIZE sent as {pages} (pool-size, release). */
int run_size_command(const struct tmemctl_opts *gopts, int argc, char **argv,
		     const char *cmd, human_fn print);
/* all.c: run_request() once per connected client (-a/--all), args (may
 * be NULL, stolen) with "client" set to each; the worst exit code. */
int run_request_all(const struct tmemctl_opts *opts, const char *cmd, json_t *args,
		    human_fn human);
#endif /* TMEMCTL_ARGS_H */
