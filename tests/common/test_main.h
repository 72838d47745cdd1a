/* SPDX-License-Identifier: MIT */
/*
 * The one way a Check program runs its suite (STYLE.md 13), so every test
 * program reports alike:
 *
 *   exit 0    every test ran and passed
 *   exit 1    a test failed
 *   exit 77   nothing failed, but something could not run here (a skip)
 *
 * The make-level runner (mk/run-tests.sh) counts 77 as skipped, never as
 * passed.  A program decides what it cannot run while it builds its
 * suite, in the main thread, before tmem_test_main() forks any test:
 *
 *	if (tmem_test_have_root("test_x", "runs a client as another uid"))
 *		tcase_add_test(tc, test_x);
 *
 * and main() is then one call (after any process set-up of its own):
 *
 *	int main(void)
 *	{
 *		return tmem_test_main(x_suite(), 0);
 *	}
 */
#ifndef TESTS_COMMON_TEST_MAIN_H
#define TESTS_COMMON_TEST_MAIN_H

#include <check.h>
#include <stdbool.h>

/* The exit status of a program that skipped something (automake's). */
#define TMEM_TEST_EXIT_SKIP 77

/* tmem_test_main() flags. */
enum {
	/*
	 * Fork every test even when CK_FORK=no (valgrind-check sets it):
	 * for suites whose tests leave threads or child processes behind.
	 */
	TMEM_TEST_ALWAYS_FORK = 1u << 0,
};

/*
 * Runs every test of s (Check's CK_FORK environment knob applies unless
 * flags say otherwise), frees it, prints what was skipped, and returns
 * main()'s exit status as above.
 */
int tmem_test_main(Suite *s, unsigned int flags);

/*
 * Records that "what" (a test, a case, the whole program) does not run
 * here, and why.  Printed as "SKIP: what: why" after the run.
 */
void tmem_test_skip(const char *what, const char *why);

/*
 * True when running as root; otherwise records "what" as skipped
 * ("needs root: why") and returns false.
 */
bool tmem_test_have_root(const char *what, const char *why);

#endif /* TESTS_COMMON_TEST_MAIN_H */
