/* pools/: the Check suite (semantics, resize, model-based random test,
 * the hooks for policy/). */
#include <check.h>
#include <stdlib.h>

#include "test_pools.h"

int main(void)
{
	Suite *suite = suite_create("pools");
	SRunner *sr;
	int failed;

	add_semantics_tests(suite);
	add_resize_tests(suite);
	add_model_tests(suite);
	add_hooks_tests(suite);
	add_durable_tests(suite);
	add_crash_tests(suite);
	add_compress_tests(suite);
	sr = srunner_create(suite);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
