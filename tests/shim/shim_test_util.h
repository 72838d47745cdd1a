/* SPDX-License-Identifier: MIT */
/* Helpers shared by the shim's two Check programs. */
#ifndef SHIM_TEST_UTIL_H
#define SHIM_TEST_UTIL_H

#include <check.h>
#include <stdint.h>

#include "shim_ops.h"

#define SHIM_TEST_PAGE 4096

/* Non-zero when TMEM_TEST_QUICK is set (valgrind runs): smaller loops. */
int shim_test_quick(void);
/* A page of pseudo-random bytes determined by seed. */
void shim_test_fill(uint8_t *page, uint32_t seed);
/* Non-zero if page holds exactly shim_test_fill(seed). */
int shim_test_same(const uint8_t *page, uint32_t seed);
/*
 * nthreads tasks swapping at once, as frontswap does: task i stores n
 * pages of swap type i, then loads and checks them all.  Returns the
 * number of failed stores, loads and mismatches.
 */
uint32_t shim_test_swappers(struct shim_ops *o, int nthreads, uint32_t n);

#endif /* SHIM_TEST_UTIL_H */
