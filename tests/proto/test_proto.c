/*
 * proto/: constants and the geometry and ring helpers.  Sizes and offsets
 * of the ABI structs are _Static_asserts in the headers (a wrong one does
 * not build), so no test repeats them here.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/test_main.h"
#include "tmem_compress.h"
#include "tmem_names.h"
#include "tmem_proto.h"

START_TEST(test_xen_numbers)
{
	ck_assert_int_eq(TMEM_OP_NEW_POOL, 1);
	ck_assert_int_eq(TMEM_OP_DESTROY_POOL, 2);
	ck_assert_int_eq(TMEM_OP_PUT_PAGE, 4);
	ck_assert_int_eq(TMEM_OP_GET_PAGE, 5);
	ck_assert_int_eq(TMEM_OP_FLUSH_PAGE, 6);
	ck_assert_int_eq(TMEM_OP_FLUSH_OBJECT, 7);
	ck_assert_uint_eq(TMEM_POOL_PERSIST, 1);
	ck_assert_uint_eq(TMEM_POOL_SHARED, 2);
	ck_assert_uint_eq(tmem_pool_flags(0), 0x01000000u);
	ck_assert_uint_eq(TMEM_POOL_VALID_MASK & TMEM_POOL_RESERVED_MASK, 0);
	ck_assert_uint_eq(TMEM_POOL_VALID_MASK & TMEM_POOL_PRECOMPRESSED, 0);
}
END_TEST

START_TEST(test_errno_values)
{
	ck_assert_int_eq(TMEM_EPERM, EPERM);
	ck_assert_int_eq(TMEM_ENOENT, ENOENT);
	ck_assert_int_eq(TMEM_EIO, EIO);
	ck_assert_int_eq(TMEM_E2BIG, E2BIG);
	ck_assert_int_eq(TMEM_ENOMEM, ENOMEM);
	ck_assert_int_eq(TMEM_EBUSY, EBUSY);
	ck_assert_int_eq(TMEM_EEXIST, EEXIST);
	ck_assert_int_eq(TMEM_EINVAL, EINVAL);
	ck_assert_int_eq(TMEM_ENOSPC, ENOSPC);
	ck_assert_int_eq(TMEM_ERANGE, ERANGE);
	ck_assert_int_eq(TMEM_ENOSYS, ENOSYS);
	ck_assert_int_eq(TMEM_EPROTO, EPROTO);
	ck_assert_int_eq(TMEM_EUSERS, EUSERS);
	ck_assert_int_eq(TMEM_EOPNOTSUPP, EOPNOTSUPP);
}
END_TEST

START_TEST(test_geometry)
{
	ck_assert_int_eq(tmem_ring_geometry_check(32, 32), 0);
	ck_assert_int_eq(tmem_ring_geometry_check(2, 1), 0);
	ck_assert_int_eq(tmem_ring_geometry_check(1024, 1024), 0);
	ck_assert_int_eq(tmem_ring_geometry_check(0, 32), -TMEM_EINVAL);
	ck_assert_int_eq(tmem_ring_geometry_check(1, 32), -TMEM_EINVAL);
	ck_assert_int_eq(tmem_ring_geometry_check(48, 32), -TMEM_EINVAL);
	ck_assert_int_eq(tmem_ring_geometry_check(2048, 32), -TMEM_EINVAL);
	ck_assert_int_eq(tmem_ring_geometry_check(32, 0), -TMEM_EINVAL);
	ck_assert_int_eq(tmem_ring_geometry_check(32, 1025), -TMEM_EINVAL);
	ck_assert_int_eq(tmem_ring_geometry_check(0x80000000u, 32), -TMEM_EINVAL);
	ck_assert_uint_eq(tmem_slot_offset(32), 4096);
	ck_assert_uint_eq(tmem_slot_offset(60), 4096);
	ck_assert_uint_eq(tmem_slot_offset(64), 8192);
	ck_assert_uint_eq(tmem_slot_offset(1024), 69632);
	ck_assert_uint_eq(tmem_region_size(32, 16), 4096 + 16 * 4096);
}
END_TEST

START_TEST(test_slot_pointers)
{
	void *region = aligned_alloc(4096, tmem_region_size(64, 4));
	char *base = region;

	ck_assert_ptr_nonnull(region);
	ck_assert_ptr_eq((char *)tmem_ring_entries(region), base + 256);
	ck_assert_ptr_eq((char *)tmem_slot_ptr(region, 64, 0), base + 8192);
	ck_assert_ptr_eq((char *)tmem_slot_ptr(region, 64, 3), base + 8192 + 3 * 4096);
	free(region);
}
END_TEST

START_TEST(test_notify_holdoff)
{
	/* Peer asked to be woken when prod passes 5. */
	ck_assert(tmem_ring_need_notify(4, 5, 5));
	ck_assert(tmem_ring_need_notify(0, 8, 5));
	ck_assert(!tmem_ring_need_notify(5, 8, 5));
	ck_assert(!tmem_ring_need_notify(1, 4, 5));
	/* Across the 32-bit wrap. */
	ck_assert(tmem_ring_need_notify(0xfffffffeu, 2, 0xffffffffu));
	ck_assert(tmem_ring_need_notify(0xfffffffeu, 2, 1));
	ck_assert(!tmem_ring_need_notify(0xfffffffeu, 2, 3));
}
END_TEST

/* Issue 19 item 11: one syntax for who a client is (proto/tmem_names.h). */
START_TEST(test_principals)
{
	static const struct {
		const char *text;
		int rc, kind;
		const char *canon;
	} cases[] = {
		{ "domid:5", 0, TMEM_PRINCIPAL_XEN, "domid:5" },
		{ "5", 0, TMEM_PRINCIPAL_XEN, "domid:5" },
		{ "0", 0, TMEM_PRINCIPAL_XEN, "domid:0" },
		{ "domid:32751", 0, TMEM_PRINCIPAL_XEN, "domid:32751" },
		{ "4242", 0, TMEM_PRINCIPAL_XEN, "domid:4242" },
		{ "web1", 0, TMEM_PRINCIPAL_LOCAL, "web1" },
		{ "dom5", 0, TMEM_PRINCIPAL_LOCAL, "dom5" },
		{ "domid5", 0, TMEM_PRINCIPAL_LOCAL, "domid5" },
		{ "5a", 0, TMEM_PRINCIPAL_LOCAL, "5a" },
		{ "Domid:5", 0, TMEM_PRINCIPAL_LOCAL, "Domid:5" },
		{ "domid:05", TMEM_PRINCIPAL_EBADDOMID, 0, NULL },
		{ "05", TMEM_PRINCIPAL_EBADDOMID, 0, NULL },
		{ "domid:32752", TMEM_PRINCIPAL_EBADDOMID, 0, NULL },
		{ "99999999999", TMEM_PRINCIPAL_EBADDOMID, 0, NULL },
		{ "domid:", TMEM_PRINCIPAL_EBADDOMID, 0, NULL },
		{ "domid:x", TMEM_PRINCIPAL_EBADDOMID, 0, NULL },
		{ "domid:5:6", TMEM_PRINCIPAL_EBADDOMID, 0, NULL },
		{ "", TMEM_PRINCIPAL_EBADNAME, 0, NULL },
		{ "a b", TMEM_PRINCIPAL_EBADNAME, 0, NULL },
	};
	struct tmem_principal p, q;
	char text[TMEM_PRINCIPAL_TEXT_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = tmem_principal_parse(cases[i].text, 0, &p);

		ck_assert_msg(rc == cases[i].rc, "%s: %d", cases[i].text, rc);
		if (rc) {
			ck_assert_int_eq(p.kind, TMEM_PRINCIPAL_NONE);
			ck_assert_ptr_nonnull(strstr(tmem_principal_strerror(rc), "domid:N"));
			continue;
		}
		ck_assert_int_eq(p.kind, cases[i].kind);
		tmem_principal_format(&p, text);
		ck_assert_str_eq(text, cases[i].canon);
		ck_assert_int_eq(tmem_principal_parse(text, TMEM_PRINCIPAL_CANONICAL, &q), 0);
		ck_assert(tmem_principal_eq(&p, &q));
	}
	ck_assert_int_eq(tmem_principal_parse("5", TMEM_PRINCIPAL_CANONICAL, &p),
			 TMEM_PRINCIPAL_ENOTCANON);
	/* A domain and a local client are never the same principal. */
	ck_assert_int_eq(tmem_principal_parse("domid:5", 0, &p), 0);
	ck_assert_int_eq(tmem_principal_parse("dom5", 0, &q), 0);
	ck_assert(!tmem_principal_eq(&p, &q));
	ck_assert(!tmem_local_name_valid("domid:5") && !tmem_local_name_valid("4242"));
	ck_assert(tmem_local_name_valid("dom5"));
}
END_TEST

/* The one compression grammar (tmemd.conf, the control protocol, tmemctl):
 * every level the daemon refuses, tmemctl refuses too. */
START_TEST(test_compress_grammar)
{
	static const struct {
		const char *text;
		enum tmem_compress_result r;
		const char *canon;
	} cases[] = {
		{ "off", TMEM_COMPRESS_OK, "off" },
		{ "lz4", TMEM_COMPRESS_OK, "lz4" },
		{ "zstd", TMEM_COMPRESS_OK, "zstd:3" },
		{ "zstd:1", TMEM_COMPRESS_OK, "zstd:1" },
		{ "zstd:19", TMEM_COMPRESS_OK, "zstd:19" },
		{ "zstd:07", TMEM_COMPRESS_OK, "zstd:7" },
		{ "zstd:0", TMEM_COMPRESS_RANGE, NULL },
		{ "zstd:20", TMEM_COMPRESS_RANGE, NULL },
		{ "zstd:99", TMEM_COMPRESS_RANGE, NULL },
		{ "zstd:99999999999999999999", TMEM_COMPRESS_RANGE, NULL },
		{ "zstd:3x", TMEM_COMPRESS_SYNTAX, NULL },
		{ "zstd:", TMEM_COMPRESS_SYNTAX, NULL },
		{ "zstd:-1", TMEM_COMPRESS_SYNTAX, NULL },
		{ "lz4 ", TMEM_COMPRESS_SYNTAX, NULL },
		{ "", TMEM_COMPRESS_SYNTAX, NULL },
		{ "on", TMEM_COMPRESS_OLD_FORM, NULL },
	};
	struct tmem_compress cz = { TMEM_COMPRESS_LZ4, 0 };
	char text[TMEM_COMPRESS_TEXT_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(tmem_compress_parse(cases[i].text, &cz) == cases[i].r,
			      "\"%s\"", cases[i].text);
		if (!cases[i].canon)
			continue;
		ck_assert(tmem_compress_valid(&cz));
		ck_assert_str_eq(tmem_compress_format(&cz, text, sizeof(text)), cases[i].canon);
	}
	ck_assert_str_eq(TMEM_COMPRESS_VALUES, "off, lz4, zstd or zstd:LEVEL (1..19)");
	cz.algo = TMEM_COMPRESS_ZSTD;
	cz.level = 19;
	ck_assert_str_eq(tmem_compress_format(&cz, text, 5), "zstd");
}
END_TEST

START_TEST(test_prod_overflow)
{
	ck_assert(!tmem_ring_prod_overflow(32, 0, 32));
	ck_assert(tmem_ring_prod_overflow(33, 0, 32));
	ck_assert(!tmem_ring_prod_overflow(5, 0xfffffff0u, 32));
	ck_assert(tmem_ring_prod_overflow(0xfffffff0u, 5, 32)); /* went backwards */
	ck_assert(!tmem_ring_prod_overflow(7, 7, 32));
}
END_TEST

static Suite *proto_suite(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("abi");

	tcase_add_test(tc, test_xen_numbers);
	tcase_add_test(tc, test_errno_values);
	tcase_add_test(tc, test_geometry);
	tcase_add_test(tc, test_slot_pointers);
	tcase_add_test(tc, test_notify_holdoff);
	tcase_add_test(tc, test_prod_overflow);
	tcase_add_test(tc, test_principals);
	tcase_add_test(tc, test_compress_grammar);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(proto_suite(), 0);
}
