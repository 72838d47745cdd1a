/* SPDX-License-Identifier: MIT */
/*
 * Issue 28: tmemd lives in fallow memory.  A real tmemd, read from
 * outside: its resident memory (/proc/PID/status) and its arena file's
 * blocks follow what is stored, not the ceiling; and with the host's
 * memory state made injectable (TMEMD_MEMINFO, TMEMD_PSI, TMEMD_CGROUP:
 * fake files this test writes), its target falls under pressure,
 * ephemeral pages first, loses no persistent page, refuses persistent
 * puts while they fill the target, and grows back once the pressure ends.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/test_main.h"
#include "harness.h"
#include "restart_harness.h"
#include "tmem.h"

#define MiB (1024ull * 1024ull)
#define PAGES_PER_OBJ 1024u

static struct tmem_oid oid_of(unsigned long long n)
{
	struct tmem_oid o = { .oid = { n, 0x28, 0xfa110 } };

	return o;
}

/* VmRSS of pid, bytes. */
static unsigned long long rss_of(pid_t pid)
{
	char path[64], line[256];
	unsigned long long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static unsigned long long file_blocks(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (unsigned long long)st.st_blocks * 512;
}

/* pages pages into pool, seeds base.., PAGES_PER_OBJ to an object. */
static void fill(struct tmem_conn *c, int32_t pool, unsigned long long base,
		 unsigned pages)
{
	static char page[4096];

	for (unsigned i = 0; i < pages; i++) {
		struct tmem_oid o = oid_of((base + i) / PAGES_PER_OBJ);

		test_page(page, base + i);
		ck_assert_int_eq(tmem_put(c, pool, &o, (uint32_t)((base + i) % PAGES_PER_OBJ), page), 1);
	}
}

/* Every page of fill() comes back, byte for byte. */
static void verify(struct tmem_conn *c, int32_t pool, unsigned long long base,
		   unsigned pages)
{
	static char page[4096], want[4096];

	for (unsigned i = 0; i < pages; i++) {
		struct tmem_oid o = oid_of((base + i) / PAGES_PER_OBJ);

		test_page(want, base + i);
		ck_assert_int_eq(tmem_get(c, pool, &o, (uint32_t)((base + i) % PAGES_PER_OBJ), page), 1);
		ck_assert_msg(memcmp(page, want, sizeof(page)) == 0, "page %u differs", i);
	}
}

static void flush_all(struct tmem_conn *c, int32_t pool, unsigned long long base,
		      unsigned pages)
{
	for (unsigned long long obj = base / PAGES_PER_OBJ;
	     obj <= (base + pages - 1) / PAGES_PER_OBJ; obj++) {
		struct tmem_oid o = oid_of(obj);

		ck_assert_int_ge(tmem_flush_object(c, pool, &o), 0);
	}
}

static long long stat_int(struct daemon *d, const char *obj, const char *key)
{
	json_t *s = daemon_stats(d), *o, *v;
	long long n;

	ck_assert_ptr_nonnull(s);
	o = json_object_get(s, obj);
	ck_assert_msg(json_is_object(o), "stats lack \"%s\"", obj);
	v = json_object_get(o, key);
	ck_assert_msg(json_is_integer(v), "stats lack %s.%s", obj, key);
	n = json_integer_value(v);
	json_decref(s);
	return n;
}

static struct tmem_conn *connect_as(struct daemon *d, const char *name)
{
	struct tmem_conn *c = NULL;

	ck_assert_int_eq(tmem_connect(d->sock, name, &c), 0);
	return c;
}

/* Polls until resident memory (or the file's blocks) falls under limit. */
static unsigned long long wait_under(struct daemon *d, const char *file,
				     unsigned long long limit, unsigned ms)
{
	unsigned long long now = 0;

	for (unsigned waited = 0; waited <= ms; waited += 250) {
		now = file ? file_blocks(file) : rss_of(d->pid);
		if (now < limit)
			return now;
		harness_msleep(250);
	}
	return now;
}

static const char *const plain = "[defaults]\ncompress = off\n";

/* Point 1: 1G of ceiling costs nothing idle; 512 MiB stored and flushed
 * goes back to the host within 10 s. */
START_TEST(test_resident_follows_stored)
{
	struct daemon d;
	struct tmem_conn *c;
	unsigned long long idle, full, after;
	int32_t pool;

	daemon_start(&d, plain, "1G");
	harness_msleep(500);
	idle = rss_of(d.pid);
	ck_assert_msg(idle < 32 * MiB, "idle tmemd --memory 1G holds %llu MiB", idle / MiB);
	c = connect_as(&d, "fill");
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	ck_assert_int_ge(pool, 0);
	fill(c, pool, 0, 512 * MiB / 4096);
	full = rss_of(d.pid);
	ck_assert_msg(full > 512 * MiB, "512 MiB stored, only %llu MiB resident", full / MiB);
	flush_all(c, pool, 0, 512 * MiB / 4096);
	after = wait_under(&d, NULL, 64 * MiB, 10000);
	ck_assert_msg(after < 64 * MiB, "10 s after the flush, %llu MiB resident", after / MiB);
	ck_assert_int_ge(stat_int(&d, "memory", "peak_bytes"), (long long)(512 * MiB));
	ck_assert_int_ge(stat_int(&d, "memory", "released_bytes"), (long long)(448 * MiB));
	ck_assert_int_lt(stat_int(&d, "memory", "resident_bytes"), (long long)(64 * MiB));
	fprintf(stderr, "resident: idle %llu MiB, 512 MiB stored %llu MiB, flushed %llu MiB\n",
		idle / MiB, full / MiB, after / MiB);
	tmem_disconnect(c);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

/* The same with the arena in a tmpfs file: its blocks fall too, and the
 * pages kept survive a kill -9 and a start on it (issue 15's contract). */
START_TEST(test_arena_file_blocks_fall)
{
	struct rdaemon d;
	struct tmem_conn *c = NULL;
	unsigned long long full, after = 0;
	const unsigned pages = 512 * MiB / 4096;
	int32_t pool;

	rdaemon_init(&d, KEEP_ARENA_FILE, plain);
	d.memory = "2G"; /* over 1 GiB: issue 15's contract */
	ck_assert(rdaemon_start(&d, NULL));
	ck_assert_msg(file_blocks(d.arena) < 32 * MiB, "a new arena file holds %llu MiB",
		      file_blocks(d.arena) / MiB);
	ck_assert_int_eq(tmem_connect(d.sock, "filefill", &c), 0);
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	ck_assert_int_ge(pool, 0);
	fill(c, pool, 0, pages);
	full = file_blocks(d.arena);
	ck_assert_msg(full > 512 * MiB, "512 MiB stored, the file holds %llu MiB", full / MiB);
	/* Keep the last object: it must come back after the restart. */
	flush_all(c, pool, 0, pages - PAGES_PER_OBJ);
	for (unsigned waited = 0; waited <= 10000; waited += 250) {
		after = file_blocks(d.arena);
		if (after < 64 * MiB)
			break;
		harness_msleep(250);
	}
	ck_assert_msg(after < 64 * MiB, "10 s after the flush the file holds %llu MiB",
		      after / MiB);
	rdaemon_kill9(&d);
	ck_assert(rdaemon_start(&d, NULL));
	verify(c, pool, pages - PAGES_PER_OBJ, PAGES_PER_OBJ);
	ck_assert_uint_ge(tmem_conn_reconnects(c), 1);
	tmem_disconnect(c);
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	rdaemon_fini(&d);
}
END_TEST

/* ---- pressure, from fake files ------------------------------------------ */

struct fake_host {
	char dir[64], meminfo[96], psi[96];
	unsigned long long stall_usec;
};

static void write_atomic(const char *path, const char *text)
{
	char tmp[128];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(rename(tmp, path), 0);
}

static void fake_set(struct fake_host *h, unsigned long long avail_mib)
{
	char text[256];

	snprintf(text, sizeof(text), "MemTotal:        4194304 kB\nMemFree:  1 kB\n"
		 "MemAvailable:    %llu kB\n", avail_mib * 1024);
	write_atomic(h->meminfo, text);
	snprintf(text, sizeof(text), "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", h->stall_usec);
	write_atomic(h->psi, text);
}

static void fake_init(struct fake_host *h)
{
	snprintf(h->dir, sizeof(h->dir), "/tmp/tmemd-fallow-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(h->dir));
	snprintf(h->meminfo, sizeof(h->meminfo), "%s/meminfo", h->dir);
	snprintf(h->psi, sizeof(h->psi), "%s/psi", h->dir);
	h->stall_usec = 0;
	fake_set(h, 2048);
	setenv("TMEMD_MEMINFO", h->meminfo, 1);
	setenv("TMEMD_PSI", h->psi, 1);
	setenv("TMEMD_CGROUP", "", 1);
}

/* ms of wall time with stall_pct of it stalled, the files kept current. */
static void stall_for(struct fake_host *h, unsigned ms, unsigned stall_pct,
		      unsigned long long avail_mib)
{
	for (unsigned t = 0; t < ms; t += 100) {
		h->stall_usec += 100000ull * stall_pct / 100;
		fake_set(h, avail_mib);
		harness_msleep(100);
	}
}

/* Polls memory.target_bytes until cond(target, arg); the last value. */
static long long wait_target(struct daemon *d, bool below, long long than, unsigned ms)
{
	long long t = 0;

	for (unsigned waited = 0; waited <= ms; waited += 250) {
		t = stat_int(d, "memory", "target_bytes");
		if (below ? t < than : t >= than)
			break;
		harness_msleep(250);
	}
	return t;
}

static const char *const elastic =
	"[tmemd]\nmemory-reserve = 64M\nmemory-grow-delay = 3s\n"
	"[defaults]\ncompress = off\n";

/* Point 2 (make check form): PSI stalls make the target fall within
 * 5 s, ephemeral pages go, persistent ones stay and are refused more
 * room; when the stalls end, the target grows back. */
START_TEST(test_pressure_shrinks_then_grows)
{
	static char page[4096];
	struct fake_host h;
	struct daemon d;
	struct tmem_conn *c;
	int32_t eph, pers;
	long long t, eph_before;
	struct tmem_oid o = oid_of(1u << 20);

	fake_init(&h);
	daemon_start(&d, elastic, "512M");
	c = connect_as(&d, "squeezed");
	eph = tmem_new_pool(c, tmem_pool_flags(0), NULL);
	pers = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	ck_assert_int_ge(eph, 0);
	ck_assert_int_ge(pers, 0);
	fill(c, eph, 0, 200 * MiB / 4096);
	fill(c, pers, 0, 100 * MiB / 4096);
	ck_assert_int_eq(stat_int(&d, "memory", "target_bytes"), (long long)(512 * MiB));
	eph_before = stat_int(&d, "pool", "ephemeral_pages");

	stall_for(&h, 5000, 40, 2048);
	/* Still inside memory-grow-delay: the persistent pages fill the
	 * target, so a new one is refused. */
	test_page(page, 999999);
	ck_assert_int_ne(tmem_put(c, pers, &o, 0, page), 1);
	t = stat_int(&d, "memory", "target_bytes");
	ck_assert_msg(t < (long long)(300 * MiB), "5 s of 40%% stalls: target %lld MiB", t / (long long)MiB);
	ck_assert_int_lt(stat_int(&d, "pool", "ephemeral_pages"), eph_before);
	ck_assert_int_eq(stat_int(&d, "pool", "persistent_pages"), (long long)(100 * MiB / 4096));
	verify(c, pers, 0, 100 * MiB / 4096);

	t = wait_target(&d, false, (long long)(512 * MiB), 15000);
	ck_assert_msg(t == (long long)(512 * MiB), "15 s after the stalls: target %lld MiB",
		      t / (long long)MiB);
	ck_assert_int_eq(tmem_put(c, pers, &o, 0, page), 1);
	verify(c, pers, 0, 100 * MiB / 4096);
	tmem_disconnect(c);
	ck_assert_int_eq(daemon_stop(&d), 0);
	harness_remove_tree(h.dir);
}
END_TEST

/* Available memory under the reserve: the target falls by the
 * shortfall (cause low_free), ephemeral pages go, persistent stay. */
START_TEST(test_low_free_memory_shrinks)
{
	struct fake_host h;
	struct daemon d;
	struct tmem_conn *c;
	int32_t eph, pers;
	long long t;
	json_t *s;

	fake_init(&h);
	daemon_start(&d, elastic, "512M");
	c = connect_as(&d, "lowfree");
	eph = tmem_new_pool(c, tmem_pool_flags(0), NULL);
	pers = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	fill(c, eph, 0, 128 * MiB / 4096);
	fill(c, pers, 0, 64 * MiB / 4096);
	/* 16 MiB available against a 64 MiB reserve: 48 MiB short. */
	fake_set(&h, 16);
	t = wait_target(&d, true, (long long)(192 * MiB - 40 * MiB), 5000);
	ck_assert_msg(t <= (long long)(192 * MiB - 40 * MiB), "target %lld MiB", t / (long long)MiB);
	s = daemon_stats(&d);
	ck_assert_int_ge(json_integer_value(json_object_get(json_object_get(json_object_get(
		json_object_get(s, "memory"), "reclaim"), "low_free"), "pages")), 40 * MiB / 4096);
	ck_assert_int_le(json_integer_value(json_object_get(json_object_get(s, "pool"),
							    "ephemeral_pages")),
			 (long long)(128 * MiB / 4096 - 40 * MiB / 4096));
	json_decref(s);
	verify(c, pers, 0, 64 * MiB / 4096);
	tmem_disconnect(c);
	ck_assert_int_eq(daemon_stop(&d), 0);
	harness_remove_tree(h.dir);
}
END_TEST

/* Its release is held for 10 s, so that the check a second later still
 * holds on a loaded machine. */
static const char *const elastic_slow =
	"[tmemd]\nmemory-reserve = 64M\nmemory-grow-delay = 10s\n"
	"[defaults]\ncompress = off\n";

/* tmemctl release SIZE against the real tmemd: the target falls by SIZE
 * at once, ephemeral pages go, persistent stay, and it holds. */
START_TEST(test_release_by_hand)
{
	struct fake_host h;
	struct daemon d;
	struct tmem_conn *c;
	int32_t eph, pers;
	char cmd[512];
	long long before, after;

	fake_init(&h);
	daemon_start(&d, elastic_slow, "512M");
	c = connect_as(&d, "released");
	eph = tmem_new_pool(c, tmem_pool_flags(0), NULL);
	pers = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	fill(c, eph, 0, 96 * MiB / 4096);
	fill(c, pers, 0, 32 * MiB / 4096);
	before = stat_int(&d, "pool", "ephemeral_pages");
	snprintf(cmd, sizeof(cmd), "%s --runtime-dir %s release 64M >%s/release.out 2>&1",
		 getenv("TMEMCTL_BIN") ? getenv("TMEMCTL_BIN") : "build/tmemctl", d.dir, h.dir);
	ck_assert_int_eq(system(cmd), 0);
	after = stat_int(&d, "pool", "ephemeral_pages");
	ck_assert_int_le(after, before - (long long)(60 * MiB / 4096));
	ck_assert_int_le(stat_int(&d, "memory", "target_bytes"), (long long)(128 * MiB - 60 * MiB));
	verify(c, pers, 0, 32 * MiB / 4096);
	/* Held for memory-grow-delay (10 s), then free to grow again. */
	harness_msleep(1000);
	ck_assert_int_le(stat_int(&d, "memory", "target_bytes"), (long long)(128 * MiB));
	ck_assert_int_eq(wait_target(&d, false, (long long)(512 * MiB), 25000),
			 (long long)(512 * MiB));
	snprintf(cmd, sizeof(cmd), "%s --runtime-dir %s release 0 >/dev/null 2>&1",
		 getenv("TMEMCTL_BIN") ? getenv("TMEMCTL_BIN") : "build/tmemctl", d.dir);
	ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
	tmem_disconnect(c);
	ck_assert_int_eq(daemon_stop(&d), 0);
	harness_remove_tree(h.dir);
}
END_TEST

/* The arena on a tmpfs too small for the pool: puts past its end are
 * refused (frames get blocks before their first touch, and the target
 * keeps clear of the end), tmemd never dies of SIGBUS, and every page it
 * acknowledged comes back. */
START_TEST(test_full_tmpfs_refuses_puts)
{
	char dir[] = "/tmp/tmemd-small-tmpfs.XXXXXX", conf[256], cmd[128];
	static char page[4096];
	struct daemon d;
	struct tmem_conn *c;
	unsigned stored = 0, refused = 0;
	int32_t pool;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o size=48M tmpfs %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(conf, sizeof(conf), "[tmemd]\narena = %s/arena\n%s", dir, plain);
	daemon_start(&d, conf, "256M");
	c = connect_as(&d, "cramped");
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	ck_assert_int_ge(pool, 0);
	for (unsigned i = 0; i < 96 * MiB / 4096; i++) {
		struct tmem_oid o = oid_of(i / PAGES_PER_OBJ);
		int rc;

		test_page(page, i);
		rc = tmem_put(c, pool, &o, i % PAGES_PER_OBJ, page);
		ck_assert_msg(rc == 1 || rc == 0 || rc == -ENOSPC, "put %u: %d", i, rc);
		if (rc == 1)
			stored = i + 1;
		else
			refused++;
		if (rc != 1)
			break;
	}
	ck_assert_msg(refused > 0, "96 MiB went into a 48 MiB tmpfs");
	ck_assert(daemon_alive(&d));
	fprintf(stderr, "small tmpfs: %u pages stored, then refused\n", stored);
	verify(c, pool, 0, stored);
	tmem_disconnect(c);
	ck_assert_int_eq(daemon_stop(&d), 0);
	snprintf(cmd, sizeof(cmd), "umount %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	rmdir(dir);
}
END_TEST

static Suite *fallow_suite(void)
{
	Suite *s = suite_create("fallow");
	TCase *tc = tcase_create("fallow");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_resident_follows_stored);
	tcase_add_test(tc, test_arena_file_blocks_fall);
	tcase_add_test(tc, test_pressure_shrinks_then_grows);
	tcase_add_test(tc, test_low_free_memory_shrinks);
	tcase_add_test(tc, test_release_by_hand);
	if (tmem_test_have_root("test_full_tmpfs_refuses_puts", "mounts a small tmpfs"))
		tcase_add_test(tc, test_full_tmpfs_refuses_puts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(fallow_suite(), TMEM_TEST_ALWAYS_FORK);
}
