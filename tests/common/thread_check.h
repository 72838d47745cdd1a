/* SPDX-License-Identifier: MIT */
/*
 * Checks made on threads a test starts.  Check's ck_assert() may only
 * be called from the thread Check runs the test in: on another thread
 * it ends that thread's process (forked) or longjmps across stacks (no
 * fork), and the other threads go on using what the test owns.  So a
 * worker records what failed, stops what it was doing if it cannot go
 * on, and the test asserts once the workers are joined:
 *
 *	static void *worker(void *arg)
 *	{
 *		struct job *j = arg;
 *		int rc = do_it(j);
 *
 *		if (!tmem_thread_check(&j->fail, rc == 0, "do_it: %d", rc))
 *			return NULL;
 *		...
 *	}
 *
 *	pthread_join(t, NULL);
 *	tmem_thread_check_assert(&j.fail);
 */
#ifndef TESTS_COMMON_THREAD_CHECK_H
#define TESTS_COMMON_THREAD_CHECK_H

#include <check.h>
#include <stdatomic.h>
#include <stdbool.h>

struct tmem_thread_fail {
	atomic_uint count; /* failed checks, from every thread */
	char first[256];   /* the first one: file:line: message */
};

/* Counts a failed check, and keeps its message if it is the first. */
void tmem_thread_fail_note(struct tmem_thread_fail *tf, const char *file, int line,
			   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* cond, or a failure recorded with a printf-style message; returns cond. */
#define tmem_thread_check(tf, cond, ...)                                        \
	((cond) ? true :                                                        \
		  (tmem_thread_fail_note((tf), __FILE__, __LINE__, __VA_ARGS__), \
		   false))

/* In the test's own thread, after joining the workers: none failed. */
#define tmem_thread_check_assert(tf)                                          \
	ck_assert_msg(atomic_load(&(tf)->count) == 0,                         \
		      "%u failed check(s) on worker threads; the first: %s", \
		      atomic_load(&(tf)->count), (tf)->first)

#endif /* TESTS_COMMON_THREAD_CHECK_H */
