/* SPDX-License-Identifier: MIT */
/*
 * Issue 19 item 10: one limit for shared-pool authorisations.  The state
 * file accepted 4096 and tmemd.conf 256 clients x 16, but the store
 * holds TMEM_MAX_SHARED_AUTH (256), so the excess failed later, as a
 * bare "No space left on device".  Now each source refuses more than
 * the store holds when it is read, saying what the limit is.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/test_main.h"
#include "config.h"
#include "control/ctl_state.h"

/* A state.json with n authorisations; returns ctl_state_load's rc. */
static int load_state_with(unsigned n, struct ctl_err *err)
{
	char path[] = "/tmp/auth-limit.XXXXXX";
	struct ctl_state st;
	int fd = mkstemp(path), rc;
	FILE *f = fdopen(fd, "w");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"version\":1,\"shared_auth\":[");
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s{\"uuid\":\"00112233-4455-6677-8899-%012x\",\"client\":\"vm%u\"}",
			i ? "," : "", i, i % 7);
	fprintf(f, "]}\n");
	fclose(f);
	memset(&st, 0, sizeof(st));
	memset(err, 0, sizeof(*err));
	rc = ctl_state_load(&st, path, err);
	ctl_state_free(&st);
	unlink(path);
	return rc;
}

START_TEST(test_state_file_auth_limit)
{
	struct ctl_err err;

	ck_assert_int_eq(load_state_with(TMEM_MAX_SHARED_AUTH, &err), 0);
	ck_assert_int_lt(load_state_with(TMEM_MAX_SHARED_AUTH + 1, &err), 0);
	ck_assert_msg(strstr(err.msg, "at most 256 (uuid, client) pairs"),
		      "unclear message: %s", err.msg);
}
END_TEST

/* A tmemd.conf with n shared-auth lines over n / 16 + 1 clients. */
static int load_conf_with(unsigned n, char *err, size_t errlen)
{
	size_t cap = 64 + (size_t)n * 80, len = 0;
	char *text = malloc(cap);
	struct tmemd_config cfg;
	int rc;

	ck_assert_ptr_nonnull(text);
	for (unsigned i = 0; i < n; i++) {
		if (i % TMEMD_MAX_AUTH_PER_CLIENT == 0)
			len += (size_t)snprintf(text + len, cap - len, "[client vm%u]\n",
						i / TMEMD_MAX_AUTH_PER_CLIENT);
		len += (size_t)snprintf(text + len, cap - len,
					"shared-auth = 00112233-4455-6677-8899-%012x\n", i);
	}
	tmemd_config_init(&cfg);
	rc = tmemd_config_load_string(&cfg, "test.conf", text, err, errlen);
	tmemd_config_free(&cfg);
	free(text);
	return rc;
}

START_TEST(test_config_auth_limit)
{
	char err[256] = "";

	ck_assert_int_eq(load_conf_with(TMEM_MAX_SHARED_AUTH, err, sizeof(err)), 0);
	ck_assert_int_lt(load_conf_with(TMEM_MAX_SHARED_AUTH + 1, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "at most 256 in all"), "unclear message: %s", err);
}
END_TEST

static Suite *auth_limit_suite(void)
{
	Suite *s = suite_create("auth-limit");
	TCase *tc = tcase_create("auth-limit");

	tcase_add_test(tc, test_state_file_auth_limit);
	tcase_add_test(tc, test_config_auth_limit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(auth_limit_suite(), 0);
}
