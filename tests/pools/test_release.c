/* SPDX-License-Identifier: MIT */
/*
 * pools/: the elastic target (store_set_target) and giving free frames
 * back (store_release_cold), issue 28.  The daemon-level figures are in
 * tests/daemon/test_fallow.c; kill -9 during a release is in
 * test_crash.c's OP_RELEASE.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/test_main.h"
#include "durable_helpers.h"

#include "pool_helpers.h"
#include "internal.h"
#include "test_pools.h"

static uint8_t buf[PG], out[PG];

static struct tmem_store_info info(struct tmem_store *s)
{
	struct tmem_store_info si;

	store_info(s, &si);
	return si;
}

static void put_n(struct tmem_client *c, uint32_t from, uint32_t n, int want)
{
	struct tmem_oid o = mkoid(1, 2, 3);

	for (uint32_t i = from; i < from + n; i++) {
		page_fill(buf, i);
		ck_assert_int_eq(store_put_page(c, 0, &o, i, buf, TMEM_PUT_CAP(TMEM_NO_CAP)), want);
	}
}

static void check_n(struct tmem_client *c, uint32_t from, uint32_t n)
{
	struct tmem_oid o = mkoid(1, 2, 3);

	for (uint32_t i = from; i < from + n; i++) {
		ck_assert_int_eq(store_get_page(c, 0, &o, i, out), 1);
		ck_assert(page_check(out, i));
	}
}

/* The target stops puts below the arena size; raising it lets them in. */
START_TEST(test_target_caps_puts)
{
	struct tmem_store *s = mkstore(64, 64);
	struct tmem_arena_counts ac;
	struct tmem_client *c;

	test_incompressible = true;
	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	store_set_target(s, 20);
	store_arena_counts(s, &ac);
	ck_assert_uint_eq(ac.total_pages, 64);
	ck_assert_uint_eq(ac.limit_pages, 20);
	put_n(c, 0, 20, 1);
	put_n(c, 20, 1, -ENOSPC);
	store_arena_counts(s, &ac);
	ck_assert_uint_eq(ac.free_pages, 0);
	ck_assert_uint_eq(ac.used_pages, 20);
	store_set_target(s, 0); /* none: the arena size again */
	put_n(c, 20, 44, 1);
	check_n(c, 0, 64);
	store_destroy(s);
}
END_TEST

/* A target under what is stored keeps every page (nothing moves) and
 * only refuses more; a shrink of the arena still moves them. */
START_TEST(test_target_below_used_keeps_pages)
{
	struct tmem_store *s = mkstore(64, 64);
	struct tmem_client *c;

	test_incompressible = true;
	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	put_n(c, 0, 40, 1);
	store_set_target(s, 10);
	put_n(c, 40, 1, -ENOSPC);
	check_n(c, 0, 40);
	ck_assert_int_eq(store_resize(s, 48), 0);
	check_n(c, 0, 40);
	store_destroy(s);
}
END_TEST

/* Frames freed stay resident for one interval, then go back; the next
 * puts take them again and read back right. */
START_TEST(test_release_cold_frames)
{
	struct tmem_store *s = mkstore(256, 256);
	struct tmem_oid o = mkoid(1, 2, 3);
	struct tmem_client *c;
	uint64_t resident;

	test_incompressible = true;
	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	ck_assert_uint_eq(info(s).mem_resident, 0);
	put_n(c, 0, 200, 1);
	ck_assert_uint_eq(info(s).mem_resident, 200 * PG);
	ck_assert_uint_eq(info(s).mem_used_max, 200 * PG);
	for (uint32_t i = 0; i < 150; i++)
		ck_assert_int_eq(store_flush_page(c, 0, &o, i), 1);
	/* Freed during this interval: not cold yet, only after a full one. */
	store_release_cold(s, 0);
	ck_assert_uint_eq(store_release_cold(s, 16), 150 - 16);
	resident = info(s).mem_resident;
	ck_assert_uint_eq(resident, (50 + 16) * PG);
	ck_assert_uint_eq(info(s).frames_released, 150 - 16);
	ck_assert_uint_eq(info(s).mem_used_max, 200 * PG); /* the peak stays */
	ck_assert_uint_eq(store_release_cold(s, 16), 0);   /* nothing more is cold */
	/* The resident free frames first, then the released ones. */
	put_n(c, 300, 150, 1);
	check_n(c, 150, 50);
	check_n(c, 300, 150);
	ck_assert_uint_eq(info(s).mem_resident, 200 * PG);
	store_destroy(s);
}
END_TEST

/* In a file: the punched frames are holes, and a reopen finds every
 * page kept, and reuses the holes. */
START_TEST(test_release_in_file_survives_reopen)
{
	static const struct tmem_ident id = { { 'r', 2, 8 } };
	struct tmem_oid o = mkoid(1, 2, 3);
	int fd = durable_memfd();
	struct tmem_store *s = durable_open(fd, 512);
	struct tmem_client *c;
	struct stat st;
	long long before;

	test_incompressible = true;
	ck_assert_int_eq(store_client_create_ident(s, "r", &id, &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	put_n(c, 0, 400, 1);
	for (uint32_t i = 0; i < 400; i += 2)
		ck_assert_int_eq(store_flush_page(c, 0, &o, i), 1);
	ck_assert_int_eq(fstat(fd, &st), 0);
	before = st.st_blocks * 512;
	store_release_cold(s, 0);
	ck_assert_uint_eq(store_release_cold(s, 0), 200);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_le(st.st_blocks * 512, before - 200 * PG); /* the holes are real */
	store_destroy(s);
	s = durable_open(fd, 512);
	ck_assert_int_eq(store_client_claim(s, "r", &id, &c), 0);
	for (uint32_t i = 1; i < 400; i += 2)
		check_n(c, i, 1);
	put_n(c, 1000, 200, 1);
	for (uint32_t i = 1; i < 400; i += 2)
		check_n(c, i, 1);
	check_n(c, 1000, 200);
	store_destroy(s);
	close(fd);
}
END_TEST

/* In a file on a full tmpfs a put gets -ENOSPC: frames get blocks
 * before their first touch, which would be a SIGBUS. */
START_TEST(test_full_tmpfs_is_enospc)
{
	char dir[] = "/tmp/tmem-pools-tmpfs.XXXXXX", cmd[128], path[96];
	struct tmem_store *s;
	struct tmem_client *c;
	uint32_t n = 0;
	int fd, rc = 1;

	test_incompressible = true;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o size=2M tmpfs %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/arena", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	s = durable_open(fd, DURABLE_MAX_FRAMES); /* 4 MiB of frames in 2 MiB of tmpfs */
	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	while (n < DURABLE_MAX_FRAMES) {
		struct tmem_oid o = mkoid(1, 2, 3);

		page_fill(buf, n);
		rc = store_put_page(c, 0, &o, n, buf, TMEM_PUT_CAP(TMEM_NO_CAP));
		if (rc != 1)
			break;
		n++;
	}
	ck_assert_int_eq(rc, -ENOSPC);
	ck_assert_uint_gt(n, 64);
	check_n(c, 0, n);
	store_destroy(s);
	close(fd);
	snprintf(cmd, sizeof(cmd), "umount %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	rmdir(dir);
}
END_TEST

static struct tmem_store *mkstore_warm(uint32_t pages, uint32_t warm)
{
	struct tmem_store_config cfg = {
		.arena_bytes = (uint64_t)pages * PG,
		.compress = test_compress(),
		.warm_frames = warm,
	};
	struct tmem_store *s = NULL;

	ck_assert_int_eq(store_create(&cfg, &s), 0);
	return s;
}

/* No warming pass in flight (one may have begun before a release). */
/* No frame in transit, and no warming asked for and not yet begun. */
static void settle(struct tmem_store *s)
{
	for (int i = 0; i < 5000; i++) {
		uint32_t n;
		bool asked;

		pthread_mutex_lock(&s->alloc_lock);
		n = s->frames.in_transit;
		asked = s->frames.warm_asked;
		pthread_mutex_unlock(&s->alloc_lock);
		if (n == 0 && !asked)
			return;
		usleep(1000);
	}
	ck_abort_msg("a warming pass never ended");
}

/* The warming thread's work shows in the counts; up to 5 s for it. */
static void wait_warmed(struct tmem_store *s, uint64_t want)
{
	for (int i = 0; i < 5000 && info(s).frames_warmed < want; i++)
		usleep(1000);
	ck_assert_uint_ge(info(s).frames_warmed, want);
}

/* A put after an idle spell finds its frames faulted in already: only
 * the put that woke the warming took a frame cold. */
START_TEST(test_warm_frames_ahead_of_puts)
{
	struct tmem_store *s = mkstore_warm(4096, 256);
	struct tmem_client *c;

	test_incompressible = true;
	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	put_n(c, 0, 1, 1);
	wait_warmed(s, 256);
	ck_assert_uint_eq(info(s).frames_warmed, 256);      /* the mark, no more */
	ck_assert_uint_eq(info(s).mem_resident, (1 + 256) * PG);
	ck_assert_uint_eq(info(s).frames_cold_taken, 1);
	put_n(c, 1, 128, 1);                                /* down to half the mark */
	ck_assert_uint_eq(info(s).frames_cold_taken, 1);
	check_n(c, 0, 129);
	store_destroy(s);
}
END_TEST

/* Under pressure (a release keeping nothing) nothing is warmed, and the
 * frames a release gave back are warmed again once the keep is back. */
START_TEST(test_warm_follows_the_release_keep)
{
	struct tmem_store *s = mkstore_warm(4096, 256);
	struct tmem_oid o = mkoid(1, 2, 3);
	struct tmem_client *c;
	uint64_t warmed, cold;

	test_incompressible = true;
	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	put_n(c, 0, 600, 1);
	for (uint32_t i = 0; i < 600; i++)
		ck_assert_int_eq(store_flush_page(c, 0, &o, i), 1);
	/* A warming pass the puts asked for lands its frames on top, where a
	 * release does not look until the next interval: let it end first. */
	settle(s);
	store_release_cold(s, 0);
	settle(s);
	store_release_cold(s, 0);
	ck_assert_uint_eq(info(s).mem_resident, 0);
	warmed = info(s).frames_warmed;
	cold = info(s).frames_cold_taken;
	put_n(c, 1000, 10, 1);
	usleep(100 * 1000);
	ck_assert_uint_eq(info(s).frames_warmed, warmed);
	ck_assert_uint_eq(info(s).frames_cold_taken, cold + 10);
	ck_assert_uint_eq(info(s).mem_resident, 10 * PG);
	ck_assert_uint_eq(store_release_cold(s, 256), 0);   /* the keep is back */
	put_n(c, 1010, 1, 1);
	wait_warmed(s, warmed + 256);
	/* Within the target: never more resident than a put may take. */
	store_set_target(s, 20);
	store_release_cold(s, 0);
	store_release_cold(s, 0);
	store_release_cold(s, 256);
	put_n(c, 1011, 1, 1);
	usleep(100 * 1000);
	ck_assert_uint_le(info(s).mem_resident, 20 * PG);
	check_n(c, 1000, 12);
	store_destroy(s);
}
END_TEST

/* In a file the warmed frames get their blocks first, and a reopen
 * (they are free frames, in no record) finds only the pages. */
START_TEST(test_warm_in_file_survives_reopen)
{
	static const struct tmem_ident id = { { 'w', 2, 8 } };
	struct tmem_store_config sc = {
		.arena_bytes = 512ull * PG,
		.max_arena_bytes = (uint64_t)DURABLE_MAX_FRAMES * PG,
		.compress = test_compress(),
		.warm_frames = 128,
	};
	int fd = durable_memfd();
	struct tmem_store *s = NULL;
	struct tmem_client *c;
	struct stat st;

	test_incompressible = true;
	ck_assert_int_eq(store_open(&sc, fd, &s, NULL, 0), 0);
	ck_assert_int_eq(store_client_create_ident(s, "w", &id, &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	put_n(c, 0, 10, 1);
	wait_warmed(s, 128);
	ck_assert_int_eq(fstat(fd, &st), 0);
	/* Every frame touched has blocks: those the puts took cold, and
	 * those warmed (some of which the puts took since). */
	ck_assert_int_ge(st.st_blocks * 512,
			 (info(s).frames_cold_taken + info(s).frames_warmed) * PG);
	store_destroy(s);
	s = durable_open(fd, 512);
	ck_assert_int_eq(store_client_claim(s, "w", &id, &c), 0);
	check_n(c, 0, 10);
	ck_assert_uint_eq(info(s).arena.used_pages, 10);
	store_destroy(s);
	close(fd);
}
END_TEST

/* Shrinks while the warming takes frames off the stacks: a shrink waits
 * for them, so it never fails for want of a free frame, nor loses one. */
START_TEST(test_shrink_while_warming)
{
	struct tmem_store_config cfg = {
		.arena_bytes = 1024ull * PG,
		.max_arena_bytes = 2048ull * PG,
		.compress = test_compress(),
		.warm_frames = 512,
	};
	struct tmem_oid o = mkoid(1, 2, 3);
	struct tmem_store *s = NULL;
	struct tmem_client *c;

	test_incompressible = true;
	ck_assert_int_eq(store_create(&cfg, &s), 0);
	ck_assert_int_eq(store_client_create(s, "c", &c), 0);
	ck_assert_int_eq(store_new_pool(c, PERS, NULL), 0);
	put_n(c, 0, 100, 1);
	for (int round = 0; round < 200; round++) {
		/* Everything free given back, so the next put wakes the warming. */
		store_release_cold(s, 0);
		store_release_cold(s, 0);
		store_release_cold(s, 512);
		put_n(c, 100, 1, 1);
		ck_assert_int_eq(store_resize(s, 101 + (uint32_t)round % 16), 0);
		ck_assert_int_eq(store_flush_page(c, 0, &o, 100), 1);
		ck_assert_int_eq(store_resize(s, 1024 + (uint32_t)round), 0);
	}
	check_n(c, 0, 100);
	ck_assert_uint_eq(info(s).arena.used_pages, 100);
	put_n(c, 200, 1024 + 199 - 100, 1);                 /* every frame is still there */
	store_destroy(s);
}
END_TEST

void add_release_tests(Suite *suite)
{
	TCase *tc = tcase_create("release");

	tcase_add_test(tc, test_target_caps_puts);
	tcase_add_test(tc, test_target_below_used_keeps_pages);
	tcase_add_test(tc, test_release_cold_frames);
	tcase_add_test(tc, test_release_in_file_survives_reopen);
	tcase_add_test(tc, test_warm_frames_ahead_of_puts);
	tcase_add_test(tc, test_warm_follows_the_release_keep);
	tcase_add_test(tc, test_warm_in_file_survives_reopen);
	tcase_add_test(tc, test_shrink_while_warming);
	if (tmem_test_have_root("test_full_tmpfs_is_enospc", "mounts a small tmpfs"))
		tcase_add_test(tc, test_full_tmpfs_is_enospc);
	suite_add_tcase(suite, tc);
}
