/*
 * pools/: a pool's pages exported as stored and imported into another
 * store (transfer.c): every page comes back exactly, whatever it was
 * stored as (compressed, same-filled, incompressible, raw); an export
 * stopped at any page goes on where it stopped; an import that does not
 * decode is refused and stores nothing (also when checked apart, as a
 * transfer does); a client's identity changes with
 * store_client_set_ident() and claims follow it.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_helpers.h"
#include "internal.h"
#include "test_pools.h"

#define NPAGES 700u

/* Page i: text, zero, a repeated word, or random (incompressible). */
static void mixed_page(uint8_t *pg, uint32_t i)
{
	switch (i % 4) {
	case 0: page_fill(pg, i); break;
	case 1: memset(pg, 0, PG); break;
	case 2: memset(pg, (int)(i & 0xff), PG); break;
	default: page_fill_random(pg, i); break;
	}
}

static struct tmem_oid oid_of(uint32_t i)
{
	return mkoid(i / 37, 3, 0);
}

struct sink {
	struct tmem_client *to;
	uint32_t limit;   /* stop after this many pages per call */
	uint32_t n, total;
};

static int import_one(void *ctx, const struct tmem_stored_page *p)
{
	struct sink *k = ctx;

	if (k->n == k->limit)
		return 1;
	/* Every other page the way a transfer does it: checked, then put. */
	if (k->total % 2) {
		ck_assert_int_eq(store_stored_page_check(p), 0);
		ck_assert_int_eq(store_import_checked(k->to, 0, p, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	} else {
		ck_assert_int_eq(store_import_page(k->to, 0, p, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	}
	k->n++;
	k->total++;
	return 0;
}

static void move_all(struct tmem_client *from, struct tmem_client *to, uint32_t batch)
{
	struct tmem_export_cursor cur = { 0 };
	struct sink k = { .to = to, .limit = batch };

	while (!cur.done) {
		k.n = 0;
		ck_assert_int_eq(store_export_pages(from, 0, &cur, import_one, &k), 0);
	}
	ck_assert_uint_eq(k.total, NPAGES);
}

static void transfer_in_batches(const struct tmem_compress *cz, uint32_t batch)
{
	struct tmem_store_config cfg = { .arena_bytes = 2048 * PG, .compress = *cz };
	struct tmem_store *s1 = NULL, *s2 = NULL;
	struct tmem_client *a, *b;
	uint8_t pg[PG], got[PG];

	ck_assert_int_eq(store_create(&cfg, &s1), 0);
	ck_assert_int_eq(store_create(&cfg, &s2), 0);
	ck_assert_int_eq(store_client_create(s1, "a", &a), 0);
	ck_assert_int_eq(store_client_create(s2, "b", &b), 0);
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	ck_assert_int_eq(store_new_pool(b, PERS, NULL), 0);
	for (uint32_t i = 0; i < NPAGES; i++) {
		struct tmem_oid o = oid_of(i);

		mixed_page(pg, i);
		ck_assert_int_eq(store_put_page(a, 0, &o, i, pg, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	}
	move_all(a, b, batch);
	for (uint32_t i = 0; i < NPAGES; i++) {
		struct tmem_oid o = oid_of(i);

		mixed_page(pg, i);
		ck_assert_int_eq(store_get_page(b, 0, &o, i, got), 1);
		ck_assert_mem_eq(got, pg, PG);
	}
	store_destroy(s1);
	store_destroy(s2);
}

START_TEST(test_transfer_lz4)
{
	transfer_in_batches(&(struct tmem_compress){ TMEM_COMPRESS_LZ4, 0 }, 1000000);
}
END_TEST

START_TEST(test_transfer_zstd_small_batches)
{
	transfer_in_batches(&(struct tmem_compress){ TMEM_COMPRESS_ZSTD, 3 }, 7);
}
END_TEST

START_TEST(test_transfer_raw_one_by_one)
{
	transfer_in_batches(&(struct tmem_compress){ TMEM_COMPRESS_OFF, 0 }, 1);
}
END_TEST

START_TEST(test_import_refuses_garbage)
{
	struct tmem_store *s = mkstore(256, 0);
	struct tmem_client *c;
	uint8_t junk[PG], got[PG];
	struct tmem_stored_page p = { .oid = mkoid(1, 2, 3), .index = 5 };

	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	page_fill_random(junk, 9);
	p.bytes = junk;
	p.codec = TMEM_CODEC_LZ4;
	p.len = 1000;
	ck_assert_int_eq(store_import_page(c, 0, &p, TMEM_PUT_CAP(TMEM_NO_CAP)), -EBADMSG);
	p.codec = TMEM_CODEC_ZSTD;
	ck_assert_int_eq(store_import_page(c, 0, &p, TMEM_PUT_CAP(TMEM_NO_CAP)), -EBADMSG);
	p.codec = TMEM_CODEC_NONE;
	p.len = 100;
	ck_assert_int_eq(store_import_page(c, 0, &p, TMEM_PUT_CAP(TMEM_NO_CAP)), -EBADMSG);
	p.codec = 7;
	ck_assert_int_eq(store_import_page(c, 0, &p, TMEM_PUT_CAP(TMEM_NO_CAP)), -EBADMSG);
	p.codec = TMEM_CODEC_LZ4;
	p.len = PG;
	ck_assert_int_eq(store_import_page(c, 0, &p, TMEM_PUT_CAP(TMEM_NO_CAP)), -EBADMSG);
	/* The check alone says the same; a checked import still checks the
	 * fields. */
	p.len = 1000;
	ck_assert_int_eq(store_stored_page_check(&p), -EBADMSG);
	ck_assert_int_eq(store_stored_page_check(NULL), -EINVAL);
	p.len = PG;
	ck_assert_int_eq(store_import_checked(c, 0, &p, TMEM_PUT_CAP(TMEM_NO_CAP)), -EBADMSG);
	p.codec = TMEM_CODEC_NONE;
	p.len = PG;
	ck_assert_int_eq(store_import_page(c, 1, &p, TMEM_PUT_CAP(TMEM_NO_CAP)), -ENOENT);
	ck_assert_int_eq(store_get_page(c, 0, &p.oid, 5, got), 0);
	ck_assert_int_eq(store_import_page(NULL, 0, &p, TMEM_PUT_CAP(TMEM_NO_CAP)), -EINVAL);
	ck_assert_int_eq(store_export_pages(c, 3, &(struct tmem_export_cursor){ 0 },
					    import_one, NULL), -ENOENT);
	store_destroy(s);
}
END_TEST

START_TEST(test_set_ident_moves_claims)
{
	struct tmem_store *s = mkstore(256, 0);
	struct tmem_ident staged = { { 'M', 1, 2, 3 } }, real = { { 'L', 1, 2, 3 } }, got;
	struct tmem_client *c, *again;

	ck_assert_int_eq(store_client_create_ident(s, "g", &staged, &c), 0);
	store_client_detach(c);
	ck_assert_int_eq(store_client_claim(s, "g", &real, &again), -EPERM);
	ck_assert_int_eq(store_client_claim(s, "g", &staged, &again), 0);
	store_client_set_ident(again, &real);
	store_client_ident(again, &got);
	ck_assert_mem_eq(got.b, real.b, TMEM_IDENT_LEN);
	store_client_detach(again);
	ck_assert_int_eq(store_client_claim(s, "g", &staged, &c), -EPERM);
	ck_assert_int_eq(store_client_claim(s, "g", &real, &c), 0);
	store_destroy(s);
}
END_TEST

void add_transfer_tests(Suite *suite)
{
	TCase *tc = tcase_create("transfer");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_transfer_lz4);
	tcase_add_test(tc, test_transfer_zstd_small_batches);
	tcase_add_test(tc, test_transfer_raw_one_by_one);
	tcase_add_test(tc, test_import_refuses_garbage);
	tcase_add_test(tc, test_set_ident_moves_claims);
	suite_add_tcase(suite, tc);
}
