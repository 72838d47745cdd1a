/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer over the control server's state file (state.json,
 * daemon/control/ctl_state.c): the input is the file.  It must load or
 * be refused with a message (one over the 4 MiB cap with -EFBIG), never
 * crash, leak or be slow (make fuzz-state sets -timeout, and -max_len
 * past the cap); a state that loads must save and load again to the same
 * numbers of entries.
 * make fuzz-state; make check replays tests/fuzz/corpus/fuzz-state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/ctl_state.h"

static char dir[] = "/tmp/fuzz-state.XXXXXX";
static char in_path[64], out_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void remove_dir(void)
{
	unlink(in_path);
	unlink(out_path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_state st = { 0 }, again = { 0 };
	struct ctl_err err = { 0 };
	FILE *f;
	int rc;

	if (!in_path[0]) {
		if (!mkdtemp(dir))
			abort();
		snprintf(in_path, sizeof(in_path), "%s/in.json", dir);
		snprintf(out_path, sizeof(out_path), "%s/out.json", dir);
		atexit(remove_dir);
	}
	f = fopen(in_path, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	rc = ctl_state_load(&st, in_path, &err);
	if ((size > CTL_STATE_MAX_BYTES) != (rc == -EFBIG))
		abort(); /* the cap, exactly */
	if (rc) {
		if (!err.msg[0])
			abort(); /* a refusal says why */
		ctl_state_free(&st);
		return 0;
	}
	if (ctl_state_save(&st, out_path, &err) ||
	    ctl_state_load(&again, out_path, &err) ||
	    again.nr_clients != st.nr_clients || again.nr_auths != st.nr_auths)
		abort(); /* what was accepted must survive a save */
	ctl_state_free(&st);
	ctl_state_free(&again);
	return 0;
}
