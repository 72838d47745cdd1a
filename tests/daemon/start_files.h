/* SPDX-License-Identifier: MIT */
/*
 * Files for the start-time tests and benchmark (issue 32): a state.json
 * of exactly a given size that tmemd accepts (every client it holds, with
 * every setting, then blanks), and garbage of a given size.
 */
#ifndef TMEMD_TEST_START_FILES_H
#define TMEMD_TEST_START_FILES_H

#include <stddef.h>

/* A valid state file of exactly bytes bytes (at least 1 MiB). */
void start_write_state(const char *path, size_t bytes);
/* bytes of pseudo-random garbage, with a '{' first. */
void start_write_garbage(const char *path, size_t bytes);
/* CLOCK_MONOTONIC in milliseconds. */
double start_now_ms(void);

#endif /* TMEMD_TEST_START_FILES_H */
