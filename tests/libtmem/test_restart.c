/* SPDX-License-Identifier: MIT */
/*
 * tmemd restarts under libtmem clients and nothing is lost (issue 15):
 *   - a clean restart (SIGTERM, start) keeps every page and pool id;
 *   - kill -9 soak: 4 reconnecting clients with persistent and ephemeral
 *     pools, every page checksummed (content from handle and version),
 *     tmemd SIGKILLed at random moments and started again; printed and
 *     required 0: acknowledged persistent puts lost, wrong or stale gets,
 *     clients that had to start over.  Run with the fd store played by
 *     the test (NOTIFY_SOCKET, then LISTEN_FDS) and with --arena.
 *     TMEM_SOAK_KILLS sets the kills per mode (make check: 8; make
 *     soak-restart: 50);
 *   - an arena of an unknown layout is refused and left byte-identical;
 *     --discard-arena starts empty;
 *   - a new process that takes a dead client's name starts fresh, and a
 *     client that does not come back within reattach-grace is freed.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/test_main.h"
#include "harness.h"
#include "restart_harness.h"
#include "tmem.h"

#define NCLIENTS 4
#define NPERS 256u
#define NEPH 64u

static void content(void *pg, unsigned client, unsigned pool, unsigned h, unsigned v)
{
	test_page(pg, ((unsigned long long)client << 48) ^ ((unsigned long long)pool << 40) ^
			      ((unsigned long long)h << 20) ^ v);
}

static struct tmem_oid hoid(unsigned h)
{
	struct tmem_oid o = { { h / 16, 0xabc, 0 } };

	return o;
}

/* ---- the soak's clients -------------------------------------------------- */

struct soak_client {
	pthread_t thread;
	unsigned id;
	const char *sock;
	atomic_bool *stop;
	int32_t pers, eph;
	int acked[NPERS];        /* persistent: version acknowledged, -1 none */
	int eph_ver[NEPH];
	unsigned next_ver;
	uint64_t ops, lost, wrong, gets_hit;
	bool started_over;
	struct tmem_conn *c;
};

static void soak_get(struct soak_client *s, bool pers, unsigned h)
{
	unsigned char pg[4096], want[4096];
	struct tmem_oid o = hoid(h);
	int ver = pers ? s->acked[h] : s->eph_ver[h];
	int ret = tmem_get(s->c, pers ? s->pers : s->eph, &o, h % 16, pg);

	if (ret < 0) {
		s->started_over = true;
		return;
	}
	if (ret == 0) {
		if (pers && ver >= 0)
			s->lost++;
		if (!pers)
			s->eph_ver[h] = -1; /* exclusive either way */
		return;
	}
	s->gets_hit++;
	if (ver < 0) {
		s->wrong++;
		return;
	}
	content(want, s->id, pers, h, (unsigned)ver);
	if (memcmp(pg, want, sizeof(pg)) != 0)
		s->wrong++;
	if (!pers)
		s->eph_ver[h] = -1;
}

static void soak_put(struct soak_client *s, bool pers, unsigned h)
{
	unsigned char pg[4096];
	struct tmem_oid o = hoid(h);
	unsigned v = s->next_ver++;
	int ret;

	content(pg, s->id, pers, h, v);
	ret = tmem_put(s->c, pers ? s->pers : s->eph, &o, h % 16, pg);
	if (ret < 0) {
		s->started_over = true;
		return;
	}
	if (pers)
		s->acked[h] = ret == 1 ? (int)v : -1;
	else
		s->eph_ver[h] = ret == 1 ? (int)v : -1;
}

static void soak_flush(struct soak_client *s, unsigned h)
{
	struct tmem_oid o = hoid(h);

	if (tmem_flush_page(s->c, s->pers, &o, h % 16) < 0)
		s->started_over = true;
	s->acked[h] = -1;
}

static void *soak_thread(void *arg)
{
	struct soak_client *s = arg;
	unsigned seed = s->id * 7919 + 1;

	while (!atomic_load(s->stop) && !s->started_over) {
		unsigned r = (unsigned)rand_r(&seed) % 100;

		if (r < 45)
			soak_put(s, true, (unsigned)rand_r(&seed) % NPERS);
		else if (r < 80)
			soak_get(s, true, (unsigned)rand_r(&seed) % NPERS);
		else if (r < 85)
			soak_flush(s, (unsigned)rand_r(&seed) % NPERS);
		else if (r < 93)
			soak_put(s, false, (unsigned)rand_r(&seed) % NEPH);
		else
			soak_get(s, false, (unsigned)rand_r(&seed) % NEPH);
		s->ops++;
	}
	return NULL;
}

static void soak_client_start(struct soak_client *s, unsigned id, const char *sock,
			      atomic_bool *stop)
{
	char name[32];

	memset(s, 0, sizeof(*s));
	s->id = id;
	s->sock = sock;
	s->stop = stop;
	for (unsigned h = 0; h < NPERS; h++)
		s->acked[h] = -1;
	for (unsigned h = 0; h < NEPH; h++)
		s->eph_ver[h] = -1;
	snprintf(name, sizeof(name), "soak%u", id);
	ck_assert_int_eq(tmem_connect(sock, name, &s->c), 0);
	s->pers = tmem_new_pool(s->c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	s->eph = tmem_new_pool(s->c, tmem_pool_flags(0), NULL);
	ck_assert_int_ge(s->pers, 0);
	ck_assert_int_ge(s->eph, 0);
	ck_assert_int_eq(pthread_create(&s->thread, NULL, soak_thread, s), 0);
}

/* After the last restart: every acknowledged persistent page once more. */
static void soak_final_check(struct soak_client *s)
{
	for (unsigned h = 0; h < NPERS && !s->started_over; h++)
		soak_get(s, true, h);
}

static void soak(enum keep_mode mode)
{
	const char *env = getenv("TMEM_SOAK_KILLS");
	unsigned kills = env ? (unsigned)atoi(env) : 8, reconnects = 0;
	struct soak_client cl[NCLIENTS];
	uint64_t ops = 0, lost = 0, wrong = 0, hits = 0, over = 0;
	atomic_bool stop = false;
	struct rdaemon d;
	unsigned seed = 99;

	rdaemon_init(&d, mode, NULL);
	ck_assert(rdaemon_start(&d, NULL));
	for (unsigned i = 0; i < NCLIENTS; i++)
		soak_client_start(&cl[i], i, d.sock, &stop);
	for (unsigned k = 0; k < kills; k++) {
		harness_msleep(30 + (unsigned)rand_r(&seed) % 200);
		rdaemon_kill9(&d);
		harness_msleep((unsigned)rand_r(&seed) % 50);
		ck_assert_msg(rdaemon_start(&d, NULL), "restart %u failed", k);
	}
	harness_msleep(100);
	atomic_store(&stop, true);
	for (unsigned i = 0; i < NCLIENTS; i++) {
		pthread_join(cl[i].thread, NULL);
		soak_final_check(&cl[i]);
		ops += cl[i].ops;
		lost += cl[i].lost;
		wrong += cl[i].wrong;
		hits += cl[i].gets_hit;
		over += cl[i].started_over;
		reconnects += (unsigned)tmem_conn_reconnects(cl[i].c);
		tmem_disconnect(cl[i].c);
	}
	printf("restart soak (%s): %u kill -9s, %llu ops, %llu get hits, %u reconnects: "
	       "acknowledged persistent puts lost %llu, wrong or stale gets %llu, "
	       "clients that had to start over %llu\n",
	       mode == KEEP_FDSTORE ? "fd store" : "--arena", kills,
	       (unsigned long long)ops, (unsigned long long)hits, reconnects,
	       (unsigned long long)lost, (unsigned long long)wrong,
	       (unsigned long long)over);
	if (lost || wrong || over)
		rdaemon_dump_log(&d);
	ck_assert_uint_eq(lost, 0);
	ck_assert_uint_eq(wrong, 0);
	ck_assert_uint_eq(over, 0);
	ck_assert_uint_ge(reconnects, kills);
	ck_assert_uint_gt(hits, 0);
	rdaemon_fini(&d);
}

START_TEST(soak_fdstore)
{
	soak(KEEP_FDSTORE);
}
END_TEST

START_TEST(soak_arena_file)
{
	soak(KEEP_ARENA_FILE);
}
END_TEST

/* ---- one client, step by step --------------------------------------------- */

static void put_n(struct tmem_conn *c, int32_t pool, unsigned n, unsigned v)
{
	unsigned char pg[4096];

	for (unsigned h = 0; h < n; h++) {
		struct tmem_oid o = hoid(h);

		content(pg, 9, (unsigned)pool, h, v);
		ck_assert_int_eq(tmem_put(c, pool, &o, h % 16, pg), 1);
	}
}

static unsigned check_n(struct tmem_conn *c, int32_t pool, unsigned n, unsigned v)
{
	unsigned char pg[4096], want[4096];
	unsigned hits = 0;

	for (unsigned h = 0; h < n; h++) {
		struct tmem_oid o = hoid(h);
		int ret = tmem_get(c, pool, &o, h % 16, pg);

		ck_assert_int_ge(ret, 0);
		if (ret == 0)
			continue;
		content(want, 9, (unsigned)pool, h, v);
		ck_assert_msg(memcmp(pg, want, sizeof(pg)) == 0, "page %u of pool %d", h, pool);
		hits++;
	}
	return hits;
}

/* stats.json's restart object and tmemctl status say what was recovered. */
static void check_restart_stats(struct rdaemon *d, unsigned pages, unsigned reattached)
{
	char path[400], cmd[800], line[512];
	json_error_t err;
	json_t *doc, *rs;
	bool said = false;
	FILE *p;

	snprintf(path, sizeof(path), "%s/stats.json", d->dir);
	unlink(path);
	kill(d->pid, SIGUSR1);
	for (int i = 0; i < 500 && access(path, F_OK); i++)
		harness_msleep(10);
	doc = json_load_file(path, 0, &err);
	ck_assert_msg(doc, "stats.json: %s", err.text);
	rs = json_object_get(doc, "restart");
	ck_assert(json_is_true(json_object_get(rs, "survives_restart")));
	ck_assert(json_is_true(json_object_get(rs, "recovered")));
	ck_assert_int_eq(json_integer_value(json_object_get(rs, "pages_recovered")), pages);
	ck_assert_int_eq(json_integer_value(json_object_get(rs, "clients_reattached")), reattached);
	ck_assert_int_eq(json_integer_value(json_object_get(rs, "clients_detached")), 0);
	json_decref(doc);
	snprintf(cmd, sizeof(cmd), "%s --socket %s/control.sock status", TMEMCTL_BIN, d->dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	snprintf(path, sizeof(path), "restart: recovered %u pages", pages);
	while (fgets(line, sizeof(line), p))
		said |= strstr(line, path) != NULL;
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_msg(said, "tmemctl status does not say '%s'", path);
}

static void clean_restart(enum keep_mode mode)
{
	struct rdaemon d;
	struct tmem_conn *c;
	int32_t pers, eph;

	rdaemon_init(&d, mode, NULL);
	ck_assert(rdaemon_start(&d, NULL));
	ck_assert_int_eq(tmem_connect(d.sock, "calm", &c), 0);
	pers = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	eph = tmem_new_pool(c, tmem_pool_flags(0), NULL);
	put_n(c, pers, 300, 1);
	put_n(c, eph, 100, 2);
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	ck_assert(rdaemon_start(&d, NULL));
	ck_assert_uint_eq(check_n(c, pers, 300, 1), 300);
	ck_assert_uint_eq(check_n(c, eph, 100, 2), 100); /* kept, and exclusive */
	ck_assert_uint_eq(tmem_conn_reconnects(c), 1);
	/* Same pool ids: the next new pool gets the next id. */
	ck_assert_int_eq(tmem_new_pool(c, tmem_pool_flags(0), NULL), 2);
	ck_assert(rdaemon_log_has(&d, "recovered 400 pages (300 persistent, 100 ephemeral) of 1 clients"));
	ck_assert(rdaemon_log_has(&d, "client calm reattached"));
	check_restart_stats(&d, 400, 1);
	tmem_disconnect(c);
	rdaemon_fini(&d);
}

START_TEST(clean_restart_fdstore)
{
	clean_restart(KEEP_FDSTORE);
}
END_TEST

START_TEST(clean_restart_arena_file)
{
	clean_restart(KEEP_ARENA_FILE);
}
END_TEST

/* FNV-1a over the file's data and where it lies (the arena is sparse:
 * most of it is holes, which SEEK_DATA skips). */
static unsigned long long file_sum(const char *path)
{
	unsigned long long h = 1469598103934665603ull;
	unsigned char buf[65536];
	int fd = open(path, O_RDONLY);
	off_t pos = 0, end;
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	while ((pos = lseek(fd, pos, SEEK_DATA)) >= 0) {
		end = lseek(fd, pos, SEEK_HOLE);
		h = (h ^ (unsigned long long)pos) * 1099511628211ull;
		while (pos < end && (n = pread(fd, buf, sizeof(buf), pos)) > 0) {
			for (ssize_t i = 0; i < n; i++)
				h = (h ^ buf[i]) * 1099511628211ull;
			pos += n;
		}
	}
	close(fd);
	return h;
}

START_TEST(unknown_layout_is_refused_untouched)
{
	struct rdaemon d;
	struct tmem_conn *c;
	unsigned long long before;
	uint32_t layout = 99;
	int32_t pool;
	int st = 0, fd;

	rdaemon_init(&d, KEEP_ARENA_FILE, NULL);
	ck_assert(rdaemon_start(&d, NULL));
	setenv("TMEM_RECONNECT_MS", "0", 1);
	ck_assert_int_eq(tmem_connect(d.sock, "old", &c), 0);
	unsetenv("TMEM_RECONNECT_MS");
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	put_n(c, pool, 20, 1);
	ck_assert_int_eq(rdaemon_stop(&d), 0);
	tmem_disconnect(c);
	fd = open(d.arena, O_WRONLY);
	ck_assert_int_eq(pwrite(fd, &layout, sizeof(layout), 8), sizeof(layout));
	close(fd);
	before = file_sum(d.arena);
	ck_assert(!rdaemon_start(&d, &st));
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	ck_assert(rdaemon_log_has(&d, "arena layout version 99"));
	ck_assert(rdaemon_log_has(&d, "--discard-arena"));
	ck_assert_uint_eq(file_sum(d.arena), before);
	d.extra = "--discard-arena";
	ck_assert(rdaemon_start(&d, NULL));
	ck_assert(rdaemon_log_has(&d, "new arena"));
	rdaemon_fini(&d);
}
END_TEST

START_TEST(newcomer_with_a_dead_name_starts_fresh)
{
	struct rdaemon d;
	struct tmem_conn *old, *fresh;
	int32_t pool;

	rdaemon_init(&d, KEEP_FDSTORE, NULL);
	ck_assert(rdaemon_start(&d, NULL));
	setenv("TMEM_RECONNECT_MS", "2000", 1);
	ck_assert_int_eq(tmem_connect(d.sock, "dup", &old), 0);
	unsetenv("TMEM_RECONNECT_MS");
	pool = tmem_new_pool(old, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	put_n(old, pool, 10, 1);
	rdaemon_kill9(&d);
	ck_assert(rdaemon_start(&d, NULL));
	/* A new process, no session: the dead client's pages are not its. */
	ck_assert_int_eq(tmem_connect(d.sock, "dup", &fresh), 0);
	ck_assert_int_eq(tmem_get(fresh, pool, &(struct tmem_oid){ { 0, 0xabc, 0 } }, 0,
				  (char[4096]){ 0 }), -ENOENT);
	ck_assert_int_eq(tmem_new_pool(fresh, tmem_pool_flags(TMEM_POOL_PERSIST), NULL), 0);
	/* The old process cannot take the name back, nor the new pages. */
	ck_assert_int_eq(tmem_flush_object(old, pool, &(struct tmem_oid){ { 0 } }), -EPIPE);
	tmem_disconnect(old);
	tmem_disconnect(fresh);
	rdaemon_fini(&d);
}
END_TEST

START_TEST(absent_clients_expire_after_grace)
{
	struct rdaemon d;
	struct tmem_conn *c;
	int32_t pool;

	rdaemon_init(&d, KEEP_ARENA_FILE, "[tmemd]\nreattach-grace = 1s\n");
	ck_assert(rdaemon_start(&d, NULL));
	setenv("TMEM_RECONNECT_MS", "5000", 1);
	ck_assert_int_eq(tmem_connect(d.sock, "late", &c), 0);
	unsetenv("TMEM_RECONNECT_MS");
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	put_n(c, pool, 10, 1);
	rdaemon_kill9(&d);
	ck_assert(rdaemon_start(&d, NULL));
	ck_assert(rdaemon_log_has(&d, "1 recovered client may reattach within 1 s"));
	harness_msleep(1600);
	ck_assert(rdaemon_log_has(&d, "1 recovered client did not come back within 1 s"));
	/* Too late: its pages are gone, and it is told so. */
	ck_assert_int_eq(tmem_get(c, pool, &(struct tmem_oid){ { 0, 0xabc, 0 } }, 0,
				  (char[4096]){ 0 }), -EPIPE);
	tmem_disconnect(c);
	rdaemon_fini(&d);
}
END_TEST

static Suite *restart_suite(void)
{
	Suite *s = suite_create("restart");
	TCase *one = tcase_create("one"), *soaks = tcase_create("soak");

	tcase_set_timeout(one, 60);
	tcase_add_test(one, clean_restart_fdstore);
	tcase_add_test(one, clean_restart_arena_file);
	tcase_add_test(one, unknown_layout_is_refused_untouched);
	tcase_add_test(one, newcomer_with_a_dead_name_starts_fresh);
	tcase_add_test(one, absent_clients_expire_after_grace);
	tcase_set_timeout(soaks, 600);
	tcase_add_test(soaks, soak_fdstore);
	tcase_add_test(soaks, soak_arena_file);
	suite_add_tcase(s, one);
	suite_add_tcase(s, soaks);
	return s;
}

int main(void)
{
	return tmem_test_main(restart_suite(), 0);
}
