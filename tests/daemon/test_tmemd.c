/* SPDX-License-Identifier: MIT */
/*
 * Integration: a real tmemd on a temporary runtime dir, driven through
 * libtmem from several processes.  The semantics contract (DESIGN.md)
 * over the socket, shared pools with and without authorisation, a
 * client killed mid-run, and bad requests answered with errors.
 * The hostile-client test is in test_hostile.c.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/test_main.h"
#include "harness.h"
#include "rawclient.h"
#include "tmem.h"

#define SHARED_UUID "6ba7b810-9dad-11d1-80b4-00c04fd430c8"

static const struct tmem_uuid shared_uuid = {
	/* SHARED_UUID's bytes 0..7 and 8..15, little-endian */
	.lo = 0xd111ad9d10b8a76bull, .hi = 0xc830d44fc000b480ull,
};

static struct tmem_oid oid_of(unsigned long long n)
{
	struct tmem_oid o = { .oid = { n, n ^ 0x5555, 7 } };

	return o;
}

static struct tmem_conn *must_connect(struct daemon *d, const char *name)
{
	struct tmem_conn *c = NULL;
	int rc = tmem_connect(d->sock, name, &c);

	ck_assert_msg(rc == 0, "connect %s: %s", name, strerror(-rc));
	return c;
}

static char page[4096] __attribute__((aligned(4096)));
static char back[4096] __attribute__((aligned(4096)));

START_TEST(test_pool_flags)
{
	struct daemon d;
	struct tmem_conn *c;

	daemon_start(&d, NULL, NULL);
	c = must_connect(&d, "flags");
	ck_assert_int_eq(tmem_new_pool(c, tmem_pool_flags(0x100), NULL), -EINVAL);
	ck_assert_int_eq(tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PRECOMPRESSED), NULL), -EINVAL);
	ck_assert_int_lt(tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_SHARED | TMEM_POOL_PERSIST),
				       &shared_uuid), 0);
	ck_assert_int_lt(tmem_new_pool(c, tmem_pool_flags(1u << TMEM_POOL_PAGESIZE_SHIFT), NULL), 0);
	ck_assert_int_ge(tmem_new_pool(c, tmem_pool_flags(0), NULL), 0);
	ck_assert_int_ge(tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL), 0);
	tmem_disconnect(c);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

START_TEST(test_semantics)
{
	struct tmem_oid o = oid_of(1);
	struct daemon d;
	struct tmem_conn *c;
	int32_t eph, per;

	daemon_start(&d, NULL, NULL);
	c = must_connect(&d, "semantics");
	eph = tmem_new_pool(c, tmem_pool_flags(0), NULL);
	per = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	ck_assert_int_ge(eph, 0);
	ck_assert_int_ge(per, 0);
	ck_assert_int_ne(eph, per);

	/* miss, hit, private ephemeral get is exclusive */
	ck_assert_int_eq(tmem_get(c, eph, &o, 0, back), 0);
	test_page(page, 1);
	ck_assert_int_eq(tmem_put(c, eph, &o, 0, page), 1);
	ck_assert_int_eq(tmem_get(c, eph, &o, 0, back), 1);
	ck_assert_mem_eq(page, back, 4096);
	ck_assert_int_eq(tmem_get(c, eph, &o, 0, back), 0);
	/* get-get coherency: still a miss until a new put */
	ck_assert_int_eq(tmem_get(c, eph, &o, 0, back), 0);

	/* persistent get is not exclusive */
	ck_assert_int_eq(tmem_put(c, per, &o, 3, page), 1);
	ck_assert_int_eq(tmem_get(c, per, &o, 3, back), 1);
	ck_assert_int_eq(tmem_get(c, per, &o, 3, back), 1);
	ck_assert_mem_eq(page, back, 4096);

	/* put-put-get: the second put wins */
	test_page(page, 2);
	ck_assert_int_eq(tmem_put(c, per, &o, 3, page), 1);
	memset(back, 0, sizeof(back));
	ck_assert_int_eq(tmem_get(c, per, &o, 3, back), 1);
	ck_assert_mem_eq(page, back, 4096);

	/* flush page: 1 then 0 */
	ck_assert_int_eq(tmem_flush_page(c, per, &o, 3), 1);
	ck_assert_int_eq(tmem_flush_page(c, per, &o, 3), 0);
	ck_assert_int_eq(tmem_get(c, per, &o, 3, back), 0);

	/* flush object removes every page of the object */
	for (unsigned i = 0; i < 10; i++)
		ck_assert_int_eq(tmem_put(c, per, &o, i, page), 1);
	ck_assert_int_eq(tmem_flush_object(c, per, &o), 1);
	ck_assert_int_eq(tmem_flush_object(c, per, &o), 0);
	for (unsigned i = 0; i < 10; i++)
		ck_assert_int_eq(tmem_get(c, per, &o, i, back), 0);

	/* async puts are ordered before a later get */
	for (unsigned i = 0; i < 200; i++) {
		test_page(page, 100 + i);
		ck_assert_int_eq(tmem_put_async(c, per, &o, i, page, NULL), 0);
	}
	for (unsigned i = 0; i < 200; i++) {
		test_page(page, 100 + i);
		ck_assert_int_eq(tmem_get(c, per, &o, i, back), 1);
		ck_assert_mem_eq(page, back, 4096);
	}

	/* destroy: then the pool is gone */
	ck_assert_int_ge(tmem_destroy_pool(c, per), 0);
	ck_assert_int_eq(tmem_get(c, per, &o, 0, back), -ENOENT);
	ck_assert_int_eq(tmem_put(c, per, &o, 0, page), -ENOENT);
	ck_assert_int_eq(tmem_destroy_pool(c, 31), -ENOENT);
	ck_assert_int_eq(tmem_flush_page(c, 40, &o, 0), -ENOENT);
	tmem_disconnect(c);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

/* Another client cannot name, read or flush this client's pool. */
START_TEST(test_private_isolation)
{
	struct tmem_oid o = oid_of(9);
	struct daemon d;
	struct tmem_conn *a, *b;
	int32_t pa;

	daemon_start(&d, NULL, NULL);
	a = must_connect(&d, "alice");
	b = must_connect(&d, "bob");
	ck_assert_int_eq(tmem_connect(d.sock, "alice", &(struct tmem_conn *){ NULL }), -EEXIST);
	pa = tmem_new_pool(a, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	ck_assert_int_ge(pa, 0);
	test_page(page, 5);
	ck_assert_int_eq(tmem_put(a, pa, &o, 0, page), 1);
	ck_assert_int_eq(tmem_get(b, pa, &o, 0, back), -ENOENT);
	ck_assert_int_eq(tmem_flush_page(b, pa, &o, 0), -ENOENT);
	ck_assert_int_eq(tmem_flush_object(b, pa, &o), -ENOENT);
	ck_assert_int_eq(tmem_destroy_pool(b, pa), -ENOENT);
	ck_assert_int_eq(tmem_get(a, pa, &o, 0, back), 1);
	ck_assert_mem_eq(page, back, 4096);
	tmem_disconnect(a);
	tmem_disconnect(b);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

/* Persistent pages survive any amount of ephemeral pressure; a
 * persistent put may be refused but never loses an accepted page. */
START_TEST(test_persistent_never_evicted)
{
	unsigned npages = 8192 + 2048, stored = 0; /* arena is 32M = 8192 pages */
	unsigned char *ok = calloc(npages, 1);
	struct daemon d;
	struct tmem_conn *c;
	int32_t eph, per;

	daemon_start(&d, NULL, "32M");
	c = must_connect(&d, "pressure");
	eph = tmem_new_pool(c, tmem_pool_flags(0), NULL);
	per = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	for (unsigned i = 0; i < npages; i++) {
		struct tmem_oid o = oid_of(i / 64);

		test_page(page, i);
		ck_assert_int_eq(tmem_put(c, eph, &o, i % 64, page), 1);
	}
	for (unsigned i = 0; i < npages; i++) {
		struct tmem_oid o = oid_of(i / 64);
		int rc;

		test_page(page, 1000000 + i);
		rc = tmem_put(c, per, &o, i % 64, page);
		ck_assert(rc == 0 || rc == 1);
		ok[i] = (unsigned char)rc;
		stored += (unsigned)rc;
	}
	ck_assert_uint_gt(stored, 4096);
	ck_assert_uint_lt(stored, npages);
	for (unsigned i = 0; i < npages; i++) {
		struct tmem_oid o = oid_of(i / 64);

		test_page(page, 1000000 + i);
		ck_assert_int_eq(tmem_get(c, per, &o, i % 64, back), ok[i]);
		if (ok[i])
			ck_assert_mem_eq(page, back, 4096);
	}
	tmem_disconnect(c);
	free(ok);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

START_TEST(test_quota_from_config)
{
	struct daemon d;
	struct tmem_conn *c;
	int32_t per;
	unsigned stored = 0;
	json_t *st;

	daemon_start(&d, "[client capped]\npersistent-max = 64K\n", NULL);
	c = must_connect(&d, "capped");
	per = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	for (unsigned i = 0; i < 40; i++) {
		struct tmem_oid o = oid_of(i);
		int rc = tmem_put(c, per, &o, 0, page);

		ck_assert(rc == 0 || rc == 1);
		stored += (unsigned)rc;
	}
	ck_assert_uint_eq(stored, 16);
	st = daemon_stats(&d);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		stats_client(st, "capped"), "caps"), "persistent_max_pages")), 16);
	json_decref(st);
	tmem_disconnect(c);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

static const char shared_conf[] =
	"[client alice]\nshared-auth = " SHARED_UUID "\n"
	"[client bob]\nshared-auth = " SHARED_UUID "\n";

/* Runs in a child: joins the shared pool as name, and either stores
 * pages 0..99 or reads them back.  Exit 0 on success. */
static int shared_child(struct daemon *d, const char *name, int writer,
			int ready_fd, int go_fd)
{
	struct tmem_conn *c;
	int32_t pool;
	char b;

	if (tmem_connect(d->sock, name, &c))
		return 10;
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_SHARED), &shared_uuid);
	if (pool < 0)
		return 11;
	for (unsigned i = 0; writer && i < 100; i++) {
		struct tmem_oid o = oid_of(i);

		test_page(page, 77 + i);
		if (tmem_put(c, pool, &o, 0, page) != 1)
			return 12;
	}
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &b, 1) != 1)
		return 13;
	for (unsigned i = 0; !writer && i < 100; i++) {
		struct tmem_oid o = oid_of(i);

		test_page(page, 77 + i);
		/* shared gets are not exclusive: read twice */
		if (tmem_get(c, pool, &o, 0, back) != 1 || memcmp(page, back, 4096) ||
		    tmem_get(c, pool, &o, 0, back) != 1)
			return 14;
	}
	tmem_disconnect(c);
	return 0;
}

/* alice writes and leaves; bob, who joined before she left, still
 * reads her pages: the shared pool outlives one sharer's disconnect. */
START_TEST(test_shared_pool_auth)
{
	int ready[2], go_a[2], go_b[2], st;
	struct daemon d;
	struct tmem_conn *m;
	pid_t w, r;
	char b;

	daemon_start(&d, shared_conf, NULL);
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(go_a), 0);
	ck_assert_int_eq(pipe(go_b), 0);
	w = fork();
	if (w == 0)
		_exit(shared_child(&d, "alice", 1, ready[1], go_a[0]));
	ck_assert_int_eq(read(ready[0], &b, 1), 1);
	r = fork();
	if (r == 0)
		_exit(shared_child(&d, "bob", 0, ready[1], go_b[0]));
	ck_assert_int_eq(read(ready[0], &b, 1), 1);
	/* Not authorised: refused. */
	m = must_connect(&d, "mallory");
	ck_assert_int_eq(tmem_new_pool(m, tmem_pool_flags(TMEM_POOL_SHARED), &shared_uuid), -EPERM);
	tmem_disconnect(m);
	ck_assert_int_eq(write(go_a[1], "g", 1), 1);
	ck_assert_int_eq(waitpid(w, &st, 0), w);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer: %d", st);
	ck_assert_int_eq(write(go_b[1], "g", 1), 1);
	ck_assert_int_eq(waitpid(r, &st, 0), r);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "reader: %d", st);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

static long long persistent_pages(json_t *st)
{
	return json_integer_value(json_object_get(json_object_get(st, "pool"), "persistent_pages"));
}

START_TEST(test_sigkill_frees_pages)
{
	int ready[2], st;
	struct daemon d;
	json_t *stats, *v;
	pid_t child;
	char b;

	daemon_start(&d, NULL, NULL);
	ck_assert_int_eq(pipe(ready), 0);
	child = fork();
	if (child == 0) {
		struct tmem_conn *c;
		int32_t pool;

		if (tmem_connect(d.sock, "victim", &c))
			_exit(1);
		pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
		for (unsigned i = 0; i < 1000; i++) {
			struct tmem_oid o = oid_of(i);

			test_page(page, i);
			if (tmem_put(c, pool, &o, 0, page) != 1)
				_exit(2);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		for (unsigned i = 0;; i++) { /* keep working until killed */
			struct tmem_oid o = oid_of(i % 1000);

			tmem_get(c, pool, &o, 0, back);
		}
	}
	ck_assert_int_eq(read(ready[0], &b, 1), 1);
	stats = daemon_stats(&d);
	v = stats_client(stats, "victim");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(v, "pages"), "persistent")), 1000);
	ck_assert_int_eq(persistent_pages(stats), 1000);
	json_decref(stats);
	kill(child, SIGKILL);
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	for (int i = 0; i < 200; i++) {
		stats = daemon_stats(&d);
		if (!stats_client(stats, "victim"))
			break;
		json_decref(stats);
		stats = NULL;
		usleep(10000);
	}
	ck_assert_ptr_nonnull(stats);
	ck_assert_ptr_null(stats_client(stats, "victim"));
	ck_assert_int_eq(persistent_pages(stats), 0);
	json_decref(stats);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

/* Requests libtmem never sends get error responses, not a disconnect. */
START_TEST(test_bad_requests_answered)
{
	struct tmem_req r;
	struct tmem_rsp rsp;
	struct daemon d;
	struct rawc c;
	int32_t pool;

	daemon_start(&d, NULL, NULL);
	ck_assert_int_eq(rawc_connect(&c, d.sock, "raw"), 0);
	rawc_req(&r, TMEM_OP_NEW_POOL, 0);
	r.flags = tmem_pool_flags(TMEM_POOL_PERSIST);
	ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
	pool = rsp.ret;
	ck_assert_int_ge(pool, 0);

	r.id = 42;
	rawc_req(&r, 99, pool);
	r.id = 42;
	ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
	ck_assert_int_eq(rsp.ret, -ENOSYS);
	ck_assert_uint_eq(rsp.id, 42);

	rawc_req(&r, TMEM_OP_PUT_PAGE, pool);
	r.slot = 4; /* 4 slots: 0..3 */
	ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
	ck_assert_int_eq(rsp.ret, -ERANGE);

	rawc_req(&r, TMEM_OP_GET_PAGE, pool);
	r.slot = 0;
	r.rsvd[1] = 1;
	ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
	ck_assert_int_eq(rsp.ret, -EINVAL);

	rawc_req(&r, TMEM_OP_FLUSH_PAGE, pool);
	r.flags = 1;
	ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
	ck_assert_int_eq(rsp.ret, -EINVAL);

	rawc_req(&r, TMEM_OP_GET_PAGE, pool + 1);
	r.slot = 0;
	ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
	ck_assert_int_eq(rsp.ret, -ENOENT);

	rawc_req(&r, TMEM_OP_GET_PAGE, -5);
	r.slot = 0;
	ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
	ck_assert_int_eq(rsp.ret, -ENOENT);

	/* still connected and serving */
	rawc_req(&r, TMEM_OP_PUT_PAGE, pool);
	r.slot = 1;
	ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
	ck_assert_int_eq(rsp.ret, 1);
	ck_assert_uint_eq(rsp.slot, 1);
	tmem_raw_disconnect(&c.ring);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

static Suite *tmemd_suite(void)
{
	Suite *s = suite_create("tmemd");
	TCase *tc = tcase_create("semantics");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_pool_flags);
	tcase_add_test(tc, test_semantics);
	tcase_add_test(tc, test_private_isolation);
	tcase_add_test(tc, test_persistent_never_evicted);
	tcase_add_test(tc, test_quota_from_config);
	tcase_add_test(tc, test_shared_pool_auth);
	tcase_add_test(tc, test_sigkill_frees_pages);
	tcase_add_test(tc, test_bad_requests_answered);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(tmemd_suite(), 0);
}
