/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for tmemd.conf parsing: the input is the file, read
 * as a start reads it (tmemd_config_load_file: the size cap, a NUL byte,
 * then inih).  Any input must either parse or fail with a "file: reason"
 * or "file:line: reason" message, without a crash, a leak or slowness
 * (make fuzz-config sets -timeout and -max_len past the 1 MiB cap).
 * Build and run: make fuzz-config [FUZZ_SECONDS=N] (needs clang).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static char dir[] = "/tmp/fuzz-config.XXXXXX";
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void remove_dir(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tmemd_config cfg;
	char err[256] = "";
	FILE *f;
	int rc;

	if (!path[0]) {
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/fuzz.conf", dir);
		atexit(remove_dir);
	}
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	tmemd_config_init(&cfg);
	rc = tmemd_config_load_file(&cfg, path, err, sizeof(err));
	if (rc && strncmp(err, path, strlen(path)))
		abort(); /* every failure names the file (and line) */
	if ((size > TMEMD_CONFIG_MAX_BYTES) != (rc == -EFBIG))
		abort(); /* the cap, exactly */
	if (!rc && cfg.workers > TMEMD_MAX_WORKERS)
		abort();
	tmemd_config_free(&cfg);
	return 0;
}
