/*
 * pools/: the host tier (issue 29).  Pages spill and come back with the
 * same bytes, through a restart too; flushes and overwrites of spilled
 * pages give their space back; a tier that does not go with the arena
 * (wrong size, truncated, another arena's, damaged, blank while the arena
 * names it, missing, not writable) is refused; a full device (ENOSPC
 * mid-spill) leaves every page in RAM.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "durable_helpers.h"
#include "test_pools.h"
#include "tier_helpers.h"

/* Put n persistent pages of every kind (compressible, incompressible,
 * same-filled) at indices [start, start + n). */
static void put_mix(struct tmem_client *c, int32_t pool, unsigned start, unsigned n)
{
	for (unsigned i = start; i < start + n; i++) {
		struct tmem_oid o = mkoid(i / 7, 1, 0);
		uint8_t pg[PG];

		tier_page(pg, i, 0);
		ck_assert_int_eq(store_put_page(c, pool, &o, i, pg, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	}
}

static unsigned check_mix(struct tmem_client *c, int32_t pool, unsigned start, unsigned n,
			  unsigned gen)
{
	unsigned bad = 0;

	for (unsigned i = start; i < start + n; i++) {
		struct tmem_oid o = mkoid(i / 7, 1, 0);
		uint8_t pg[PG], want[PG];

		tier_page(want, i, gen);
		if (store_get_page(c, pool, &o, i, pg) != 1 || memcmp(pg, want, PG) != 0)
			bad++;
	}
	return bad;
}

START_TEST(tier_spill_and_read_back)
{
	struct tier_fixture f;
	struct tmem_tier_info ti;
	struct tmem_client_info ci;
	int64_t n;

	tier_fixture_open(&f, 256, 4 << 20);
	put_mix(f.c, 0, 0, 200);
	n = store_spill(f.s, 1000);
	ck_assert_int_gt(n, 100); /* every page but the same-filled ones */
	store_tier_info(f.s, &ti);
	ck_assert(ti.configured);
	ck_assert_uint_eq(ti.st.pages, (uint64_t)n);
	ck_assert_uint_gt(ti.used_bytes, 0);
	ck_assert_uint_eq(ti.write_errors, 0);
	/* Few writes: the batch goes out in runs of adjacent objects. */
	ck_assert_uint_le(ti.writes, 2);
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 200, 0), 0);
	store_client_info(f.c, &ci);
	ck_assert_uint_eq(ci.tier.pages, (uint64_t)n);
	ck_assert_uint_ge(ci.tier.readbacks, (uint64_t)n);
	/* Compression figures are of the pages in memory: the same-filled
	 * ones that stayed, taking no bytes (not 200 pages over 0 bytes). */
	ck_assert_uint_eq(ci.z.pages + ci.tier.pages, 200);
	ck_assert_uint_eq(ci.z.pages, ci.z.same_pages);
	ck_assert_uint_eq(ci.z.compr_data_size, 0);
	ck_assert_uint_gt(ci.tier.readback_p50_ns, 0);
	store_tier_info(f.s, &ti);
	ck_assert_uint_eq(ti.read_errors, 0);
	/* Nothing left to spill. */
	ck_assert_int_eq(store_spill(f.s, 10), 0);
	tier_fixture_close(&f);
}
END_TEST

START_TEST(tier_flush_and_overwrite_free_space)
{
	struct tier_fixture f;
	struct tmem_tier_info ti, t0;
	uint8_t pg[PG];

	tier_fixture_open(&f, 256, 4 << 20);
	put_mix(f.c, 0, 0, 100);
	ck_assert_int_gt(store_spill(f.s, 1000), 0);
	store_tier_info(f.s, &t0);
	/* Flush half, overwrite the other half: the tier empties. */
	for (unsigned i = 0; i < 100; i++) {
		struct tmem_oid o = mkoid(i / 7, 1, 0);

		if (i % 2) {
			ck_assert_int_eq(store_flush_page(f.c, 0, &o, i), 1);
		} else {
			tier_page(pg, i, 1);
			ck_assert_int_eq(store_put_page(f.c, 0, &o, i, pg, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
		}
	}
	store_tier_info(f.s, &ti);
	ck_assert_uint_eq(ti.st.pages, 0);
	ck_assert_uint_eq(ti.used_bytes, 0);
	/* The space is reused: spill the overwritten half, and again. */
	for (int round = 0; round < 3; round++) {
		ck_assert_int_gt(store_spill(f.s, 1000), 0);
		for (unsigned i = 0; i < 100; i += 2) {
			struct tmem_oid o = mkoid(i / 7, 1, 0);

			tier_page(pg, i, 2 + (unsigned)round);
			ck_assert_int_eq(store_put_page(f.c, 0, &o, i, pg, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
		}
	}
	ck_assert_int_gt(store_spill(f.s, 1000), 0);
	store_tier_info(f.s, &ti);
	ck_assert_uint_le(ti.used_bytes, t0.used_bytes);
	for (unsigned i = 0; i < 100; i += 2) {
		struct tmem_oid o = mkoid(i / 7, 1, 0);
		uint8_t want[PG];

		tier_page(want, i, 4);
		ck_assert_int_eq(store_get_page(f.c, 0, &o, i, pg), 1);
		ck_assert(memcmp(pg, want, PG) == 0);
	}
	tier_fixture_close(&f);
}
END_TEST

START_TEST(tier_survives_restart)
{
	struct tier_fixture f;
	struct tmem_tier_info ti;
	struct tmem_recovery_info ri;

	tier_fixture_open(&f, 256, 4 << 20);
	put_mix(f.c, 0, 0, 150);
	ck_assert_int_gt(store_spill(f.s, 100), 0);
	store_tier_info(f.s, &ti);
	tier_fixture_reopen(&f);
	store_recovery_info(f.s, &ri);
	ck_assert_uint_eq(ri.pages_dropped, 0);
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 150, 0), 0);
	{
		struct tmem_tier_info t2;

		store_tier_info(f.s, &t2);
		ck_assert_uint_eq(t2.st.pages, ti.st.pages);
		ck_assert_uint_eq(t2.used_bytes, ti.used_bytes);
	}
	tier_fixture_close(&f);
}
END_TEST

START_TEST(tier_spill_limit_per_client)
{
	struct tier_fixture f;
	struct tmem_client_info ci;

	tier_fixture_open(&f, 256, 4 << 20);
	put_mix(f.c, 0, 0, 120);
	ck_assert_int_eq(store_client_set_spill_max(f.c, 40 * 1024), 0);
	ck_assert_int_gt(store_spill(f.s, 1000), 0);
	store_client_info(f.c, &ci);
	ck_assert_uint_le(ci.tier.bytes, 40 * 1024);
	ck_assert_uint_gt(ci.tier.bytes, 30 * 1024);
	ck_assert_uint_eq(ci.spill_max, 40 * 1024);
	/* At its limit: nothing more moves. */
	ck_assert_int_le(store_spill(f.s, 1000), 0);
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 120, 0), 0);
	tier_fixture_close(&f);
}
END_TEST

/* ---- refusals ------------------------------------------------------------ */

static int reopen_with(struct tier_fixture *f, int tier_fd, uint64_t bytes, char *why, size_t len)
{
	struct tmem_store_config sc = tier_config(256, tier_fd, bytes);
	struct tmem_store *s = NULL;
	int rc;

	store_destroy(f->s);
	f->s = NULL;
	f->c = NULL;
	rc = store_open(&sc, f->arena, &s, why, len);
	if (rc == 0)
		store_destroy(s);
	return rc;
}

/* A fixture with 50 pages, some in the tier. */
static void spilled_fixture(struct tier_fixture *f)
{
	tier_fixture_open(f, 256, 4 << 20);
	put_mix(f->c, 0, 0, 50);
	ck_assert_int_gt(store_spill(f->s, 100), 0);
}

/* Opening f's arena with this tier is refused, saying what. */
static void refused_with(struct tier_fixture *f, int tier_fd, uint64_t bytes, const char *what,
			 const char *says)
{
	char why[200] = "";

	ck_assert_int_eq(reopen_with(f, tier_fd, bytes, why, sizeof(why)), -EBADMSG);
	printf("%s: %s\n", what, why);
	ck_assert_ptr_nonnull(strstr(why, says));
}

/* The arena's header says layout lay, with the sum of layout sum_as. */
static void set_layout(int arena, uint32_t lay, uint32_t sum_as)
{
	struct tmem_durable_hdr h;

	ck_assert_int_eq(pread(arena, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	h.layout = sum_as;
	h.geom_sum = XXH64(&h, offsetof(struct tmem_durable_hdr, geom_sum), 0);
	h.layout = lay;
	ck_assert_int_eq(pwrite(arena, &h, sizeof(h), 0), (ssize_t)sizeof(h));
}

/* The layout in the arena's header; its sum must be right. */
static uint32_t layout_of(int arena)
{
	struct tmem_durable_hdr h;

	ck_assert_int_eq(pread(arena, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	ck_assert_uint_eq(h.geom_sum, XXH64(&h, offsetof(struct tmem_durable_hdr, geom_sum), 0));
	return h.layout;
}

static void restart_as(struct tier_fixture *f, uint32_t lay, uint32_t sum_as)
{
	store_destroy(f->s);
	f->s = NULL;
	set_layout(f->arena, lay, sum_as);
	tier_fixture_start(f);
}

/* An upgrade from tmemd before the tier: its layout-2 arena is read as it
 * is, stays 2 without a tier (a downgrade can read it), and is raised to 3
 * before a tier is opened on it; a raise cut short by a kill is finished. */
START_TEST(tier_reads_a_layout_2_arena)
{
	struct tmem_store_config sc;
	struct tier_fixture f;
	struct tmem_store *s;
	char why[200] = "";

	tier_fixture_open(&f, 256, 0); /* no tier */
	put_mix(f.c, 0, 0, 100);
	restart_as(&f, 2, 2);
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 100, 0), 0);
	store_destroy(f.s);
	f.s = NULL;
	ck_assert_uint_eq(layout_of(f.arena), 2);
	set_layout(f.arena, 3, 2); /* the layout raised, not yet its sum */
	tier_fixture_start(&f);
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 100, 0), 0);
	ck_assert_uint_eq(layout_of(f.arena), 3);
	f.tier_bytes = 4 << 20;
	restart_as(&f, 2, 2);
	ck_assert_uint_eq(layout_of(f.arena), 3);
	ck_assert_int_gt(store_spill(f.s, 100), 0);
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 100, 0), 0);
	store_destroy(f.s);
	f.s = NULL;
	/* Layout 1, and a damaged sum, are refused. */
	sc = tier_config(f.frames, f.tier, f.tier_bytes);
	set_layout(f.arena, 1, 1);
	ck_assert_int_eq(store_open(&sc, f.arena, &s, why, sizeof(why)), -EPROTO);
	ck_assert_msg(strstr(why, "reads 2 to 3"), "%s", why);
	set_layout(f.arena, 3, 1);
	ck_assert_int_eq(store_open(&sc, f.arena, &s, why, sizeof(why)), -EBADMSG);
	close(f.arena);
	close(f.tier);
}
END_TEST

START_TEST(tier_refuses_wrong_size)
{
	struct tier_fixture f;

	spilled_fixture(&f);
	refused_with(&f, f.tier, 8 << 20, "wrong size", "config says");
	tier_fixture_reopen(&f); /* the right size still works, nothing lost */
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 50, 0), 0);
	tier_fixture_close(&f);
}
END_TEST

START_TEST(tier_refuses_truncated)
{
	struct tier_fixture f;

	spilled_fixture(&f);
	ck_assert_int_eq(ftruncate(f.tier, 1 << 20), 0);
	refused_with(&f, f.tier, 4 << 20, "truncated", "truncated");
	tier_fixture_close(&f);
}
END_TEST

START_TEST(tier_refuses_another_arena)
{
	struct tier_fixture f, g;
	char why[200] = "";

	spilled_fixture(&f);
	tier_fixture_open(&g, 256, 4 << 20);
	/* f's arena with g's tier: g's tier is formatted for g's arena. */
	refused_with(&f, g.tier, 4 << 20, "another arena", "another arena");
	/* A new arena with f's tier: refused too, never formatted over. */
	{
		int fresh = durable_memfd();
		struct tmem_store_config sc = tier_config(256, f.tier, 4 << 20);
		struct tmem_store *s = NULL;

		ck_assert_int_eq(store_open(&sc, fresh, &s, why, sizeof(why)), -EBADMSG);
		close(fresh);
	}
	tier_fixture_reopen(&f);
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 50, 0), 0);
	tier_fixture_close(&f);
	tier_fixture_close(&g);
}
END_TEST

START_TEST(tier_refuses_damaged_blank_or_missing)
{
	struct tier_fixture f;
	char zero[TMEM_PAGE_SIZE] = { 0 };
	uint8_t hdr[64];

	spilled_fixture(&f);
	ck_assert_int_eq(pread(f.tier, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	ck_assert_int_eq(pwrite(f.tier, "x", 1, 20), 1);
	refused_with(&f, f.tier, 4 << 20, "damaged", "damaged");
	/* Blank, while the arena has pages in it. */
	ck_assert_int_eq(pwrite(f.tier, zero, sizeof(zero), 0), (ssize_t)sizeof(zero));
	refused_with(&f, f.tier, 4 << 20, "blank", "blank");
	/* No tier configured at all. */
	refused_with(&f, -1, 0, "missing", "no tier is configured");
	/* The header back: everything is there. */
	ck_assert_int_eq(pwrite(f.tier, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	tier_fixture_reopen(&f);
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 50, 0), 0);
	tier_fixture_close(&f);
}
END_TEST

START_TEST(tier_refuses_not_writable)
{
	char path[] = "/tmp/tmem-tier-ro-XXXXXX";
	int fd = mkstemp(path), ro, arena = durable_memfd();
	struct tmem_store_config sc;
	struct tmem_store *s = NULL;
	char why[200] = "";

	ck_assert_int_ge(fd, 0);
	close(fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(ro, 0);
	sc = tier_config(256, ro, 4 << 20);
	ck_assert_int_lt(store_open(&sc, arena, &s, why, sizeof(why)), 0);
	printf("not writable: %s\n", why);
	ck_assert_ptr_nonnull(strstr(why, "cannot format it"));
	close(ro);
	unlink(path);
	close(arena);
}
END_TEST

/*
 * A full device: the tier is a sparse file on a 256 KiB tmpfs, mounted in
 * a mount namespace of this test's own (the check runs forked), so the
 * spill meets a real ENOSPC part way through.
 */
START_TEST(tier_enospc_keeps_pages)
{
	struct tier_fixture f;
	struct tmem_tier_info ti;
	char dir[] = "/tmp/tmem-tier-full-XXXXXX";
	char path[64];
	int64_t n, moved = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	tier_private_tmpfs(dir, "size=256k");
	snprintf(path, sizeof(path), "%s/spill", dir);
	tier_fixture_open_path(&f, 700, 4 << 20, path);
	put_mix(f.c, 0, 0, 250);
	store_client_set_compress(f.c, &(struct tmem_compress){ TMEM_COMPRESS_OFF, 0 });
	put_mix(f.c, 0, 250, 200); /* raw: 200 x 4 KiB do not fit in 256 KiB */
	/* One call for everything: its first batch (256 pages) does not
	 * fit, smaller ones do, until the device is full. */
	n = store_spill(f.s, 100000);
	moved = n > 0 ? n : 0;
	while (n > 0)
		moved += (n = store_spill(f.s, 32)) > 0 ? n : 0;
	store_tier_info(f.s, &ti);
	printf("ENOSPC mid-spill: %lld moved before, then %lld; %llu write errors, "
	       "last error %d\n", (long long)moved, (long long)n,
	       (unsigned long long)ti.write_errors, ti.last_error);
	ck_assert_int_eq(n, -ENOSPC);
	ck_assert_int_gt(moved, 0);
	ck_assert_uint_eq(ti.st.pages, (uint64_t)moved);
	ck_assert_uint_ge(ti.write_errors, 1);
	ck_assert_int_eq(ti.last_error, -ENOSPC);
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 450, 0), 0);
	ck_assert_uint_eq(ti.read_errors, 0);
	/* And through a restart: what moved is in the tier, the rest in RAM. */
	tier_fixture_reopen(&f);
	ck_assert_uint_eq(check_mix(f.c, 0, 0, 450, 0), 0);
	tier_fixture_close(&f);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}
END_TEST

void add_tier_tests(Suite *suite)
{
	TCase *tc = tcase_create("tier");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tier_spill_and_read_back);
	tcase_add_test(tc, tier_flush_and_overwrite_free_space);
	tcase_add_test(tc, tier_survives_restart);
	tcase_add_test(tc, tier_reads_a_layout_2_arena);
	tcase_add_test(tc, tier_spill_limit_per_client);
	tcase_add_test(tc, tier_refuses_wrong_size);
	tcase_add_test(tc, tier_refuses_truncated);
	tcase_add_test(tc, tier_refuses_another_arena);
	tcase_add_test(tc, tier_refuses_damaged_blank_or_missing);
	tcase_add_test(tc, tier_refuses_not_writable);
	tcase_add_test(tc, tier_enospc_keeps_pages);
	suite_add_tcase(suite, tc);
}
