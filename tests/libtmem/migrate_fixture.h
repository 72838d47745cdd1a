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

#include "common/test_peers.h"
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
#endif /* TMEMD_TEST_MIGRATE_FIXTURE_H */
