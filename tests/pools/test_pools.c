/* pools/: the Check suite (semantics, resize, model-based random test,
 * the hooks for policy/). */
#include <check.h>
#include <stdlib.h>

#include "common/test_main.h"
#include "test_pools.h"

static Suite *pools_suite(void)
{
	Suite *suite = suite_create("pools");

	add_semantics_tests(suite);
	add_resize_tests(suite);
	add_release_tests(suite);
	add_model_tests(suite);
	add_hooks_tests(suite);
	add_durable_tests(suite);
	add_crash_tests(suite);
	add_compress_tests(suite);
	add_layout_tests(suite);
	add_transfer_tests(suite);
	add_tier_tests(suite);
	return suite;
}

int main(void)
{
	return tmem_test_main(pools_suite(), 0);
}
