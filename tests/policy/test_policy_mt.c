/* SPDX-License-Identifier: MIT */
/*
 * policy/ under concurrency (also run under ThreadSanitizer): flooders
 * evicting each other, a persistent writer, and an administrator
 * changing weights, caps and the arena size, freezing clients and adding
 * and removing clients that evictors may be working on.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/test_main.h"
#include "common/thread_check.h"
#include "policy_fixture.h"

#define MT_PAGES 512u

struct mt {
	struct fx f;
	struct tmem_pclient *pers, *flood[2];
	int32_t ppool, fpool[2];
	uint64_t rounds;
	atomic_bool stop;
	/* Written by the persistent writer, read after join. */
	uint64_t pers_stored;
	int errors;
	/* The administrator thread's failed checks, asserted after join. */
	struct tmem_thread_fail fail;
};

struct flooder {
	struct mt *mt;
	int i;
	int errors;
};

static void *flood_thread(void *arg)
{
	struct flooder *fl = arg;
	struct mt *mt = fl->mt;

	for (uint64_t n = 0; n < mt->rounds; n++) {
		int rc = fx_put(mt->flood[fl->i], mt->fpool[fl->i], 10 + fl->i, n);

		if (rc < 0)
			fl->errors++;
	}
	return NULL;
}

/* Persistent pages, each kept until the end, where every one must read back. */
static void *pers_thread(void *arg)
{
	struct mt *mt = arg;
	uint64_t n;

	for (n = 0; n < MT_PAGES / 4; n++) {
		int rc = fx_put(mt->pers, mt->ppool, 1, n);

		if (rc < 0)
			mt->errors++;
		if (rc != 1)
			break;
	}
	mt->pers_stored = n;
	return NULL;
}

/* A client added, written and removed; false when a step failed (noted). */
static bool admin_churn_client(struct mt *mt, int round)
{
	struct tmem_pclient *pc;
	char name[32];
	int32_t pool;
	int rc;

	snprintf(name, sizeof(name), "churn%d", round);
	rc = tmem_policy_client_add(mt->f.policy, name, NULL, &pc);
	if (!tmem_thread_check(&mt->fail, rc == 0, "client_add(%s): %d", name, rc))
		return false;
	/* fx_pool() asserts: the same call, checked here. */
	pool = store_new_pool(tmem_pclient_store_client(pc), tmem_pool_flags(0), NULL);
	if (tmem_thread_check(&mt->fail, pool >= 0, "new_pool(%s): %d", name, pool))
		for (uint64_t n = 0; n < 32; n++) {
			rc = fx_put(pc, pool, 50, n);
			if (!tmem_thread_check(&mt->fail, rc >= 0, "put(%s, %llu): %d", name,
					       (unsigned long long)n, rc))
				break;
		}
	/* Evictors may hold it right now: remove waits for them. */
	tmem_policy_client_remove(pc);
	return pool >= 0 && rc >= 0;
}

/* Checks with tmem_thread_check(), not ck_assert (not the test's thread). */
static void *admin_thread(void *arg)
{
	struct mt *mt = arg;
	struct tmem_client_settings s;
	int rc;

	for (int round = 0; !atomic_load(&mt->stop); round++) {
		tmem_policy_client_get(mt->flood[round & 1], &s);
		s.weight = 50 + (uint32_t)(round % 7) * 50;
		s.ephemeral_max = round % 3 ? TMEM_NO_CAP : MT_PAGES / 4;
		rc = tmem_policy_client_set(mt->flood[round & 1], &s);
		if (!tmem_thread_check(&mt->fail, rc == 0, "client_set: %d", rc))
			break;
		rc = tmem_policy_freeze(mt->flood[round & 1], round % 5 == 0);
		if (!tmem_thread_check(&mt->fail, rc == 0, "freeze: %d", rc))
			break;
		if (!admin_churn_client(mt, round))
			break;
		tmem_policy_refill_reserve(mt->f.policy);
		/* Above the persistent pages' maximum, so never refused for them. */
		rc = tmem_policy_resize(mt->f.policy, round & 1 ? MT_PAGES / 2 : MT_PAGES);
		if (!tmem_thread_check(&mt->fail, rc == 0 || rc == -EBUSY, "resize: %d", rc))
			break;
	}
	rc = tmem_policy_freeze(mt->flood[0], false);
	tmem_thread_check(&mt->fail, rc == 0, "thaw flood0: %d", rc);
	rc = tmem_policy_freeze(mt->flood[1], false);
	tmem_thread_check(&mt->fail, rc == 0, "thaw flood1: %d", rc);
	return NULL;
}

START_TEST(test_concurrent_flood)
{
	struct tmem_op_counters ops;
	struct flooder fl[2];
	pthread_t tf[2], tp, ta;
	struct mt mt = { 0 };
	uint64_t refused = 0;

	fx_setup(&mt.f, MT_PAGES, NULL);
	mt.rounds = fx_quick() ? 2 * MT_PAGES : 32 * MT_PAGES;
	mt.pers = fx_client(&mt.f, "pers", 100);
	mt.flood[0] = fx_client(&mt.f, "flood0", 100);
	mt.flood[1] = fx_client(&mt.f, "flood1", 200);
	mt.ppool = fx_pool(mt.pers, true);
	for (int i = 0; i < 2; i++)
		mt.fpool[i] = fx_pool(mt.flood[i], false);

	ck_assert_int_eq(pthread_create(&ta, NULL, admin_thread, &mt), 0);
	ck_assert_int_eq(pthread_create(&tp, NULL, pers_thread, &mt), 0);
	for (int i = 0; i < 2; i++) {
		fl[i] = (struct flooder){ .mt = &mt, .i = i };
		ck_assert_int_eq(pthread_create(&tf[i], NULL, flood_thread, &fl[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(tf[i], NULL), 0);
	ck_assert_int_eq(pthread_join(tp, NULL), 0);
	atomic_store(&mt.stop, true);
	ck_assert_int_eq(pthread_join(ta, NULL), 0);
	/* What the administrator thread found wrong. */
	tmem_thread_check_assert(&mt.fail);

	ck_assert_int_eq(fl[0].errors + fl[1].errors + mt.errors, 0);
	/* The persistent writer was never refused: ephemeral pages could always go. */
	ck_assert_uint_eq(mt.pers_stored, MT_PAGES / 4);
	ck_assert_uint_eq(fx_persistent(mt.pers), MT_PAGES / 4);
	for (uint64_t n = 0; n < mt.pers_stored; n++)
		ck_assert_int_eq(fx_check(mt.pers, mt.ppool, 1, n), 1);
	/* Flooders' refusals are only what freezing caused. */
	for (int i = 0; i < 2; i++) {
		fx_ops(mt.flood[i], &ops);
		refused = ops.failed_puts[TMEM_PUT_FAIL_QUOTA] +
			  ops.failed_puts[TMEM_PUT_FAIL_FULL];
		ck_assert_uint_eq(refused, 0);
	}
	fx_teardown(&mt.f);
}
END_TEST

static Suite *policy_mt_suite(void)
{
	Suite *s = suite_create("policy-mt");
	TCase *tc = tcase_create("concurrent");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_concurrent_flood);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(policy_mt_suite(), 0);
}
