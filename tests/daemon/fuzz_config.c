/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for tmemd.conf parsing: any input must either parse
 * or fail with a "file:line: reason" message, without a crash or leak.
 * Build and run: make fuzz-config [FUZZ_SECONDS=N] (needs clang).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tmemd_config cfg;
	char *text = malloc(size + 1);
	char err[256] = "";
	int rc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	tmemd_config_init(&cfg);
	rc = tmemd_config_load_string(&cfg, "fuzz.conf", text, err, sizeof(err));
	if (rc && strncmp(err, "fuzz.conf:", 10))
		abort(); /* every failure names the file (and line) */
	if (!rc && cfg.workers > TMEMD_MAX_WORKERS)
		abort();
	tmemd_config_free(&cfg);
	free(text);
	return 0;
}
