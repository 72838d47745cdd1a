/* SPDX-License-Identifier: MIT */
/*
 * migrate-bench (make bench-migrate): the rate of a migration between two
 * tmemds on this machine (two processes, loopback TCP, TLS 1.3 PSK)
 * against a plain TCP stream of the same bytes over the same link in the
 * same run.  A client puts PAGES pages (a tenth zero, a tenth one byte
 * repeated, the rest text-like, so they travel compressed as stored) and
 * moves with tmem_migrate(); the destination's stats say the bytes
 * received and how long its pull took (connect, handshake, the stream,
 * each page checked and stored, the commit and the release).  The plain
 * stream sends as many bytes from this process to a forked reader.
 * Issue 27's goal: the pull at 0.7x the plain stream or better.
 * MIGRATE_BENCH_LINK names the link when migrate-link.sh has shaped it
 * (both tmemds and the stream then cross the same rate limit).
 * Medians of ROUNDS moves (back and forth).  MIGRATE_BENCH_LOGS=1 prints
 * both tmemds' logs at the end.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "libtmem/migrate_fixture.h"
#include "tmem.h"

#define ROUNDS 5

static unsigned npages(void)
{
	const char *e = getenv("TMEM_BENCH_PAGES");

	return e ? (unsigned)strtoul(e, NULL, 10) : 32768u;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Text-like: words from a small list, so LZ4 makes it about a third. */
static void text_page(unsigned char *pg, unsigned h)
{
	static const char *const words[] = { "tmem ", "page ", "guest ", "swap ", "xen ",
					     "pool ", "host ", "migrate ", "0x1f2e ", "kernel " };
	unsigned x = h * 2654435761u + 1, i = 0;

	while (i < 4096) {
		const char *w = words[(x >> 7) % 10];
		size_t n = strlen(w);

		x = x * 1103515245u + 12345u;
		if (i + n > 4096)
			n = 4096 - i;
		memcpy(pg + i, w, n);
		i += (unsigned)n;
		if (x % 7 == 0 && i < 4095)
			pg[i++] = (unsigned char)('a' + (x >> 9) % 26);
	}
}

static void fill(unsigned char *pg, unsigned h)
{
	if (h % 10 == 0)
		memset(pg, 0, 4096);
	else if (h % 10 == 1)
		memset(pg, (int)(h & 0xff), 4096);
	else
		text_page(pg, h);
}

/* The link both cross: loopback, or what migrate-link.sh shaped. */
static const char *link_name(void)
{
	const char *e = getenv("MIGRATE_BENCH_LINK");

	return e && *e ? e : "loopback";
}

/* The destination's stats: bytes received and pull seconds, in all. */
static void received(struct mpair *p, int side, double *bytes, double *secs)
{
	char cmd[600];
	json_error_t e;
	json_t *doc, *r;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s --socket %s/control.sock --json stats", TMEMCTL_BIN,
		 p->d[side].dir);
	f = popen(cmd, "r");
	doc = f ? json_loadf(f, 0, &e) : NULL;
	if (f)
		pclose(f);
	r = json_object_get(json_object_get(doc, "migrate"), "received");
	*bytes = (double)json_integer_value(json_object_get(r, "bytes"));
	*secs = json_real_value(json_object_get(r, "transfer_seconds"));
	json_decref(doc);
}

/* Seconds to send n bytes over loopback TCP to a forked reader. */
static double plain_stream(double n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	static unsigned char buf[1u << 20];
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd, one = 1;
	double t0, left = n;
	pid_t pid;

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl))
		return -1;
	pid = fork();
	if (pid == 0) {
		int c = accept(lfd, NULL, NULL);

		while (read(c, buf, sizeof(buf)) > 0)
			;
		(void)!write(c, "k", 1);
		_exit(0);
	}
	close(lfd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(buf, 0x5a, sizeof(buf));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	t0 = now_s();
	while (left > 0) {
		size_t k = left > sizeof(buf) ? sizeof(buf) : (size_t)left;
		ssize_t w = write(fd, buf, k);

		if (w <= 0)
			break;
		left -= (double)w;
	}
	shutdown(fd, SHUT_WR);
	(void)!read(fd, buf, 1); /* the reader has it all */
	t0 = now_s() - t0;
	close(fd);
	waitpid(pid, NULL, 0);
	return t0;
}

static void bench(void)
{
	unsigned n = npages();
	double pull[ROUNDS], whole[ROUNDS], plain[ROUNDS], bytes = 0, prev_b[2] = { 0 },
	       prev_s[2] = { 0 };
	unsigned char pg[4096];
	struct tmem_conn *c;
	struct mpair p;
	int32_t pool;
	int at = 0;

	mpair_start_sized(&p, "512M");
	ck_assert_int_eq(tmem_connect(p.d[0].sock, "bench", &c), 0);
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	for (unsigned h = 0; h < n; h++) {
		struct tmem_oid o = { { h / 64, 9, 9 } };

		fill(pg, h);
		ck_assert_msg(tmem_put(c, pool, &o, h % 64, pg) == 1, "put %u refused", h);
	}
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_s(), b, s;

		ck_assert_msg(tmem_migrate(c, p.d[1 - at].sock) == 0, "move %d failed", r);
		whole[r] = now_s() - t0;
		at = 1 - at;
		received(&p, at, &b, &s);
		bytes = b - prev_b[at];
		pull[r] = s - prev_s[at];
		prev_b[at] = b;
		prev_s[at] = s;
		plain[r] = plain_stream(bytes);
		printf("  move %d: pull %.3f s, end to end %.3f s, plain stream %.3f s\n", r,
		       pull[r], whole[r], plain[r]);
	}
	qsort(pull, ROUNDS, sizeof(double), cmp);
	qsort(whole, ROUNDS, sizeof(double), cmp);
	qsort(plain, ROUNDS, sizeof(double), cmp);
	printf("migrate-bench over %s: %u pages (%.1f MiB), %.1f MiB as stored, medians of %d "
	       "moves\n", link_name(), n, n * 4096.0 / (1 << 20), bytes / (1 << 20), ROUNDS);
	printf("  pull (destination: connect, TLS, stream, check, store, commit, release): "
	       "%.3f s, %.0f MiB/s stored, %.0f MiB/s of pages\n", pull[ROUNDS / 2],
	       bytes / pull[ROUNDS / 2] / (1 << 20), n * 4096.0 / pull[ROUNDS / 2] / (1 << 20));
	printf("  tmem_migrate() end to end (park, attach, pull, welcome): %.3f s\n",
	       whole[ROUNDS / 2]);
	printf("  plain TCP stream of the same bytes, %s: %.3f s, %.0f MiB/s\n", link_name(),
	       plain[ROUNDS / 2], bytes / plain[ROUNDS / 2] / (1 << 20));
	printf("  pull rate / plain stream rate: %.2fx (goal >= 0.70x)\n",
	       plain[ROUNDS / 2] / pull[ROUNDS / 2]);
	tmem_disconnect(c);
	if (getenv("MIGRATE_BENCH_LOGS"))
		for (int i = 0; i < 2; i++)
			rdaemon_dump_log(&p.d[i]);
	mpair_fini(&p);
}

START_TEST(test_bench)
{
	bench();
}
END_TEST

/* A Check suite (no fork) only because the harnesses assert with Check. */
int main(void)
{
	Suite *s = suite_create("migrate-bench");
	TCase *tc = tcase_create("bench");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_bench);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
