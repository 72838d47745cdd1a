/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "options.h"
#include "size.h"


static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tmemd [OPTION]...\n"
		"Transcendent memory daemon: serves tmem pools to guests.\n\n"
		"  -c, --config FILE       read tmemd.conf FILE (at most 1 MiB)\n"
		"  -t, --transport NAME    auto, xen or local (default auto)\n"
		"  -f, --foreground        stay in the foreground (tmemd never forks;\n"
		"                          accepted for compatibility with init scripts)\n"
		"  -r, --runtime-dir DIR   where guest.sock, control.sock and stats.json live\n"
		"  -s, --state-dir DIR     where admin settings persist (state.json, at\n"
		"                          most 4 MiB)\n"
		"  -m, --memory SIZE|auto  pool ceiling: bytes, K/M/G suffix, N%% of RAM,\n"
		"                          or auto (follow what the host can spare)\n"
		"  -w, --workers N         ring worker threads (default one per CPU)\n"
		"  -a, --arena PATH        keep the pages in PATH on tmpfs or hugetlbfs, so\n"
		"                          they survive any restart (default: systemd's fd\n"
		"                          store when run by systemd, else nothing survives)\n"
		"      --discard-arena     throw away the pages a previous tmemd left (an\n"
		"                          error when there is no arena)\n"
		"  -v, --verbose           log debug messages\n"
		"      --check-config      read the -c FILE and exit: 0 when tmemd would\n"
		"                          accept it, 1 with the reason (for ExecReload)\n"
		"  -h, --help              print this help\n"
		"  -V, --version           print the version\n\n"
		"Signals: SIGTERM/SIGINT stop cleanly, during the start too; SIGUSR1 writes\n"
		"<runtime>/stats.json.\n"
		"See tmemd(8) and tmemd.conf(5).\n");
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "tmemd: %s: '%s'\nTry 'tmemd --help'.\n", what, arg);
	return TMEMD_OPTS_EXIT_USAGE;
}

enum tmemd_options_result tmemd_options_parse(int argc, char **argv,
					      struct tmemd_options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "transport", required_argument, NULL, 't' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "runtime-dir", required_argument, NULL, 'r' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "memory", required_argument, NULL, 'm' },
		{ "workers", required_argument, NULL, 'w' },
		{ "arena", required_argument, NULL, 'a' },
		{ "discard-arena", no_argument, NULL, 'D' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "check-config", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long n;
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	/* Our own messages: getopt's would start with argv[0], the binary's
	 * full path, where every other message says "tmemd:". */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:t:fr:s:m:w:a:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config_path = optarg;
			break;
		case 't':
			if (strcmp(optarg, "auto") && strcmp(optarg, "xen") &&
			    strcmp(optarg, "local"))
				return bad("--transport wants auto, xen or local", optarg);
			o->transport = optarg;
			break;
		case 'f':
			o->foreground = true;
			break;
		case 'r':
			if (optarg[0] != '/' || strlen(optarg) > 200)
				return bad("--runtime-dir wants an absolute path (max 200 bytes)", optarg);
			o->runtime_dir = optarg;
			break;
		case 's':
			if (optarg[0] != '/' || strlen(optarg) > 200)
				return bad("--state-dir wants an absolute path (max 200 bytes)", optarg);
			o->state_dir = optarg;
			break;
		case 'm':
			if (tmemd_parse_memory(optarg, &o->memory_bytes))
				return bad("--memory wants " TMEM_SIZE_GRAMMAR
					   ", N% of RAM (at least 64K, at most the host's RAM), or auto",
					   optarg);
			break;
		case 'w':
			n = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end || n < 1 || n > TMEMD_MAX_WORKERS)
				return bad("--workers wants a number from 1 to 64", optarg);
			o->workers = (unsigned)n;
			break;
		case 'a':
			if (optarg[0] != '/' || strlen(optarg) > 250)
				return bad("--arena wants an absolute path (max 250 bytes)", optarg);
			o->arena_path = optarg;
			break;
		case 'D':
			o->discard_arena = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'C':
			o->check_config = true;
			break;
		case 'h':
			usage(stdout);
			return TMEMD_OPTS_EXIT_OK;
		case 'V':
			printf("tmemd %s\n", TMEMD_VERSION);
			return TMEMD_OPTS_EXIT_OK;
		case ':':
			return bad("option needs a value", argv[optind - 1]);
		default:
			/* A short option names itself by optopt; a long one is
			 * the argument getopt just passed. */
			if (optopt) {
				char opt[3] = { '-', (char)optopt, '\0' };

				return bad("unrecognized option", opt);
			}
			return bad("unrecognized option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad("unexpected argument", argv[optind]);
	if (o->check_config && !o->config_path)
		return bad("--check-config needs a file to check", "-c FILE");
	return TMEMD_OPTS_RUN;
}
