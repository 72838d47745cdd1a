/* SPDX-License-Identifier: MIT */
/*
 * The host tier against a real tmemd and libtmem clients (issue 29):
 *   - a full pool: persistent puts worth 4x the pool are all stored (the
 *     pool spills instead of refusing), and all read back;
 *   - the soak: 4 clients store persistent pages worth 3x the pool, read
 *     them back at random (every page checksummed), overwrite and flush,
 *     while tmemd is killed with -9 TMEM_SOAK_KILLS times (default 20) at
 *     random moments, spills in flight among them; 0 lost, 0 wrong;
 *     printed: pages spilled, read-backs, read-back p50/p99;
 *   - the elastic target halves while the pool holds only persistent
 *     pages: tmemd meets it by spilling, in a time printed, 0 lost;
 *   - bad input: a tier of another size or another arena, truncated, not
 *     writable (a read-only mount), spill without spill-size, and a full
 *     disk (ENOSPC mid-spill: logged, pages stay in RAM, none lost).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/test_main.h"
#include "harness.h"
#include "restart_harness.h"
#include "tmem.h"

#define POOL_MIB 8u
#define POOL_PAGES (POOL_MIB * 256u)
#define NCLIENTS 4
/* Each client: three quarters of the pool, so 3x in all. */
#define NPAGES (3u * POOL_PAGES / NCLIENTS)

static const char *tmemctl_bin(void)
{
	return getenv("TMEMCTL_BIN") ? getenv("TMEMCTL_BIN") : TMEMCTL_BIN;
}

static void content(void *pg, unsigned client, unsigned h, unsigned v)
{
	test_page(pg, ((unsigned long long)client << 48) ^ ((unsigned long long)h << 20) ^ v);
}

static struct tmem_oid hoid(unsigned h)
{
	struct tmem_oid o = { { h / 16, 0x5911, 0 } };

	return o;
}

/* A config with the tier at dir/spill of size, and extra lines. */
static char *tier_config(const char *dir, const char *size, const char *extra)
{
	static char text[1024];

	snprintf(text, sizeof(text), "[tmemd]\nspill = %s/spill\nspill-size = %s\n%s", dir, size,
		 extra ? extra : "");
	return text;
}

static void tier_dir(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/tmemd-spill.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void tier_dir_remove(const char *dir)
{
	harness_remove_tree(dir);
}

/* The stats of an rdaemon (SIGUSR1, stats.json). */
static json_t *rstats(struct rdaemon *d)
{
	struct daemon dd = { .pid = d->pid };

	snprintf(dd.dir, sizeof(dd.dir), "%s", d->dir);
	return daemon_stats(&dd);
}

static long long jint_at(json_t *doc, const char *a, const char *b, const char *c)
{
	json_t *v = json_object_get(json_object_get(doc, a), b);

	if (c)
		v = json_object_get(v, c);
	ck_assert_msg(json_is_integer(v), "stats lack %s.%s%s%s", a, b, c ? "." : "", c ? c : "");
	return json_integer_value(v);
}

/* ---- clients ------------------------------------------------------------ */

struct client {
	pthread_t thread;
	unsigned id;
	atomic_bool *stop;
	int32_t pool;
	int acked[NPAGES];        /* version acknowledged, -1 none */
	unsigned next_ver;
	uint64_t ops, lost, wrong, hits, refused, over;
	struct tmem_conn *c;
};

static void cl_get(struct client *s, unsigned h)
{
	unsigned char pg[4096], want[4096];
	struct tmem_oid o = hoid(h);
	int ret = tmem_get(s->c, s->pool, &o, h % 16, pg);

	if (ret < 0) {
		s->over++;
		return;
	}
	if (ret == 0) {
		if (s->acked[h] >= 0)
			s->lost++;
		return;
	}
	s->hits++;
	if (s->acked[h] < 0) {
		s->wrong++;
		return;
	}
	content(want, s->id, h, (unsigned)s->acked[h]);
	if (memcmp(pg, want, sizeof(pg)) != 0)
		s->wrong++;
}

static void cl_put(struct client *s, unsigned h)
{
	unsigned char pg[4096];
	struct tmem_oid o = hoid(h);
	unsigned v = s->next_ver++;
	int ret;

	content(pg, s->id, h, v);
	ret = tmem_put(s->c, s->pool, &o, h % 16, pg);
	if (ret < 0) {
		s->over++;
		return;
	}
	/* A put in flight across a restart is reported refused (libtmem). */
	s->acked[h] = ret == 1 ? (int)v : -1;
	s->refused += ret == 0;
}

static void cl_flush(struct client *s, unsigned h)
{
	struct tmem_oid o = hoid(h);

	if (tmem_flush_page(s->c, s->pool, &o, h % 16) < 0)
		s->over++;
	s->acked[h] = -1;
}

static void *cl_thread(void *arg)
{
	struct client *s = arg;
	unsigned seed = s->id * 7919 + 1;

	/* Every page once, so the clients hold 3x the pool... */
	for (unsigned h = 0; h < NPAGES && !s->over; h++)
		cl_put(s, h);
	/* ... then random read-backs, overwrites and flushes. */
	while (!atomic_load(s->stop) && !s->over) {
		unsigned r = (unsigned)rand_r(&seed) % 100, h = (unsigned)rand_r(&seed) % NPAGES;

		if (r < 60)
			cl_get(s, h);
		else if (r < 95)
			cl_put(s, h);
		else
			cl_flush(s, h);
		s->ops++;
	}
	return NULL;
}

static void cl_start(struct client *s, unsigned id, const char *sock, atomic_bool *stop)
{
	char name[32];

	memset(s, 0, sizeof(*s));
	s->id = id;
	s->stop = stop;
	for (unsigned h = 0; h < NPAGES; h++)
		s->acked[h] = -1;
	snprintf(name, sizeof(name), "spill%u", id);
	ck_assert_int_eq(tmem_connect(sock, name, &s->c), 0);
	s->pool = tmem_new_pool(s->c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	ck_assert_int_ge(s->pool, 0);
	ck_assert_int_eq(pthread_create(&s->thread, NULL, cl_thread, s), 0);
}

static void cl_final(struct client *s)
{
	for (unsigned h = 0; h < NPAGES && !s->over; h++)
		cl_get(s, h);
}

/* The end of a test with one client: nothing lost or wrong, a clean stop. */
static void finish(struct rdaemon *d, struct client *s, const char *dir)
{
	ck_assert_uint_eq(s->lost, 0);
	ck_assert_uint_eq(s->wrong, 0);
	tmem_disconnect(s->c);
	ck_assert_int_eq(rdaemon_stop(d), 0);
	rdaemon_fini(d);
	tier_dir_remove(dir);
}

/* ---- a full pool ---------------------------------------------------------- */

/* Point 3's admission: with a tier, a full pool takes persistent puts. */
START_TEST(full_pool_spills_instead_of_refusing)
{
	char dir[64];
	struct rdaemon d;
	struct client s;
	atomic_bool stop = true;
	json_t *st;

	tier_dir(dir, sizeof(dir));
	rdaemon_init(&d, KEEP_ARENA_FILE, tier_config(dir, "64M", "[defaults]\ncompress = off\n"));
	d.memory = "4M"; /* NPAGES is 1.5x this pool */
	ck_assert(rdaemon_start(&d, NULL));
	cl_start(&s, 0, d.sock, &stop); /* stop set: fill only */
	pthread_join(s.thread, NULL);
	/* Every page once more (overwrites of spilled pages among them). */
	for (unsigned h = 0; h < NPAGES; h++)
		cl_put(&s, h);
	cl_final(&s);
	st = rstats(&d);
	printf("full pool: %u persistent puts of %u pages into a %u-page pool, refused %llu, "
	       "lost %llu, wrong %llu; %lld pages in the tier, %lld read-backs\n", 2 * NPAGES,
	       NPAGES, POOL_PAGES / 2,
	       (unsigned long long)s.refused, (unsigned long long)s.lost,
	       (unsigned long long)s.wrong, jint_at(st, "pool", "tier", "pages"),
	       jint_at(st, "pool", "tier", "readbacks"));
	ck_assert_uint_eq(s.refused, 0);
	ck_assert_uint_eq(s.lost, 0);
	ck_assert_uint_eq(s.wrong, 0);
	ck_assert_int_gt(jint_at(st, "pool", "tier", "pages"), 0);
	ck_assert_int_gt(jint_at(st, "pool", "tier", "readbacks"), 0);
	json_decref(st);
	tmem_disconnect(s.c);
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	rdaemon_fini(&d);
	tier_dir_remove(dir);
}
END_TEST

/* ---- the per-client limit --------------------------------------------------- */

/* tmemctl ARGS... against d: its exit status. */
static int ctl_status(struct rdaemon *d, const char *args)
{
	char cmd[600];
	int st;

	snprintf(cmd, sizeof(cmd), "%s --runtime-dir %s %s >/dev/null 2>&1", tmemctl_bin(), d->dir,
		 args);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* spill-max from tmemd.conf holds a client under it; tmemctl set
 * --spill-max changes it, and refuses a bad size. */
START_TEST(spill_max_from_config_and_tmemctl)
{
	char dir[64];
	struct rdaemon d;
	struct client s;
	atomic_bool stop = true;
	json_t *st, *c;
	long long stored, cap;

	tier_dir(dir, sizeof(dir));
	rdaemon_init(&d, KEEP_ARENA_FILE,
		     tier_config(dir, "64M", "[defaults]\ncompress = off\nspill-max = 1M\n"));
	d.memory = "4M";
	ck_assert(rdaemon_start(&d, NULL));
	cl_start(&s, 0, d.sock, &stop);
	pthread_join(s.thread, NULL);
	harness_msleep(300);
	st = rstats(&d);
	c = stats_client(st, "spill0");
	ck_assert_ptr_nonnull(c);
	stored = jint_at(c, "tier", "stored_bytes", NULL);
	cap = jint_at(c, "caps", "spill_max_pages", NULL);
	printf("spill-max 1M: %lld bytes of the client in the tier (cap %lld pages), %llu puts "
	       "refused once the pool and its share of the tier were full\n", stored, cap,
	       (unsigned long long)s.refused);
	ck_assert_int_le(stored, 1 << 20);
	ck_assert_int_gt(stored, 0);
	ck_assert_int_eq(cap, 256);
	ck_assert_int_eq(jint_at(c, "tier", "free_bytes", NULL), (1 << 20) - stored);
	ck_assert_uint_gt(s.refused, 0);
	json_decref(st);
	/* Raised by hand: more of its pages move. */
	ck_assert_int_eq(ctl_status(&d, "set spill0 --spill-max 4M"), 0);
	for (unsigned h = 0; h < NPAGES; h++)
		if (s.acked[h] < 0)
			cl_put(&s, h);
	st = rstats(&d);
	c = stats_client(st, "spill0");
	ck_assert_int_eq(jint_at(c, "caps", "spill_max_pages", NULL), 1024);
	ck_assert_int_gt(jint_at(c, "tier", "stored_bytes", NULL), stored);
	json_decref(st);
	ck_assert_int_eq(ctl_status(&d, "set spill0 --spill-max lots"), 2);
	ck_assert_int_eq(ctl_status(&d, "set spill0 --spill-max 1000"), 2);
	cl_final(&s);
	finish(&d, &s, dir);
}
END_TEST

/* ---- the soak ------------------------------------------------------------- */

struct soak_totals {
	long long spilled, readbacks, p50, p99;
};

/* Counters restart with each tmemd: sum them over its lives. */
static void soak_sample(struct rdaemon *d, struct soak_totals *t)
{
	json_t *st = rstats(d);
	long long p50 = jint_at(st, "pool", "tier", "readback_p50_ns");
	long long p99 = jint_at(st, "pool", "tier", "readback_p99_ns");

	t->spilled += jint_at(st, "pool", "tier", "spilled_pages");
	t->readbacks += jint_at(st, "pool", "tier", "readbacks");
	t->p50 = p50 > t->p50 ? p50 : t->p50;
	t->p99 = p99 > t->p99 ? p99 : t->p99;
	json_decref(st);
}

START_TEST(spill_soak)
{
	const char *env = getenv("TMEM_SOAK_KILLS");
	unsigned kills = env ? (unsigned)atoi(env) : 20, seed = 2929, reconnects = 0;
	struct client *cl = calloc(NCLIENTS, sizeof(*cl));
	uint64_t ops = 0, lost = 0, wrong = 0, hits = 0, over = 0, refused = 0;
	struct soak_totals t = { 0 };
	atomic_bool stop = false;
	struct rdaemon d;
	char dir[64];

	ck_assert_ptr_nonnull(cl);
	tier_dir(dir, sizeof(dir));
	rdaemon_init(&d, KEEP_ARENA_FILE, tier_config(dir, "64M", NULL));
	d.memory = "8M";
	ck_assert(rdaemon_start(&d, NULL));
	for (unsigned i = 0; i < NCLIENTS; i++)
		cl_start(&cl[i], i, d.sock, &stop);
	for (unsigned k = 0; k < kills; k++) {
		/* Random moments: spills run in the background all along. */
		harness_msleep(100 + (unsigned)rand_r(&seed) % 400);
		soak_sample(&d, &t);
		harness_msleep((unsigned)rand_r(&seed) % 30);
		rdaemon_kill9(&d);
		ck_assert_msg(rdaemon_start(&d, NULL), "restart %u failed", k);
	}
	harness_msleep(300);
	atomic_store(&stop, true);
	for (unsigned i = 0; i < NCLIENTS; i++) {
		pthread_join(cl[i].thread, NULL);
		cl_final(&cl[i]);
		ops += cl[i].ops;
		lost += cl[i].lost;
		wrong += cl[i].wrong;
		hits += cl[i].hits;
		over += cl[i].over;
		refused += cl[i].refused;
		reconnects += (unsigned)tmem_conn_reconnects(cl[i].c);
	}
	soak_sample(&d, &t);
	printf("spill soak: %u clients, %u persistent pages (3x the %u-page pool), %u kill -9s, "
	       "%llu ops, %llu get hits, %u reconnects, %llu puts refused (in flight at a kill, "
	       "or over): lost %llu, wrong or stale %llu, started over %llu; pages spilled %lld, "
	       "read-backs %lld, read-back p50 %.1f us, p99 %.1f us (the worst of the lives)\n",
	       NCLIENTS, NCLIENTS * NPAGES, POOL_PAGES, kills, (unsigned long long)ops,
	       (unsigned long long)hits, reconnects, (unsigned long long)refused,
	       (unsigned long long)lost, (unsigned long long)wrong, (unsigned long long)over,
	       t.spilled, t.readbacks, (double)t.p50 / 1000.0, (double)t.p99 / 1000.0);
	if (lost || wrong || over)
		rdaemon_dump_log(&d);
	for (unsigned i = 0; i < NCLIENTS; i++)
		tmem_disconnect(cl[i].c);
	ck_assert_uint_eq(lost, 0);
	ck_assert_uint_eq(wrong, 0);
	ck_assert_uint_eq(over, 0);
	ck_assert_uint_ge(reconnects, kills);
	ck_assert_int_gt(t.spilled, 0);
	ck_assert_int_gt(t.readbacks, 0);
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	rdaemon_fini(&d);
	tier_dir_remove(dir);
	free(cl);
}
END_TEST

/* ---- the elastic target halves ----------------------------------------- */

START_TEST(shrink_with_full_pool)
{
	char dir[64], cmd[600];
	struct rdaemon d;
	struct client s;
	atomic_bool stop = true;
	long long target = 0, used = 0, spilled = 0, before;
	struct timespec a, b;
	double secs = -1;
	json_t *st;

	tier_dir(dir, sizeof(dir));
	rdaemon_init(&d, KEEP_ARENA_FILE, tier_config(dir, "64M", "memory-grow-delay = 1h\n"
						     "[defaults]\ncompress = off\n"));
	d.memory = "8M";
	ck_assert(rdaemon_start(&d, NULL));
	/* The pool full of persistent pages (3/4 of it, the reserve aside). */
	cl_start(&s, 0, d.sock, &stop);
	pthread_join(s.thread, NULL);
	ck_assert_uint_eq(s.refused, 0);
	st = rstats(&d);
	used = jint_at(st, "memory", "used_bytes", NULL);
	before = jint_at(st, "memory", "target_bytes", NULL);
	json_decref(st);
	/* tmemctl release takes SIZE off what is in use: the target halves. */
	ck_assert_int_gt(used, before / 2);
	clock_gettime(CLOCK_MONOTONIC, &a);
	snprintf(cmd, sizeof(cmd), "%s --runtime-dir %s release %lldK >/dev/null 2>&1",
		 tmemctl_bin(), d.dir, (used - before / 2) / 1024);
	ck_assert_int_eq(system(cmd), 0);
	for (int i = 0; i < 400; i++) {
		st = rstats(&d);
		target = jint_at(st, "memory", "target_bytes", NULL);
		used = jint_at(st, "memory", "used_bytes", NULL);
		spilled = jint_at(st, "pool", "tier", "spilled_pages");
		json_decref(st);
		if (used <= target) {
			clock_gettime(CLOCK_MONOTONIC, &b);
			secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
			break;
		}
		harness_msleep(25);
	}
	cl_final(&s);
	printf("shrink with a full pool: target %.1f MiB -> %.1f MiB with only persistent pages "
	       "in the pool, in use now %.1f MiB, met by spilling %lld pages in %.3f s; lost %llu, "
	       "wrong %llu\n", (double)before / 1048576.0, (double)target / 1048576.0,
	       (double)used / 1048576.0, spilled, secs, (unsigned long long)s.lost,
	       (unsigned long long)s.wrong);
	ck_assert_msg(secs >= 0, "target %lld not met: %lld in use", target, used);
	ck_assert_int_le(target, before / 2);
	ck_assert_int_gt(spilled, 0);
	finish(&d, &s, dir);
}
END_TEST

/* ---- bad input -------------------------------------------------------------- */

/* A tier with pages in it, then tmemd stopped. */
static void spilled_daemon(struct rdaemon *d, const char *dir, struct client *s)
{
	atomic_bool stop = true;

	rdaemon_init(d, KEEP_ARENA_FILE, tier_config(dir, "16M", "[defaults]\ncompress = off\n"));
	d->memory = "4M";
	ck_assert(rdaemon_start(d, NULL));
	cl_start(s, 0, d->sock, &stop);
	pthread_join(s->thread, NULL);
	for (unsigned h = 0; h < NPAGES / 2; h++)
		cl_put(s, h);
	ck_assert_uint_eq(s->refused, 0);
	tmem_disconnect(s->c);
	ck_assert_int_eq(rdaemon_stop(d), 0);
}

/* tmemd with conf refuses to start, saying says. */
static void refuses(struct rdaemon *d, const char *conf, const char *says)
{
	char path[400];
	FILE *f;
	int status = 0;

	snprintf(path, sizeof(path), "%s/tmemd.conf", d->dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(conf, f);
	fclose(f);
	ck_assert(!rdaemon_start(d, &status));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 0, "status %d", status);
	if (!rdaemon_log_has(d, says))
		rdaemon_dump_log(d);
	ck_assert_msg(rdaemon_log_has(d, says), "log lacks \"%s\"", says);
}

START_TEST(refuses_wrong_size_truncated_and_foreign_tiers)
{
	char dir[64], path[128];
	struct rdaemon d;
	struct client s;
	const char *good;

	tier_dir(dir, sizeof(dir));
	spilled_daemon(&d, dir, &s);
	refuses(&d, tier_config(dir, "32M", NULL), "the config says");
	snprintf(path, sizeof(path), "%s/spill", dir);
	ck_assert_int_eq(truncate(path, 8 << 20), 0);
	refuses(&d, tier_config(dir, "16M", NULL), "truncated");
	ck_assert_int_eq(truncate(path, 16 << 20), 0); /* back to size: holes read as zero */
	/* A fresh arena (as after a reboot) with this tier: refused, the
	 * tier untouched. */
	ck_assert_int_eq(truncate(d.arena, 0), 0);
	refuses(&d, good = tier_config(dir, "16M", "[defaults]\ncompress = off\n"),
		"belongs to another arena");
	/* --discard-arena throws both away and starts. */
	d.extra = "--discard-arena";
	ck_assert(rdaemon_start(&d, NULL));
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	rdaemon_fini(&d);
	tier_dir_remove(dir);
}
END_TEST

START_TEST(refuses_tier_config_and_unwritable)
{
	char dir[64], conf[600];
	struct rdaemon d;
	int status = 0;

	tier_dir(dir, sizeof(dir));
	/* spill without spill-size: refused by the config check. */
	snprintf(conf, sizeof(conf), "[tmemd]\nspill = %s/spill\n", dir);
	rdaemon_init(&d, KEEP_ARENA_FILE, conf);
	ck_assert(!rdaemon_start(&d, &status));
	ck_assert(rdaemon_log_has(&d, "needs both spill = PATH and spill-size = SIZE"));
	/* A read-only file system under the tier (a private mount here). */
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount(dir, dir, NULL, MS_BIND, NULL), 0);
	ck_assert_int_eq(mount(NULL, dir, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL), 0);
	refuses(&d, tier_config(dir, "16M", NULL), "Read-only file system");
	ck_assert_int_eq(umount(dir), 0);
	rdaemon_fini(&d);
	tier_dir_remove(dir);
}
END_TEST

/* ENOSPC mid-spill: the tier (64M) on a 1M tmpfs. */
START_TEST(full_disk_keeps_pages_in_ram)
{
	char dir[64];
	struct rdaemon d;
	struct client s;
	atomic_bool stop = true;
	json_t *st;
	long long errors;

	tier_dir(dir, sizeof(dir));
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount("tmpfs", dir, "tmpfs", 0, "size=1m"), 0);
	rdaemon_init(&d, KEEP_ARENA_FILE, tier_config(dir, "64M", "[defaults]\ncompress = off\n"));
	d.memory = "4M";
	ck_assert(rdaemon_start(&d, NULL));
	cl_start(&s, 0, d.sock, &stop);
	pthread_join(s.thread, NULL);
	/* 1.5x the pool, raw: more than RAM and the 1M disk hold. */
	for (unsigned h = 0; h < NPAGES; h++)
		cl_put(&s, h);
	cl_final(&s);
	harness_msleep(300); /* the spiller's next pass logs */
	st = rstats(&d);
	errors = jint_at(st, "pool", "tier", "write_errors");
	printf("full disk: %llu puts refused (the pool and the disk full), %lld failed spills, "
	       "%lld pages spilled before, %lld in the tier now, last errno %lld; lost %llu, "
	       "wrong %llu\n", (unsigned long long)s.refused, errors,
	       jint_at(st, "pool", "tier", "spilled_pages"), jint_at(st, "pool", "tier", "pages"),
	       jint_at(st, "pool", "tier", "last_errno"), (unsigned long long)s.lost,
	       (unsigned long long)s.wrong);
	ck_assert_int_gt(errors, 0);
	ck_assert_int_eq(jint_at(st, "pool", "tier", "last_errno"), ENOSPC);
	ck_assert_int_gt(jint_at(st, "pool", "tier", "spilled_pages"), 0);
	ck_assert_uint_eq(s.lost, 0);
	ck_assert_uint_eq(s.wrong, 0);
	json_decref(st);
	ck_assert(rdaemon_log_has(&d, "spill(s) failed"));
	/* And after a restart (the client reconnects by itself), every
	 * acknowledged page is still there. */
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	ck_assert(rdaemon_start(&d, NULL));
	cl_final(&s);
	ck_assert_uint_eq(s.lost, 0);
	ck_assert_uint_eq(s.wrong, 0);
	tmem_disconnect(s.c);
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	rdaemon_fini(&d);
	umount2(dir, MNT_DETACH);
	tier_dir_remove(dir);
}
END_TEST

static Suite *spill_suite(void)
{
	Suite *s = suite_create("spill");
	TCase *tc = tcase_create("tier");
	TCase *soak = tcase_create("soak");
	TCase *bad = tcase_create("bad");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, full_pool_spills_instead_of_refusing);
	tcase_add_test(tc, shrink_with_full_pool);
	tcase_add_test(tc, spill_max_from_config_and_tmemctl);
	suite_add_tcase(s, tc);
	tcase_set_timeout(soak, 600);
	tcase_add_test(soak, spill_soak);
	suite_add_tcase(s, soak);
	tcase_set_timeout(bad, 120);
	tcase_add_test(bad, refuses_wrong_size_truncated_and_foreign_tiers);
	if (tmem_test_have_root("refuses_tier_config_and_unwritable", "a read-only mount")) {
		tcase_add_test(bad, refuses_tier_config_and_unwritable);
		tcase_add_test(bad, full_disk_keeps_pages_in_ram);
	}
	suite_add_tcase(s, bad);
	return s;
}

int main(void)
{
	return tmem_test_main(spill_suite(), 0);
}
