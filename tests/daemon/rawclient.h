/* SPDX-License-Identifier: MIT */
/* A test client that drives a raw ring by hand (tmem_raw.h), to send
 * requests libtmem would never send. */
#ifndef TMEMD_TEST_RAWCLIENT_H
#define TMEMD_TEST_RAWCLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "tmem_local.h"
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


/* Raw handshakes, for the hostile tests (they abort the test on a
 * failing syscall). */
/* A connected, not yet greeted guest.sock socket. */
int rawc_socket(const char *sock);
/* Sends len bytes of buf with nfds fds (up to 16) in one message on fd;
 * returns what sendmsg returned. */
long rawc_send_fds(int fd, const void *buf, size_t len, const int *fds,
		   unsigned nfds);
/* A hello on a fresh connection; returns the welcome's status. */
int32_t rawc_hello(const char *sock, struct tmem_local_hello *h,
		   const int *fds, unsigned nfds);
/* A well-formed hello for an 8-entry, 4-slot ring called name. */
void rawc_good_hello(struct tmem_local_hello *h, const char *name);
/* A memfd of size bytes holding a fresh 8-entry, 4-slot ring header,
 * sealed against shrinking if seal. */
int rawc_region_fd(uint64_t size, bool seal);

#endif
