/* The pools/ Check suite is assembled from these parts. */
#ifndef TMEM_TESTS_TEST_POOLS_H
#define TMEM_TESTS_TEST_POOLS_H

#include <check.h>

void add_semantics_tests(Suite *suite);
void add_resize_tests(Suite *suite);
void add_release_tests(Suite *suite);
void add_model_tests(Suite *suite);
void add_hooks_tests(Suite *suite);
void add_durable_tests(Suite *suite);
void add_crash_tests(Suite *suite);
void add_compress_tests(Suite *suite);
void add_layout_tests(Suite *suite);
void add_transfer_tests(Suite *suite);
void add_tier_tests(Suite *suite);

#endif
