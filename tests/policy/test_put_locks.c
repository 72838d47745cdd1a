/* SPDX-License-Identifier: MIT */
/*
 * policy/ + pools/: how many times one put takes its pool's lock.
 * Linked with -Wl,--wrap=pthread_mutex_lock,--wrap=pthread_mutex_trylock
 * (tests/policy/module.mk), so that every lock the store and policy take
 * is seen here; the pool's is told by its address.  The put hands the
 * store both caps, and the store picks one and counts its own refusals,
 * so a put takes the pool lock once: stored, replaced or refused.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>

#include "common/test_main.h"
#include "policy_fixture.h"
#include "internal.h"

int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __real_pthread_mutex_trylock(pthread_mutex_t *m);
int __wrap_pthread_mutex_lock(pthread_mutex_t *m);
int __wrap_pthread_mutex_trylock(pthread_mutex_t *m);

static pthread_mutex_t *watched;         /* the pool lock counted */
static _Atomic unsigned int pool_locks;  /* times it was taken */
static _Atomic unsigned int all_locks;   /* any mutex, while watching */

static void seen(const pthread_mutex_t *m)
{
	if (!watched)
		return;
	atomic_fetch_add(&all_locks, 1);
	if (m == watched)
		atomic_fetch_add(&pool_locks, 1);
}

int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
	seen(m);
	return __real_pthread_mutex_lock(m);
}

int __wrap_pthread_mutex_trylock(pthread_mutex_t *m)
{
	seen(m);
	return __real_pthread_mutex_trylock(m);
}

static void watch(struct tmem_pclient *pc, int32_t pool)
{
	struct tmem_client *c = tmem_pclient_store_client(pc);
	uint64_t ref = atomic_load(&c->slots[pool].ref);

	ck_assert_uint_ne(ref, 0);
	watched = &c->store->pool_tab[(uint32_t)ref - 1]->lock;
	atomic_store(&pool_locks, 0);
	atomic_store(&all_locks, 0);
}

/* The locks one fx_put takes: pool lock count, the result in *rc. */
static unsigned int put_locks(struct tmem_pclient *pc, int32_t pool, uint64_t n, int *rc)
{
	watch(pc, pool);
	*rc = fx_put(pc, pool, 1, n);
	watched = NULL;
	return atomic_load(&pool_locks);
}

/* Caps that differ by kind: the case in which policy/ used to ask the
 * store for the pool's kind (a second pool lock) before the put. */
START_TEST(test_put_one_pool_lock)
{
	struct fx f;
	struct tmem_pclient *pc;
	int32_t eph, pers;
	int rc;

	fx_setup(&f, 256, NULL);
	pc = fx_client(&f, "a", 100);
	eph = fx_pool(pc, false);
	pers = fx_pool(pc, true);
	fx_set_caps(pc, 100, 50);
	/* A new page, ephemeral and persistent. */
	ck_assert_uint_eq(put_locks(pc, eph, 0, &rc), 1);
	ck_assert_int_eq(rc, 1);
	ck_assert_uint_eq(put_locks(pc, pers, 0, &rc), 1);
	ck_assert_int_eq(rc, 1);
	/* Over a page already there. */
	ck_assert_uint_eq(put_locks(pc, eph, 0, &rc), 1);
	ck_assert_int_eq(rc, 1);
	/* Equal caps: the same. */
	fx_set_caps(pc, 100, 100);
	ck_assert_uint_eq(put_locks(pc, eph, 1, &rc), 1);
	ck_assert_int_eq(rc, 1);
	fx_teardown(&f);
}
END_TEST

/* A refusal no eviction can help (persistent over its cap) is counted
 * by the store under the put's one lock. */
START_TEST(test_refused_put_one_pool_lock)
{
	struct tmem_op_counters ops;
	struct fx f;
	struct tmem_pclient *pc;
	int32_t pers;
	int rc;

	fx_setup(&f, 256, NULL);
	pc = fx_client(&f, "a", 100);
	pers = fx_pool(pc, true);
	fx_set_caps(pc, TMEM_NO_CAP, 1);
	ck_assert_uint_eq(put_locks(pc, pers, 0, &rc), 1);
	ck_assert_int_eq(rc, 1);
	ck_assert_uint_eq(put_locks(pc, pers, 1, &rc), 1);
	ck_assert_int_eq(rc, 0);
	fx_pool_ops(pc, pers, &ops);
	ck_assert_uint_eq(ops.puts, 2);
	ck_assert_uint_eq(ops.succ_puts, 1);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_QUOTA], 1);
	fx_teardown(&f);
}
END_TEST

/* An ephemeral put over its cap evicts the client's own oldest page and
 * stores: the lock count is the two attempts' plus the eviction's. */
START_TEST(test_evicting_put_counts_once)
{
	struct tmem_op_counters ops;
	struct fx f;
	struct tmem_pclient *pc;
	int32_t eph;
	int rc;

	fx_setup(&f, 256, NULL);
	pc = fx_client(&f, "a", 100);
	eph = fx_pool(pc, false);
	fx_set_caps(pc, 2, TMEM_NO_CAP);
	ck_assert_int_eq(fx_put(pc, eph, 1, 0), 1);
	ck_assert_int_eq(fx_put(pc, eph, 1, 1), 1);
	ck_assert_uint_le(put_locks(pc, eph, 2, &rc), 3);
	ck_assert_int_eq(rc, 1);
	/* Cap 0: refused at once, counted once. */
	fx_set_caps(pc, 0, TMEM_NO_CAP);
	ck_assert_uint_eq(put_locks(pc, eph, 3, &rc), 1);
	ck_assert_int_eq(rc, 0);
	fx_pool_ops(pc, eph, &ops);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_QUOTA], 1);
	ck_assert_uint_eq(ops.succ_puts, 3);
	fx_teardown(&f);
}
END_TEST

static Suite *put_locks_suite(void)
{
	Suite *s = suite_create("put_locks");
	TCase *tc = tcase_create("put_locks");

	tcase_add_test(tc, test_put_one_pool_lock);
	tcase_add_test(tc, test_refused_put_one_pool_lock);
	tcase_add_test(tc, test_evicting_put_counts_once);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(put_locks_suite(), 0);
}
