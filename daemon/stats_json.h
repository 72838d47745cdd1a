/* SPDX-License-Identifier: MIT */
/*
 * The stats document, built from the counters pools/ and policy/ fill
 * in.  Used by SIGUSR1 (<runtime>/stats.json) now and by the control
 * socket's "stats" command later, so it only builds JSON and writes
 * files; it knows nothing of signals or sockets.  man/tmemd.8 lists the
 * keys.
 */
#ifndef TMEMD_STATS_JSON_H
#define TMEMD_STATS_JSON_H

#include <jansson.h>

#include "clients.h"

#define TMEMD_STATS_VERSION 1

/* A new reference, or NULL when out of memory. */
json_t *tmemd_stats_json(struct tmemd_clients *reg);

/* Writes the document to path atomically (temp file, fsync, rename). */
int tmemd_stats_write(struct tmemd_clients *reg, const char *path);

#endif /* TMEMD_STATS_JSON_H */
