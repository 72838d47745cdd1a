/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the control protocol's request parser: any bytes
 * a peer can send on control.sock go through ctl_request_parse() (the
 * server has already cut them at a newline and at TMEMD_CONTROL_MAX_MSG).
 * Every input must come back as a request or an error with a message,
 * never a crash or a leak, and an accepted request must be consistent.
 * make fuzz-control (60 s, -max_len=70000); make check replays its corpus.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control/ctl_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_request req;
	struct ctl_err err;
	char *line;

	if (ctl_request_parse((const char *)data, size, &req, &err) == 0) {
		assert((unsigned)req.cmd < CTL_CMD_NR);
		assert(req.cmd != CTL_SET || (req.s.has & CTL_SETTINGS_MASK));
		assert(!(req.has & CTL_HAS_CLIENT) || ctl_name_valid(req.client));
		return 0;
	}
	assert(err.errnum > 0 && err.msg[0]);
	line = ctl_reply_error(&err);
	assert(line && line[strlen(line) - 1] == '\n');
	free(line);
	return 0;
}
