/* Helpers for the pools/ tests of the host tier: an arena and a tier,
 * each in a memfd (or the tier in a file), a client "a" with a
 * persistent pool 0. */
#ifndef TMEM_TESTS_TIER_HELPERS_H
#define TMEM_TESTS_TIER_HELPERS_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "durable_helpers.h"
#include "tmem_store.h"

struct tier_fixture {
	int arena, tier;
	unsigned frames;
	uint64_t tier_bytes;
	struct tmem_store *s;
	struct tmem_client *c;
};

static const struct tmem_ident TIER_ID = { { 'T', 'i' } };

/* Page i of generation gen: every 5th same-filled, every 3rd random
 * (incompressible), the rest text-like (compressible). */
static inline void tier_page(uint8_t *pg, unsigned i, unsigned gen)
{
	uint64_t seed = (uint64_t)gen << 32 | i;

	if (i % 5 == 4) {
		memset(pg, (int)(0x11 + i + gen), PG);
		return;
	}
	if (i % 3 == 0)
		page_fill_random(pg, seed * 2654435761u + 7);
	else
		page_fill(pg, seed);
	memcpy(pg, &seed, sizeof(seed));
}

static inline struct tmem_store_config tier_config(unsigned frames, int tier_fd, uint64_t bytes)
{
	struct tmem_store_config sc = {
		.arena_bytes = (uint64_t)frames * PG,
		.max_arena_bytes = (uint64_t)DURABLE_MAX_FRAMES * PG,
		.compress = test_compress(),
		.tier_fd = tier_fd,
		.tier_bytes = bytes,
	};

	return sc;
}

static inline void tier_fixture_start(struct tier_fixture *f)
{
	struct tmem_store_config sc = tier_config(f->frames, f->tier, f->tier_bytes);
	char why[200] = "";
	int rc = store_open(&sc, f->arena, &f->s, why, sizeof(why));

	ck_assert_msg(rc == 0, "store_open: %d %s", rc, why);
	rc = store_client_claim(f->s, "a", &TIER_ID, &f->c);
	if (rc == -ENOENT) {
		ck_assert_int_eq(store_client_create_ident(f->s, "a", &TIER_ID, &f->c), 0);
		ck_assert_int_eq(store_new_pool(f->c, PERS, NULL), 0);
	} else {
		ck_assert_int_eq(rc, 0);
	}
}

static inline void tier_fixture_open_fd(struct tier_fixture *f, unsigned frames,
					uint64_t bytes, int tier_fd)
{
	memset(f, 0, sizeof(*f));
	f->arena = durable_memfd();
	f->tier = tier_fd;
	f->frames = frames;
	f->tier_bytes = bytes;
	tier_fixture_start(f);
}

static inline void tier_fixture_open(struct tier_fixture *f, unsigned frames, uint64_t bytes)
{
	int fd = memfd_create("tmem-test-tier", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	tier_fixture_open_fd(f, frames, bytes, fd);
}

static inline void tier_fixture_open_path(struct tier_fixture *f, unsigned frames,
					  uint64_t bytes, const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	ck_assert_int_ge(fd, 0);
	tier_fixture_open_fd(f, frames, bytes, fd);
}

/* A restart: the store goes (its client detached), and is opened again. */
static inline void tier_fixture_reopen(struct tier_fixture *f)
{
	if (f->s)
		store_destroy(f->s);
	f->s = NULL;
	tier_fixture_start(f);
}

static inline void tier_fixture_close(struct tier_fixture *f)
{
	store_destroy(f->s);
	close(f->arena);
	close(f->tier);
}

/* A tmpfs of opts at dir, in a mount namespace of the calling process's
 * own (root, or an unprivileged user namespace). */
static inline void tier_private_tmpfs(const char *dir, const char *opts)
{
	if (unshare(geteuid() == 0 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS) < 0)
		ck_abort_msg("unshare: %s", strerror(errno));
	(void)mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL);
	ck_assert_msg(mount("tmpfs", dir, "tmpfs", 0, opts) == 0, "mount tmpfs: %s",
		      strerror(errno));
}

#endif
