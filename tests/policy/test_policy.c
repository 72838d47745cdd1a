/* SPDX-License-Identifier: MIT */
/* policy/: settings, weighted eviction, admission, quotas, freeze, resize. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/test_main.h"
#include "policy_fixture.h"

#define POOL_PAGES 1024u

static uint64_t pool_pages(void)
{
	return fx_quick() ? 256 : POOL_PAGES;
}

/* Within +-10% of the wanted ratio a:b. */
static void assert_ratio(uint64_t a, uint64_t b, double want)
{
	double r;

	ck_assert_uint_gt(b, 0);
	r = (double)a / (double)b;
	ck_assert_msg(r >= want * 0.9 && r <= want * 1.1,
		      "residency %llu:%llu = %.3f, want %.3f +-10%%",
		      (unsigned long long)a, (unsigned long long)b, r, want);
}

/* ---- settings --------------------------------------------------------- */

START_TEST(test_settings_validate)
{
	struct tmem_policy_config cfg;
	struct tmem_client_settings s;
	struct tmem_pclient *pc, *bad = NULL;
	struct tmem_policy *p2 = NULL;
	struct fx f;

	tmem_policy_config_defaults(&cfg);
	ck_assert_uint_eq(cfg.defaults.weight, TMEM_DEFAULT_WEIGHT);
	ck_assert_uint_eq(cfg.defaults.ephemeral_max, TMEM_NO_CAP);
	ck_assert_uint_eq(cfg.defaults.persistent_max, TMEM_NO_CAP);
	ck_assert(!cfg.defaults.frozen);
	ck_assert_int_eq(cfg.defaults.compress.algo, TMEM_COMPRESS_LZ4); /* as zswap */
	fx_setup(&f, 64, NULL);

	cfg.defaults.weight = 0;
	ck_assert_int_eq(tmem_policy_create(f.store, &cfg, &p2), -EINVAL);
	ck_assert_ptr_null(p2);
	ck_assert_int_eq(tmem_policy_client_add(f.policy, "w0", &cfg.defaults, &bad), -EINVAL);
	ck_assert_ptr_null(bad);
	ck_assert_int_eq(tmem_policy_create(NULL, NULL, &p2), -EINVAL);

	pc = fx_client(&f, "a", TMEM_MAX_WEIGHT);
	tmem_policy_client_get(pc, &s);
	ck_assert_uint_eq(s.weight, TMEM_MAX_WEIGHT);
	s.weight = TMEM_MAX_WEIGHT + 1;
	ck_assert_int_eq(tmem_policy_client_set(pc, &s), -EINVAL);
	s.weight = 0;
	ck_assert_int_eq(tmem_policy_client_set(pc, &s), -EINVAL);
	ck_assert_int_eq(tmem_policy_client_set(pc, NULL), -EINVAL);
	ck_assert_int_eq(tmem_policy_client_set(NULL, &s), -EINVAL);
	ck_assert_int_eq(tmem_policy_set_defaults(f.policy, &s), -EINVAL);
	tmem_policy_client_get(pc, &s);
	ck_assert_uint_eq(s.weight, TMEM_MAX_WEIGHT); /* unchanged */

	/* A bad compression level is refused like a bad weight. */
	s.compress = (struct tmem_compress){ TMEM_COMPRESS_ZSTD, 0 };
	ck_assert_int_eq(tmem_policy_client_set(pc, &s), -EINVAL);
	s.compress = (struct tmem_compress){ TMEM_COMPRESS_LZ4, 3 };
	ck_assert_int_eq(tmem_policy_client_set(pc, &s), -EINVAL);

	/* Every field round-trips, and compress reaches the store client. */
	s.weight = 1;
	s.ephemeral_max = 7;
	s.persistent_max = 9;
	s.compress = (struct tmem_compress){ TMEM_COMPRESS_ZSTD, 7 };
	s.frozen = true;
	ck_assert_int_eq(tmem_policy_client_set(pc, &s), 0);
	tmem_policy_client_get(pc, &s);
	ck_assert_uint_eq(s.weight, 1);
	ck_assert_uint_eq(s.ephemeral_max, 7);
	ck_assert_uint_eq(s.persistent_max, 9);
	ck_assert(s.compress.algo == TMEM_COMPRESS_ZSTD && s.compress.level == 7 && s.frozen);
	{
		struct tmem_compress got;

		store_client_get_compress(tmem_pclient_store_client(pc), &got);
		ck_assert(got.algo == TMEM_COMPRESS_ZSTD && got.level == 7);
	}

	ck_assert_int_eq(tmem_policy_client_add(f.policy, NULL, NULL, &bad), -EINVAL);
	ck_assert_int_eq(tmem_policy_client_add(NULL, "x", NULL, &bad), -EINVAL);
	ck_assert_int_eq(tmem_policy_freeze(NULL, true), -EINVAL);
	ck_assert_ptr_null(tmem_pclient_store_client(NULL));
	tmem_policy_client_remove(NULL);
	tmem_policy_destroy(NULL);
	tmem_policy_refill_reserve(NULL);
	ck_assert_int_eq(tmem_policy_resize(NULL, 8), -EINVAL);
	ck_assert_int_eq(tmem_policy_resize(f.policy, 0), -EINVAL);
	tmem_policy_config_defaults(NULL);
	fx_teardown(&f);
}
END_TEST

START_TEST(test_defaults_runtime)
{
	struct tmem_policy_config cfg;
	struct tmem_client_settings s;
	struct tmem_pclient *a, *b;
	struct fx f;

	tmem_policy_config_defaults(&cfg);
	cfg.defaults.weight = 300;
	cfg.defaults.ephemeral_max = 10;
	fx_setup(&f, 64, &cfg);
	ck_assert_int_eq(tmem_policy_client_add(f.policy, "a", NULL, &a), 0);
	tmem_policy_client_get(a, &s);
	ck_assert_uint_eq(s.weight, 300);
	ck_assert_uint_eq(s.ephemeral_max, 10);
	ck_assert_uint_eq(s.persistent_max, TMEM_NO_CAP);

	s.weight = 50;
	s.persistent_max = 5;
	ck_assert_int_eq(tmem_policy_set_defaults(f.policy, &s), 0);
	ck_assert_int_eq(tmem_policy_client_add(f.policy, "b", NULL, &b), 0);
	tmem_policy_client_get(b, &s);
	ck_assert_uint_eq(s.weight, 50);
	ck_assert_uint_eq(s.persistent_max, 5);
	/* Existing clients keep their own settings. */
	tmem_policy_client_get(a, &s);
	ck_assert_uint_eq(s.weight, 300);
	ck_assert_uint_eq(s.persistent_max, TMEM_NO_CAP);
	/* A duplicate name is the store's call; whatever it says, no leak. */
	tmem_policy_client_remove(b);
	fx_teardown(&f); /* also removes a */
}
END_TEST

/* ---- weighted eviction ------------------------------------------------ */

/* Each client in turn puts a new distinct ephemeral page, many times over. */
static void flood_round_robin(struct tmem_pclient **pcs, const int32_t *pools,
			      unsigned int n, uint64_t rounds)
{
	for (uint64_t r = 0; r < rounds; r++)
		for (unsigned int i = 0; i < n; i++)
			ck_assert_int_eq(fx_put(pcs[i], pools[i], i + 1, r), 1);
}

START_TEST(test_weights_two)
{
	struct tmem_pclient *pcs[2];
	int32_t pools[2];
	struct fx f;
	uint64_t p = pool_pages();

	fx_setup(&f, p, NULL);
	pcs[0] = fx_client(&f, "heavy", 200);
	pcs[1] = fx_client(&f, "light", 100);
	for (int i = 0; i < 2; i++)
		pools[i] = fx_pool(pcs[i], false);
	flood_round_robin(pcs, pools, 2, 4 * p);
	assert_ratio(fx_ephemeral(pcs[0]), fx_ephemeral(pcs[1]), 2.0);
	/* The pool stayed full: everything not in reserve is resident. */
	ck_assert_uint_ge(fx_ephemeral(pcs[0]) + fx_ephemeral(pcs[1]),
			  p - tmem_policy_low_water(f.policy) - 16);
	fx_teardown(&f);
}
END_TEST

/*
 * Clients recovered after a restart (or left by a stopping tmemd) are
 * detached until they come back: their ephemeral pages must still give
 * way, first, or a full arena of them refuses every other client's puts
 * until the grace period ends.
 */
START_TEST(test_detached_ephemeral_pages_give_way)
{
	struct tmem_pclient *gone, *here;
	struct tmem_store_info si;
	int32_t gpool, hpool, eph;
	struct fx f;
	uint64_t p = pool_pages();

	fx_setup(&f, p, NULL);
	gone = fx_client(&f, "gone", 100);
	gpool = fx_pool(gone, false);
	for (uint64_t n = 0; n < 2 * p; n++)
		ck_assert_int_eq(fx_put(gone, gpool, 1, n), 1);
	eph = (int32_t)fx_ephemeral(gone);
	ck_assert_int_ge(eph, (int32_t)(p - tmem_policy_low_water(f.policy) - 16));
	tmem_policy_client_detach(gone);
	here = fx_client(&f, "here", 100);
	hpool = fx_pool(here, true);
	for (uint64_t n = 0; n < p / 2; n++)
		ck_assert_msg(fx_put(here, hpool, 2, n) == 1, "persistent put %llu refused",
			      (unsigned long long)n);
	store_info(f.store, &si);
	ck_assert_uint_eq(si.nr_detached, 1);
	ck_assert_uint_le(si.arena.ephemeral, (uint64_t)eph - p / 2);
	fx_teardown(&f);
}
END_TEST

START_TEST(test_weights_three)
{
	struct tmem_pclient *pcs[3];
	int32_t pools[3];
	struct fx f;
	uint64_t p = pool_pages();

	fx_setup(&f, p, NULL);
	pcs[0] = fx_client(&f, "one", 100);
	pcs[1] = fx_client(&f, "uno", 100);
	pcs[2] = fx_client(&f, "two", 200);
	for (int i = 0; i < 3; i++)
		pools[i] = fx_pool(pcs[i], false);
	flood_round_robin(pcs, pools, 3, 4 * p);
	assert_ratio(fx_ephemeral(pcs[0]), fx_ephemeral(pcs[1]), 1.0);
	assert_ratio(fx_ephemeral(pcs[2]), fx_ephemeral(pcs[0]), 2.0);
	assert_ratio(fx_ephemeral(pcs[2]), fx_ephemeral(pcs[1]), 2.0);
	fx_teardown(&f);
}
END_TEST

/* The weights are followed when they change under a full pool. */
START_TEST(test_weights_change_at_runtime)
{
	struct tmem_client_settings s;
	struct tmem_pclient *pcs[2];
	int32_t pools[2];
	struct fx f;
	uint64_t p = pool_pages();

	fx_setup(&f, p, NULL);
	pcs[0] = fx_client(&f, "a", 100);
	pcs[1] = fx_client(&f, "b", 100);
	for (int i = 0; i < 2; i++)
		pools[i] = fx_pool(pcs[i], false);
	flood_round_robin(pcs, pools, 2, 2 * p);
	assert_ratio(fx_ephemeral(pcs[0]), fx_ephemeral(pcs[1]), 1.0);
	tmem_policy_client_get(pcs[1], &s);
	s.weight = 300;
	ck_assert_int_eq(tmem_policy_client_set(pcs[1], &s), 0);
	for (uint64_t r = 0; r < 4 * p; r++)
		for (int i = 0; i < 2; i++)
			ck_assert_int_eq(fx_put(pcs[i], pools[i], 10 + i, r), 1);
	assert_ratio(fx_ephemeral(pcs[1]), fx_ephemeral(pcs[0]), 3.0);
	fx_teardown(&f);
}
END_TEST

/* Shared pools' pages belong to the shared client, weighted by default. */
START_TEST(test_shared_client_weighted)
{
	struct tmem_uuid uuid = { .lo = 0x1234, .hi = 0x5678 };
	struct tmem_page_counts sc;
	struct tmem_pclient *pcs[2];
	int32_t pools[2];
	struct fx f;
	uint64_t p = pool_pages();

	fx_setup(&f, p, NULL);
	pcs[0] = fx_client(&f, "sharer", 100);
	pcs[1] = fx_client(&f, "private", 100);
	ck_assert_int_eq(store_shared_auth(f.store, &uuid, "sharer", true), 0);
	pools[0] = store_new_pool(tmem_pclient_store_client(pcs[0]),
				  tmem_pool_flags(TMEM_POOL_SHARED), &uuid);
	ck_assert_int_ge(pools[0], 0);
	pools[1] = fx_pool(pcs[1], false);
	flood_round_robin(pcs, pools, 2, 4 * p);
	store_client_page_counts(store_shared_client(f.store), &sc);
	ck_assert_uint_eq(fx_ephemeral(pcs[0]), 0);
	assert_ratio(sc.ephemeral, fx_ephemeral(pcs[1]), 1.0);
	fx_teardown(&f);
}
END_TEST

/* ---- persistent pages ------------------------------------------------- */

START_TEST(test_no_persistent_loss)
{
	struct tmem_pclient *owner, *pcs[2];
	int32_t ppool, pools[2];
	struct fx f;
	uint64_t p = pool_pages();

	fx_setup(&f, p, NULL);
	owner = fx_client(&f, "swapper", 100);
	pcs[0] = fx_client(&f, "flood1", 100);
	pcs[1] = fx_client(&f, "flood2", 300);
	ppool = fx_pool(owner, true);
	for (int i = 0; i < 2; i++)
		pools[i] = fx_pool(pcs[i], false);
	for (uint64_t n = 0; n < p / 2; n++)
		ck_assert_int_eq(fx_put(owner, ppool, 99, n), 1);
	/* Ten times the pool, in ephemeral puts, from the two others. */
	flood_round_robin(pcs, pools, 2, 5 * p);
	ck_assert_uint_eq(fx_persistent(owner), p / 2);
	for (uint64_t n = 0; n < p / 2; n++)
		ck_assert_int_eq(fx_check(owner, ppool, 99, n), 1);
	fx_teardown(&f);
}
END_TEST

/* A persistent put evicts ephemeral pages, anyone's, to get in. */
START_TEST(test_persistent_evicts_ephemeral)
{
	struct tmem_arena_counts a;
	struct tmem_pclient *eph, *pers;
	int32_t epool, ppool;
	struct fx f;
	uint64_t p = pool_pages(), n;

	fx_setup(&f, p, NULL);
	eph = fx_client(&f, "cache", 100);
	pers = fx_client(&f, "swap", 100);
	epool = fx_pool(eph, false);
	ppool = fx_pool(pers, true);
	for (n = 0; n < 2 * p; n++)
		ck_assert_int_eq(fx_put(eph, epool, 1, n), 1);
	for (n = 0; n < p; n++)
		if (fx_put(pers, ppool, 2, n) != 1)
			break;
	/* Every page of the arena could go to persistent use. */
	ck_assert_uint_eq(n, p);
	fx_arena(&f, &a);
	ck_assert_uint_eq(a.persistent, p);
	ck_assert_uint_eq(a.ephemeral, 0);
	fx_teardown(&f);
}
END_TEST

/* Refused (full) once all that is left is persistent; never a persistent loss. */
START_TEST(test_persistent_full)
{
	struct tmem_op_counters ops;
	struct tmem_pclient *a, *b;
	int32_t apool, bpool, bepool;
	struct fx f;
	uint64_t p = 128, n;

	fx_setup(&f, p, NULL);
	a = fx_client(&f, "a", 100);
	b = fx_client(&f, "b", 100);
	apool = fx_pool(a, true);
	bpool = fx_pool(b, true);
	bepool = fx_pool(b, false);
	for (n = 0; n < p / 2; n++) {
		ck_assert_int_eq(fx_put(a, apool, 1, n), 1);
		ck_assert_int_eq(fx_put(b, bpool, 2, n), 1);
	}
	ck_assert_int_eq(fx_put(a, apool, 1, n), 0);
	ck_assert_int_eq(fx_put(b, bepool, 3, 0), 0);
	fx_ops(a, &ops);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_FULL], 1);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_QUOTA], 0);
	fx_ops(b, &ops);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_FULL], 1);
	/* A flush makes room again. */
	ck_assert_int_eq(store_flush_page(tmem_pclient_store_client(b), bpool,
					  &(struct tmem_oid){ .oid = { 2, 0, 0x7a } }, 0), 1);
	ck_assert_int_eq(fx_put(a, apool, 1, n), 1);
	for (n = 0; n < p / 2; n++)
		ck_assert_int_eq(fx_check(a, apool, 1, n), 1);
	fx_teardown(&f);
}
END_TEST

/* ---- quota edges ------------------------------------------------------ */

START_TEST(test_cap_zero)
{
	struct tmem_op_counters ops;
	struct tmem_pclient *pc;
	int32_t epool, ppool;
	struct fx f;

	fx_setup(&f, 64, NULL);
	pc = fx_client(&f, "zero", 100);
	epool = fx_pool(pc, false);
	ppool = fx_pool(pc, true);
	fx_set_caps(pc, 0, 0);
	ck_assert_int_eq(fx_put(pc, epool, 1, 0), 0);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 0), 0);
	ck_assert_uint_eq(fx_ephemeral(pc), 0);
	ck_assert_uint_eq(fx_persistent(pc), 0);
	fx_ops(pc, &ops);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_QUOTA], 2);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_FULL], 0);
	ck_assert_uint_eq(ops.evictions, 0);
	fx_teardown(&f);
}
END_TEST

START_TEST(test_cap_one)
{
	struct tmem_op_counters ops;
	struct tmem_pclient *pc;
	int32_t epool, ppool;
	struct fx f;

	fx_setup(&f, 64, NULL);
	pc = fx_client(&f, "one", 100);
	epool = fx_pool(pc, false);
	ppool = fx_pool(pc, true);
	fx_set_caps(pc, 1, 1);
	/* Ephemeral: each new put pushes out the previous one. */
	for (uint64_t n = 0; n < 5; n++) {
		ck_assert_int_eq(fx_put(pc, epool, 1, n), 1);
		ck_assert_uint_eq(fx_ephemeral(pc), 1);
	}
	ck_assert_int_eq(fx_check(pc, epool, 1, 3), 0);
	ck_assert_int_eq(fx_check(pc, epool, 1, 4), 1);
	/* Persistent: the second page is refused, a rewrite of the first is not. */
	ck_assert_int_eq(fx_put(pc, ppool, 2, 0), 1);
	ck_assert_int_eq(fx_put(pc, ppool, 2, 1), 0);
	ck_assert_int_eq(fx_put(pc, ppool, 2, 0), 1);
	ck_assert_uint_eq(fx_persistent(pc), 1);
	ck_assert_int_eq(fx_check(pc, ppool, 2, 0), 1);
	fx_ops(pc, &ops);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_QUOTA], 1);
	ck_assert_uint_eq(ops.evictions, 4);
	fx_teardown(&f);
}
END_TEST

START_TEST(test_cap_equal_pool)
{
	struct tmem_op_counters ops;
	struct tmem_pclient *pc, *other;
	int32_t epool, ppool, opool;
	struct fx f;
	uint64_t p = 128, n;

	fx_setup(&f, p, NULL);
	pc = fx_client(&f, "all", 100);
	other = fx_client(&f, "other", 100);
	epool = fx_pool(pc, false);
	ppool = fx_pool(pc, true);
	opool = fx_pool(other, true);
	fx_set_caps(pc, p, p);
	/* The ephemeral cap never binds: only the arena does. */
	for (n = 0; n < 3 * p; n++)
		ck_assert_int_eq(fx_put(pc, epool, 1, n), 1);
	ck_assert_uint_le(fx_ephemeral(pc), p);
	ck_assert_uint_ge(fx_ephemeral(pc), p - tmem_policy_low_water(f.policy) - 16);
	for (n = 0; n < p / 2; n++) {
		ck_assert_int_eq(fx_put(pc, ppool, 2, n), 1);
		ck_assert_int_eq(fx_put(other, opool, 3, n), 1);
	}
	ck_assert_uint_eq(fx_ephemeral(pc), 0);
	/* Half the cap used, arena full: refused as full, not over quota. */
	ck_assert_int_eq(fx_put(pc, ppool, 2, n), 0);
	fx_ops(pc, &ops);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_QUOTA], 0);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_FULL], 1);
	fx_teardown(&f);
}
END_TEST

START_TEST(test_caps_lowered)
{
	struct tmem_op_counters ops;
	struct tmem_pclient *pc;
	struct tmem_oid oid;
	int32_t epool, ppool;
	struct fx f;
	uint64_t n;

	fx_setup(&f, 64, NULL);
	pc = fx_client(&f, "shrinking", 100);
	epool = fx_pool(pc, false);
	ppool = fx_pool(pc, true);
	for (n = 0; n < 10; n++) {
		ck_assert_int_eq(fx_put(pc, epool, 1, n), 1);
		ck_assert_int_eq(fx_put(pc, ppool, 2, n), 1);
	}
	fx_set_caps(pc, 4, 4);
	/* Nothing goes at once... */
	ck_assert_uint_eq(fx_ephemeral(pc), 10);
	ck_assert_uint_eq(fx_persistent(pc), 10);
	/* ...the next ephemeral put evicts the oldest down to the cap. */
	ck_assert_int_eq(fx_put(pc, epool, 1, 10), 1);
	ck_assert_uint_eq(fx_ephemeral(pc), 4);
	ck_assert_int_eq(fx_check(pc, epool, 1, 6), 0);
	for (n = 7; n <= 10; n++)
		ck_assert_int_eq(fx_check(pc, epool, 1, n), 1);
	/* Persistent: new pages refused, rewrites accepted, until flushed below. */
	ck_assert_int_eq(fx_put(pc, ppool, 2, 10), 0);
	ck_assert_int_eq(fx_put(pc, ppool, 2, 3), 1);
	for (n = 0; n < 7; n++) {
		oid = fx_oid(2, n / 64);
		ck_assert_int_eq(store_flush_page(tmem_pclient_store_client(pc), ppool,
						  &oid, (uint32_t)(n % 64)), 1);
	}
	ck_assert_uint_eq(fx_persistent(pc), 3);
	ck_assert_int_eq(fx_put(pc, ppool, 2, 10), 1);
	ck_assert_int_eq(fx_put(pc, ppool, 2, 11), 0);
	fx_ops(pc, &ops);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_QUOTA], 2);
	ck_assert_uint_eq(ops.evictions, 7);
	fx_teardown(&f);
}
END_TEST

/*
 * tmemctl(8): over a lowered cap, a put to a handle the client already
 * holds replaces the page in place, as Xen's duplicate put reused the
 * page frame: it adds no page, so the cap does not bind.  A get returns
 * the new data, never the old (put-put-get coherency).  A duplicate put
 * that is refused (here: frozen) removes the old copy first.
 */
START_TEST(test_duplicate_put_over_lowered_cap)
{
	uint64_t page[TMEM_PAGE_SIZE / 8], got[TMEM_PAGE_SIZE / 8];
	struct tmem_oid oid = fx_oid(7, 0);
	struct tmem_client *c;
	struct tmem_pclient *pc;
	int32_t ppool;
	struct fx f;

	fx_setup(&f, 64, NULL);
	pc = fx_client(&f, "dup", 100);
	c = tmem_pclient_store_client(pc);
	ppool = fx_pool(pc, true);
	for (uint64_t n = 0; n < 4; n++)
		ck_assert_int_eq(fx_put(pc, ppool, 7, n), 1);
	fx_set_caps(pc, 1, 1);
	fx_fill(page, 99, 1);
	ck_assert_int_eq(tmem_policy_put(pc, ppool, &oid, 2, page), 1);
	ck_assert_uint_eq(fx_persistent(pc), 4);
	ck_assert_int_eq(store_get_page(c, ppool, &oid, 2, got), 1);
	ck_assert_int_eq(memcmp(got, page, sizeof(page)), 0);
	/* A new handle is refused; nothing else changed. */
	ck_assert_int_eq(fx_put(pc, ppool, 7, 4), 0);
	ck_assert_uint_eq(fx_persistent(pc), 4);
	/* Refused duplicate: the old copy is gone, the get misses. */
	ck_assert_int_eq(tmem_policy_freeze(pc, true), 0);
	fx_fill(page, 99, 2);
	ck_assert_int_eq(tmem_policy_put(pc, ppool, &oid, 2, page), 0);
	ck_assert_int_eq(store_get_page(c, ppool, &oid, 2, got), 0);
	ck_assert_uint_eq(fx_persistent(pc), 3);
	fx_teardown(&f);
}
END_TEST

/* ---- freeze ----------------------------------------------------------- */

START_TEST(test_freeze_thaw)
{
	struct tmem_client_settings s;
	struct tmem_op_counters ops;
	struct tmem_pclient *pc, *other;
	struct tmem_oid oid = fx_oid(1, 0);
	uint64_t page[TMEM_PAGE_SIZE / 8];
	int32_t ppool, epool, opool;
	struct fx f;

	fx_setup(&f, 64, NULL);
	pc = fx_client(&f, "cold", 100);
	other = fx_client(&f, "warm", 100);
	ppool = fx_pool(pc, true);
	epool = fx_pool(pc, false);
	opool = fx_pool(other, false);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 0), 1);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 1), 1);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 2), 1);
	ck_assert_int_eq(tmem_policy_freeze(pc, true), 0);
	tmem_policy_client_get(pc, &s);
	ck_assert(s.frozen);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 3), 0);
	ck_assert_int_eq(fx_put(pc, epool, 1, 0), 0);
	ck_assert_int_eq(fx_put(other, opool, 1, 0), 1); /* others unaffected */
	/* Gets and flushes still work. */
	ck_assert_int_eq(fx_check(pc, ppool, 1, 0), 1);
	ck_assert_int_eq(store_flush_page(tmem_pclient_store_client(pc), ppool, &oid, 0), 1);
	/* A refused rewrite must not leave the old data readable. */
	fx_fill(page, 5, 1);
	oid = fx_oid(1, 0);
	ck_assert_int_eq(tmem_policy_put(pc, ppool, &oid, 1, page), 0);
	ck_assert_int_eq(fx_check(pc, ppool, 1, 1), 0);
	ck_assert_int_eq(fx_check(pc, ppool, 1, 2), 1);
	ck_assert_uint_eq(fx_persistent(pc), 1);
	fx_ops(pc, &ops);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_FROZEN], 3);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_QUOTA], 0);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_FULL], 0);
	/* The refused rewrite removed the old page, but only the guest's
	 * own flush counts as one. */
	ck_assert_uint_eq(ops.flush_pages, 1);

	ck_assert_int_eq(tmem_policy_freeze(pc, false), 0);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 3), 1);
	ck_assert_int_eq(fx_check(pc, ppool, 1, 3), 1);
	/* Freezing through the settings works the same. */
	s.frozen = true;
	ck_assert_int_eq(tmem_policy_client_set(pc, &s), 0);
	ck_assert_int_eq(fx_put(pc, epool, 1, 9), 0);
	s.frozen = false;
	ck_assert_int_eq(tmem_policy_client_set(pc, &s), 0);
	ck_assert_int_eq(fx_put(pc, epool, 1, 9), 1);
	fx_teardown(&f);
}
END_TEST

/* ---- resize ----------------------------------------------------------- */

START_TEST(test_grow)
{
	struct tmem_arena_counts a;
	struct tmem_pclient *pc;
	int32_t ppool;
	struct fx f;
	uint64_t n;

	fx_setup(&f, 64, NULL);
	pc = fx_client(&f, "g", 100);
	ppool = fx_pool(pc, true);
	for (n = 0; n < 64; n++)
		ck_assert_int_eq(fx_put(pc, ppool, 1, n), 1);
	ck_assert_int_eq(fx_put(pc, ppool, 1, n), 0);
	ck_assert_int_eq(tmem_policy_resize(f.policy, 128), 0);
	fx_arena(&f, &a);
	ck_assert_uint_eq(a.total_pages, 128);
	ck_assert_uint_eq(a.free_pages, 64);
	for (; n < 128; n++)
		ck_assert_int_eq(fx_put(pc, ppool, 1, n), 1);
	for (n = 0; n < 128; n++)
		ck_assert_int_eq(fx_check(pc, ppool, 1, n), 1);
	/* Beyond the reserved address space: pools/ says no. */
	ck_assert_int_eq(tmem_policy_resize(f.policy, 4 * 64 + 1), -EINVAL);
	fx_teardown(&f);
}
END_TEST

START_TEST(test_shrink)
{
	struct tmem_arena_counts a;
	struct tmem_pclient *pers, *eph;
	int32_t ppool, epool;
	struct fx f;
	uint64_t p = 256, n;

	fx_setup(&f, p, NULL);
	pers = fx_client(&f, "pers", 100);
	eph = fx_client(&f, "eph", 100);
	ppool = fx_pool(pers, true);
	epool = fx_pool(eph, false);
	for (n = 0; n < p / 4; n++)
		ck_assert_int_eq(fx_put(pers, ppool, 1, n), 1);
	for (n = 0; n < 2 * p; n++)
		ck_assert_int_eq(fx_put(eph, epool, 2, n), 1);
	ck_assert_int_eq(tmem_policy_resize(f.policy, p / 2), 0);
	fx_arena(&f, &a);
	ck_assert_uint_eq(a.total_pages, p / 2);
	ck_assert_uint_le(a.ephemeral + a.persistent, p / 2);
	ck_assert_uint_eq(a.persistent, p / 4);
	for (n = 0; n < p / 4; n++)
		ck_assert_int_eq(fx_check(pers, ppool, 1, n), 1);
	/* Surviving ephemeral pages read back intact too. */
	for (n = 2 * p - fx_ephemeral(eph); n < 2 * p; n++)
		ck_assert_int_eq(fx_check(eph, epool, 2, n), 1);
	/* Shrinking to exactly the persistent usage works. */
	ck_assert_int_eq(tmem_policy_resize(f.policy, p / 4), 0);
	fx_arena(&f, &a);
	ck_assert_uint_eq(a.total_pages, p / 4);
	ck_assert_uint_eq(a.free_pages, 0);
	for (n = 0; n < p / 4; n++)
		ck_assert_int_eq(fx_check(pers, ppool, 1, n), 1);
	fx_teardown(&f);
}
END_TEST

START_TEST(test_shrink_refused)
{
	struct tmem_arena_counts before, after;
	struct tmem_pclient *pers, *eph;
	int32_t ppool, epool;
	struct fx f;
	uint64_t p = 128, n;

	fx_setup(&f, p, NULL);
	pers = fx_client(&f, "pers", 100);
	eph = fx_client(&f, "eph", 100);
	ppool = fx_pool(pers, true);
	epool = fx_pool(eph, false);
	for (n = 0; n < p / 2; n++)
		ck_assert_int_eq(fx_put(pers, ppool, 1, n), 1);
	for (n = 0; n < p / 4; n++)
		ck_assert_int_eq(fx_put(eph, epool, 2, n), 1);
	fx_arena(&f, &before);
	ck_assert_int_eq(tmem_policy_resize(f.policy, p / 2 - 1), -EBUSY);
	fx_arena(&f, &after);
	ck_assert_uint_eq(after.total_pages, before.total_pages);
	ck_assert_uint_eq(after.ephemeral, before.ephemeral);
	ck_assert_uint_eq(after.persistent, before.persistent);
	for (n = 0; n < p / 4; n++)
		ck_assert_int_eq(fx_check(eph, epool, 2, n), 1);
	fx_teardown(&f);
}
END_TEST

/* ---- reserve and counters --------------------------------------------- */

START_TEST(test_reserve_refill)
{
	struct tmem_policy_config cfg;
	struct tmem_arena_counts a;
	struct tmem_pclient *pc;
	uint64_t page[TMEM_PAGE_SIZE / 8] = { 1 };
	struct tmem_oid oid;
	int32_t pool;
	struct fx f;
	uint64_t p = 256, n;

	tmem_policy_config_defaults(&cfg);
	cfg.low_water_pages = 40;
	fx_setup(&f, p, &cfg);
	ck_assert_uint_eq(tmem_policy_low_water(f.policy), 40);
	pc = fx_client(&f, "r", 100);
	/* Counts frames: one page each (compressed, these near-zero pages
	 * would run out of page descriptors first, with frames left). */
	ck_assert_int_eq(store_client_set_compress(tmem_pclient_store_client(pc),
						   &(struct tmem_compress){ TMEM_COMPRESS_OFF, 0 }), 0);
	pool = fx_pool(pc, false);
	/* Fill the arena behind policy's back, to the last page. */
	for (n = 0;; n++) {
		oid = fx_oid(1, n);
		if (store_put_page(tmem_pclient_store_client(pc), pool, &oid, 0,
				   page, TMEM_PUT_CAP(TMEM_NO_CAP)) != 1)
			break;
	}
	fx_arena(&f, &a);
	ck_assert_uint_eq(a.free_pages, 0);
	tmem_policy_refill_reserve(f.policy);
	fx_arena(&f, &a);
	ck_assert_uint_ge(a.free_pages, 40);
	ck_assert_uint_le(a.free_pages, 40 + 16);
	/* Puts keep the reserve: the arena never runs dry. */
	for (n = 0; n < 2 * p; n++) {
		ck_assert_int_eq(fx_put(pc, pool, 2, n), 1);
		fx_arena(&f, &a);
		ck_assert_uint_ge(a.free_pages, 40 - 1);
	}
	fx_teardown(&f);

	/* The default: 1/64 of the arena, at least 16, at most half of it. */
	fx_setup(&f, 4096, NULL);
	ck_assert_uint_eq(tmem_policy_low_water(f.policy), 64);
	fx_teardown(&f);
	fx_setup(&f, 24, NULL);
	ck_assert_uint_eq(tmem_policy_low_water(f.policy), 12);
	fx_teardown(&f);
}
END_TEST

/* Each refusal is counted once, under its own reason, per client and per pool. */
START_TEST(test_counters_per_reason)
{
	struct tmem_op_counters ops, pops;
	struct tmem_pclient *pc, *filler;
	int32_t ppool, epool, fpool;
	struct fx f;
	uint64_t n;

	fx_setup(&f, 32, NULL);
	pc = fx_client(&f, "counted", 100);
	filler = fx_client(&f, "filler", 100);
	ppool = fx_pool(pc, true);
	epool = fx_pool(pc, false);
	fpool = fx_pool(filler, true);
	fx_set_caps(pc, 0, 2);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 0), 1);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 1), 1);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 2), 0);  /* quota */
	ck_assert_int_eq(fx_put(pc, epool, 1, 0), 0);  /* quota (cap 0) */
	for (n = 0; n < 30; n++)
		ck_assert_int_eq(fx_put(filler, fpool, 2, n), 1);
	fx_set_caps(pc, TMEM_NO_CAP, TMEM_NO_CAP);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 3), 0);  /* full */
	ck_assert_int_eq(fx_put(pc, epool, 1, 1), 0);  /* full */
	ck_assert_int_eq(tmem_policy_freeze(pc, true), 0);
	ck_assert_int_eq(fx_put(pc, ppool, 1, 4), 0);  /* frozen */

	fx_ops(pc, &ops);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_QUOTA], 2);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_FULL], 2);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_FROZEN], 1);
	ck_assert_uint_eq(ops.succ_puts, 2);
	ck_assert_uint_eq(ops.evictions, 0);
	fx_pool_ops(pc, ppool, &pops);
	ck_assert_uint_eq(pops.failed_puts[TMEM_PUT_FAIL_QUOTA], 1);
	ck_assert_uint_eq(pops.failed_puts[TMEM_PUT_FAIL_FULL], 1);
	ck_assert_uint_eq(pops.failed_puts[TMEM_PUT_FAIL_FROZEN], 1);
	ck_assert_uint_eq(pops.succ_puts, 2);
	fx_pool_ops(pc, epool, &pops);
	ck_assert_uint_eq(pops.failed_puts[TMEM_PUT_FAIL_QUOTA], 1);
	ck_assert_uint_eq(pops.failed_puts[TMEM_PUT_FAIL_FULL], 1);
	ck_assert_uint_eq(pops.failed_puts[TMEM_PUT_FAIL_FROZEN], 0);
	fx_ops(filler, &ops);
	ck_assert_uint_eq(ops.failed_puts[TMEM_PUT_FAIL_QUOTA] +
			  ops.failed_puts[TMEM_PUT_FAIL_FULL] +
			  ops.failed_puts[TMEM_PUT_FAIL_FROZEN], 0);
	fx_teardown(&f);
}
END_TEST

START_TEST(test_put_bad_args)
{
	struct tmem_pclient *pc;
	struct tmem_oid oid = fx_oid(1, 0);
	char page[TMEM_PAGE_SIZE] = { 0 };
	struct fx f;

	fx_setup(&f, 32, NULL);
	pc = fx_client(&f, "bad", 100);
	ck_assert_int_eq(tmem_policy_put(NULL, 0, &oid, 0, page), -EINVAL);
	ck_assert_int_eq(tmem_policy_put(pc, 0, NULL, 0, page), -EINVAL);
	ck_assert_int_eq(tmem_policy_put(pc, 0, &oid, 0, NULL), -EINVAL);
	ck_assert_int_eq(tmem_policy_put(pc, 5, &oid, 0, page), -ENOENT);
	ck_assert_int_eq(tmem_policy_put(pc, -1, &oid, 0, page), -ENOENT);
	fx_set_caps(pc, 3, 4); /* caps differ: the pool kind is looked up */
	ck_assert_int_eq(tmem_policy_put(pc, 5, &oid, 0, page), -ENOENT);
	fx_teardown(&f);
}
END_TEST

static Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tc;

	tc = tcase_create("settings");
	tcase_add_test(tc, test_settings_validate);
	tcase_add_test(tc, test_defaults_runtime);
	tcase_add_test(tc, test_put_bad_args);
	suite_add_tcase(s, tc);

	tc = tcase_create("weights");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_weights_two);
	tcase_add_test(tc, test_weights_three);
	tcase_add_test(tc, test_weights_change_at_runtime);
	tcase_add_test(tc, test_shared_client_weighted);
	suite_add_tcase(s, tc);

	tc = tcase_create("persistent");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_no_persistent_loss);
	tcase_add_test(tc, test_persistent_evicts_ephemeral);
	tcase_add_test(tc, test_persistent_full);
	tcase_add_test(tc, test_detached_ephemeral_pages_give_way);
	suite_add_tcase(s, tc);

	tc = tcase_create("quota");
	tcase_add_test(tc, test_cap_zero);
	tcase_add_test(tc, test_cap_one);
	tcase_add_test(tc, test_cap_equal_pool);
	tcase_add_test(tc, test_caps_lowered);
	tcase_add_test(tc, test_duplicate_put_over_lowered_cap);
	tcase_add_test(tc, test_freeze_thaw);
	tcase_add_test(tc, test_counters_per_reason);
	tcase_add_test(tc, test_reserve_refill);
	suite_add_tcase(s, tc);

	tc = tcase_create("resize");
	tcase_add_test(tc, test_grow);
	tcase_add_test(tc, test_shrink);
	tcase_add_test(tc, test_shrink_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(policy_suite(), 0);
}
