/* pools/: a store in a memfd outlives its store object: clean reopen,
 * claiming clients back, identities, refusals that leave the file as it
 * was, and the ways a file can be damaged. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/test_main.h"
#include "durable_helpers.h"
#include "pool_helpers.h"
#include "test_pools.h"

static const struct tmem_ident ID_A = { { 'a', 1, 2, 3 } };
static const struct tmem_ident ID_B = { { 'b', 9 } };

/* A client "a" with a persistent pool 0 and an ephemeral pool 1, n pages in each. */
static void populate(struct tmem_store *s, struct tmem_client **out, unsigned n)
{
	uint8_t pg[PG];

	ck_assert_int_eq(store_client_create_ident(s, "a", &ID_A, out), 0);
	ck_assert_int_eq(store_new_pool(*out, PERS, NULL), 0);
	ck_assert_int_eq(store_new_pool(*out, EPH, NULL), 1);
	for (unsigned i = 0; i < n; i++) {
		struct tmem_oid o = mkoid(i / 7, 0, 0);

		page_fill(pg, i);
		ck_assert_int_eq(store_put_page(*out, 0, &o, i, pg, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
		page_fill(pg, i + 100000);
		ck_assert_int_eq(store_put_page(*out, 1, &o, i, pg, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	}
}

static void expect_pages(struct tmem_client *c, unsigned n)
{
	uint8_t pg[PG];

	for (unsigned i = 0; i < n; i++) {
		struct tmem_oid o = mkoid(i / 7, 0, 0);

		ck_assert_int_eq(store_get_page(c, 0, &o, i, pg), 1);
		ck_assert_msg(page_check(pg, i), "persistent page %u", i);
		ck_assert_int_eq(store_get_page(c, 1, &o, i, pg), 1);
		ck_assert_msg(page_check(pg, i + 100000), "ephemeral page %u", i);
	}
}

START_TEST(reopen_keeps_everything)
{
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, 256);
	struct tmem_client *c;
	struct tmem_recovery_info ri;
	struct tmem_page_counts pc;

	store_recovery_info(s, &ri);
	ck_assert(!ri.adopted);
	populate(s, &c, 100);
	store_destroy(s);

	s = durable_open(fd, 256);
	store_recovery_info(s, &ri);
	ck_assert(ri.adopted);
	ck_assert_uint_eq(ri.pages, 200);
	ck_assert_uint_eq(ri.persistent_pages, 100);
	ck_assert_uint_eq(ri.pages_dropped, 0);
	ck_assert_uint_eq(ri.clients, 1);
	ck_assert_uint_eq(ri.pools, 2);
	ck_assert_int_eq(store_client_claim(s, "a", &ID_A, &c), 0);
	store_client_page_counts(c, &pc);
	ck_assert_uint_eq(pc.persistent, 100);
	ck_assert_uint_eq(pc.ephemeral, 100);
	ck_assert_int_eq(store_client_pool_kind(c, 0), 1);
	ck_assert_int_eq(store_client_pool_kind(c, 1), 0);
	expect_pages(c, 100);
	/* The ephemeral gets were exclusive; the store goes on working. */
	populate_more(c, 1, 100, 50);
	store_destroy(s);
	close(fd);
}
END_TEST

START_TEST(claim_needs_the_identity)
{
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, 256);
	struct tmem_client *c;
	struct tmem_store_info si;

	populate(s, &c, 10);
	store_destroy(s);
	s = durable_open(fd, 256);
	ck_assert_int_eq(store_client_claim(s, "a", &ID_B, &c), -EPERM);
	ck_assert_int_eq(store_client_claim(s, "nobody", &ID_A, &c), -ENOENT);
	/* Attaching as "a" without the identity is a newcomer: a fresh start. */
	ck_assert_int_eq(store_client_create_ident(s, "a", &ID_B, &c), 0);
	ck_assert_int_eq(store_client_pool_kind(c, 0), -ENOENT);
	ck_assert_int_eq(store_client_claim(s, "a", &ID_A, &c), -ENOENT);
	store_info(s, &si);
	ck_assert_uint_eq(si.arena.persistent, 0);
	ck_assert_uint_eq(si.clients_expired, 1);
	store_destroy(s);
	close(fd);
}
END_TEST

START_TEST(detached_clients_expire)
{
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, 256);
	struct tmem_client *c;
	struct tmem_store_info si;

	populate(s, &c, 10);
	ck_assert_int_eq(store_client_create_ident(s, "b", &ID_B, &c), 0);
	store_destroy(s);
	s = durable_open(fd, 256);
	store_info(s, &si);
	ck_assert_uint_eq(si.nr_clients, 2);
	ck_assert_uint_eq(si.nr_detached, 2);
	ck_assert_int_eq(store_client_claim(s, "b", &ID_B, &c), 0);
	ck_assert_int_eq(store_drop_detached(s, "b"), -ENOENT);
	ck_assert_int_eq(store_drop_detached(s, NULL), 1);
	store_info(s, &si);
	ck_assert_uint_eq(si.nr_clients, 1);
	ck_assert_uint_eq(si.nr_detached, 0);
	ck_assert_uint_eq(si.clients_reattached, 1);
	ck_assert_uint_eq(si.arena.persistent, 0);
	ck_assert_uint_eq(si.arena.total_pages - si.arena.free_pages, 0);
	store_destroy(s);
	/* The drop was durable too. */
	s = durable_open(fd, 256);
	store_info(s, &si);
	ck_assert_uint_eq(si.nr_clients, 1);
	ck_assert_int_eq(store_client_claim(s, "a", &ID_A, &c), -ENOENT);
	store_destroy(s);
	close(fd);
}
END_TEST

START_TEST(destroyed_pools_and_clients_stay_gone)
{
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, 256);
	struct tmem_client *c, *d;
	struct tmem_recovery_info ri;
	struct tmem_oid o = mkoid(1, 2, 3);
	uint8_t pg[PG];

	populate(s, &c, 20);
	ck_assert_int_eq(store_destroy_pool(c, 1), 1);
	ck_assert_int_eq(store_flush_object(c, 0, &o), 0);
	o = mkoid(0, 0, 0);
	ck_assert_int_eq(store_flush_object(c, 0, &o), 1); /* pages 0..6 */
	ck_assert_int_eq(store_client_create_ident(s, "gone", &ID_B, &d), 0);
	ck_assert_int_eq(store_new_pool(d, PERS, NULL), 0);
	page_fill(pg, 1);
	ck_assert_int_eq(store_put_page(d, 0, &o, 0, pg, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	store_client_destroy(d);
	store_destroy(s);

	s = durable_open(fd, 256);
	store_recovery_info(s, &ri);
	ck_assert_uint_eq(ri.clients, 1);
	ck_assert_uint_eq(ri.pools, 1);
	ck_assert_uint_eq(ri.pages, 13);
	ck_assert_int_eq(store_client_claim(s, "a", &ID_A, &c), 0);
	ck_assert_int_eq(store_client_pool_kind(c, 1), -ENOENT);
	ck_assert_int_eq(store_get_page(c, 0, &o, 3, pg), 0);
	ck_assert_int_eq(store_get_page(c, 0, &o, 0, pg), 0);
	o = mkoid(1, 0, 0);
	ck_assert_int_eq(store_get_page(c, 0, &o, 7, pg), 1);
	ck_assert(page_check(pg, 7));
	/* A new pool takes the lowest free id again. */
	ck_assert_int_eq(store_new_pool(c, EPH, NULL), 1);
	store_destroy(s);
	close(fd);
}
END_TEST

START_TEST(shared_pools_are_not_kept)
{
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, 256);
	struct tmem_client *c;
	struct tmem_uuid u = { 7, 8 };
	struct tmem_oid o = mkoid(1, 0, 0);
	struct tmem_recovery_info ri;
	uint8_t pg[PG];

	populate(s, &c, 5);
	ck_assert_int_eq(store_shared_auth(s, &u, "a", true), 0);
	ck_assert_int_eq(store_new_pool(c, SHR, &u), 2);
	page_fill(pg, 3);
	ck_assert_int_eq(store_put_page(c, 2, &o, 0, pg, TMEM_PUT_CAP(TMEM_NO_CAP)), 1);
	store_destroy(s);
	s = durable_open(fd, 256);
	store_recovery_info(s, &ri);
	ck_assert_uint_eq(ri.pools, 2);
	ck_assert_uint_eq(ri.pages, 10);
	ck_assert_uint_eq(ri.pages_dropped, 1);
	ck_assert_int_eq(store_client_claim(s, "a", &ID_A, &c), 0);
	ck_assert_int_eq(store_client_pool_kind(c, 2), -ENOENT);
	store_destroy(s);
	close(fd);
}
END_TEST

START_TEST(resize_survives_reopen)
{
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, 256);
	struct tmem_client *c;
	struct tmem_arena_counts ac;

	test_incompressible = true; /* counts frames: 120 pages in 130 */
	populate(s, &c, 60);
	ck_assert_int_eq(store_resize(s, 512), 0);
	ck_assert_int_eq(store_resize(s, 130), 0); /* pages move down */
	store_destroy(s);
	/* Asked for 256 again: grown back, pages intact. */
	s = durable_open(fd, 256);
	store_arena_counts(s, &ac);
	ck_assert_uint_eq(ac.total_pages, 256);
	ck_assert_int_eq(store_client_claim(s, "a", &ID_A, &c), 0);
	expect_pages(c, 60);
	store_destroy(s);
	/* Asked for less than the pages need: the pages win. */
	s = durable_open(fd, 16);
	store_arena_counts(s, &ac);
	ck_assert_uint_eq(ac.total_pages, 256);
	ck_assert_uint_eq(ac.persistent, 60);
	store_destroy(s);
	close(fd);
}
END_TEST

/* ---- refusals ---------------------------------------------------------- */

static uint64_t file_hash(int fd)
{
	struct stat st;
	void *m;
	uint64_t h;

	ck_assert_int_eq(fstat(fd, &st), 0);
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	h = XXH64(m, (size_t)st.st_size, (uint64_t)st.st_size);
	munmap(m, (size_t)st.st_size);
	return h;
}

/* Damage a 4-byte header field at off, try to open, check the refusal and
 * that the file is byte-identical afterwards. */
static void refused(size_t off, uint32_t value, int want_err, const char *want_why)
{
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, 64), *t = NULL;
	struct tmem_store_config sc = { .arena_bytes = 64 * PG, .max_arena_bytes = 64 * PG };
	struct tmem_client *c;
	char why[200];
	uint64_t before;

	populate(s, &c, 5);
	store_destroy(s);
	ck_assert_int_eq(pwrite(fd, &value, sizeof(value), (off_t)off), sizeof(value));
	before = file_hash(fd);
	ck_assert_int_eq(store_open(&sc, fd, &t, why, sizeof(why)), want_err);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(why, want_why), "why: %s", why);
	ck_assert_uint_eq(file_hash(fd), before);
	close(fd);
}

START_TEST(refuses_unknown_layout)
{
	refused(8, TMEM_TEST_LAYOUT + 1, -EPROTO, "layout version");
}
END_TEST

/* Layout 1 (before compression: no spans, no entries, raw handles only)
 * is refused as any other version, never reinterpreted.  Layout 2 is read
 * as is (test_tier.c, tier_reads_a_layout_2_arena). */
START_TEST(refuses_layout_before_compression)
{
	ck_assert_uint_eq(TMEM_TEST_LAYOUT, 3);
	refused(8, 1, -EPROTO, "arena layout version 1, this build reads 2 to 3 only");
}
END_TEST

START_TEST(refuses_bad_magic)
{
	refused(0, 0x12345678, -EBADMSG, "magic");
}
END_TEST

START_TEST(refuses_damaged_geometry)
{
	refused(16, 1u << 20, -EBADMSG, "checksum"); /* max_frames */
}
END_TEST

START_TEST(refuses_damaged_counts)
{
	refused(TMEM_TEST_HDR_TOTAL_FRAMES, 1u << 30, -EBADMSG, "counts");
}
END_TEST

START_TEST(refuses_short_file)
{
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, 64), *t = NULL;
	struct tmem_store_config sc = { .arena_bytes = 64 * PG };
	char why[200] = "";
	struct stat st;

	store_destroy(s);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(ftruncate(fd, st.st_size / 2), 0);
	ck_assert_int_eq(store_open(&sc, fd, &t, why, sizeof(why)), -EBADMSG);
	ck_assert_msg(strstr(why, "shorter"), "why: %s", why);
	ck_assert_int_eq(ftruncate(fd, 100), 0);
	ck_assert_int_eq(store_open(&sc, fd, &t, why, sizeof(why)), -EBADMSG);
	close(fd);
}
END_TEST

START_TEST(refuses_a_directory)
{
	struct tmem_store_config sc = { .arena_bytes = 64 * PG };
	struct tmem_store *t = NULL;
	int fd = open("/", O_RDONLY | O_DIRECTORY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(store_open(&sc, fd, &t, NULL, 0), -EINVAL);
	ck_assert_int_eq(store_open(&sc, -1, &t, NULL, 0), -EINVAL);
	close(fd);
}
END_TEST

/*
 * An arena file on a tmpfs without room for the pool: a clean -ENOSPC,
 * where the prefault's first touch of a frame used to be a SIGBUS (tmemd
 * died of it in e2e-xen's dom0, a 640 MiB pool on a half-RAM /dev/shm).
 * The tmpfs is a private 4 MiB mount in a mount namespace of the test's
 * own, which needs root, as make check runs.
 */
START_TEST(refuses_a_full_file_system)
{
	struct tmem_store_config sc = { .arena_bytes = 16u << 20,
					.max_arena_bytes = 16u << 20,
					.prefault = true };
	char dir[] = "/tmp/tmem-durable-XXXXXX", path[64], why[200] = "";
	struct tmem_store *t = NULL;
	int fd;

	ck_assert_msg(geteuid() == 0, "needs root for a private tmpfs mount");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount("tmpfs", dir, "tmpfs", 0, "size=4m"), 0);
	snprintf(path, sizeof(path), "%s/arena", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(store_open(&sc, fd, &t, why, sizeof(why)), -ENOSPC);
	ck_assert_ptr_null(t);
	close(fd);
	ck_assert_int_eq(umount(dir), 0);
	rmdir(dir);
}
END_TEST

void add_durable_tests(Suite *suite)
{
	TCase *tc = tcase_create("durable");

	tcase_add_test(tc, reopen_keeps_everything);
	tcase_add_test(tc, claim_needs_the_identity);
	tcase_add_test(tc, detached_clients_expire);
	tcase_add_test(tc, destroyed_pools_and_clients_stay_gone);
	tcase_add_test(tc, shared_pools_are_not_kept);
	tcase_add_test(tc, resize_survives_reopen);
	tcase_add_test(tc, refuses_unknown_layout);
	tcase_add_test(tc, refuses_layout_before_compression);
	tcase_add_test(tc, refuses_bad_magic);
	tcase_add_test(tc, refuses_damaged_geometry);
	tcase_add_test(tc, refuses_damaged_counts);
	tcase_add_test(tc, refuses_short_file);
	tcase_add_test(tc, refuses_a_directory);
	if (tmem_test_have_root("refuses_a_full_file_system", "a private tmpfs mount"))
		tcase_add_test(tc, refuses_a_full_file_system);
	suite_add_tcase(suite, tc);
}
