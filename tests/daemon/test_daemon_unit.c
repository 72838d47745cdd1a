/* SPDX-License-Identifier: MIT */
/*
 * daemon/ unit tests: size and option parsing, tmemd.conf, request
 * validation, and the ring + dispatch path on an in-memory region with
 * a real store and policy (no sockets, no threads).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "common/test_main.h"
#include "config.h"
#include "dispatch.h"
#include "fake_ring.h"
#include "io_util.h"
#include "options.h"
#include "ratelimit.h"
#include "reload.h"
#include "ring.h"
#include "size.h"
#include "test_readback.h"
#include "tmem_names.h"

START_TEST(test_sizes)
{
	uint64_t b;

	ck_assert_int_eq(tmemd_parse_size("4096", false, &b), 0);
	ck_assert_uint_eq(b, 4096);
	ck_assert_int_eq(tmemd_parse_size("64K", false, &b), 0);
	ck_assert_uint_eq(b, 65536);
	ck_assert_int_eq(tmemd_parse_size("3m", false, &b), 0);
	ck_assert_uint_eq(b, 3u << 20);
	ck_assert_int_eq(tmemd_parse_size("2GiB", false, &b), 0);
	ck_assert_uint_eq(b, 2ull << 30);
	ck_assert_int_eq(tmemd_parse_size("10%", true, &b), 0);
	ck_assert_uint_gt(b, 0);
	ck_assert_int_eq(tmemd_parse_size("10%", false, &b), TMEM_SIZE_SYNTAX);
	ck_assert_int_eq(tmemd_parse_size("0%", true, &b), TMEM_SIZE_RANGE);
	ck_assert_int_eq(tmemd_parse_size("101%", true, &b), TMEM_SIZE_RANGE);
	ck_assert_int_eq(tmemd_parse_size("", false, &b), TMEM_SIZE_SYNTAX);
	ck_assert_int_eq(tmemd_parse_size("-1", false, &b), TMEM_SIZE_SYNTAX);
	ck_assert_int_eq(tmemd_parse_size("12Q", false, &b), TMEM_SIZE_SYNTAX);
	ck_assert_int_eq(tmemd_parse_size("1KK", false, &b), TMEM_SIZE_SYNTAX);
	ck_assert_int_eq(tmemd_parse_size("99999999999999999999", false, &b), TMEM_SIZE_RANGE);
	ck_assert_int_eq(tmemd_parse_size("17179869184G", false, &b), TMEM_SIZE_RANGE);
	/* tmemctl's grammar: pages, and bytes only in whole pages. */
	ck_assert_int_eq(tmemd_parse_size("100p", false, &b), 0);
	ck_assert_uint_eq(b, 100 * 4096);
	ck_assert_int_eq(tmemd_parse_size("1000", false, &b), TMEM_SIZE_NOT_PAGES);
}
END_TEST

static enum tmemd_options_result parse(struct tmemd_options *o, int argc, ...)
{
	char *argv[16];
	va_list ap;

	va_start(ap, argc);
	for (int i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	argv[argc] = NULL;
	return tmemd_options_parse(argc, argv, o);
}

START_TEST(test_options)
{
	struct tmemd_options o;

	ck_assert_int_eq(parse(&o, 8, "tmemd", "-c", "/x.conf", "--transport", "local",
			       "--memory", "64M", "--foreground"), TMEMD_OPTS_RUN);
	ck_assert_str_eq(o.config_path, "/x.conf");
	ck_assert_str_eq(o.transport, "local");
	ck_assert_uint_eq(o.memory_bytes, 64u << 20);
	ck_assert(o.foreground);
	ck_assert_int_eq(parse(&o, 3, "tmemd", "--workers", "3"), TMEMD_OPTS_RUN);
	ck_assert_uint_eq(o.workers, 3);
	ck_assert_int_eq(parse(&o, 3, "tmemd", "--runtime-dir", "/run/x"), TMEMD_OPTS_RUN);
	ck_assert_str_eq(o.runtime_dir, "/run/x");
	ck_assert_int_eq(parse(&o, 3, "tmemd", "--transport", "tcp"), TMEMD_OPTS_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, 3, "tmemd", "--memory", "lots"), TMEMD_OPTS_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, 3, "tmemd", "--memory", "auto"), TMEMD_OPTS_RUN);
	ck_assert(o.memory_bytes == TMEMD_MEMORY_AUTO);
	ck_assert_int_eq(parse(&o, 3, "tmemd", "--memory", "Auto"), TMEMD_OPTS_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, 3, "tmemd", "--workers", "0"), TMEMD_OPTS_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, 3, "tmemd", "--runtime-dir", "rel"), TMEMD_OPTS_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, 4, "tmemd", "--arena", "/dev/shm/a", "--discard-arena"),
			 TMEMD_OPTS_RUN);
	ck_assert_str_eq(o.arena_path, "/dev/shm/a");
	ck_assert(o.discard_arena);
	ck_assert_int_eq(parse(&o, 3, "tmemd", "--arena", "shm/a"), TMEMD_OPTS_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, 2, "tmemd", "--arena"), TMEMD_OPTS_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, 2, "tmemd", "--bogus"), TMEMD_OPTS_EXIT_USAGE);
	ck_assert_int_eq(parse(&o, 2, "tmemd", "extra"), TMEMD_OPTS_EXIT_USAGE);
}
END_TEST

static int load(struct tmemd_config *cfg, const char *text, char *err)
{
	tmemd_config_init(cfg);
	return tmemd_config_load_string(cfg, "t.conf", text, err, 256);
}

START_TEST(test_config_good)
{
	struct tmemd_config cfg;
	struct tmem_client_settings s;
	char err[256] = "";
	char uuid[37];

	ck_assert_int_eq(load(&cfg,
		"# comment\n[tmemd]\nmemory = 256M\nworkers = 3\n"
		"runtime-dir = /tmp/x\ntransport = local\ncompress-threshold = 2048\n"
		"[defaults]\nephemeral-max = 64M\npersistent-max = none\nweight = 50\n"
		"[client fs1]\npersistent-max = 8K\nweight = 200\ncompress = zstd:7\n"
		"shared-auth = 6ba7b810-9dad-11d1-80b4-00c04fd430c8\n"
		"shared-auth = 00000000-0000-0000-0000-000000000001\n", err), 0);
	ck_assert_uint_eq(cfg.memory_bytes, 256u << 20);
	ck_assert_uint_eq(cfg.workers, 3);
	ck_assert_str_eq(cfg.runtime_dir, "/tmp/x");
	ck_assert_str_eq(cfg.transport, "local");
	ck_assert_uint_eq(cfg.defaults.ephemeral_max, (64u << 20) / 4096);
	ck_assert_uint_eq(cfg.defaults.persistent_max, TMEM_NO_CAP);
	tmemd_config_client_settings(&cfg, "fs1", &s);
	ck_assert_uint_eq(s.persistent_max, 2);
	ck_assert_uint_eq(s.ephemeral_max, (64u << 20) / 4096); /* inherited */
	ck_assert_uint_eq(s.weight, 200);
	ck_assert(s.compress.algo == TMEM_COMPRESS_ZSTD && s.compress.level == 7);
	ck_assert_uint_eq(cfg.compress_threshold, 2048);
	tmemd_config_client_settings(&cfg, "other", &s);
	ck_assert_uint_eq(s.weight, 50);
	ck_assert_int_eq(s.compress.algo, TMEM_COMPRESS_LZ4); /* the default, as zswap */
	ck_assert_uint_eq(tmemd_config_client(&cfg, "fs1")->nr_auth, 2);
	tmem_uuid_format(&tmemd_config_client(&cfg, "fs1")->auth[0], uuid);
	ck_assert_str_eq(uuid, "6ba7b810-9dad-11d1-80b4-00c04fd430c8");
	ck_assert_uint_eq(tmemd_config_client(&cfg, "fs1")->auth[0].lo, 0xd111ad9d10b8a76bull);
	tmemd_config_free(&cfg);
}
END_TEST

START_TEST(test_config_restart_keys)
{
	struct tmemd_config cfg;
	char err[256] = "";

	ck_assert_int_eq(load(&cfg, "[tmemd]\narena = /dev/shm/t\nreattach-grace = 5m\n", err), 0);
	ck_assert_str_eq(cfg.arena_path, "/dev/shm/t");
	ck_assert_uint_eq(cfg.reattach_grace_sec, 300);
	tmemd_config_free(&cfg);
	ck_assert_int_eq(load(&cfg, "[tmemd]\nreattach-grace = 0\n", err), 0);
	ck_assert_uint_eq(cfg.reattach_grace_sec, 0);
	tmemd_config_free(&cfg);
	ck_assert_int_eq(load(&cfg, "[tmemd]\nreattach-grace = 24h\n", err), 0);
	ck_assert_uint_eq(cfg.reattach_grace_sec, 86400);
	tmemd_config_free(&cfg);
	ck_assert_int_eq(load(&cfg, "", err), 0);
	ck_assert_uint_eq(cfg.reattach_grace_sec, TMEMD_DEFAULT_REATTACH_GRACE);
	tmemd_config_free(&cfg);
}
END_TEST

/* Issue 28: memory = auto, and the elastic pool's keys. */
START_TEST(test_config_fallow_keys)
{
	struct tmemd_config cfg;
	char err[256] = "";

	ck_assert_int_eq(load(&cfg, "[tmemd]\nmemory = auto\nmemory-reserve = 256M\n"
				    "memory-grow-delay = 2m\nxen-reserve = 1G\n", err), 0);
	ck_assert(cfg.memory_bytes == TMEMD_MEMORY_AUTO);
	ck_assert_uint_eq(cfg.memory_reserve, 256ull << 20);
	ck_assert_uint_eq(cfg.grow_delay_sec, 120);
	ck_assert_uint_eq(cfg.xen_reserve, 1ull << 30);
	tmemd_config_free(&cfg);
	ck_assert_int_eq(load(&cfg, "[tmemd]\nmemory-reserve = 10%\n", err), 0);
	ck_assert_uint_gt(cfg.memory_reserve, 0);
	tmemd_config_free(&cfg);
}
END_TEST

/* --arena: memory only (tmpfs or hugetlbfs), one tmemd at a time. */
START_TEST(test_arena_refusals)
{
	char disk[] = "/var/tmp/tmemd-arena-test.XXXXXX", shm[] = "/dev/shm/tmemd-arena-test.XXXXXX";
	struct tmemd_arena a, b;
	char why[300];
	int fd;

	fd = mkstemp(disk);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(tmemd_arena_open(disk, false, &a, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "not on tmpfs or hugetlbfs"), "why: %s", why);
	unlink(disk);
	ck_assert_int_eq(tmemd_arena_open("/dev/shm", false, &a, why, sizeof(why)) < 0, 1);
	fd = mkstemp(shm);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(tmemd_arena_open(shm, false, &a, why, sizeof(why)), 0);
	ck_assert_int_eq(tmemd_arena_open(shm, false, &b, why, sizeof(why)), -EBUSY);
	ck_assert_msg(strstr(why, "another tmemd"), "why: %s", why);
	tmemd_arena_close(&a);
	ck_assert_int_eq(tmemd_arena_open(shm, false, &b, why, sizeof(why)), 0);
	tmemd_arena_close(&b);
	unlink(shm);
}
END_TEST

START_TEST(test_config_errors)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "[tmemd]\nmemroy = 1G\n", "t.conf:2: unknown key 'memroy' in [tmemd]" },
		{ "[tmemd]\n\nmemory = 1Q\n", "t.conf:3: memory: bad size" },
		{ "[tmemd]\nworkers = 0\n", "t.conf:2: workers" },
		{ "[tmemd]\ntransport = tcp\n", "t.conf:2: transport" },
		{ "[tmemd]\nruntime-dir = rel\n", "t.conf:2: runtime-dir" },
		{ "[tmemd]\narena = shm/a\n", "t.conf:2: arena: want an absolute path" },
		{ "[tmemd]\nreattach-grace = soon\n", "t.conf:2: reattach-grace: want a duration" },
		{ "[tmemd]\nreattach-grace = 5d\n", "t.conf:2: reattach-grace" },
		{ "[tmemd]\nreattach-grace = 25h\n", "t.conf:2: reattach-grace" },
		{ "[tmemd]\nreattach-grace = -1\n", "t.conf:2: reattach-grace" },
		{ "[tmemd]\nreattach-grace = 10ms\n", "t.conf:2: reattach-grace" },
		/* Issue 28: the elastic pool's keys. */
		{ "[tmemd]\nmemory = automatic\n", "t.conf:2: memory: bad size 'automatic'" },
		{ "[tmemd]\nmemory = 8K\n", "t.conf:2: memory: bad size '8K'" },
		{ "[tmemd]\nmemory-reserve = lots\n", "t.conf:2: memory-reserve: bad size" },
		{ "[tmemd]\nmemory-reserve = 101%\n", "t.conf:2: memory-reserve: bad size" },
		{ "[tmemd]\nmemory-grow-delay = 0\n", "t.conf:2: memory-grow-delay: want a duration" },
		{ "[tmemd]\nmemory-grow-delay = 2h\n", "t.conf:2: memory-grow-delay" },
		{ "[tmemd]\nmemory-grow-delay = soon\n", "t.conf:2: memory-grow-delay" },
		{ "[tmemd]\nxen-reserve = 10%\n", "t.conf:2: xen-reserve: bad size" },
		{ "[tmemd]\nxen-reserve = -1M\n", "t.conf:2: xen-reserve: bad size" },
		{ "[tmemd]\nmemory-size = 1G\n", "t.conf:2: unknown key 'memory-size' in [tmemd]" },
		/* Issue 29: the host tier's keys. */
		{ "[tmemd]\nspill = var/spill\n", "t.conf:2: spill: want an absolute path" },
		{ "[tmemd]\nspill-size = big\n", "t.conf:2: spill-size: bad size 'big'" },
		{ "[tmemd]\nspill-size = 512K\n", "t.conf:2: spill-size: want whole pages, at least 1M" },
		{ "[tmemd]\nspill-size = 10%\n", "t.conf:2: spill-size: bad size" },
		{ "[defaults]\nspill-max = lots\n", "t.conf:2: spill-max: bad size 'lots'" },
		{ "[client a]\nspill-max = 1000\n", "t.conf:2: spill-max: bad size '1000'" },
		{ "[defaults]\nweight = 0\n", "t.conf:2: weight" },
		{ "[defaults]\nweight = 10001\n", "t.conf:2: weight" },
		{ "[defaults]\nshared-auth = x\n", "t.conf:2: unknown key 'shared-auth'" },
		{ "[defaults]\ncompress = maybe\n", "t.conf:2: compress: want off, lz4, zstd" },
		/* The old boolean form is gone, with the new values named. */
		{ "[defaults]\ncompress = on\n",
		  "t.conf:2: compress: 'on' is the old on/off form: want off, lz4, zstd or zstd:LEVEL" },
		{ "[client a]\ncompress = zstd:20\n", "t.conf:2: compress" },
		{ "[tmemd]\ncompress-threshold = 4089\n", "t.conf:2: compress-threshold: want 256..4088" },
		{ "[tmemd]\ncompress-threshold = 10\n", "t.conf:2: compress-threshold" },
		{ "[client a/b]\nweight = 1\n", "t.conf:2: [client a/b]: bad client: want uuid:U" },
		/* Issue 19 item 11: a domain is domid:N (or N), nothing else. */
		{ "[client domid:05]\nweight = 1\n", "t.conf:2: [client domid:05]: bad client: not a domid" },
		{ "[client 007]\nweight = 1\n", "t.conf:2: [client 007]: bad client: not a domid" },
		{ "[client domid:32752]\nweight = 1\n", "t.conf:2: [client domid:32752]: bad client: not a domid" },
		{ "[client domid:web1]\nweight = 1\n", "t.conf:2: [client domid:web1]: bad client: not a domid" },
		/* Issue 25: uuid:U names a domain by its handle, nothing else. */
		{ "[client uuid:web1]\nweight = 1\n", "t.conf:2: [client uuid:web1]: bad client: not a UUID" },
		{ "[client a]\nshared-auth = 1234\n", "t.conf:2: shared-auth: bad UUID" },
		{ "[bogus]\nx = 1\n", "t.conf:2: unknown section [bogus]" },
		{ "[tmemd]\nthis is not ini\n", "t.conf:2:" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tmemd_config cfg;
		char err[256] = "";

		ck_assert_int_eq(load(&cfg, bad[i].text, err), -EINVAL);
		ck_assert_msg(!strncmp(err, bad[i].msg, strlen(bad[i].msg)),
			      "case %zu: got '%s', want '%s...'", i, err, bad[i].msg);
		tmemd_config_free(&cfg);
	}
}
END_TEST

/* The bug: "ephemeral-max = 1000" (not a page multiple) loaded as a
 * 0-page cap without a word, while tmemctl refused the same value. */
START_TEST(test_config_cap_not_page_multiple_refused)
{
	static const char *const keys[] = { "ephemeral-max", "persistent-max" };

	for (size_t i = 0; i < 2; i++) {
		struct tmemd_config cfg;
		char text[128], err[256] = "", want[160];

		snprintf(text, sizeof(text), "[client vm1]\n%s = 1000\n", keys[i]);
		snprintf(want, sizeof(want), "t.conf:2: %s: bad size '1000': %s", keys[i],
			 tmem_size_strerror(TMEM_SIZE_NOT_PAGES));
		ck_assert_int_eq(load(&cfg, text, err), -EINVAL);
		ck_assert_msg(!strncmp(err, want, strlen(want)), "got '%s'", err);
		tmemd_config_free(&cfg);
	}
}
END_TEST

/*
 * Issue 19 item 11: [client domid:5] (or [client 5], the same section)
 * sets Xen domain 5, and its shared-auth grants domain 5, whatever name
 * the domain has; [client web1] is the local client web1 only.  Before,
 * both domain spellings were refused, so no file could grant a domain.
 */
START_TEST(test_config_domain_sections)
{
	struct tmem_uuid u;
	struct tmemd_config cfg;
	struct tmem_client_settings s;
	char err[256] = "";

	ck_assert_int_eq(tmem_uuid_parse("00112233-4455-6677-8899-aabbccddeeff", &u), 0);
	ck_assert_int_eq(load(&cfg, "[client domid:5]\nweight = 7\n"
			      "[client 5]\nshared-auth = 00112233-4455-6677-8899-aabbccddeeff\n"
			      "[client web1]\nweight = 9\n", err), 0);
	ck_assert_uint_eq(cfg.nr_clients, 2);
	tmemd_config_client_settings(&cfg, "domid:5", &s);
	ck_assert_uint_eq(s.weight, 7);
	ck_assert(tmemd_config_grants(&cfg, "domid:5", &u));
	ck_assert(!tmemd_config_grants(&cfg, "web1", &u));
	ck_assert_ptr_null(tmemd_config_client(&cfg, "5"));
	tmemd_config_client_settings(&cfg, "web1", &s);
	ck_assert_uint_eq(s.weight, 9);
	tmemd_config_free(&cfg);
}
END_TEST

START_TEST(test_config_missing_file)
{
	struct tmemd_config cfg;
	char err[256];

	tmemd_config_init(&cfg);
	ck_assert_int_lt(tmemd_config_load_file(&cfg, "/nonexistent/tmemd.conf", err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/tmemd.conf"));
	tmemd_config_free(&cfg);
}
END_TEST

static void req(struct tmem_req *r, uint32_t op, int32_t pool, uint32_t slot)
{
	memset(r, 0, sizeof(*r));
	r->op = op;
	r->pool_id = pool;
	r->slot = slot;
}

START_TEST(test_req_check)
{
	struct tmem_req r;

	req(&r, TMEM_OP_PUT_PAGE, 0, 3);
	ck_assert_int_eq(tmemd_req_check(&r, 4), 0);
	r.slot = 4;
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_ERANGE);
	r.slot = TMEM_NO_SLOT;
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_ERANGE);
	req(&r, TMEM_OP_GET_PAGE, 0, 0);
	r.rsvd[2] = 1;
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_EINVAL);
	req(&r, TMEM_OP_GET_PAGE, 0, 0);
	r.flags = 1;
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_EINVAL);
	req(&r, TMEM_OP_GET_PAGE, 32, 0);
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_ENOENT);
	req(&r, TMEM_OP_GET_PAGE, -1, 0);
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_ENOENT);
	req(&r, 3, 0, TMEM_NO_SLOT);
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_ENOSYS);
	req(&r, 0, 0, TMEM_NO_SLOT);
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_ENOSYS);
	req(&r, TMEM_OP_FLUSH_PAGE, 0, 0);
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_EINVAL);
	req(&r, TMEM_OP_FLUSH_PAGE, 0, TMEM_NO_SLOT);
	r.index = 5;
	ck_assert_int_eq(tmemd_req_check(&r, 4), 0);
	req(&r, TMEM_OP_FLUSH_OBJECT, 0, TMEM_NO_SLOT);
	r.index = 5;
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_EINVAL);
	req(&r, TMEM_OP_DESTROY_POOL, 0, TMEM_NO_SLOT);
	ck_assert_int_eq(tmemd_req_check(&r, 4), 0);
	r.oid[1] = 1;
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_EINVAL);
	req(&r, TMEM_OP_NEW_POOL, 0, TMEM_NO_SLOT);
	r.flags = tmem_pool_flags(TMEM_POOL_PERSIST);
	ck_assert_int_eq(tmemd_req_check(&r, 4), 0);
	r.flags |= 0x100;
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_EINVAL);
	req(&r, TMEM_OP_NEW_POOL, 0, TMEM_NO_SLOT);
	r.oid[2] = 1;
	ck_assert_int_eq(tmemd_req_check(&r, 4), -TMEM_EINVAL);
}
END_TEST

/* ---- the ring and dispatch on an in-memory region ---- */

struct fixture {
	struct tmemd_config cfg;
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmemd_clients *reg;
	struct tmemd_client *client;
	struct fake_ring fr;
	void *region;
	uint32_t prod;
};

static struct fixture fx;

static void setup(void)
{
	struct tmem_store_config sc = { .arena_bytes = 4u << 20 };
	struct tmem_policy_config pc;
	struct tmem_ring_hdr *h;

	memset(&fx, 0, sizeof(fx));
	tmemd_config_init(&fx.cfg);
	ck_assert_int_eq(store_create(&sc, &fx.store), 0);
	tmem_policy_config_defaults(&pc);
	ck_assert_int_eq(tmem_policy_create(fx.store, &pc, &fx.policy), 0);
	ck_assert_int_eq(tmemd_clients_create(fx.store, fx.policy, &fx.cfg, &fx.reg), 0);
	ck_assert_int_eq(tmemd_client_add(fx.reg, "unit", "test", -1, &fx.client), 0);
	fx.region = aligned_alloc(4096, tmem_region_size(8, 4));
	fake_ring_init(&fx.fr, fx.region, 8, 4, fx.client);
	h = fx.region;
	h->rsp_event = 1;
}

static void teardown(void)
{
	tmemd_clients_destroy(fx.reg);
	tmem_policy_destroy(fx.policy);
	store_destroy(fx.store);
	tmemd_config_free(&fx.cfg);
	free(fx.region);
}

/* Pushes one request and serves it; returns the response's ret. */
static int32_t serve(const struct tmem_req *r)
{
	struct tmem_ring_hdr *h = fx.region;
	union tmem_ring_entry *e = tmem_ring_entries(fx.region);
	uint32_t i = fx.prod++;

	e[i & 7].req = *r;
	e[i & 7].req.id = 1000 + i;
	h->req_prod = fx.prod;
	ck_assert_int_eq(tmemd_ring_process(&fx.fr.ring, 64), 1);
	ck_assert_uint_eq(h->rsp_prod, fx.prod);
	ck_assert_uint_eq(e[i & 7].rsp.id, 1000 + i);
	ck_assert_uint_eq(e[i & 7].rsp.op, r->op);
	for (int k = 0; k < 11; k++)
		ck_assert_uint_eq(e[i & 7].rsp.rsvd[k], 0);
	return e[i & 7].rsp.ret;
}

START_TEST(test_dispatch_ops)
{
	uint64_t counts[TMEMD_NR_REFUSAL_KINDS][TMEMD_NR_REASONS];
	struct tmem_req r;
	int32_t pool;
	char *slot1 = tmem_slot_ptr(fx.region, 8, 1), *slot2 = tmem_slot_ptr(fx.region, 8, 2);

	req(&r, TMEM_OP_NEW_POOL, 0, TMEM_NO_SLOT);
	r.flags = tmem_pool_flags(TMEM_POOL_PERSIST);
	pool = serve(&r);
	ck_assert_int_ge(pool, 0);
	memset(slot1, 0xab, 4096);
	req(&r, TMEM_OP_PUT_PAGE, pool, 1);
	r.oid[0] = 7;
	ck_assert_int_eq(serve(&r), 1);
	req(&r, TMEM_OP_GET_PAGE, pool, 2);
	r.oid[0] = 7;
	ck_assert_int_eq(serve(&r), 1);
	ck_assert_mem_eq(slot1, slot2, 4096);
	/* a pool id this client never got: a bad request, counted */
	req(&r, TMEM_OP_GET_PAGE, pool + 1, 2);
	ck_assert_int_eq(serve(&r), -TMEM_ENOENT);
	tmemd_clients_refusals(fx.reg, counts);
	ck_assert_uint_eq(counts[TMEMD_REFUSED_REQUEST][9], 1);
	ck_assert_str_eq(tmemd_refusal_reason_name(9), "ENOENT");
	req(&r, 99, pool, TMEM_NO_SLOT);
	ck_assert_int_eq(serve(&r), -TMEM_ENOSYS);
	tmemd_clients_refusals(fx.reg, counts);
	ck_assert_uint_eq(counts[TMEMD_REFUSED_REQUEST][7], 1);
	ck_assert_str_eq(tmemd_refusal_reason_name(7), "ENOSYS");
	req(&r, TMEM_OP_FLUSH_PAGE, pool, TMEM_NO_SLOT);
	r.oid[0] = 7;
	ck_assert_int_eq(serve(&r), 1);
	req(&r, TMEM_OP_FLUSH_OBJECT, pool, TMEM_NO_SLOT);
	r.oid[0] = 7;
	ck_assert_int_eq(serve(&r), 0);
	req(&r, TMEM_OP_DESTROY_POOL, pool, TMEM_NO_SLOT);
	ck_assert_int_ge(serve(&r), 0);
	req(&r, TMEM_OP_GET_PAGE, pool, 2);
	ck_assert_int_eq(serve(&r), -TMEM_ENOENT);
	req(&r, 77, pool, 2);
	ck_assert_int_eq(serve(&r), -TMEM_ENOSYS);
	ck_assert_int_eq(fx.fr.faulted, 0);
}
END_TEST

START_TEST(test_ring_notify_holdoff)
{
	struct tmem_ring_hdr *h = fx.region;
	struct tmem_req r;

	req(&r, TMEM_OP_FLUSH_PAGE, 0, TMEM_NO_SLOT);
	h->rsp_event = 1; /* the frontend sleeps: wants a doorbell at 1 */
	serve(&r);
	ck_assert_int_eq(fx.fr.notified, 1);
	serve(&r); /* rsp_event still 1: the frontend is polling */
	ck_assert_int_eq(fx.fr.notified, 1);
	h->rsp_event = 3;
	serve(&r);
	ck_assert_int_eq(fx.fr.notified, 2);
	/* arming: req_event = cons + 1, nothing pending */
	ck_assert(!tmemd_ring_arm(&fx.fr.ring));
	ck_assert_uint_eq(h->req_event, 4);
	h->req_prod = 4; /* a request the frontend did not write; still served */
	ck_assert(tmemd_ring_arm(&fx.fr.ring));
}
END_TEST

START_TEST(test_ring_overflow_faults)
{
	struct tmem_ring_hdr *h = fx.region;

	h->req_prod = 9; /* 8 entries */
	ck_assert_int_eq(tmemd_ring_process(&fx.fr.ring, 64), -TMEM_EPROTO);
	ck_assert_int_eq(fx.fr.faulted, 1);
	ck_assert_int_eq(tmemd_ring_process(&fx.fr.ring, 64), -TMEM_EPROTO);
	ck_assert_int_eq(fx.fr.faulted, 1); /* reported once */
	ck_assert(!tmemd_ring_arm(&fx.fr.ring));
}
END_TEST

START_TEST(test_ring_backwards_faults)
{
	struct tmem_ring_hdr *h = fx.region;

	h->req_prod = 0xfffffff0u;
	ck_assert_int_eq(tmemd_ring_process(&fx.fr.ring, 64), -TMEM_EPROTO);
	ck_assert_int_eq(fx.fr.faulted, 1);
}
END_TEST

START_TEST(test_ring_geometry_faults)
{
	struct tmem_ring_hdr *h = fx.region;
	struct tmem_req r;

	req(&r, TMEM_OP_FLUSH_PAGE, 0, TMEM_NO_SLOT);
	serve(&r);
	h->nr_slots = 1000;
	ck_assert_int_eq(tmemd_ring_process(&fx.fr.ring, 64), -TMEM_EPROTO);
	ck_assert_int_eq(fx.fr.faulted, 1);
}
END_TEST

START_TEST(test_ring_budget)
{
	struct tmem_ring_hdr *h = fx.region;
	union tmem_ring_entry *e = tmem_ring_entries(fx.region);

	for (int i = 0; i < 8; i++)
		req(&e[i].req, TMEM_OP_FLUSH_PAGE, 0, TMEM_NO_SLOT);
	h->req_prod = 8;
	ck_assert_int_eq(tmemd_ring_process(&fx.fr.ring, 5), 5);
	ck_assert_uint_eq(h->rsp_prod, 5);
	ck_assert(tmemd_ring_pending(&fx.fr.ring));
	ck_assert_int_eq(tmemd_ring_process(&fx.fr.ring, 5), 3);
	ck_assert_uint_eq(h->rsp_prod, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(e[i].rsp.ret, -TMEM_ENOENT); /* pool 0 never made */
}
END_TEST

static void weight_hook(void *ctx, const struct tmemd_client_names *names,
			struct tmem_client_settings *s)
{
	(void)ctx;
	ck_assert_int_eq(names->domid, -1);
	/* A local client is named by its name alone. */
	ck_assert_ptr_nonnull(names->by[0]);
	ck_assert_ptr_null(names->by[1]);
	ck_assert_str_eq(names->by[0], names->key);
	if (!strcmp(names->key, "hooked"))
		s->weight = 777;
}

START_TEST(test_clients_registry)
{
	struct tmemd_client *c, *d;
	struct tmem_client_settings s;

	ck_assert_ptr_eq(tmemd_clients_find(fx.reg, "unit"), fx.client);
	ck_assert_ptr_null(tmemd_clients_find(fx.reg, "nobody"));
	ck_assert_int_eq(tmemd_client_add(fx.reg, "unit", "test", -1, &c), -EEXIST);
	ck_assert_int_eq(tmemd_client_add(fx.reg, "bad name", "test", -1, &c), -EINVAL);
	tmemd_clients_set_settings_hook(fx.reg, weight_hook, NULL);
	ck_assert_int_eq(tmemd_client_add(fx.reg, "hooked", "test", -1, &c), 0);
	ck_assert_int_eq(tmemd_client_add(fx.reg, "plain", "test", -1, &d), 0);
	tmem_policy_client_get(c->pc, &s);
	ck_assert_uint_eq(s.weight, 777);
	tmem_policy_client_get(d->pc, &s);
	ck_assert_uint_eq(s.weight, TMEM_DEFAULT_WEIGHT);
	tmemd_client_remove(c);
	ck_assert_ptr_null(tmemd_clients_find(fx.reg, "hooked"));
	tmemd_client_remove(d);
	tmemd_client_remove(NULL);
}
END_TEST

/* printk_ratelimited's rule: a burst per interval per site, and per
 * source; the next line let through reports what was held back. */
START_TEST(test_ratelimit)
{
	static struct tmemd_ratelimit rl;
	static const char site_a[] = "a %d", site_b[] = "b %d";
	const uint64_t t0 = 1000, later = t0 + TMEMD_RL_INTERVAL_NS;
	uint32_t sup, passed = 0;

	for (unsigned i = 0; i < 100; i++)
		passed += tmemd_ratelimit(&rl, site_a, TMEMD_RL_NO_SOURCE, t0 + i, &sup);
	ck_assert_uint_eq(passed, TMEMD_RL_BURST);
	/* Another site has its own burst. */
	ck_assert(tmemd_ratelimit(&rl, site_b, TMEMD_RL_NO_SOURCE, t0, &sup));
	ck_assert_uint_eq(sup, 0);
	/* The next interval: one line, carrying the 90 held back. */
	ck_assert(tmemd_ratelimit(&rl, site_a, TMEMD_RL_NO_SOURCE, later, &sup));
	ck_assert_uint_eq(sup, 100 - TMEMD_RL_BURST);
	ck_assert(tmemd_ratelimit(&rl, site_a, TMEMD_RL_NO_SOURCE, later + 1, &sup));
	ck_assert_uint_eq(sup, 0);
	/* Per source: one uid's flood leaves the site's burst to others. */
	passed = 0;
	for (unsigned i = 0; i < 1000; i++)
		passed += tmemd_ratelimit(&rl, site_b, TMEMD_RL_UID(1000), later + i, &sup);
	ck_assert_uint_eq(passed, TMEMD_RL_SOURCE_BURST);
	ck_assert(tmemd_ratelimit(&rl, site_b, TMEMD_RL_UID(1001), later, &sup));
	ck_assert(tmemd_ratelimit(&rl, site_b, TMEMD_RL_DOMID(1000), later, &sup));
	/* Many sources: the site's burst still bounds the lines. */
	passed = 0;
	for (unsigned i = 0; i < 10000; i++)
		passed += tmemd_ratelimit(&rl, site_a, tmemd_rl_name((char[]){ (char)('a' + i % 26),
								(char)('a' + i / 26 % 26), 0 }),
					  later + 2 * TMEMD_RL_INTERVAL_NS, &sup);
	ck_assert_uint_eq(passed, TMEMD_RL_BURST);
	ck_assert_uint_ne(tmemd_rl_name("vm1"), tmemd_rl_name("vm2"));
	ck_assert_uint_ne(TMEMD_RL_UID(5), TMEMD_RL_DOMID(5));
}
END_TEST

/* Files are read whole in large reads, up to a cap: over it is -EFBIG
 * at once, whatever the size. */
START_TEST(test_read_capped)
{
	char path[] = "/tmp/tmemd-capped.XXXXXX";
	int fd = mkstemp(path);
	char *text;
	size_t len;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "0123456789", 10), 10);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(io_read_capped(fd, 10, &text, &len, NULL, NULL), 0);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(text, "0123456789");
	free(text);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(io_read_capped(fd, 9, &text, &len, NULL, NULL), -EFBIG);
	ck_assert_ptr_null(text);
	/* A sparse 1 GiB file is refused without being read. */
	ck_assert_int_eq(ftruncate(fd, 1ll << 30), 0);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(io_read_capped(fd, 4u << 20, &text, &len, NULL, NULL), -EFBIG);
	close(fd);
	/* Not a regular file: caught at the cap + 1st byte. */
	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(io_read_capped(fd, 3u << 20, &text, &len, NULL, NULL), -EFBIG);
	close(fd);
	unlink(path);
}
END_TEST

/* tmemd.conf over its cap, with a NUL byte or a line too long: one
 * message naming the file, the cap and what to do; cfg keeps what it
 * had. */
START_TEST(test_config_file_cap)
{
	char path[] = "/tmp/tmemd-conf.XXXXXX", err[256] = "", line[199], text[300];
	struct tmemd_config cfg;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "[tmemd]\nworkers = 3\n", 20), 20);
	tmemd_config_init(&cfg);
	ck_assert_int_eq(tmemd_config_load_file(&cfg, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.workers, 3);
	ck_assert_int_eq(ftruncate(fd, TMEMD_CONFIG_MAX_BYTES + 1), 0);
	ck_assert_int_eq(tmemd_config_load_file(&cfg, path, err, sizeof(err)), -EFBIG);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_nonnull(strstr(err, TMEMD_CONFIG_MAX_TEXT " cap"));
	ck_assert_int_eq(ftruncate(fd, 40), 0);  /* NUL bytes after the text */
	ck_assert_int_eq(tmemd_config_load_file(&cfg, path, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "NUL byte at offset 20"));
	ck_assert_uint_eq(cfg.workers, 3);
	/* A line longer than inih reads whole: refused by its own number,
	 * not as a "syntax error" on a line the file does not have. */
	memset(line, '#', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	line[197] = '\0';
	snprintf(text, sizeof(text), "[tmemd]\n%s\nworkers = 4\n", line);
	ck_assert_int_eq(tmemd_config_load_string(&cfg, "t.conf", text, err, sizeof(err)), 0);
	ck_assert_uint_eq(cfg.workers, 4);
	line[197] = '#';
	snprintf(text, sizeof(text), "[tmemd]\n%s\nworkers = 5\n", line);
	ck_assert_int_eq(tmemd_config_load_string(&cfg, "t.conf", text, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:2: line longer than 197 bytes");
	ck_assert_uint_eq(cfg.workers, 4);
	tmemd_config_free(&cfg);
	close(fd);
	unlink(path);
}
END_TEST

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_reload)
{
	char path[] = "/tmp/tmemd-reload.XXXXXX", err[256] = "";
	struct tmem_client_settings s;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(tmem_policy_freeze(fx.client->pc, true), 0);
	write_file(path, "[defaults]\nweight = 300\n[client unit]\npersistent-max = 8K\n");
	ck_assert_int_eq(tmemd_reload(&fx.cfg, path, fx.reg, NULL, NULL, 0, err, sizeof(err)), 0);
	tmem_policy_client_get(fx.client->pc, &s);
	ck_assert_uint_eq(s.weight, 300);
	ck_assert_uint_eq(s.persistent_max, 2);
	ck_assert(s.frozen); /* run-time state survives a reload */
	/* a bad file changes nothing */
	write_file(path, "[defaults]\nweight = 0\n");
	ck_assert_int_eq(tmemd_reload(&fx.cfg, path, fx.reg, NULL, NULL, 0, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":2: weight"));
	tmem_policy_client_get(fx.client->pc, &s);
	ck_assert_uint_eq(s.weight, 300);
	/* no config file: nothing to re-read */
	ck_assert_int_eq(tmemd_reload(&fx.cfg, NULL, fx.reg, NULL, NULL, 0, err, sizeof(err)), 0);
	unlink(path);
}
END_TEST

static Suite *daemon_suite(void)
{
	Suite *s = suite_create("daemon");
	TCase *parse_tc = tcase_create("parsing");
	TCase *ring_tc = tcase_create("ring");

	tcase_add_test(parse_tc, test_sizes);
	tcase_add_test(parse_tc, test_options);
	tcase_add_test(parse_tc, test_config_good);
	tcase_add_test(parse_tc, test_config_errors);
	tcase_add_test(parse_tc, test_config_restart_keys);
	tcase_add_test(parse_tc, test_config_fallow_keys);
	tcase_add_test(parse_tc, test_arena_refusals);
	tcase_add_test(parse_tc, test_config_cap_not_page_multiple_refused);
	tcase_add_test(parse_tc, test_config_domain_sections);
	tcase_add_test(parse_tc, test_config_missing_file);
	tcase_add_test(parse_tc, test_req_check);
	tcase_add_test(parse_tc, test_ratelimit);
	tcase_add_test(parse_tc, test_read_capped);
	tcase_add_test(parse_tc, test_config_file_cap);
	suite_add_tcase(s, parse_tc);
	tcase_add_checked_fixture(ring_tc, setup, teardown);
	tcase_add_test(ring_tc, test_dispatch_ops);
	tcase_add_test(ring_tc, test_ring_notify_holdoff);
	tcase_add_test(ring_tc, test_ring_overflow_faults);
	tcase_add_test(ring_tc, test_ring_backwards_faults);
	tcase_add_test(ring_tc, test_ring_geometry_faults);
	tcase_add_test(ring_tc, test_ring_budget);
	tcase_add_test(ring_tc, test_clients_registry);
	tcase_add_test(ring_tc, test_reload);
	suite_add_tcase(s, ring_tc);
	add_readback_tests(s);
	return s;
}

int main(void)
{
	return tmem_test_main(daemon_suite(), 0);
}
