/* SPDX-License-Identifier: MIT */
/*
 * Two tmemds on one machine that migrate clients between them: two
 * runtime dirs and arenas (restart_harness.h, so either can be killed
 * and started again), one key file naming hostA and hostB, each
 * listening on a loopback port with the other as its peer.
 */
#ifndef TMEMD_TEST_MIGRATE_FIXTURE_H
#define TMEMD_TEST_MIGRATE_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/restart_harness.h"

#define MPAIR_SOURCE_UNREACHABLE 1u /* hostA does not listen */

struct mpair {
	struct rdaemon d[2];  /* hostA, hostB */
	uint16_t port[2];
	char keydir[64];
	char keyfile[128];
};

void mpair_start(struct mpair *p, unsigned flags);
/* The same with each tmemd's --memory (default 64M). */
void mpair_start_sized(struct mpair *p, const char *memory);
void mpair_fini(struct mpair *p);
/* Whether side i's <runtime>/migrate/<sub>/<name> exists. */
bool mpair_has_file(struct mpair *p, int i, const char *sub, const char *name);
/* Waits (up to 15 s, else fails) until neither side has name parked,
 * lent or incoming: a move that is over on both sides. */
void mpair_wait_settled(struct mpair *p, const char *name);
/* A free loopback port. */
uint16_t mpair_free_port(void);
/* Writes a key file of these lines (mode 0600) at path. */
void mpair_write_keys(const char *path, const char *lines);

#define MPAIR_KEY_A "hostA 1111111111111111111111111111111111111111111111111111111111111111\n"
#define MPAIR_KEY_B "hostB 2222222222222222222222222222222222222222222222222222222222222222\n"

#endif /* TMEMD_TEST_MIGRATE_FIXTURE_H */
