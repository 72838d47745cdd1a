/* pools/: one test per semantic point and per rejected flag or argument. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pool_helpers.h"
#include "internal.h"
#include "test_pools.h"

static struct tmem_store *s;
static struct tmem_client *a, *b;
static uint8_t buf[PG], out[PG];
static const struct tmem_oid O1 = { { 1, 2, 3 } }, O2 = { { 4, 5, 6 } };
static const struct tmem_uuid U1 = { 0x1111, 0x2222 }, U2 = { 0x3333, 0x4444 };

static void setup(void)
{
	s = mkstore(256, 1024);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(store_client_create(s, "domid:1", &a), 0);
	ck_assert_int_eq(store_client_create(s, "domid:2", &b), 0);
}

static void teardown(void)
{
	store_destroy(s);
	s = NULL;
}

static int put(struct tmem_client *c, int id, const struct tmem_oid *o,
	       uint32_t idx, uint64_t seed)
{
	page_fill(buf, seed);
	return store_put_page(c, id, o, idx, buf, TMEM_PUT_CAP(TMEM_NO_CAP));
}

static int get_is(struct tmem_client *c, int id, const struct tmem_oid *o,
		  uint32_t idx, uint64_t seed)
{
	int ret = store_get_page(c, id, o, idx, out);

	if (ret == 1 && !page_check(out, seed))
		return -999;
	return ret;
}

static uint64_t free_pages(void)
{
	struct tmem_arena_counts ac;

	store_arena_counts(s, &ac);
	return ac.free_pages;
}

/* ---- argument and flag checks -------------------------------------------- */

START_TEST(test_store_create_rejects)
{
	struct tmem_store_config cfg = { .arena_bytes = 0 };
	struct tmem_store *t;

	ck_assert_int_eq(store_create(NULL, &t), -EINVAL);
	ck_assert_int_eq(store_create(&cfg, NULL), -EINVAL);
	ck_assert_int_eq(store_create(&cfg, &t), -EINVAL);
	cfg.arena_bytes = 100; /* less than a page */
	ck_assert_int_eq(store_create(&cfg, &t), -EINVAL);
	cfg.arena_bytes = 16 * PG;
	cfg.max_arena_bytes = 8 * PG;
	ck_assert_int_eq(store_create(&cfg, &t), -EINVAL);
	store_destroy(NULL);
}
END_TEST

START_TEST(test_store_lock_and_prefault)
{
	struct tmem_store_config cfg = { .arena_bytes = 64 * PG,
					 .max_arena_bytes = 128 * PG,
					 .lock_memory = true, .prefault = true };
	struct tmem_store *t;
	struct tmem_client *c;
	int ret = store_create(&cfg, &t);

	if (ret == -EPERM || ret == -ENOMEM || ret == -EAGAIN)
		return; /* no mlock allowance here; the unlocked path is tested everywhere */
	ck_assert_int_eq(ret, 0);
	ck_assert_int_eq(store_client_create(t, "x", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	page_fill(buf, 5);
	ck_assert_int_eq(store_put_page(c, 0, &O1, 0, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	ck_assert_int_eq(store_resize(t, 128), 0);
	ck_assert_int_eq(store_resize(t, 32), 0);
	ck_assert_int_eq(store_get_page(c, 0, &O1, 0, out), 1);
	ck_assert(page_check(out, 5));
	store_destroy(t);
}
END_TEST

START_TEST(test_client_create_rejects)
{
	struct tmem_client *c;
	char longname[TMEM_CLIENT_NAME_MAX + 1];

	memset(longname, 'x', sizeof(longname) - 1);
	longname[TMEM_CLIENT_NAME_MAX] = 0;
	ck_assert_int_eq(store_client_create(NULL, "x", &c), -EINVAL);
	ck_assert_int_eq(store_client_create(s, NULL, &c), -EINVAL);
	ck_assert_int_eq(store_client_create(s, "", &c), -EINVAL);
	ck_assert_int_eq(store_client_create(s, "x", NULL), -EINVAL);
	ck_assert_int_eq(store_client_create(s, longname, &c), -EINVAL);
	ck_assert_int_eq(store_client_create(s, "domid:1", &c), -EEXIST);
	ck_assert_int_eq(store_client_create(s, "shared", &c), -EEXIST);
	longname[TMEM_CLIENT_NAME_MAX - 1] = 0; /* 63 chars: the longest allowed */
	ck_assert_int_eq(store_client_create(s, longname, &c), 0);
	ck_assert_str_eq(store_client_name(c), longname);
	ck_assert_uint_ne(store_client_id(c), store_client_id(a));
	ck_assert_ptr_null(store_client_name(NULL));
	ck_assert_uint_eq(store_client_id(NULL), 0);
	store_client_destroy(NULL);
	store_client_destroy(store_shared_client(s)); /* ignored */
	ck_assert_ptr_null(store_shared_client(NULL));
}
END_TEST

START_TEST(test_new_pool_rejects_reserved_bits)
{
	ck_assert_int_eq(store_new_pool(a, EPH | 0x100, NULL), -EINVAL);
	ck_assert_int_eq(store_new_pool(a, EPH | 0x00800000, NULL), -EINVAL);
}
END_TEST

START_TEST(test_new_pool_rejects_unknown_bit)
{
	ck_assert_int_eq(store_new_pool(a, EPH | 0x8, NULL), -EINVAL);
}
END_TEST

START_TEST(test_new_pool_rejects_precompressed)
{
	ck_assert_int_eq(store_new_pool(a, EPH | TMEM_POOL_PRECOMPRESSED, NULL), -EINVAL);
}
END_TEST

START_TEST(test_new_pool_rejects_page_size)
{
	ck_assert_int_eq(store_new_pool(a, EPH | (1u << TMEM_POOL_PAGESIZE_SHIFT), NULL),
			 -EINVAL);
	ck_assert_int_eq(store_new_pool(a, EPH | (0xfu << TMEM_POOL_PAGESIZE_SHIFT), NULL),
			 -EINVAL);
}
END_TEST

START_TEST(test_new_pool_rejects_version)
{
	ck_assert_int_eq(store_new_pool(a, 0, NULL), -EINVAL);
	ck_assert_int_eq(store_new_pool(a, 2u << TMEM_POOL_VERSION_SHIFT, NULL), -EINVAL);
	ck_assert_int_eq(store_new_pool(a, 0xffu << TMEM_POOL_VERSION_SHIFT, NULL), -EINVAL);
}
END_TEST

START_TEST(test_new_pool_rejects_shared_persistent)
{
	store_shared_auth(s, &U1, "domid:1", true);
	ck_assert_int_eq(store_new_pool(a, tmem_pool_flags(TMEM_POOL_SHARED |
							   TMEM_POOL_PERSIST), &U1),
			 -EPERM);
}
END_TEST

START_TEST(test_new_pool_rejects_bad_args)
{
	ck_assert_int_eq(store_new_pool(NULL, EPH, NULL), -EINVAL);
	ck_assert_int_eq(store_new_pool(a, SHR, NULL), -EINVAL);
	ck_assert_int_eq(store_new_pool(store_shared_client(s), EPH, NULL), -EINVAL);
}
END_TEST

START_TEST(test_pool_limit)
{
	for (int i = 0; i < TMEM_MAX_POOLS_PER_CLIENT; i++)
		ck_assert_int_eq(store_new_pool(a, EPH, NULL), i);
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), -ENOSPC);
	ck_assert_int_eq(store_destroy_pool(a, 7), 1);
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 7); /* lowest free id */
}
END_TEST

START_TEST(test_unknown_pool_ids)
{
	const int32_t bad[] = { -1, -100, 0, 5, TMEM_MAX_POOLS_PER_CLIENT, INT32_MAX };

	page_fill(buf, 1);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(store_put_page(a, bad[i], &O1, 0, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), -ENOENT);
		ck_assert_int_eq(store_get_page(a, bad[i], &O1, 0, out), -ENOENT);
		ck_assert_int_eq(store_flush_page(a, bad[i], &O1, 0), -ENOENT);
		ck_assert_int_eq(store_flush_object(a, bad[i], &O1), -ENOENT);
		ck_assert_int_eq(store_destroy_pool(a, bad[i]), -ENOENT);
	}
	ck_assert_int_eq(store_destroy_pool(NULL, 0), -EINVAL);
}
END_TEST

START_TEST(test_null_op_args)
{
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	page_fill(buf, 1);
	ck_assert_int_eq(store_put_page(NULL, 0, &O1, 0, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), -EINVAL);
	ck_assert_int_eq(store_put_page(a, 0, NULL, 0, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), -EINVAL);
	ck_assert_int_eq(store_put_page(a, 0, &O1, 0, NULL, TMEM_PUT_CAP(TMEM_NO_CAP)), -EINVAL);
	ck_assert_int_eq(store_get_page(NULL, 0, &O1, 0, out), -EINVAL);
	ck_assert_int_eq(store_get_page(a, 0, NULL, 0, out), -EINVAL);
	ck_assert_int_eq(store_get_page(a, 0, &O1, 0, NULL), -EINVAL);
	ck_assert_int_eq(store_flush_page(NULL, 0, &O1, 0), -EINVAL);
	ck_assert_int_eq(store_flush_page(a, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(store_flush_object(NULL, 0, &O1), -EINVAL);
	ck_assert_int_eq(store_flush_object(a, 0, NULL), -EINVAL);
}
END_TEST

/* ---- get semantics --------------------------------------------------------- */

START_TEST(test_private_ephemeral_get_is_exclusive)
{
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(put(a, 0, &O1, 7, 42), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 7, 42), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 7, 42), 0);
	ck_assert_uint_eq(free_pages(), 256);
}
END_TEST

START_TEST(test_persistent_get_is_not_exclusive)
{
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	ck_assert_int_eq(put(a, 0, &O1, 7, 42), 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(get_is(a, 0, &O1, 7, 42), 1);
}
END_TEST

START_TEST(test_shared_get_is_not_exclusive)
{
	ck_assert_int_eq(store_shared_auth(s, &U1, "domid:1", true), 0);
	ck_assert_int_eq(store_shared_auth(s, &U1, "domid:2", true), 0);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0);
	ck_assert_int_eq(store_new_pool(b, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(b, SHR, &U1), 1);
	ck_assert_int_eq(put(a, 0, &O1, 1, 9), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 1, 9), 1);
	ck_assert_int_eq(get_is(b, 1, &O1, 1, 9), 1); /* the other sharer sees it */
	ck_assert_int_eq(get_is(b, 1, &O1, 1, 9), 1);
}
END_TEST

START_TEST(test_shared_get_moves_page_to_lru_tail)
{
	struct tmem_client *sc = store_shared_client(s);

	store_shared_auth(s, &U1, "domid:1", true);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0);
	ck_assert_int_eq(put(a, 0, &O1, 1, 1), 1); /* oldest */
	ck_assert_int_eq(put(a, 0, &O1, 2, 2), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 1, 1), 1); /* now the newest */
	ck_assert_int_eq(store_client_evict_oldest(sc), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 2, 2), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 1, 1), 1);
}
END_TEST

/* ---- coherency ------------------------------------------------------------- */

START_TEST(test_put_put_get)
{
	struct tmem_page_counts pc;

	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	ck_assert_int_eq(put(a, 0, &O1, 3, 100), 1);
	ck_assert_int_eq(put(a, 0, &O1, 3, 200), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 3, 200), 1);
	store_client_page_counts(a, &pc);
	ck_assert_uint_eq(pc.persistent, 1); /* replaced, not added */
}
END_TEST

START_TEST(test_get_get_coherency)
{
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 3, 0), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 3, 0), 0);
	ck_assert_int_eq(put(a, 0, &O1, 3, 5), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 3, 5), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 3, 5), 0);
}
END_TEST

START_TEST(test_duplicate_put_at_cap_replaces)
{
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	page_fill(buf, 1);
	ck_assert_int_eq(store_put_page(a, 0, &O1, 0, buf, TMEM_PUT_CAP(1)), 1);
	page_fill(buf, 2);
	ck_assert_int_eq(store_put_page(a, 0, &O1, 0, buf, TMEM_PUT_CAP(1)), 1); /* at cap: still replaces */
	ck_assert_int_eq(store_put_page(a, 0, &O1, 1, buf, TMEM_PUT_CAP(1)), -EDQUOT);
	ck_assert_int_eq(store_put_page(a, 0, &O1, 0, buf, TMEM_PUT_CAP(0)), 1); /* below cap too */
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 2), 1);
}
END_TEST

START_TEST(test_cap_counts_per_kind)
{
	struct tmem_page_counts pc;

	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 1);
	page_fill(buf, 1);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_int_eq(store_put_page(a, 0, &O1, i, buf, TMEM_PUT_CAP(3)), 1);
	ck_assert_int_eq(store_put_page(a, 0, &O1, 3, buf, TMEM_PUT_CAP(3)), -EDQUOT);
	ck_assert_int_eq(store_put_page(a, 1, &O1, 0, buf, TMEM_PUT_CAP(3)), 1); /* other kind */
	store_client_page_counts(a, &pc);
	ck_assert_uint_eq(pc.ephemeral, 3);
	ck_assert_uint_eq(pc.persistent, 1);
	store_client_page_counts(NULL, &pc);
	ck_assert_uint_eq(pc.ephemeral, 0);
	store_client_page_counts(a, NULL);
}
END_TEST

START_TEST(test_arena_full_enospc)
{
	test_incompressible = true; /* counts frames */
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	for (uint32_t i = 0; i < 256; i++)
		ck_assert_int_eq(put(a, 0, &O1, i, i), 1);
	ck_assert_int_eq(put(a, 0, &O1, 256, 0), -ENOSPC);
	ck_assert_int_eq(put(a, 0, &O2, 0, 0), -ENOSPC); /* new object too */
	ck_assert_int_eq(put(a, 0, &O1, 5, 77), 1);     /* replace still works */
	ck_assert_int_eq(get_is(a, 0, &O1, 5, 77), 1);
	ck_assert_uint_eq(free_pages(), 0);
}
END_TEST

/* ---- flush and destroy ----------------------------------------------------- */

START_TEST(test_flush_page)
{
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	ck_assert_int_eq(put(a, 0, &O1, 1, 1), 1);
	ck_assert_int_eq(put(a, 0, &O1, 2, 2), 1);
	ck_assert_int_eq(store_flush_page(a, 0, &O1, 1), 1);
	ck_assert_int_eq(store_flush_page(a, 0, &O1, 1), 0);
	ck_assert_int_eq(store_flush_page(a, 0, &O2, 1), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 1, 1), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 2, 2), 1);
}
END_TEST

START_TEST(test_flush_object)
{
	test_incompressible = true; /* counts frames */
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	for (uint32_t i = 0; i < 10; i++) {
		ck_assert_int_eq(put(a, 0, &O1, i, i), 1);
		ck_assert_int_eq(put(a, 0, &O2, i, i + 100), 1);
	}
	ck_assert_int_eq(store_flush_object(a, 0, &O1), 1);
	ck_assert_int_eq(store_flush_object(a, 0, &O1), 0);
	for (uint32_t i = 0; i < 10; i++) {
		ck_assert_int_eq(get_is(a, 0, &O1, i, i), 0);
		ck_assert_int_eq(get_is(a, 0, &O2, i, i + 100), 1);
	}
	ck_assert_uint_eq(free_pages(), 246);
}
END_TEST

START_TEST(test_object_head_handover)
{
	/* Remove pages in every order relative to the head; the rest stay reachable. */
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	for (uint32_t i = 0; i < 5; i++)
		ck_assert_int_eq(put(a, 0, &O1, i, i), 1);
	ck_assert_int_eq(store_flush_page(a, 0, &O1, 0), 1); /* the head */
	ck_assert_int_eq(store_flush_page(a, 0, &O1, 3), 1); /* a middle one */
	ck_assert_int_eq(put(a, 0, &O1, 9, 9), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 1, 1), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 4, 4), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 9, 9), 1);
	ck_assert_int_eq(store_flush_object(a, 0, &O1), 1);
	ck_assert_uint_eq(free_pages(), 256);
}
END_TEST

START_TEST(test_object_chunks_reused)
{
	/* Objects come in chunks of 64 per pool; emptied chunks go back to
	 * the store, so one pool's churn never starves another. */
	int order[] = { 0, 1 };

	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	ck_assert_int_eq(store_new_pool(b, PERS, NULL), 0);
	for (int round = 0; round < 2; round++) {
		struct tmem_client *c = order[round] ? b : a;

		for (uint32_t i = 0; i < 256; i++) {
			struct tmem_oid o = mkoid(i, round, 0);

			ck_assert_int_eq(put(c, 0, &o, 0, i), 1);
		}
		/* Free scattered objects first, then the rest. */
		for (uint32_t i = 0; i < 256; i += 3) {
			struct tmem_oid o = mkoid(i, round, 0);

			ck_assert_int_eq(store_flush_object(c, 0, &o), 1);
		}
		for (uint32_t i = 0; i < 256; i++) {
			struct tmem_oid o = mkoid(i, round, 0);

			ck_assert_int_eq(get_is(c, 0, &o, 0, i), i % 3 ? 1 : 0);
			store_flush_object(c, 0, &o);
		}
	}
	/* 4 chunks for 256 objects, plus the empty one a's pool keeps. */
	ck_assert_uint_le(s->descs.chunk_bump, 256 / TMEM_OBJS_PER_CHUNK + 1);
	ck_assert_uint_eq(free_pages(), 256);
}
END_TEST

START_TEST(test_destroy_pool)
{
	test_incompressible = true; /* counts frames */
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 1);
	for (uint32_t i = 0; i < 20; i++) {
		ck_assert_int_eq(put(a, 0, &O1, i, i), 1);
		ck_assert_int_eq(put(a, 1, &O1, i, i), 1);
	}
	ck_assert_int_eq(store_destroy_pool(a, 0), 1);
	ck_assert_int_eq(store_destroy_pool(a, 0), -ENOENT);
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 0), -ENOENT);
	ck_assert_int_eq(get_is(a, 1, &O1, 0, 0), 1);
	ck_assert_uint_eq(free_pages(), 236);
	/* The id is reused, empty. */
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 1, 1), 0);
}
END_TEST

START_TEST(test_destroy_client_frees_everything)
{
	struct tmem_store_info si;

	store_shared_auth(s, &U1, "domid:1", true);
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 1);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 2);
	for (uint32_t i = 0; i < 30; i++)
		for (int p = 0; p < 3; p++)
			ck_assert_int_eq(put(a, p, &O1, i, i), 1);
	store_client_destroy(a);
	a = NULL;
	ck_assert_uint_eq(free_pages(), 256);
	store_info(s, &si);
	ck_assert_uint_eq(si.nr_clients, 1);
	ck_assert_uint_eq(si.arena.ephemeral + si.arena.persistent, 0);
}
END_TEST

START_TEST(test_private_pools_are_per_client)
{
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	ck_assert_int_eq(put(a, 0, &O1, 0, 1), 1);
	/* b's id 0 names nothing, then its own pool: never a's. */
	ck_assert_int_eq(get_is(b, 0, &O1, 0, 1), -ENOENT);
	ck_assert_int_eq(store_flush_object(b, 0, &O1), -ENOENT);
	ck_assert_int_eq(store_destroy_pool(b, 0), -ENOENT);
	ck_assert_int_eq(store_new_pool(b, PERS, NULL), 0);
	ck_assert_int_eq(get_is(b, 0, &O1, 0, 1), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 1), 1);
}
END_TEST

/* ---- shared pools ---------------------------------------------------------- */

START_TEST(test_shared_deny_by_default)
{
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), -EPERM);
	ck_assert_int_eq(store_shared_auth(s, &U1, "domid:2", true), 0);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), -EPERM); /* someone else's grant */
	ck_assert_int_eq(store_shared_auth(s, &U2, "domid:1", true), 0);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), -EPERM); /* another uuid's grant */
	ck_assert_int_eq(store_new_pool(a, SHR, &U2), 0);
}
END_TEST

START_TEST(test_shared_auth_rejects)
{
	char longname[TMEM_CLIENT_NAME_MAX + 1];

	memset(longname, 'y', TMEM_CLIENT_NAME_MAX);
	longname[TMEM_CLIENT_NAME_MAX] = 0;
	ck_assert_int_eq(store_shared_auth(NULL, &U1, "x", true), -EINVAL);
	ck_assert_int_eq(store_shared_auth(s, NULL, "x", true), -EINVAL);
	ck_assert_int_eq(store_shared_auth(s, &U1, NULL, true), -EINVAL);
	ck_assert_int_eq(store_shared_auth(s, &U1, "", true), -EINVAL);
	ck_assert_int_eq(store_shared_auth(s, &U1, longname, true), -EINVAL);
	ck_assert_int_eq(store_shared_auth(s, &U1, "x", false), 0); /* revoke nothing */
}
END_TEST

/*
 * Issue 19 item 11: authorisations name principals and match on kind and
 * domid or name.  Before, any 1..63-byte text was a principal matched
 * byte for byte, so "domid:05" or "5" was a grant no domain could use.
 */
START_TEST(test_shared_auth_principals)
{
	struct tmem_client *d5, *local5;

	ck_assert_int_eq(store_shared_auth(s, &U1, "domid:05", true), -EINVAL);
	ck_assert_int_eq(store_shared_auth(s, &U1, "5", true), -EINVAL); /* canonical only */
	ck_assert_int_eq(store_shared_auth(s, &U1, "domid:32752", true), -EINVAL);
	ck_assert_int_eq(store_shared_auth(s, &U1, "4242", true), -EINVAL);
	ck_assert_int_eq(store_shared_auth(s, &U1, "domid:5", true), 0);
	ck_assert_int_eq(store_client_create(s, "domid:5", &d5), 0);
	ck_assert_int_eq(store_client_create(s, "dom5", &local5), 0);
	ck_assert_int_eq(store_new_pool(local5, SHR, &U1), -EPERM);
	ck_assert_int_eq(store_new_pool(d5, SHR, &U1), 0);
	ck_assert_int_eq(store_shared_auth(s, &U2, "dom5", true), 0);
	ck_assert_int_eq(store_new_pool(d5, SHR, &U2), -EPERM);
	ck_assert_int_eq(store_new_pool(local5, SHR, &U2), 0);
	store_client_destroy(local5);
	store_client_destroy(d5);
}
END_TEST

START_TEST(test_shared_auth_table_full)
{
	char name[32];

	for (int i = 0; i < TMEM_MAX_SHARED_AUTH; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ck_assert_int_eq(store_shared_auth(s, &U1, name, true), 0);
	}
	ck_assert_int_eq(store_shared_auth(s, &U1, "n0", true), 0); /* already there */
	ck_assert_int_eq(store_shared_auth(s, &U1, "more", true), -ENOSPC);
	ck_assert_int_eq(store_shared_auth(s, &U1, "n3", false), 0);
	ck_assert_int_eq(store_shared_auth(s, &U1, "more", true), 0);
}
END_TEST

START_TEST(test_shared_join_same_uuid_same_pool)
{
	store_shared_auth(s, &U1, "domid:1", true);
	store_shared_auth(s, &U1, "domid:2", true);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0); /* rejoin: same id */
	ck_assert_int_eq(store_new_pool(b, SHR, &U1), 0);
	ck_assert_int_eq(put(b, 0, &O2, 4, 44), 1);
	ck_assert_int_eq(get_is(a, 0, &O2, 4, 44), 1);
	ck_assert_int_eq(store_flush_page(a, 0, &O2, 4), 1);
	ck_assert_int_eq(get_is(b, 0, &O2, 4, 44), 0);
}
END_TEST

START_TEST(test_shared_charged_to_shared_client)
{
	struct tmem_page_counts pc;

	store_shared_auth(s, &U1, "domid:1", true);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0);
	ck_assert_int_eq(put(a, 0, &O1, 0, 1), 1);
	store_client_page_counts(a, &pc);
	ck_assert_uint_eq(pc.ephemeral, 0);
	store_client_page_counts(store_shared_client(s), &pc);
	ck_assert_uint_eq(pc.ephemeral, 1);
	/* Evicting a's own pages cannot touch it. */
	ck_assert_int_eq(store_client_evict_oldest(a), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 1), 1);
}
END_TEST

START_TEST(test_shared_refcount)
{
	store_shared_auth(s, &U1, "domid:1", true);
	store_shared_auth(s, &U1, "domid:2", true);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0);
	ck_assert_int_eq(store_new_pool(b, SHR, &U1), 0);
	ck_assert_int_eq(put(a, 0, &O1, 0, 1), 1);
	ck_assert_int_eq(store_destroy_pool(a, 0), 1); /* b still holds it */
	ck_assert_int_eq(get_is(b, 0, &O1, 0, 1), 1);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 1), 1);
	ck_assert_int_eq(store_destroy_pool(a, 0), 1);
	ck_assert_int_eq(store_destroy_pool(b, 0), 1); /* last ref: the pool goes */
	ck_assert_uint_eq(free_pages(), 256);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 1), 0);
}
END_TEST

START_TEST(test_shared_client_destroy_drops_ref)
{
	store_shared_auth(s, &U1, "domid:1", true);
	store_shared_auth(s, &U1, "domid:2", true);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0);
	ck_assert_int_eq(store_new_pool(b, SHR, &U1), 0);
	ck_assert_int_eq(put(a, 0, &O1, 0, 1), 1);
	store_client_destroy(a);
	a = NULL;
	ck_assert_int_eq(get_is(b, 0, &O1, 0, 1), 1);
	store_client_destroy(b);
	b = NULL;
	ck_assert_uint_eq(free_pages(), 256);
}
END_TEST

START_TEST(test_shared_revoke_keeps_joined)
{
	store_shared_auth(s, &U1, "domid:1", true);
	store_shared_auth(s, &U1, "domid:2", true);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0);
	ck_assert_int_eq(store_shared_auth(s, &U1, "domid:1", false), 0);
	ck_assert_int_eq(store_shared_auth(s, &U1, "domid:2", false), 0);
	ck_assert_int_eq(put(a, 0, &O1, 0, 1), 1); /* a keeps its reference */
	ck_assert_int_eq(store_new_pool(b, SHR, &U1), -EPERM);
	ck_assert_int_eq(store_new_pool(a, SHR, &U2), -EPERM);
}
END_TEST

START_TEST(test_shared_pool_limit)
{
	struct tmem_uuid u = { 0, 0 };
	struct tmem_client *c[3];
	char name[16];

	c[0] = a;
	c[1] = b;
	ck_assert_int_eq(store_client_create(s, "domid:3", &c[2]), 0);
	for (int i = 0; i < TMEM_MAX_SHARED_POOLS; i++) {
		u.lo = i;
		snprintf(name, sizeof(name), "domid:%d", i / 32 + 1);
		ck_assert_int_eq(store_shared_auth(s, &u, name, true), 0);
		ck_assert_int_eq(store_new_pool(c[i / 32], SHR, &u), i % 32);
	}
	u.lo = 999;
	ck_assert_int_eq(store_shared_auth(s, &u, "domid:3", true), 0);
	ck_assert_int_eq(store_new_pool(c[2], SHR, &u), -ENOSPC);
	/* A client with no slot left cannot join (and leaves no pool behind). */
	ck_assert_int_eq(store_destroy_pool(a, 0), 1);
	ck_assert_int_eq(store_shared_auth(s, &u, "domid:2", true), 0);
	ck_assert_int_eq(store_new_pool(b, SHR, &u), -ENOSPC);
	ck_assert_int_eq(store_new_pool(c[2], SHR, &u), 0);
}
END_TEST

struct shared_seen {
	int pools;
	uint32_t sharers, principals;
	uint64_t pages;
};

static int count_shared(const struct tmem_shared_pool_info *i, void *ctx)
{
	struct shared_seen *seen = ctx;

	seen->pools++;
	seen->sharers += i->sharers;
	seen->principals += i->nr_principals;
	seen->pages += i->pages;
	return 0;
}

static int count_auth(const struct tmem_uuid *u, const char *p, void *ctx)
{
	(void)u;
	(void)p;
	return ++*(int *)ctx == 2 ? 7 : 0;
}

START_TEST(test_shared_iterators)
{
	struct shared_seen seen = { 0 };
	int n = 0;

	store_shared_auth(s, &U1, "domid:1", true);
	store_shared_auth(s, &U1, "domid:2", true);
	store_shared_auth(s, &U2, "nobody", true);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 0);
	ck_assert_int_eq(store_new_pool(b, SHR, &U1), 0);
	ck_assert_int_eq(put(a, 0, &O1, 0, 1), 1);
	ck_assert_int_eq(put(a, 0, &O1, 1, 1), 1);
	ck_assert_int_eq(store_for_each_shared_pool(s, count_shared, &seen), 0);
	ck_assert_int_eq(seen.pools, 1);
	ck_assert_uint_eq(seen.sharers, 2);
	ck_assert_uint_eq(seen.principals, 2);
	ck_assert_uint_eq(seen.pages, 2);
	ck_assert_int_eq(store_for_each_shared_auth(s, count_auth, &n), 7);
	ck_assert_int_eq(store_for_each_shared_pool(NULL, count_shared, &seen), -EINVAL);
	ck_assert_int_eq(store_for_each_shared_pool(s, NULL, &seen), -EINVAL);
	ck_assert_int_eq(store_for_each_shared_auth(s, NULL, NULL), -EINVAL);
}
END_TEST

/* ---- eviction -------------------------------------------------------------- */

START_TEST(test_evict_oldest_first)
{
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 1);
	ck_assert_int_eq(put(a, 0, &O1, 0, 10), 1);
	ck_assert_int_eq(put(a, 1, &O1, 0, 11), 1);
	ck_assert_int_eq(put(a, 0, &O1, 1, 12), 1);
	ck_assert_int_eq(put(a, 0, &O1, 0, 13), 1); /* replacing makes it newest */
	ck_assert_int_eq(store_client_evict_oldest(a), 1);
	ck_assert_int_eq(get_is(a, 1, &O1, 0, 11), 0);
	ck_assert_int_eq(store_client_evict_oldest(a), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 1, 12), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 13), 1);
	ck_assert_int_eq(store_client_evict_oldest(a), 0);
	ck_assert_int_eq(store_client_evict_oldest(NULL), 0);
}
END_TEST

START_TEST(test_evict_never_persistent)
{
	ck_assert_int_eq(store_new_pool(a, PERS, NULL), 0);
	ck_assert_int_eq(put(a, 0, &O1, 0, 1), 1);
	ck_assert_int_eq(store_client_evict_oldest(a), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 1), 1);
}
END_TEST

START_TEST(test_evict_skips_busy_pool)
{
	struct tmem_pool *busy;

	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 1);
	ck_assert_int_eq(put(a, 0, &O1, 0, 1), 1); /* oldest, in the busy pool */
	ck_assert_int_eq(put(a, 1, &O1, 0, 2), 1);
	busy = slot_lock_pool(a, 0); /* as if another thread were inside pool 0 */
	ck_assert_ptr_nonnull(busy);
	ck_assert_int_eq(store_client_evict_oldest(a), 1);
	pthread_mutex_unlock(&busy->lock);
	ck_assert_int_eq(get_is(a, 1, &O1, 0, 2), 0);
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 1), 1);
	/* Only busy candidates: nothing evicted. */
	ck_assert_int_eq(put(a, 0, &O1, 0, 1), 1);
	busy = slot_lock_pool(a, 0);
	ck_assert_int_eq(store_client_evict_oldest(a), 0);
	pthread_mutex_unlock(&busy->lock);
}
END_TEST

/* ---- counters and info ----------------------------------------------------- */

static int grab_pool(const struct tmem_pool_info *i, void *ctx)
{
	struct tmem_pool_info *infos = ctx;

	infos[i->id] = *i;
	return 0;
}

static int stop_at_first(const struct tmem_pool_info *i, void *ctx)
{
	(void)i;
	(void)ctx;
	return 42;
}

START_TEST(test_counters)
{
	struct tmem_pool_info pi[TMEM_MAX_POOLS_PER_CLIENT];
	struct tmem_client_info ci;
	struct tmem_store_info si;

	store_shared_auth(s, &U1, "domid:1", true);
	ck_assert_int_eq(store_new_pool(a, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(a, SHR, &U1), 1);
	ck_assert_int_eq(put(a, 0, &O1, 0, 1), 1);
	ck_assert_int_eq(put(a, 0, &O1, 1, 1), 1);
	ck_assert_int_eq(put(a, 1, &O1, 0, 1), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 1), 1);
	ck_assert_int_eq(get_is(a, 0, &O1, 0, 1), 0);
	ck_assert_int_eq(store_flush_page(a, 0, &O2, 0), 0);
	ck_assert_int_eq(store_flush_object(a, 1, &O1), 1);
	ck_assert_int_eq(store_client_evict_oldest(a), 1);
	store_count_put_failure(a, 0, TMEM_PUT_FAIL_FROZEN);
	store_count_put_failure(a, 0, TMEM_PUT_FAIL_NR); /* ignored */
	store_count_put_failure(a, -1, TMEM_PUT_FAIL_FULL);
	store_count_put_failure(NULL, 0, TMEM_PUT_FAIL_FULL);

	store_client_info(a, &ci);
	ck_assert_str_eq(ci.name, "domid:1");
	ck_assert_uint_eq(ci.nr_pools, 2);
	ck_assert_uint_eq(ci.ops.puts, 4);
	ck_assert_uint_eq(ci.ops.succ_puts, 3);
	ck_assert_uint_eq(ci.ops.failed_puts[TMEM_PUT_FAIL_FROZEN], 1);
	ck_assert_uint_eq(ci.ops.gets, 2);
	ck_assert_uint_eq(ci.ops.succ_gets, 1);
	ck_assert_uint_eq(ci.ops.failed_gets, 1);
	ck_assert_uint_eq(ci.ops.flush_pages, 1);
	ck_assert_uint_eq(ci.ops.flush_objects, 1);
	ck_assert_uint_eq(ci.ops.evictions, 1);
	ck_assert_uint_eq(ci.pages.ephemeral, 0);

	ck_assert_int_eq(store_client_for_each_pool(a, grab_pool, pi), 0);
	ck_assert(!pi[0].shared && !pi[0].persistent);
	ck_assert_uint_eq(pi[0].ops.puts, 3);
	ck_assert_uint_eq(pi[0].ops.evictions, 1);
	ck_assert_uint_eq(pi[0].sharers, 1);
	ck_assert(pi[1].shared);
	ck_assert_uint_eq(pi[1].uuid.lo, U1.lo);
	ck_assert_uint_eq(pi[1].ops.puts, 1);
	ck_assert_uint_eq(pi[1].pages, 0);
	ck_assert_int_eq(store_client_for_each_pool(a, stop_at_first, NULL), 42);
	ck_assert_int_eq(store_client_for_each_pool(NULL, grab_pool, pi), -EINVAL);
	ck_assert_int_eq(store_client_for_each_pool(a, NULL, pi), -EINVAL);

	store_info(s, &si);
	ck_assert_uint_eq(si.evictions, 1);
	ck_assert_uint_eq(si.nr_clients, 2);
	ck_assert_uint_gt(si.metadata_bytes, 0);
	ck_assert_uint_eq(si.arena.total_pages, 256);
	store_info(NULL, &si);
	ck_assert_uint_eq(si.nr_clients, 0);
	store_info(s, NULL);
	store_client_info(NULL, &ci);
	ck_assert_uint_eq(ci.id, 0);
	store_client_info(a, NULL);
	store_arena_counts(NULL, &si.arena);
	store_arena_counts(s, NULL);
}
END_TEST

START_TEST(test_many_pages_grow_tables)
{
	/* Enough pages and objects to double both hash tables several times. */
	struct tmem_store *big = mkstore(20000, 20000);
	struct tmem_client *c;
	struct tmem_store_info si;

	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(store_client_create(big, "big", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	for (uint32_t i = 0; i < 20000; i++) {
		struct tmem_oid o = mkoid(i % 5000, 0, 7);

		page_fill(buf, i);
		ck_assert_int_eq(store_put_page(c, 0, &o, i, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	}
	for (uint32_t i = 0; i < 20000; i += 7) {
		struct tmem_oid o = mkoid(i % 5000, 0, 7);

		ck_assert_int_eq(store_get_page(c, 0, &o, i, out), 1);
		ck_assert(page_check(out, i));
	}
	store_info(big, &si);
	ck_assert_uint_le(si.metadata_bytes / 20000, 64);
	store_destroy(big);
}
END_TEST

void add_semantics_tests(Suite *suite)
{
	TCase *tc = tcase_create("semantics");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_store_create_rejects);
	tcase_add_test(tc, test_store_lock_and_prefault);
	tcase_add_test(tc, test_client_create_rejects);
	tcase_add_test(tc, test_new_pool_rejects_reserved_bits);
	tcase_add_test(tc, test_new_pool_rejects_unknown_bit);
	tcase_add_test(tc, test_new_pool_rejects_precompressed);
	tcase_add_test(tc, test_new_pool_rejects_page_size);
	tcase_add_test(tc, test_new_pool_rejects_version);
	tcase_add_test(tc, test_new_pool_rejects_shared_persistent);
	tcase_add_test(tc, test_new_pool_rejects_bad_args);
	tcase_add_test(tc, test_pool_limit);
	tcase_add_test(tc, test_unknown_pool_ids);
	tcase_add_test(tc, test_null_op_args);
	tcase_add_test(tc, test_private_ephemeral_get_is_exclusive);
	tcase_add_test(tc, test_persistent_get_is_not_exclusive);
	tcase_add_test(tc, test_shared_get_is_not_exclusive);
	tcase_add_test(tc, test_shared_get_moves_page_to_lru_tail);
	tcase_add_test(tc, test_put_put_get);
	tcase_add_test(tc, test_get_get_coherency);
	tcase_add_test(tc, test_duplicate_put_at_cap_replaces);
	tcase_add_test(tc, test_cap_counts_per_kind);
	tcase_add_test(tc, test_arena_full_enospc);
	tcase_add_test(tc, test_flush_page);
	tcase_add_test(tc, test_flush_object);
	tcase_add_test(tc, test_object_head_handover);
	tcase_add_test(tc, test_object_chunks_reused);
	tcase_add_test(tc, test_destroy_pool);
	tcase_add_test(tc, test_destroy_client_frees_everything);
	tcase_add_test(tc, test_private_pools_are_per_client);
	tcase_add_test(tc, test_shared_deny_by_default);
	tcase_add_test(tc, test_shared_auth_rejects);
	tcase_add_test(tc, test_shared_auth_principals);
	tcase_add_test(tc, test_shared_auth_table_full);
	tcase_add_test(tc, test_shared_join_same_uuid_same_pool);
	tcase_add_test(tc, test_shared_charged_to_shared_client);
	tcase_add_test(tc, test_shared_refcount);
	tcase_add_test(tc, test_shared_client_destroy_drops_ref);
	tcase_add_test(tc, test_shared_revoke_keeps_joined);
	tcase_add_test(tc, test_shared_pool_limit);
	tcase_add_test(tc, test_shared_iterators);
	tcase_add_test(tc, test_evict_oldest_first);
	tcase_add_test(tc, test_evict_never_persistent);
	tcase_add_test(tc, test_evict_skips_busy_pool);
	tcase_add_test(tc, test_counters);
	tcase_add_test(tc, test_many_pages_grow_tables);
	suite_add_tcase(suite, tc);
}
