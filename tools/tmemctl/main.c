/* SPDX-License-Identifier: MIT */
/* tmemctl: global options and the subcommand table. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmemctl.h"

static const struct tmemctl_cmd commands[] = {
	{ "status", cmd_status, "[--json]", "daemon and pool summary" },
	{ "stats", cmd_stats, "[--json|--prometheus] [CLIENT]",
	  "the full statistics (of one client)" },
	{ "list", cmd_list, "[-a|--all] [--json] [CLIENT]",
	  "connected clients and their settings; --all: stored and parked ones too" },
	{ "set", cmd_set, "CLIENT|-a [--weight N] [--ephemeral-max SIZE] "
	  "[--persistent-max SIZE] [--spill-max SIZE] [--compress off|lz4|zstd[:LEVEL]]",
	  "change a client's settings, stored (-a: every connected client's, now, not stored)" },
	{ "unset", cmd_unset, "CLIENT|-a [--weight] [--ephemeral-max] [--persistent-max] "
	  "[--compress] [--frozen] [--spill-max]",
	  "remove settings tmemctl stored (none named: all), back to tmemd.conf's" },
	{ "freeze", cmd_freeze, "CLIENT|-a", "refuse the client's puts (-a: every client's)" },
	{ "thaw", cmd_thaw, "CLIENT|-a", "accept the client's puts again" },
	{ "flush", cmd_flush, "CLIENT|-a", "drop the client's ephemeral pages" },
	{ "shared-auth", cmd_shared_auth, "UUID CLIENT [--revoke]",
	  "allow (or stop) CLIENT joining shared pool UUID" },
	{ "pool-size", cmd_pool_size, "SIZE", "resize the pool" },
	{ "freeable", cmd_freeable, "[--json]", "memory tmemd could give back at once (ephemeral pages)" },
	{ "release", cmd_release, "SIZE", "give SIZE of the pool back to the host now" },
	{ "saved", cmd_saved, "[--json] [CLIENT]",
	  "what tmem saved: disk and swap I/O avoided, compression gain, CPU cost" },
	{ "forget", cmd_forget, "CLIENT",
	  "remove what is stored for a client not attached, and drop it if parked" },
	{ "migrate-check", cmd_migrate_check, "CLIENT HOST:PORT",
	  "can CLIENT's pages follow it to that tmemd (reachable, authenticated, room)" },
	{ "migrate-push", cmd_migrate_push, "CLIENT HOST:PORT",
	  "send the parked CLIENT's pages to that tmemd now" },
	{ "top", cmd_top, "[--delay S] [--sort name|eph|pers|puts|gets|hit|evict] "
	  "[--iterations N] [--json]", "live per-client view, like xentop" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

const struct tmemctl_cmd *find_cmd(const char *name);
const struct tmemctl_cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: tmemctl [--socket PATH | --runtime-dir DIR] [--json] COMMAND [ARGS]\n"
		"       tmemctl --help | --version\n\nCommands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-12s %s\n  %-12s   %s\n", commands[i].name,
			commands[i].usage, "", commands[i].help);
	fprintf(out, "\nSIZE: bytes with K/M/G/T (powers of 1024) making whole 4 KiB pages,\n"
		"or pages as Np (tmemd.conf's grammar); set also takes \"none\".\n"
		"CLIENT: a Xen domain by its xl name, as uuid:U (its UUID, which xl\n"
		"save, restore and migrate keep) or as domid:N (or N) while it runs;\n"
		"or a local client's name (A-Za-z0-9._:-, not all digits, not starting\n"
		"with domid: or uuid:).  set and shared-auth store what they are given\n"
		"by name or uuid:U, and domid:N under that domain's uuid:U.\n"
		"The socket: --socket, DIR/control.sock for --runtime-dir DIR,\n"
		"$TMEMCTL_SOCKET, /run/tmemd/control.sock as root, else\n"
		"$XDG_RUNTIME_DIR/tmemd/control.sock.  The global options may also\n"
		"come after the command.  See tmemctl(8).\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "runtime-dir", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct tmemctl_opts opts = { 0 };
	const struct tmemctl_cmd *cmd;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:s:r:jhV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			opts.socket = optarg;
			break;
		case 'r':
			opts.runtime_dir = optarg;
			break;
		case 'j':
			opts.json = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("tmemctl %s (control protocol %d)\n", TMEMCTL_VERSION,
			       TMEMCTL_PROTO_VERSION);
			return EXIT_OK;
		default:
			usage_error("%s '%s'", c == ':' ? "option needs a value:" :
				    "unrecognized option", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = find_cmd(argv[optind]);
	if (!cmd) {
		usage_error("unknown command \"%s\"", argv[optind]);
		return EXIT_USAGE;
	}
	argv += optind;
	argc -= optind;
	optind = 0;   /* the subcommand's getopt starts afresh */
	return cmd->fn(&opts, argc, argv);
}
