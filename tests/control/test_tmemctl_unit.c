/* SPDX-License-Identifier: MIT */
/*
 * tmemctl's own code, without a tmemd: the human printers, which must
 * refuse a reply that lacks a figure rather than print it as 0.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/test_main.h"
#include "tmemctl/tmemctl.h"

static void human_pool_and_clients(struct hout *o, json_t *doc)
{
	print_pool_summary(o, doc);
	print_clients_table(o, harray(o, doc, "clients"));
}

#define CLIENT_JSON "{\"id\":1,\"client\":\"vm1\",\"name\":\"vm1\",\"domid\":null,\"weight\":100," \
	"\"frozen\":false,\"compress\":\"lz4\",\"caps\":{\"ephemeral_max_pages\":null," \
	"\"persistent_max_pages\":256},\"pages\":{\"ephemeral\":3,\"persistent\":2}}"
#define POOL_JSON "{\"total_pages\":1024,\"used_pages\":5,\"free_pages\":1019," \
	"\"ephemeral_pages\":3,\"persistent_pages\":2,\"evictions\":7," \
	"\"data\":{\"ephemeral\":{\"logical_bytes\":12288,\"compressed_bytes\":3000}," \
	"\"persistent\":{\"logical_bytes\":8192,\"compressed_bytes\":2000}," \
	"\"logical_bytes\":20480,\"compressed_bytes\":5000,\"compression_ratio\":4.096}," \
	"\"ops\":{\"ephemeral\":{\"admin_flushes\":2},\"persistent\":{}}}"

static void human_parked(struct hout *o, json_t *doc)
{
	print_parked(o, harray(o, doc, "parked"));
}

/* print_reply() with human on text, with stdout captured: its exit
 * code, and the bytes it printed in out. */
static int print_captured_with(const char *text, human_fn human, char *out, size_t len)
{
	char path[] = "/tmp/tmemctl-print-XXXXXX";
	int fd = mkstemp(path), saved = dup(1), rc;
	json_t *doc = json_loads(text, 0, NULL);
	ssize_t n;

	ck_assert_ptr_nonnull(doc);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	fflush(stdout);
	dup2(fd, 1);
	rc = print_reply("test", doc, human);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	json_decref(doc);
	return rc;
}

static int print_captured(const char *text, char *out, size_t len)
{
	return print_captured_with(text, human_pool_and_clients, out, len);
}

#define PARKED_JSON "{\"client\":\"uuid:00112233-4455-6677-8899-aabbccddeeff\"," \
	"\"name\":\"web1\",\"pages\":2,\"pools\":1,\"parked_at_seconds\":1796400000," \
	"\"age_seconds\":150}"

/* Issue 25: list --all and stats show the parked clients: key, xl name,
 * pages, pools and age; a reply lacking a figure prints nothing. */
START_TEST(test_print_parked)
{
	char out[4096];

	ck_assert_int_eq(print_captured_with("{\"parked\":[" PARKED_JSON "]}", human_parked, out,
					     sizeof(out)), EXIT_OK);
	ck_assert_ptr_nonnull(strstr(out, "PARKED"));
	ck_assert_ptr_nonnull(strstr(out, "uuid:00112233-4455-6677-8899-aabbccddeeff web1"));
	ck_assert_ptr_nonnull(strstr(out, "8.0K     1     2m\n"));
	ck_assert_int_eq(print_captured_with("{\"parked\":[]}", human_parked, out, sizeof(out)),
			 EXIT_OK);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(print_captured_with("{\"parked\":[{\"client\":\"uuid:00112233-4455-"
					     "6677-8899-aabbccddeeff\",\"name\":\"web1\","
					     "\"pages\":2,\"pools\":1}]}", human_parked, out,
					     sizeof(out)), EXIT_FAILED);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_print_complete_reply)
{
	char out[4096];

	ck_assert_int_eq(print_captured("{\"pool\":" POOL_JSON ",\"clients\":[" CLIENT_JSON "]}",
					out, sizeof(out)), EXIT_OK);
	/* Issue 30: physical, then logical beside compressed, each named. */
	ck_assert_ptr_nonnull(strstr(out, "pool: size 4.0M  free 4.0M  evictions 7  "
				     "admin flushes 2\n"));
	ck_assert_ptr_nonnull(strstr(out, "stored: DATA 20.0K (ephemeral 12.0K, persistent 8.0K)  "
				     "COMPR 4.9K  TOTAL 20.0K  ratio 4.10\n"));
	ck_assert_ptr_nonnull(strstr(out, "vm1"));
}
END_TEST

/* The bug: status printed "ephemeral 0.0K persistent 0.0K evictions 0"
 * for a pool object that had no such keys. */
START_TEST(test_print_missing_pool_key_is_an_error)
{
	char out[4096];

	ck_assert_int_eq(print_captured("{\"pool\":{\"total_pages\":1024,\"used_pages\":0,"
					"\"free_pages\":1024},\"clients\":[]}", out, sizeof(out)),
			 EXIT_FAILED);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_print_missing_client_key_is_an_error)
{
	char out[4096];

	/* No "pages" in the client. */
	ck_assert_int_eq(print_captured("{\"pool\":" POOL_JSON ",\"clients\":[{\"id\":1,"
					"\"client\":\"vm1\",\"name\":\"vm1\",\"domid\":null,\"weight\":100,"
					"\"frozen\":false,\"compress\":\"lz4\",\"caps\":{"
					"\"ephemeral_max_pages\":null,\"persistent_max_pages\":"
					"null}}]}", out, sizeof(out)), EXIT_FAILED);
	ck_assert_str_eq(out, "");
	/* A mistyped figure is no better than a missing one. */
	ck_assert_int_eq(print_captured("{\"pool\":" POOL_JSON ",\"clients\":\"none\"}", out,
					sizeof(out)), EXIT_FAILED);
}
END_TEST

static Suite *tmemctl_suite(void)
{
	Suite *s = suite_create("tmemctl");
	TCase *tc = tcase_create("print");

	tcase_add_test(tc, test_print_complete_reply);
	tcase_add_test(tc, test_print_missing_pool_key_is_an_error);
	tcase_add_test(tc, test_print_missing_client_key_is_an_error);
	tcase_add_test(tc, test_print_parked);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(tmemctl_suite(), 0);
}
