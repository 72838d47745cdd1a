/* test_daemon_unit's read-back case (test_readback.c). */
#ifndef TMEMD_TEST_READBACK_H
#define TMEMD_TEST_READBACK_H

#include <check.h>

void add_readback_tests(Suite *s);

#endif
