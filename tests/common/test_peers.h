/* SPDX-License-Identifier: MIT */
/*
 * What a test of two tmemds that migrate between each other needs, in
 * processes (tests/libtmem/migrate_fixture.h) or in one process
 * (tests/xen-unit/test_xen_hosts.c): loopback ports and a key file.
 */
#ifndef TMEMD_TEST_PEERS_H
#define TMEMD_TEST_PEERS_H

#include <stdint.h>

/* A free loopback port. */
uint16_t mpair_free_port(void);
/* Writes a key file of these lines (mode 0600) at path. */
void mpair_write_keys(const char *path, const char *lines);

#define MPAIR_KEY_A "hostA 1111111111111111111111111111111111111111111111111111111111111111\n"
#define MPAIR_KEY_B "hostB 2222222222222222222222222222222222222222222222222222222222222222\n"

#endif /* TMEMD_TEST_PEERS_H */
