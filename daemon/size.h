/* SPDX-License-Identifier: MIT */
/* Size strings as users write them: "4096", "64K", "256M", "2G", "25%". */
#ifndef TMEMD_SIZE_H
#define TMEMD_SIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "tmem_size.h"

/*
 * Parses s into bytes with proto/tmem_size.h's grammar, the one tmemctl
 * uses (whole 4 KiB pages).  With allow_percent, "N%" (1..100) means that
 * share of the host's RAM, rounded down to pages.  TMEM_SIZE_OK, or the
 * reason (tmem_size_strerror()).
 */
enum tmem_size_result tmemd_parse_size(const char *s, bool allow_percent, uint64_t *bytes);

/* The memory key and --memory: a size of at least 64K, N% of RAM, or
 * "auto" (TMEMD_MEMORY_AUTO). */
enum tmem_size_result tmemd_parse_memory(const char *s, uint64_t *bytes);

/* Bytes of physical RAM, from sysconf(). */
uint64_t tmemd_host_ram_bytes(void);

#endif /* TMEMD_SIZE_H */
