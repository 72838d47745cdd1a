/* SPDX-License-Identifier: MIT */
/*
 * libtmem: argument checks without a daemon, then against a real tmemd:
 * several threads sharing one connection (also run under TSan, with a
 * TSan build of tmemd), pipelined gets, the client id against tmemd's
 * stats, and a daemon that dies under a client (calls fail with -EPIPE
 * instead of hanging).
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/test_main.h"
#include "harness.h"
#include "tmem.h"
#include "tmem_raw.h"

static unsigned rounds(void)
{
	return getenv("TMEM_TEST_QUICK") ? 200 : 2000;
}

START_TEST(test_args)
{
	struct tmem_conn *c = NULL;
	struct tmem_raw_ring raw;
	char page[4096];
	struct tmem_oid o = { { 1, 2, 3 } };

	ck_assert_int_eq(tmem_connect("/nonexistent/guest.sock", "x", &c), -ENOENT);
	ck_assert_int_eq(tmem_connect("/nonexistent/guest.sock", NULL, &c), -EINVAL);
	ck_assert_int_eq(tmem_connect_geometry("/nonexistent/guest.sock", "x", 3, 4, &c), -EINVAL);
	ck_assert_int_eq(tmem_connect_geometry("/nonexistent/guest.sock", "x", 8, 0, &c), -EINVAL);
	ck_assert_int_eq(tmem_raw_connect("/nonexistent/guest.sock", "x", 8, 4, &raw), -ENOENT);
	ck_assert_int_eq(raw.sock_fd, -1);
	ck_assert_ptr_null(raw.region);
	tmem_raw_disconnect(&raw); /* accepts a failed connect */
	ck_assert_int_eq(tmem_put(NULL, 0, &o, 0, page), -EINVAL);
	ck_assert_int_eq(tmem_get(NULL, 0, &o, 0, page), -EINVAL);
	ck_assert_int_eq(tmem_wait_all(NULL), -EINVAL);
	tmem_disconnect(NULL);
}
END_TEST

struct worker {
	struct tmem_conn *c;
	unsigned id;
	int errors;
};

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	char *page = aligned_alloc(4096, 4096), *back = aligned_alloc(4096, 4096);
	int32_t pool = tmem_new_pool(w->c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	int res[16];

	if (pool < 0) {
		w->errors++;
		return NULL;
	}
	for (unsigned i = 0; i < rounds(); i++) {
		struct tmem_oid o = { { w->id, i % 64, 0 } };

		test_page(page, w->id * 1000000ull + i);
		if (i % 4 == 0) {
			w->errors += tmem_put_async(w->c, pool, &o, 0, page, &res[i % 16]) != 0;
			/* the async put is ordered before this get */
			w->errors += tmem_get(w->c, pool, &o, 0, back) != 1;
			w->errors += res[i % 16] != 1;
		} else {
			w->errors += tmem_put(w->c, pool, &o, 0, page) != 1;
			w->errors += tmem_get(w->c, pool, &o, 0, back) != 1;
		}
		w->errors += memcmp(page, back, 4096) != 0;
	}
	w->errors += tmem_destroy_pool(w->c, pool) < 0;
	free(page);
	free(back);
	return NULL;
}

START_TEST(test_threads_share_a_connection)
{
	struct worker w[4];
	pthread_t t[4];
	struct daemon d;
	struct tmem_conn *c;

	daemon_start(&d, NULL, NULL);
	ck_assert_int_eq(tmem_connect(d.sock, "threads", &c), 0);
	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct worker){ .c = c, .id = i };
		pthread_create(&t[i], NULL, thread_main, &w[i]);
	}
	for (unsigned i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(w[i].errors, 0);
	}
	tmem_disconnect(c);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

START_TEST(test_pipelined_gets)
{
	enum { N = 256 };
	static char pages[N][4096], backs[N][4096];
	int res[N];
	struct daemon d;
	struct tmem_conn *c;
	int32_t pool;

	daemon_start(&d, NULL, NULL);
	ck_assert_int_eq(tmem_connect_geometry(d.sock, "pipe", 16, 8, &c), 0);
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	for (int i = 0; i < N; i++) {
		struct tmem_oid o = { { 5, (uint64_t)i, 0 } };

		test_page(pages[i], (unsigned long long)i);
		ck_assert_int_eq(tmem_put_async(c, pool, &o, 1, pages[i], NULL), 0);
	}
	for (int i = 0; i < N; i++) {
		struct tmem_oid o = { { 5, (uint64_t)(i % (N / 2) + (i >= N / 2 ? N : 0)), 0 } };

		res[i] = -99;
		ck_assert_int_eq(tmem_get_async(c, pool, &o, 1, backs[i], &res[i]), 0);
	}
	ck_assert_int_eq(tmem_wait_all(c), 0);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(res[i], i < N / 2 ? 1 : 0);
		if (i < N / 2)
			ck_assert_mem_eq(pages[i], backs[i], 4096);
	}
	tmem_disconnect(c);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

/* tmem_conn_client_id() is the id tmemd's stats give the client. */
START_TEST(test_client_id)
{
	const char *names[] = { "id-a", "id-b" };
	struct tmem_conn *c[2];
	struct daemon d;
	json_t *stats;

	daemon_start(&d, NULL, NULL);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(tmem_connect(d.sock, names[i], &c[i]), 0);
	stats = daemon_stats(&d);
	ck_assert_ptr_nonnull(stats);
	for (int i = 0; i < 2; i++) {
		json_t *cl = stats_client(stats, names[i]);

		ck_assert_ptr_nonnull(cl);
		ck_assert(json_is_integer(json_object_get(cl, "id")));
		ck_assert_int_eq(json_integer_value(json_object_get(cl, "id")),
				 tmem_conn_client_id(c[i]));
	}
	ck_assert_uint_ne(tmem_conn_client_id(c[0]), tmem_conn_client_id(c[1]));
	json_decref(stats);
	for (int i = 0; i < 2; i++)
		tmem_disconnect(c[i]);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

START_TEST(test_daemon_death)
{
	char page[4096] = { 1 };
	struct tmem_oid o = { { 1 } };
	struct daemon d;
	struct tmem_conn *c;
	int32_t pool;
	int st;

	daemon_start(&d, NULL, NULL);
	/* A short reconnect window: no tmemd comes back here. */
	setenv("TMEM_RECONNECT_MS", "200", 1);
	ck_assert_int_eq(tmem_connect(d.sock, "orphan", &c), 0);
	unsetenv("TMEM_RECONNECT_MS");
	pool = tmem_new_pool(c, tmem_pool_flags(0), NULL);
	ck_assert_int_ge(pool, 0);
	kill(d.pid, SIGKILL);
	waitpid(d.pid, &st, 0);
	d.pid = 0;
	ck_assert_int_eq(tmem_put(c, pool, &o, 0, page), -EPIPE);
	ck_assert_int_eq(tmem_get(c, pool, &o, 0, page), -EPIPE);
	tmem_disconnect(c);
	daemon_remove_dir(&d);
}
END_TEST

static Suite *libtmem_suite(void)
{
	Suite *s = suite_create("libtmem");
	TCase *args = tcase_create("args"), *live = tcase_create("live");

	tcase_add_test(args, test_args);
	suite_add_tcase(s, args);
	tcase_set_timeout(live, 120);
	tcase_add_test(live, test_threads_share_a_connection);
	tcase_add_test(live, test_pipelined_gets);
	tcase_add_test(live, test_client_id);
	tcase_add_test(live, test_daemon_death);
	suite_add_tcase(s, live);
	return s;
}

int main(void)
{
	return tmem_test_main(libtmem_suite(), 0);
}
