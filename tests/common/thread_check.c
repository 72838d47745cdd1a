/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>

#include "common/thread_check.h"

void tmem_thread_fail_note(struct tmem_thread_fail *tf, const char *file, int line,
			   const char *fmt, ...)
{
	va_list ap;
	int n;

	/* Only the first failing thread writes first[]; the test reads it
	 * after pthread_join(), which orders the write before the read. */
	if (atomic_fetch_add(&tf->count, 1) != 0)
		return;
	n = snprintf(tf->first, sizeof(tf->first), "%s:%d: ", file, line);
	if (n < 0 || (size_t)n >= sizeof(tf->first))
		return;
	va_start(ap, fmt);
	vsnprintf(tf->first + n, sizeof(tf->first) - (size_t)n, fmt, ap);
	va_end(ap);
}
