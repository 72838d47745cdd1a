/* pools/: the hooks policy/ uses beyond the guest ops: batched eviction,
 * a pool's kind, and discarding a page without counting a guest flush. */
#include <check.h>
#include <errno.h>
#include <pthread.h>

#include "pool_helpers.h"
#include "internal.h"
#include "test_pools.h"

#define ARENA 256u

static struct tmem_store *s;
static struct tmem_client *a;
static uint8_t page[PG];

static void setup(void)
{
	s = mkstore(ARENA, ARENA);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(store_client_create(s, "hooks", &a), 0);
}

static void teardown(void)
{
	store_destroy(s);
	s = NULL;
}

/* Page (obj, idx) of pool id, with contents from seed obj * 1000 + idx. */
static int put_at(int32_t id, uint64_t obj, uint32_t idx)
{
	struct tmem_oid o = mkoid(obj, 7, 9);

	page_fill(page, obj * 1000 + idx);
	return store_put_page(a, id, &o, idx, page, TMEM_PUT_CAP(TMEM_NO_CAP));
}

/* 1 when the page is there with its contents (and, ephemeral, now gone). */
static int stored(int32_t id, uint64_t obj, uint32_t idx)
{
	struct tmem_oid o = mkoid(obj, 7, 9);
	int ret = store_get_page(a, id, &o, idx, page);

	return ret == 1 && !page_check(page, obj * 1000 + idx) ? -999 : ret;
}

static struct tmem_client_info client_info(void)
{
	struct tmem_client_info ci;

	store_client_info(a, &ci);
	return ci;
}

static int pool_evictions(const struct tmem_pool_info *i, void *ctx)
{
	((uint64_t *)ctx)[i->id] = i->ops.evictions;
	return 0;
}

/* ---- store_client_evict_oldest_n ------------------------------------------ */

START_TEST(test_evict_n_across_pools)
{
	uint64_t per_pool[TMEM_MAX_POOLS_PER_CLIENT] = { 0 };
	struct tmem_store_info si;

	test_incompressible = true; /* counts frames */
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 1);
	ck_assert_int_eq(put_at(0, 1, 0), 1);
	ck_assert_int_eq(put_at(0, 1, 1), 1);
	ck_assert_int_eq(put_at(1, 2, 0), 1);
	ck_assert_int_eq(put_at(0, 1, 2), 1);
	ck_assert_int_eq(put_at(1, 2, 1), 1);
	/* The three oldest, the run crossing from pool 0 to pool 1. */
	ck_assert_uint_eq(store_client_evict_oldest_n(a, 3), 3);
	ck_assert_uint_eq(client_info().pages.ephemeral, 2);
	ck_assert_uint_eq(client_info().ops.evictions, 3);
	store_info(s, &si);
	ck_assert_uint_eq(si.evictions, 3);
	ck_assert_uint_eq(si.arena.free_pages, ARENA - 2);
	ck_assert_uint_eq(si.arena.ephemeral, 2);
	ck_assert_int_eq(store_client_for_each_pool(a, pool_evictions, per_pool), 0);
	ck_assert_uint_eq(per_pool[0], 2);
	ck_assert_uint_eq(per_pool[1], 1);
	ck_assert_int_eq(stored(0, 1, 0), 0);
	ck_assert_int_eq(stored(0, 1, 1), 0);
	ck_assert_int_eq(stored(1, 2, 0), 0);
	/* Asking for more than there is evicts what there is. */
	ck_assert_uint_eq(store_client_evict_oldest_n(a, 10), 2);
	ck_assert_uint_eq(store_client_evict_oldest_n(a, 10), 0);
	ck_assert_uint_eq(client_info().pages.ephemeral, 0);
	ck_assert_uint_eq(store_client_evict_oldest_n(a, 0), 0);
	ck_assert_uint_eq(store_client_evict_oldest_n(NULL, 4), 0);
}
END_TEST

/* Issue 30: an admin's flush is not an eviction (evictions are the
 * memory-pressure signal), and the store's op totals by kind outlive
 * the client. */
START_TEST(test_admin_flush_is_not_eviction)
{
	uint64_t per_pool[TMEM_MAX_POOLS_PER_CLIENT] = { 0 };
	struct tmem_store_info si;
	struct tmem_client_info ci;

	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 1);
	for (uint32_t i = 0; i < 4; i++)
		ck_assert_int_eq(put_at(0, 1, i), 1);
	ck_assert_int_eq(put_at(1, 2, 0), 1);
	ck_assert_uint_eq(store_client_admin_flush_n(a, 10), 4);
	ci = client_info();
	ck_assert_uint_eq(ci.pages.ephemeral, 0);
	ck_assert_uint_eq(ci.pages.persistent, 1);
	ck_assert_uint_eq(ci.ops.evictions, 0);
	ck_assert_uint_eq(ci.ops.admin_flushes, 4);
	ck_assert_uint_eq(ci.ops_kind[0].admin_flushes, 4);
	ck_assert_uint_eq(ci.ops_kind[0].succ_puts, 4);
	ck_assert_uint_eq(ci.ops_kind[1].succ_puts, 1);
	ck_assert_int_eq(store_client_for_each_pool(a, pool_evictions, per_pool), 0);
	ck_assert_uint_eq(per_pool[0], 0);
	store_info(s, &si);
	ck_assert_uint_eq(si.evictions, 0);
	ck_assert_uint_eq(si.ops_kind[0].admin_flushes, 4);
	/* The client goes; the store's totals stay. */
	store_client_destroy(a);
	a = NULL;
	store_info(s, &si);
	ck_assert_uint_eq(si.ops_kind[0].succ_puts, 4);
	ck_assert_uint_eq(si.ops_kind[0].admin_flushes, 4);
	ck_assert_uint_eq(si.ops_kind[1].succ_puts, 1);
	ck_assert_uint_eq(si.ops_kind[1].puts, 1);
}
END_TEST

/* More pages than one free batch, over several objects: the newest stay. */
START_TEST(test_evict_n_large_batch)
{
	test_incompressible = true; /* counts frames */
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	for (uint32_t i = 0; i < 100; i++)
		ck_assert_int_eq(put_at(0, i / 16, i % 16), 1);
	ck_assert_uint_eq(store_client_evict_oldest_n(a, 70), 70);
	ck_assert_uint_eq(ARENA - s->frames.used, ARENA - 30);
	for (uint32_t i = 0; i < 100; i++)
		ck_assert_int_eq(stored(0, i / 16, i % 16), i >= 70);
	/* Every frame came back to the free stack, and it is accounted. */
	ck_assert_uint_eq(s->frames.used, 0);
	ck_assert_uint_ge(s->frames.free_high, 70);
}
END_TEST

START_TEST(test_evict_n_skips_busy_and_persistent)
{
	struct tmem_pool *busy;

	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 1);
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 2);
	ck_assert_int_eq(put_at(2, 3, 0), 1);
	ck_assert_int_eq(put_at(0, 1, 0), 1);
	ck_assert_int_eq(put_at(1, 2, 0), 1);
	ck_assert_int_eq(put_at(0, 1, 1), 1);
	ck_assert_int_eq(put_at(1, 2, 1), 1);
	busy = slot_lock_pool(a, 0); /* as if another thread were inside pool 0 */
	ck_assert_ptr_nonnull(busy);
	ck_assert_uint_eq(store_client_evict_oldest_n(a, 4), 2);
	pthread_mutex_unlock(&busy->lock);
	ck_assert_int_eq(stored(1, 2, 0), 0);
	ck_assert_int_eq(stored(1, 2, 1), 0);
	ck_assert_uint_eq(store_client_evict_oldest_n(a, 4), 2);
	ck_assert_uint_eq(store_client_evict_oldest_n(a, 4), 0);
	ck_assert_int_eq(stored(2, 3, 0), 1); /* never a persistent page */
}
END_TEST

/* Only busy candidates, more than it may skip: it gives up. */
START_TEST(test_evict_n_gives_up_after_busy_tries)
{
	struct tmem_pool *busy;

	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 1);
	for (uint32_t i = 0; i < TMEM_EVICT_TRIES + 2; i++)
		ck_assert_int_eq(put_at(0, 1, i), 1);
	ck_assert_int_eq(put_at(1, 2, 0), 1);
	busy = slot_lock_pool(a, 0);
	ck_assert_uint_eq(store_client_evict_oldest_n(a, 1), 0);
	ck_assert_int_eq(store_client_evict_oldest(a), 0);
	pthread_mutex_unlock(&busy->lock);
	ck_assert_uint_eq(store_client_evict_oldest_n(a, 1), 1);
	ck_assert_int_eq(stored(0, 1, 0), 0);
}
END_TEST

/* ---- store_client_pool_kind ------------------------------------------------ */

START_TEST(test_pool_kind)
{
	const struct tmem_uuid u = { 1, 2 };

	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 1);
	ck_assert_int_eq(store_shared_auth(s, &u, "hooks", true), 0);
	ck_assert_int_eq(store_new_pool(a, SHR, &u), 2);
	ck_assert_int_eq(store_client_pool_kind(a, 0), 0);
	ck_assert_int_eq(store_client_pool_kind(a, 1), 1);
	ck_assert_int_eq(store_client_pool_kind(a, 2), 0);
	ck_assert_int_eq(store_client_pool_kind(a, 3), -ENOENT);
	ck_assert_int_eq(store_client_pool_kind(a, -1), -ENOENT);
	ck_assert_int_eq(store_client_pool_kind(a, TMEM_MAX_POOLS_PER_CLIENT), -ENOENT);
	ck_assert_int_eq(store_client_pool_kind(NULL, 0), -EINVAL);
	ck_assert_int_eq(store_destroy_pool(a, 1), 1);
	ck_assert_int_eq(store_client_pool_kind(a, 1), -ENOENT);
}
END_TEST

/* ---- store_discard_page ---------------------------------------------------- */

START_TEST(test_discard_page_is_not_a_flush)
{
	struct tmem_oid o = mkoid(5, 7, 9);

	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	ck_assert_int_eq(put_at(0, 5, 0), 1);
	ck_assert_int_eq(put_at(0, 5, 1), 1);
	ck_assert_int_eq(store_discard_page(a, 0, &o, 0), 1);
	ck_assert_int_eq(store_discard_page(a, 0, &o, 0), 0);
	ck_assert_int_eq(stored(0, 5, 0), 0);
	ck_assert_int_eq(stored(0, 5, 1), 1);
	ck_assert_uint_eq(client_info().pages.persistent, 1);
	ck_assert_uint_eq(client_info().ops.flush_pages, 0);
	ck_assert_int_eq(store_flush_page(a, 0, &o, 1), 1);
	ck_assert_uint_eq(client_info().ops.flush_pages, 1);
	ck_assert_int_eq(store_discard_page(NULL, 0, &o, 0), -EINVAL);
	ck_assert_int_eq(store_discard_page(a, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(store_discard_page(a, 1, &o, 0), -ENOENT);
}
END_TEST

void add_hooks_tests(Suite *suite)
{
	TCase *tc = tcase_create("hooks");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_evict_n_across_pools);
	tcase_add_test(tc, test_admin_flush_is_not_eviction);
	tcase_add_test(tc, test_evict_n_large_batch);
	tcase_add_test(tc, test_evict_n_skips_busy_and_persistent);
	tcase_add_test(tc, test_evict_n_gives_up_after_busy_tries);
	tcase_add_test(tc, test_pool_kind);
	tcase_add_test(tc, test_discard_page_is_not_a_flush);
	suite_add_tcase(suite, tc);
}
