/* SPDX-License-Identifier: MIT */
/* The shared runner of the Check programs; see test_main.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/test_main.h"

#define MAX_SKIPS 16

/* Written only by the main thread while the suite is built. */
static struct {
	char line[200];
} skips[MAX_SKIPS];
static unsigned int nskips;

void tmem_test_skip(const char *what, const char *why)
{
	/* More than fit are still counted: the exit status is what matters. */
	if (nskips < MAX_SKIPS)
		snprintf(skips[nskips].line, sizeof(skips[nskips].line), "%s: %s", what, why);
	nskips++;
}

bool tmem_test_have_root(const char *what, const char *why)
{
	char reason[160];

	if (geteuid() == 0)
		return true;
	snprintf(reason, sizeof(reason), "needs root (%s)", why);
	tmem_test_skip(what, reason);
	return false;
}

int tmem_test_main(Suite *s, unsigned int flags)
{
	SRunner *sr = srunner_create(s);
	int failed;

	if (flags & TMEM_TEST_ALWAYS_FORK)
		srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return EXIT_FAILURE;
	if (nskips == 0)
		return EXIT_SUCCESS;
	for (unsigned int i = 0; i < nskips && i < MAX_SKIPS; i++)
		printf("SKIP: %s\n", skips[i].line);
	printf("%s: %u skipped, exit %d\n", program_invocation_short_name, nskips,
	       TMEM_TEST_EXIT_SKIP);
	fflush(stdout);
	return TMEM_TEST_EXIT_SKIP;
}
