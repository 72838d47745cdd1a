/* SPDX-License-Identifier: MIT */
/*
 * tmemd's command line.  Options override the config file.  The parsed
 * options are one of the two globals STYLE.md allows; main() owns them.
 */
#ifndef TMEMD_OPTIONS_H
#define TMEMD_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#ifndef TMEMD_VERSION
#define TMEMD_VERSION "0.1"
#endif

struct tmemd_options {
	const char *config_path;   /* -c FILE; NULL: none */
	const char *transport;     /* --transport; NULL: from config */
	const char *runtime_dir;   /* --runtime-dir; NULL: from config */
	const char *state_dir;     /* --state-dir; NULL: from config */
	uint64_t memory_bytes;     /* --memory; 0: from config */
	unsigned workers;          /* --workers; 0: from config */
	const char *arena_path;    /* --arena; NULL: from config */
	bool discard_arena;        /* --discard-arena */
	bool foreground;           /* --foreground */
	bool verbose;              /* -v */
	bool check_config;         /* --check-config: parse -c FILE, then exit */
};

enum tmemd_options_result {
	TMEMD_OPTS_RUN,
	TMEMD_OPTS_EXIT_OK,    /* --help or --version printed */
	TMEMD_OPTS_EXIT_USAGE, /* bad usage, message printed: exit 2 */
};

enum tmemd_options_result tmemd_options_parse(int argc, char **argv,
					      struct tmemd_options *out);

#endif /* TMEMD_OPTIONS_H */
