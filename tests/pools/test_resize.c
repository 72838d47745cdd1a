/* pools/: growing and shrinking the arena. */
#include <check.h>
#include <errno.h>

#include "pool_helpers.h"
#include "test_pools.h"

static uint8_t buf[PG], out[PG];

static uint64_t total_pages(struct tmem_store *s)
{
	struct tmem_arena_counts ac;

	store_arena_counts(s, &ac);
	return ac.total_pages;
}

START_TEST(test_resize_rejects)
{
	struct tmem_store *s = mkstore(64, 128);

	ck_assert_int_eq(store_resize(NULL, 64), -EINVAL);
	ck_assert_int_eq(store_resize(s, 0), -EINVAL);
	ck_assert_int_eq(store_resize(s, 129), -EINVAL);
	ck_assert_uint_eq(total_pages(s), 64);
	store_destroy(s);
}
END_TEST

START_TEST(test_resize_grow)
{
	struct tmem_store *s = mkstore(16, 64);
	struct tmem_client *c;
	struct tmem_oid o = mkoid(1, 1, 1);

	test_incompressible = true; /* counts frames */
	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	for (uint32_t i = 0; i < 16; i++) {
		page_fill(buf, i);
		ck_assert_int_eq(store_put_page(c, 0, &o, i, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	}
	ck_assert_int_eq(store_put_page(c, 0, &o, 16, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), -ENOSPC);
	ck_assert_int_eq(store_resize(s, 64), 0);
	ck_assert_uint_eq(total_pages(s), 64);
	for (uint32_t i = 16; i < 64; i++) {
		page_fill(buf, i);
		ck_assert_int_eq(store_put_page(c, 0, &o, i, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	}
	for (uint32_t i = 0; i < 64; i++) {
		ck_assert_int_eq(store_get_page(c, 0, &o, i, out), 1);
		ck_assert(page_check(out, i));
	}
	ck_assert_int_eq(store_resize(s, 64), 0); /* same size: no-op */
	store_destroy(s);
}
END_TEST

START_TEST(test_resize_shrink_moves_pages)
{
	struct tmem_store *s = mkstore(128, 128);
	struct tmem_client *c;
	struct tmem_arena_counts ac;

	test_incompressible = true; /* counts frames */
	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	ck_assert_int_eq(store_new_pool(c, EPH, NULL), 1);
	/* Fill the whole arena, then free every other page so that live pages
	 * sit above the new end and free frames below it. */
	for (uint32_t i = 0; i < 128; i++) {
		struct tmem_oid o = mkoid(i / 8, 0, 0);

		page_fill(buf, i);
		ck_assert_int_eq(store_put_page(c, i % 4 == 3 ? 1 : 0, &o, i, buf,
						TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	}
	for (uint32_t i = 0; i < 128; i += 2) {
		struct tmem_oid o = mkoid(i / 8, 0, 0);

		ck_assert_int_eq(store_flush_page(c, i % 4 == 3 ? 1 : 0, &o, i), 1);
	}
	ck_assert_int_eq(store_resize(s, 63), -EBUSY); /* 64 pages in use */
	ck_assert_uint_eq(total_pages(s), 128);
	ck_assert_int_eq(store_resize(s, 64), 0);
	store_arena_counts(s, &ac);
	ck_assert_uint_eq(ac.total_pages, 64);
	ck_assert_uint_eq(ac.free_pages, 0);
	for (uint32_t i = 1; i < 128; i += 2) {
		struct tmem_oid o = mkoid(i / 8, 0, 0);

		ck_assert_int_eq(store_get_page(c, i % 4 == 3 ? 1 : 0, &o, i, out), 1);
		ck_assert(page_check(out, i));
	}
	/* Gets of the ephemeral quarter freed frames: they are reusable. */
	store_arena_counts(s, &ac);
	ck_assert_uint_eq(ac.free_pages, 32);
	for (uint32_t i = 0; i < 32; i++) {
		struct tmem_oid o = mkoid(99, 0, 0);

		page_fill(buf, 1000 + i);
		ck_assert_int_eq(store_put_page(c, 0, &o, i, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	}
	ck_assert_int_eq(store_resize(s, 128), 0); /* and grow back */
	store_destroy(s);
}
END_TEST

START_TEST(test_resize_shrink_unused_tail)
{
	struct tmem_store *s = mkstore(256, 256);
	struct tmem_client *c;
	struct tmem_oid o = mkoid(5, 5, 5);

	test_incompressible = true; /* counts frames */
	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	page_fill(buf, 3);
	ck_assert_int_eq(store_put_page(c, 0, &o, 0, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	ck_assert_int_eq(store_resize(s, 1), 0);
	ck_assert_int_eq(store_get_page(c, 0, &o, 0, out), 1);
	ck_assert(page_check(out, 3));
	ck_assert_int_eq(store_put_page(c, 0, &o, 1, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), -ENOSPC);
	store_destroy(s);
}
END_TEST

void add_resize_tests(Suite *suite)
{
	TCase *tc = tcase_create("resize");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_resize_rejects);
	tcase_add_test(tc, test_resize_grow);
	tcase_add_test(tc, test_resize_shrink_moves_pages);
	tcase_add_test(tc, test_resize_shrink_unused_tail);
	suite_add_tcase(suite, tc);
}
