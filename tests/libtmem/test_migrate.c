/* SPDX-License-Identifier: MIT */
/*
 * Migration between two tmemds on one machine (issue 27): two tmemd
 * instances (two runtime dirs, arenas on /dev/shm, loopback TCP, one key
 * file), libtmem clients moving with tmem_migrate().
 *   - a client's persistent pools move to the other tmemd and back, with
 *     puts between the moves: 0 lost, 0 wrong; the source frees its copy
 *     and nothing is left half done on either side;
 *   - the same while another thread of the client keeps putting and
 *     getting through six moves: every call succeeds, 0 lost, 0 wrong;
 *   - kill -9 of the source, then of the destination, at random moments
 *     of the move, before the park included (each restarted): the move
 *     still completes, 0 lost, 0 wrong, and the pages end on exactly one
 *     side ($TMEM_MIGRATE_KILLS moves each, default 6);
 *   - the destination cannot reach the source: tmem_migrate() fails,
 *     the client's calls fail (-EPIPE), never a wrong page, and the pages
 *     stay parked at the source;
 *   - a tmemd without migration parks a client that asks, and it comes
 *     back there whole.
 * Printed: pages moved, time, and the counts checked.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/test_main.h"
#include "harness.h"
#include "migrate_fixture.h"
#include "tmem.h"

#define NPAGES 3000u

struct mclient {
	struct tmem_conn *c;
	int32_t pool;
	unsigned ver[NPAGES];  /* acknowledged version; 0 none */
	unsigned next;
	uint64_t lost, wrong, checked;
};

static struct tmem_oid moid(unsigned h)
{
	struct tmem_oid o = { { h / 16, 0x27, 0 } };

	return o;
}

/* Page h at version v: a quarter zero, a quarter one byte, the rest text. */
static void mpage(void *pg, unsigned h, unsigned v)
{
	if (h % 4 == 1)
		memset(pg, 0, 4096);
	else if (h % 4 == 2)
		memset(pg, (int)(v & 0xff), 4096);
	else
		test_page(pg, ((unsigned long long)h << 20) ^ v);
}

static void put_range(struct mclient *m, unsigned from, unsigned to)
{
	unsigned char pg[4096];

	for (unsigned h = from; h < to; h++) {
		struct tmem_oid o = moid(h);
		unsigned v = ++m->next;

		mpage(pg, h, v);
		if (tmem_put(m->c, m->pool, &o, h % 16, pg) == 1)
			m->ver[h] = v;
		else
			m->ver[h] = 0; /* refused: the handle is empty */
	}
}

/* A get of page h answered ret with pg: counted against its last
 * acknowledged version (none: nothing to check). */
static void check_page(struct mclient *m, unsigned h, int ret, const unsigned char *pg)
{
	unsigned char want[4096];

	if (!m->ver[h])
		return;
	m->checked++;
	mpage(want, h, m->ver[h]);
	if (ret != 1)
		m->lost++;
	else if (memcmp(pg, want, sizeof(want)))
		m->wrong++;
}

static void verify(struct mclient *m)
{
	unsigned char pg[4096];

	for (unsigned h = 0; h < NPAGES; h++) {
		struct tmem_oid o = moid(h);
		int ret = tmem_get(m->c, m->pool, &o, h % 16, pg);

		check_page(m, h, ret, pg);
	}
}

static void mclient_start(struct mclient *m, const char *sock, const char *name)
{
	memset(m, 0, sizeof(*m));
	ck_assert_int_eq(tmem_connect(sock, name, &m->c), 0);
	m->pool = tmem_new_pool(m->c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	ck_assert_int_ge(m->pool, 0);
	put_range(m, 0, NPAGES);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(const char *what, const struct mclient *m)
{
	printf("%s: %llu pages checked, lost %llu, wrong %llu\n", what,
	       (unsigned long long)m->checked, (unsigned long long)m->lost,
	       (unsigned long long)m->wrong);
	ck_assert_uint_eq(m->lost, 0);
	ck_assert_uint_eq(m->wrong, 0);
}

START_TEST(test_move_and_back)
{
	struct mpair p;
	struct mclient m;
	double t0;

	mpair_start(&p, 0);
	mclient_start(&m, p.d[0].sock, "mover");
	t0 = now_s();
	ck_assert_int_eq(tmem_migrate(m.c, p.d[1].sock), 0);
	printf("moved %u pages A -> B in %.3f s\n", NPAGES, now_s() - t0);
	verify(&m);
	put_range(&m, 0, NPAGES / 2);
	verify(&m);
	mpair_wait_settled(&p, "mover");
	ck_assert(rdaemon_log_has(&p.d[0], "mover now lives on"));
	t0 = now_s();
	ck_assert_int_eq(tmem_migrate(m.c, p.d[0].sock), 0);
	printf("moved back B -> A in %.3f s\n", now_s() - t0);
	verify(&m);
	put_range(&m, NPAGES / 3, NPAGES);
	verify(&m);
	mpair_wait_settled(&p, "mover");
	report("move and back", &m);
	tmem_disconnect(m.c);
	mpair_fini(&p);
}
END_TEST

/* The client's other thread: puts and gets at random until told to
 * stop, checking each get against its last acknowledged put. */
struct busy {
	struct mclient *m;
	bool stop;
	uint64_t puts, gets, failed;
};

static void *busy_client(void *arg)
{
	struct busy *b = arg;
	struct mclient *m = b->m;
	unsigned char pg[4096];
	unsigned seed = 27;

	while (!__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
		unsigned h = (unsigned)rand_r(&seed) % NPAGES;
		struct tmem_oid o = moid(h);
		unsigned v = ++m->next;
		int ret;

		mpage(pg, h, v);
		ret = tmem_put(m->c, m->pool, &o, h % 16, pg);
		__atomic_add_fetch(&b->puts, 1, __ATOMIC_RELAXED);
		if (ret == 1)
			m->ver[h] = v;
		else
			b->failed++; /* a put may be refused, never cut off */
		h = (unsigned)rand_r(&seed) % NPAGES;
		o = moid(h);
		ret = tmem_get(m->c, m->pool, &o, h % 16, pg);
		b->gets++;
		check_page(m, h, ret, pg);
	}
	return NULL;
}

/* Point 1 of issue 27: the client keeps reading and writing from
 * another thread while it moves back and forth; its calls wait out
 * each move and go on at the other tmemd. */
START_TEST(test_busy_while_moving)
{
	struct mpair p;
	struct mclient m;
	struct busy b = { .m = &m };
	pthread_t t;
	uint64_t before;

	mpair_start(&p, 0);
	mclient_start(&m, p.d[0].sock, "busy");
	ck_assert_int_eq(pthread_create(&t, NULL, busy_client, &b), 0);
	for (int i = 0; i < 6; i++) {
		before = __atomic_load_n(&b.puts, __ATOMIC_RELAXED);
		ck_assert_int_eq(tmem_migrate(m.c, p.d[(i + 1) % 2].sock), 0);
		while (__atomic_load_n(&b.puts, __ATOMIC_RELAXED) < before + 50)
			usleep(1000); /* some calls at each tmemd between moves */
	}
	__atomic_store_n(&b.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	printf("busy while moving: %llu puts, %llu gets over 6 moves, %llu refused\n",
	       (unsigned long long)b.puts, (unsigned long long)b.gets,
	       (unsigned long long)b.failed);
	ck_assert_uint_eq(b.failed, 0);
	verify(&m);
	mpair_wait_settled(&p, "busy");
	report("busy while moving", &m);
	tmem_disconnect(m.c);
	mpair_fini(&p);
}
END_TEST

struct killer {
	pthread_t t;
	struct rdaemon *d;
	unsigned delay_us;
};

static void *kill_and_restart(void *arg)
{
	struct killer *k = arg;
	int status;

	usleep(k->delay_us);
	rdaemon_kill9(k->d);
	usleep(50000);
	ck_assert(rdaemon_start(k->d, &status));
	return NULL;
}

/* Moves m from p->d[from] to the other while side victim is killed at a
 * random moment and restarted; then checks every page. */
static void move_under_kill(struct mpair *p, struct mclient *m, int from, int victim,
			    unsigned seed)
{
	struct killer k = { .d = &p->d[victim], .delay_us = seed % 40000u };

	ck_assert_int_eq(pthread_create(&k.t, NULL, kill_and_restart, &k), 0);
	ck_assert_int_eq(tmem_migrate(m->c, p->d[1 - from].sock), 0);
	pthread_join(k.t, NULL);
	verify(m);
	put_range(m, seed % NPAGES, NPAGES);
	verify(m);
	mpair_wait_settled(p, "killme");
}

static void kill_rounds(int victim_is_dest)
{
	const char *env = getenv("TMEM_MIGRATE_KILLS");
	unsigned rounds = env ? (unsigned)atoi(env) : getenv("TMEM_TEST_QUICK") ? 2 : 6;
	unsigned seed = (unsigned)time(NULL);
	struct mpair p;
	struct mclient m;
	int at = 0;

	printf("kill -9 of the %s: seed %u\n", victim_is_dest ? "destination" : "source", seed);
	mpair_start(&p, 0);
	mclient_start(&m, p.d[0].sock, "killme");
	for (unsigned r = 0; r < rounds; r++) {
		srand(seed + r);
		move_under_kill(&p, &m, at, victim_is_dest ? 1 - at : at, (unsigned)rand());
		at = 1 - at;
	}
	if (getenv("TMEM_MIGRATE_LOGS"))
		for (int i = 0; i < 2; i++)
			rdaemon_dump_log(&p.d[i]);
	report(victim_is_dest ? "kill -9 destination" : "kill -9 source", &m);
	tmem_disconnect(m.c);
	mpair_fini(&p);
}

START_TEST(test_kill_source)
{
	kill_rounds(0);
}
END_TEST

START_TEST(test_kill_destination)
{
	kill_rounds(1);
}
END_TEST

START_TEST(test_source_gone)
{
	unsigned char pg[4096];
	struct tmem_oid o = moid(1);
	struct mpair p;
	struct mclient m;

	setenv("TMEM_RECONNECT_MS", "1500", 1);
	mpair_start(&p, MPAIR_SOURCE_UNREACHABLE);
	mclient_start(&m, p.d[0].sock, "stranded");
	ck_assert_int_eq(tmem_migrate(m.c, p.d[1].sock), -ENOENT);
	ck_assert_int_eq(tmem_get(m.c, m.pool, &o, 1, pg), -EPIPE);
	/* Still parked at the source, whole. */
	ck_assert(mpair_has_file(&p, 0, "parked", "stranded"));
	ck_assert(rdaemon_log_has(&p.d[0], "stranded parked: 3000 persistent pages"));
	tmem_disconnect(m.c);
	unsetenv("TMEM_RECONNECT_MS");
	mpair_fini(&p);
}
END_TEST

/* The destination said the pull of a client gone meanwhile failed. */
static bool pull_failure_logged(struct rdaemon *d)
{
	for (int i = 0; i < 150; i++) {
		if (rdaemon_log_has(d, "gone before its pages could be taken"))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

/* A peer that takes the connection and trickles a byte of a TLS record
 * every 2 s for 16 s, so a read never times out and the handshake never
 * ends (a wedged or hostile host): the pull waits all that time. */
static void *trickle(void *arg)
{
	int lfd = *(int *)arg, fd = accept(lfd, NULL, NULL);
	const unsigned char rec[] = { 0x16, 0x03, 0x03, 0x40, 0x00, 0x02, 0x00, 0x3f, 0xff };

	for (unsigned i = 0; fd >= 0 && i < 8; i++) {
		if (send(fd, rec + i, 1, MSG_NOSIGNAL) != 1)
			break;
		sleep(2);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void *migrate_to_b(void *arg)
{
	struct mpair *p = ((void **)arg)[0];
	struct mclient *m = ((void **)arg)[1];

	return (void *)(intptr_t)tmem_migrate(m->c, p->d[1].sock);
}

/* A source that takes the connection and answers nothing useful for
 * 16 s (its host wedged) holds the destination's pull all that time:
 * the destination goes on serving meanwhile, its other clients
 * included; the client gives up waiting for its welcome (libtmem's 10 s)
 * and goes while the pull runs; the pages stay parked at the source. */
START_TEST(test_silent_peer_stalls_nothing)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	void *args[2];
	struct tmem_conn *other;
	struct mclient m;
	struct mpair p;
	pthread_t mover, peer;
	void *rc;
	double t0;
	int hole = socket(AF_INET, SOCK_STREAM, 0);

	setenv("TMEM_RECONNECT_MS", "1500", 1);
	mpair_start(&p, MPAIR_SOURCE_UNREACHABLE);
	sa.sin_port = htons(p.port[0]);
	ck_assert_int_eq(bind(hole, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(hole, 4), 0);
	ck_assert_int_eq(pthread_create(&peer, NULL, trickle, &hole), 0);
	mclient_start(&m, p.d[0].sock, "wedged");
	args[0] = &p;
	args[1] = &m;
	ck_assert_int_eq(pthread_create(&mover, NULL, migrate_to_b, args), 0);
	usleep(500 * 1000); /* its pull is waiting on the hole */
	t0 = now_s();
	ck_assert_int_eq(tmem_connect(p.d[1].sock, "bystander", &other), 0);
	ck_assert_int_ge(tmem_new_pool(other, tmem_pool_flags(TMEM_POOL_PERSIST), NULL), 0);
	printf("silent peer: another client attached in %.3f s meanwhile\n", now_s() - t0);
	/* The pull takes 16 s; the main loop's hello took none of it. */
	ck_assert_double_lt(now_s() - t0, 5.0);
	tmem_disconnect(other);
	pthread_join(mover, &rc);
	/* -ENOENT, or -ETIMEDOUT: its welcome came after libtmem's 10 s. */
	ck_assert_int_lt((int)(intptr_t)rc, 0);
	ck_assert(mpair_has_file(&p, 0, "parked", "wedged"));
	ck_assert(pull_failure_logged(&p.d[1]));
	ck_assert_int_eq(tmem_connect(p.d[1].sock, "after", &other), 0);
	tmem_disconnect(other);
	tmem_disconnect(m.c);
	pthread_join(peer, NULL);
	close(hole);
	unsetenv("TMEM_RECONNECT_MS");
	mpair_fini(&p);
}
END_TEST

/* A tmemd without migration parks a client all the same, and the client
 * comes back to it with every page. */
START_TEST(test_park_without_migration)
{
	struct rdaemon d;
	struct mclient m;
	int status;

	rdaemon_init(&d, KEEP_ARENA_FILE, "");
	ck_assert(rdaemon_start(&d, &status));
	mclient_start(&m, d.sock, "homebody");
	ck_assert_int_eq(tmem_migrate(m.c, d.sock), 0);
	verify(&m);
	report("parked and back, no migration configured", &m);
	tmem_disconnect(m.c);
	rdaemon_fini(&d);
}
END_TEST

static Suite *migrate_suite(void)
{
	Suite *s = suite_create("migrate");
	TCase *tc = tcase_create("migrate");

	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_move_and_back);
	tcase_add_test(tc, test_busy_while_moving);
	tcase_add_test(tc, test_kill_source);
	tcase_add_test(tc, test_kill_destination);
	tcase_add_test(tc, test_source_gone);
	tcase_add_test(tc, test_silent_peer_stalls_nothing);
	tcase_add_test(tc, test_park_without_migration);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(migrate_suite(), 0);
}
