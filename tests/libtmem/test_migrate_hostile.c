/* SPDX-License-Identifier: MIT */
/*
 * Migration between hosts against a hostile peer (issue 27): the test
 * plays the peer of a real tmemd (hostA) with the daemon's own link code
 * (daemon/migrate/mig_tls.c), holding a client parked there, and checks
 * that each of these is refused and changes nothing on hostA:
 *   - a peer that does not speak TLS (bytes of a PULL in clear);
 *   - a peer with the right name and a wrong key, or a name hostA does
 *     not know;
 *   - a PULL with another client's identity, or for a name not parked;
 *   - a replayed RELEASE or ABORT (a transfer settled already), and a
 *     recorded TLS session replayed byte for byte;
 *   - a malformed message after authentication.
 * After each (the fixture's teardown), the victim still migrates to
 * hostB with tmem_migrate(), every page whole.  Also
 * tmemctl's migrate-check (reachable, authenticated, room) and
 * migrate-push, and the stats' "migrate" counters.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "common/test_main.h"
#include "conn_internal.h"
#include "harness.h"
#include "migrate/mig_tls.h"
#include "migrate/mig_wire.h"
#include "migrate_fixture.h"
#include "tmem.h"

#define VPAGES 200u

static struct mpair P;
static char peer_a[64];
static struct tmem_ident victim_ident;

static void vpage(void *pg, unsigned h)
{
	test_page(pg, 0x5eed0000ull + h);
}

/* A client "victim" with VPAGES pages, parked on hostA (its migration to
 * a socket that does not exist fails, leaving it parked): the
 * connection, kept for a later tmem_migrate(). */
static struct tmem_conn *park_victim(const char *name)
{
	unsigned char pg[4096];
	struct tmem_conn *c;
	int32_t pool;

	ck_assert_int_eq(tmem_connect(P.d[0].sock, name, &c), 0);
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	ck_assert_int_eq(pool, 0);
	for (unsigned h = 0; h < VPAGES; h++) {
		struct tmem_oid o = { { h, 1, 2 } };

		vpage(pg, h);
		ck_assert_int_eq(tmem_put(c, pool, &o, 0, pg), 1);
	}
	victim_ident.b[0] = 'L';
	memcpy(victim_ident.b + 1, c->sess.token, sizeof(c->sess.token));
	setenv("TMEM_RECONNECT_MS", "200", 1);
	ck_assert_int_eq(tmem_migrate(c, "/nonexistent/guest.sock"), -ENOENT);
	unsetenv("TMEM_RECONNECT_MS");
	ck_assert(mpair_has_file(&P, 0, "parked", name));
	return c;
}

static struct mig_tls *tls_as(const char *me, const char *lines)
{
	char path[200];
	struct mig_keys keys;
	struct mig_tls *t;
	char why[200];

	snprintf(path, sizeof(path), "%s/k-%s", P.keydir, me);
	mpair_write_keys(path, lines);
	ck_assert_int_eq(mig_keys_load(path, &keys, why, sizeof(why)), 0);
	ck_assert_int_eq(mig_tls_create(&keys, me, &t), 0);
	unlink(path);
	return t;
}

/* hostA's log says s within 3 s (it logs a refusal after closing). */
static bool log_soon(const char *s)
{
	for (int i = 0; i < 30; i++) {
		if (rdaemon_log_has(&P.d[0], s))
			return true;
		usleep(100000);
	}
	return false;
}

/* The victim is parked at hostA, not lent. */
static void victim_intact(const char *name)
{
	char path[600], text[256] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/migrate/parked/%s", P.d[0].dir, name);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(text, sizeof(text), f));
	fclose(f);
	ck_assert_msg(!strstr(text, " lent "), "%s is lent: %s", name, text);
}

static int pull_offer(struct mig_link *l, const char *name, const struct tmem_ident *id,
		      struct tmem_mig_offer *o)
{
	struct tmem_mig_who who = { 0 };
	uint16_t type;
	uint32_t len;

	mig_name_put(who.name, name);
	memcpy(who.ident, id->b, sizeof(who.ident));
	ck_assert_int_eq(mig_send(l, TMEM_MIG_PULL, &who, sizeof(who)), 0);
	ck_assert_int_eq(mig_recv(l, &type, o, sizeof(*o), &len), 0);
	ck_assert_uint_eq(type, TMEM_MIG_OFFER);
	return o->status;
}

static int settle(struct mig_link *l, const uint8_t *xfer, uint16_t type)
{
	struct tmem_mig_xfer x;
	struct tmem_mig_done d;
	uint16_t t;
	uint32_t len;

	memcpy(x.xfer, xfer, sizeof(x.xfer));
	ck_assert_int_eq(mig_send(l, type, &x, sizeof(x)), 0);
	ck_assert_int_eq(mig_recv(l, &t, &d, sizeof(d), &len), 0);
	ck_assert_uint_eq(t, TMEM_MIG_DONE);
	return d.status;
}

/* Every page the offer promised, checked against vpage(). */
static void receive_all(struct mig_link *l, const struct tmem_mig_offer *o)
{
	uint8_t *buf = malloc(TMEM_MIG_MAX_PAYLOAD);
	uint64_t pages = 0;
	uint16_t type;
	uint32_t len;

	ck_assert_ptr_nonnull(buf);
	for (;;) {
		struct mig_batch_iter it;
		struct tmem_stored_page sp;

		ck_assert_int_eq(mig_recv(l, &type, buf, TMEM_MIG_MAX_PAYLOAD, &len), 0);
		if (type == TMEM_MIG_END)
			break;
		ck_assert_uint_eq(type, TMEM_MIG_BATCH);
		mig_batch_begin(&it, buf, len);
		while (mig_batch_next(&it, &sp) > 0)
			pages++;
	}
	ck_assert_uint_eq(pages, o->pages);
	free(buf);
}

START_TEST(test_unauthenticated_and_wrong_keys)
{
	static const char bad_b[] =
		"hostB 2222222222222222222222222222222222222222222222222222222222222223\n";
	static const char other[] =
		"hostC 2222222222222222222222222222222222222222222222222222222222222222\n";
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(P.port[0]),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct tmem_mig_hdr h = { .magic = TMEM_MIG_MAGIC, .version = 1, .type = TMEM_MIG_PULL,
				  .len = sizeof(struct tmem_mig_who) };
	struct mig_tls *t;
	struct mig_link *l;
	char junk[256] = { 0 };
	int fd;

	/* In clear: the TLS server reads it as a bad ClientHello. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	memcpy(junk, &h, sizeof(h));
	strcpy(junk + sizeof(h), "victim");
	ck_assert_int_eq(write(fd, junk, sizeof(h) + 96), (ssize_t)(sizeof(h) + 96));
	ck_assert_int_le(read(fd, junk, sizeof(junk)), 64); /* an alert at most, then EOF */
	close(fd);
	t = tls_as("hostB", bad_b);
	ck_assert_int_eq(mig_connect(t, peer_a, 3000, &l), -EACCES);
	mig_tls_destroy(t);
	t = tls_as("hostC", other);
	ck_assert_int_eq(mig_connect(t, peer_a, 3000, &l), -EACCES);
	mig_tls_destroy(t);
	victim_intact("victim");
	ck_assert(log_soon("a peer failed to authenticate: refused"));
}
END_TEST

START_TEST(test_claims_and_replays)
{
	struct mig_tls *t = tls_as("hostB", MPAIR_KEY_A MPAIR_KEY_B);
	struct tmem_ident wrong = victim_ident;
	struct tmem_mig_offer o;
	struct mig_link *l;
	uint8_t xfer[TMEM_MIG_XFER_LEN];

	ck_assert_int_eq(mig_connect(t, peer_a, 3000, &l), 0);
	wrong.b[5] ^= 1;
	ck_assert_int_eq(pull_offer(l, "victim", &wrong, &o), -EPERM);
	ck_assert_int_eq(pull_offer(l, "nobody", &victim_ident, &o), -ENOENT);
	victim_intact("victim");
	/* A proper pull, then ABORT: parked again.  The same ABORT or a
	 * RELEASE of it again: refused, nothing changes. */
	ck_assert_int_eq(pull_offer(l, "victim", &victim_ident, &o), 0);
	ck_assert_uint_eq(o.pages, VPAGES);
	memcpy(xfer, o.xfer, sizeof(xfer));
	receive_all(l, &o);
	ck_assert_int_eq(settle(l, xfer, TMEM_MIG_ABORT), 0);
	victim_intact("victim");
	ck_assert_int_eq(settle(l, xfer, TMEM_MIG_ABORT), -ENOENT);
	ck_assert_int_eq(settle(l, xfer, TMEM_MIG_RELEASE), -ENOENT);
	victim_intact("victim");
	mig_link_close(l);
	mig_tls_destroy(t);
}
END_TEST

START_TEST(test_malformed_after_auth)
{
	struct mig_tls *t = tls_as("hostB", MPAIR_KEY_A MPAIR_KEY_B);
	struct tmem_mig_who who = { 0 };
	struct tmem_mig_offer o;
	struct mig_link *l;
	uint16_t type;
	uint32_t len;

	/* A PULL with bytes after the name's NUL: the link is closed. */
	ck_assert_int_eq(mig_connect(t, peer_a, 3000, &l), 0);
	mig_name_put(who.name, "victim");
	who.name[40] = 'x';
	ck_assert_int_eq(mig_send(l, TMEM_MIG_PULL, &who, sizeof(who)), 0);
	ck_assert_int_lt(mig_recv(l, &type, &o, sizeof(o), &len), 0);
	mig_link_close(l);
	/* A message type only the source sends. */
	ck_assert_int_eq(mig_connect(t, peer_a, 3000, &l), 0);
	ck_assert_int_eq(mig_send(l, TMEM_MIG_OFFER, &o, 12), 0);
	ck_assert_int_lt(mig_recv(l, &type, &o, sizeof(o), &len), 0);
	mig_link_close(l);
	victim_intact("victim");
	mig_tls_destroy(t);
	ck_assert(log_soon("sent a malformed message"));
}
END_TEST

/* ---- a recorded session, replayed --------------------------------------- */

struct recorder {
	int lfd;
	uint16_t to;
	uint8_t bytes[65536];
	size_t n;
};

/* Relays one connection to hostA, keeping what the client sent. */
static void *record(void *arg)
{
	struct recorder *r = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(r->to),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int c = accept(r->lfd, NULL, NULL), s = socket(AF_INET, SOCK_STREAM, 0);
	struct pollfd p[2] = { { .fd = c, .events = POLLIN }, { .fd = s, .events = POLLIN } };
	uint8_t buf[16384];

	ck_assert_int_eq(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	while (poll(p, 2, 5000) > 0) {
		ssize_t n;

		if (p[0].revents) {
			n = read(c, buf, sizeof(buf));
			if (n <= 0)
				break;
			if (r->n + (size_t)n <= sizeof(r->bytes)) {
				memcpy(r->bytes + r->n, buf, (size_t)n);
				r->n += (size_t)n;
			}
			ck_assert_int_eq(write(s, buf, (size_t)n), n);
		}
		if (p[1].revents) {
			n = read(s, buf, sizeof(buf));
			if (n <= 0)
				break;
			ck_assert_int_eq(write(c, buf, (size_t)n), n);
		}
	}
	close(c);
	close(s);
	return NULL;
}

START_TEST(test_recorded_session_replayed)
{
	struct mig_tls *t = tls_as("hostB", MPAIR_KEY_A MPAIR_KEY_B);
	static struct recorder r;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(P.port[0]),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct tmem_mig_offer o;
	struct mig_link *l;
	char via[64], junk[4096];
	uint16_t port = mpair_free_port();
	pthread_t th;
	int fd;

	/* A session through the recorder: PULL, the pages, ABORT. */
	memset(&r, 0, sizeof(r));
	r.to = P.port[0];
	r.lfd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_port = htons(port);
	ck_assert_int_eq(bind(r.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(r.lfd, 1), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, record, &r), 0);
	snprintf(via, sizeof(via), "127.0.0.1:%u", port);
	ck_assert_int_eq(mig_connect(t, via, 3000, &l), 0);
	ck_assert_int_eq(pull_offer(l, "victim", &victim_ident, &o), 0);
	receive_all(l, &o);
	ck_assert_int_eq(settle(l, o.xfer, TMEM_MIG_ABORT), 0);
	mig_link_close(l);
	pthread_join(th, NULL);
	close(r.lfd);
	victim_intact("victim");
	ck_assert_uint_gt(r.n, 200);
	/* The same bytes again, to hostA: a new handshake, which they
	 * cannot finish; nothing they carry is read. */
	sa.sin_port = htons(P.port[0]);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	(void)!write(fd, r.bytes, r.n);
	while (read(fd, junk, sizeof(junk)) > 0)
		;
	close(fd);
	victim_intact("victim");
	ck_assert(log_soon("a peer failed to authenticate: refused"));
	mig_tls_destroy(t);
}
END_TEST

/* ---- tmemctl ---------------------------------------------------------- */

static json_t *tmemctl(int side, const char *args, int *status)
{
	char cmd[800];
	json_error_t e;
	json_t *doc;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s --socket %s/control.sock --json %s", TMEMCTL_BIN,
		 P.d[side].dir, args);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	doc = json_loadf(p, 0, &e);
	*status = pclose(p);
	return doc;
}

START_TEST(test_tmemctl_check_push_stats)
{
	unsigned char pg[4096], want[4096];
	char args[200];
	json_t *r, *res;
	int status;
	struct tmem_conn *c;

	/* From hostA: can victim go to hostB?  Yes, on all three counts. */
	snprintf(args, sizeof(args), "migrate-check victim 127.0.0.1:%u", P.port[1]);
	r = tmemctl(0, args, &status);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	res = r;
	ck_assert(json_is_true(json_object_get(res, "reachable")));
	ck_assert(json_is_true(json_object_get(res, "authenticated")));
	ck_assert(json_is_true(json_object_get(res, "room")));
	ck_assert_int_eq(json_integer_value(json_object_get(res, "pages")), VPAGES);
	json_decref(r);
	/* Nobody listening there: not reachable, exit 1. */
	snprintf(args, sizeof(args), "migrate-check victim 127.0.0.1:%u", mpair_free_port());
	r = tmemctl(0, args, &status);
	ck_assert_int_eq(WEXITSTATUS(status), 1);
	ck_assert(json_is_false(json_object_get(r, "reachable")));
	json_decref(r);
	/* A push of a parked client: hostB has it, parked, and its guest
	 * takes it there. */
	c = park_victim("pushed");
	snprintf(args, sizeof(args), "migrate-push pushed 127.0.0.1:%u", P.port[1]);
	r = tmemctl(0, args, &status);
	ck_assert_msg(WEXITSTATUS(status) == 0, "migrate-push failed");
	json_decref(r);
	ck_assert(mpair_has_file(&P, 1, "parked", "pushed"));
	ck_assert(!mpair_has_file(&P, 0, "parked", "pushed"));
	ck_assert_int_eq(tmem_migrate(c, P.d[1].sock), 0);
	ck_assert(!mpair_has_file(&P, 1, "parked", "pushed"));
	for (unsigned h = 0; h < VPAGES; h++) {
		struct tmem_oid o = { { h, 1, 2 } };

		vpage(want, h);
		ck_assert_int_eq(tmem_get(c, 0, &o, 0, pg), 1);
		ck_assert_mem_eq(pg, want, sizeof(pg));
	}
	tmem_disconnect(c);
	/* The counters: hostA sent, hostB received, and refusals counted. */
	{
		struct mig_tls *t = tls_as("hostC", "hostC " "33333333333333333333333333333333"
					   "33333333333333333333333333333333\n");
		struct mig_link *l;

		ck_assert_int_eq(mig_connect(t, peer_a, 3000, &l), -EACCES);
		mig_tls_destroy(t);
	}
	ck_assert(log_soon("a peer failed to authenticate: refused"));
	r = tmemctl(0, "stats", &status);
	res = json_object_get(r, "migrate");
	ck_assert(json_is_true(json_object_get(res, "enabled")));
	ck_assert_int_ge(json_integer_value(json_object_get(json_object_get(res, "sent"), "pages")),
			 VPAGES);
	ck_assert_int_ge(json_integer_value(json_object_get(res, "refused")), 1);
	json_decref(r);
	r = tmemctl(1, "stats", &status);
	res = json_object_get(r, "migrate");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(res, "received"),
							    "pages")), VPAGES);
	json_decref(r);
}
END_TEST

/* A peer that authenticates as hostB, takes a PUSH and answers nothing
 * for 12 s (a large client's pull outlasts a read's timeout so). */
static void *push_and_silence(void *arg)
{
	int lfd = *(int *)arg, fd = accept(lfd, NULL, NULL);
	struct mig_tls *t = tls_as("hostB", MPAIR_KEY_A MPAIR_KEY_B);
	struct tmem_mig_who who;
	struct mig_link *l = NULL;
	uint16_t type = 0;
	uint32_t len;
	int rc = fd < 0 ? -errno : mig_accept(t, fd, 5000, &l);

	if (!rc)
		rc = mig_recv(l, &type, &who, sizeof(who), &len);
	if (!rc && type == TMEM_MIG_PUSH)
		sleep(12);
	mig_link_close(l);
	mig_tls_destroy(t);
	return NULL;
}

/* tmemctl migrate-push to a peer that has not answered when the link's
 * read times out: the admin is told it may still be taking it, not that
 * it did not; here nothing was taken, so it stays parked. */
START_TEST(test_push_unanswered)
{
	char cmd[600], out[1024] = "";
	struct tmem_conn *c = park_victim("slowpush");
	uint16_t port;
	int lfd = mig_listen("127.0.0.1:0", &port), status;
	pthread_t th;
	size_t n;
	FILE *p;

	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(pthread_create(&th, NULL, push_and_silence, &lfd), 0);
	snprintf(cmd, sizeof(cmd), "%s --socket %s/control.sock migrate-push slowpush "
		 "127.0.0.1:%u 2>&1", TMEMCTL_BIN, P.d[0].dir, port);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	status = pclose(p);
	ck_assert_int_ne(WEXITSTATUS(status), 0);
	ck_assert_msg(strstr(out, "did not answer within 10 s; it may still be taking slowpush"),
		      "tmemctl said: %s", out);
	pthread_join(th, NULL);
	close(lfd);
	ck_assert(mpair_has_file(&P, 0, "parked", "slowpush"));
	tmem_disconnect(c);
}
END_TEST

static struct tmem_conn *victim;

static void setup(void)
{
	mpair_start(&P, 0);
	snprintf(peer_a, sizeof(peer_a), "127.0.0.1:%u", P.port[0]);
	victim = park_victim("victim");
}

static void teardown(void)
{
	unsigned char pg[4096], want[4096];

	/* Whatever was tried, the victim moves to hostB whole. */
	ck_assert_int_eq(tmem_migrate(victim, P.d[1].sock), 0);
	for (unsigned h = 0; h < VPAGES; h++) {
		struct tmem_oid o = { { h, 1, 2 } };

		vpage(want, h);
		ck_assert_int_eq(tmem_get(victim, 0, &o, 0, pg), 1);
		ck_assert_mem_eq(pg, want, sizeof(pg));
	}
	tmem_disconnect(victim);
	mpair_fini(&P);
}

static Suite *hostile_suite(void)
{
	Suite *s = suite_create("migrate-hostile");
	TCase *tc = tcase_create("hostile");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_unauthenticated_and_wrong_keys);
	tcase_add_test(tc, test_claims_and_replays);
	tcase_add_test(tc, test_malformed_after_auth);
	tcase_add_test(tc, test_recorded_session_replayed);
	tcase_add_test(tc, test_tmemctl_check_push_stats);
	tcase_add_test(tc, test_push_unanswered);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tmem_test_main(hostile_suite(), 0);
}
