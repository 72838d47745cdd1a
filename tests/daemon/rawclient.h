/* SPDX-License-Identifier: MIT */
/* A test client that drives a raw ring by hand (tmem_raw.h), to send
 * requests libtmem would never send. */
#ifndef TMEMD_TEST_RAWCLIENT_H
#define TMEMD_TEST_RAWCLIENT_H

#include "tmem_raw.h"

struct rawc {
	struct tmem_raw_ring ring;
	uint32_t prod;  /* requests pushed */
	uint32_t cons;  /* responses read */
};

int rawc_connect(struct rawc *c, const char *sock, const char *name);
/* Sends one request as is (id and slot included), waits for its
 * response.  0 with *rsp filled, or -errno (-EPIPE: disconnected,
 * -ETIMEDOUT). */
int rawc_call(struct rawc *c, const struct tmem_req *req, struct tmem_rsp *rsp);
/* A well-formed request for op on pool with slot TMEM_NO_SLOT. */
void rawc_req(struct tmem_req *r, uint32_t op, int32_t pool);
/* Waits until tmemd hangs up (returns 0) or timeout_ms passes (-ETIMEDOUT). */
int rawc_wait_hangup(struct rawc *c, int timeout_ms);

#endif
