/* SPDX-License-Identifier: MIT */
/* Size strings as users write them: "4096", "64K", "256M", "2G", "25%". */
#ifndef TMEMD_SIZE_H
#define TMEMD_SIZE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Parses s into bytes.  Suffixes K, M, G, T (powers of 1024, case
 * insensitive, an optional trailing "B"/"iB").  With allow_percent,
 * "N%" (1..100) means that share of the host's RAM.  Returns 0 or
 * -EINVAL (garbage, empty, overflow, 0%).
 */
int tmemd_parse_size(const char *s, bool allow_percent, uint64_t *bytes);

/* Bytes of physical RAM, from sysconf(). */
uint64_t tmemd_host_ram_bytes(void);

#endif /* TMEMD_SIZE_H */
