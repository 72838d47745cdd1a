/* SPDX-License-Identifier: MIT */
/*
 * A hostile client against a real tmemd while honest clients run: random
 * bytes in its ring, lies about the indices, out-of-range slots, foreign
 * pool ids, broken handshakes and 1 MB of garbage on the socket.  The
 * honest clients must see no error, tmemd must stay up, and it must stop
 * cleanly (exit 0; under ASan that also means no leak).  Run it against
 * a sanitizer build with TMEMD_BIN=build/san-address-undefined/tmemd.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/test_main.h"
#include "harness.h"
#include "rawclient.h"
#include "tmem.h"
#include "tmem_local.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void scribble(void *p, size_t n)
{
	unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)rnd();
}

/* Garbage and foreign requests: answered with errors, not a hang-up. */
static void bad_requests(struct daemon *d)
{
	struct tmem_req r;
	struct tmem_rsp rsp;
	struct rawc c;

	ck_assert_int_eq(rawc_connect(&c, d->sock, "hostile-req"), 0);
	for (int i = 0; i < 2000; i++) {
		scribble(&r, sizeof(r));
		if (i % 4 == 0) { /* a plausible op on a foreign or bad pool */
			rawc_req(&r, TMEM_OP_GET_PAGE + (uint32_t)(rnd() % 3), (int32_t)(rnd() % 40) - 4);
			r.slot = (uint32_t)(rnd() % 8); /* 4 slots: half out of range */
		}
		ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
		ck_assert_int_le(rsp.ret, 1);
	}
	tmem_raw_disconnect(&c.ring);
}

/* Ring corruption of each kind ends in a hang-up. */
static void corrupt_rings(struct daemon *d)
{
	for (int kind = 0; kind < 5; kind++) {
		struct rawc c;
		struct tmem_ring_hdr *h;

		ck_assert_int_eq(rawc_connect(&c, d->sock, "hostile-ring"), 0);
		h = c.ring.region;
		switch (kind) {
		case 0: /* producer index far ahead */
			tmem_store_release(&h->req_prod, 1000);
			break;
		case 1: /* producer index behind what was answered */
			tmem_store_release(&h->req_prod, (uint32_t)-3);
			break;
		case 2: /* random bytes over the whole ring part */
			scribble(h, tmem_slot_offset(c.ring.nr_entries));
			break;
		case 3: /* geometry changed after connect */
			h->nr_slots = 1024;
			tmem_store_release(&h->req_prod, 1);
			break;
		default: /* random entries, then a sane count, then a lie */
			scribble(tmem_ring_entries(h), 8 * 64);
			tmem_store_release(&h->req_prod, 8);
			tmem_raw_kick(&c.ring);
			usleep(20000);
			tmem_store_release(&h->req_prod, 8 + 9);
			break;
		}
		tmem_raw_kick(&c.ring);
		ck_assert_msg(rawc_wait_hangup(&c, 5000) == 0, "corruption %d not cut off", kind);
		tmem_raw_disconnect(&c.ring);
	}
}

/* Scribbles over entries and slots while tmemd serves them, with a
 * plausible producer index: whatever tmemd answers or however it ends,
 * it must survive and the others must not notice. */
static void racing_scribbler(struct daemon *d)
{
	uint64_t end = 0;
	struct rawc c;
	struct tmem_ring_hdr *h;
	uint32_t prod = 0;

	ck_assert_int_eq(rawc_connect(&c, d->sock, "hostile-race"), 0);
	h = c.ring.region;
	for (int i = 0; i < 20000 && !end; i++) {
		uint32_t answered = tmem_load_acquire(&h->rsp_prod);

		scribble(tmem_ring_entries(h), 8 * 64);
		scribble(tmem_slot_ptr(h, 8, (uint32_t)(rnd() % 4)), 4096);
		if (prod - answered < 8)
			prod++;
		tmem_store_release(&h->req_prod, prod);
		tmem_raw_kick(&c.ring);
		if (i % 1000 == 0 && rawc_wait_hangup(&c, 0) == 0)
			end = 1;
	}
	tmem_raw_disconnect(&c.ring);
}

/* 1 MB of garbage, before a handshake and after one. */
static void socket_garbage(struct daemon *d)
{
	static char junk[4096];
	struct rawc c;
	size_t sent = 0;
	int fd = rawc_socket(d->sock);

	scribble(junk, sizeof(junk));
	while (sent < (1u << 20) && send(fd, junk, sizeof(junk), MSG_NOSIGNAL) > 0)
		sent += sizeof(junk);
	close(fd);
	ck_assert_int_eq(rawc_connect(&c, d->sock, "hostile-sock"), 0);
	for (sent = 0; sent < (1u << 20); sent += sizeof(junk))
		if (send(c.ring.sock_fd, junk, sizeof(junk), MSG_NOSIGNAL) < 0)
			break;
	ck_assert_int_eq(rawc_wait_hangup(&c, 5000), 0);
	tmem_raw_disconnect(&c.ring);
}

static void bad_handshakes(struct daemon *d)
{
	uint64_t size = tmem_region_size(8, 4);
	struct tmem_local_hello good, h;
	int ev1 = eventfd(0, 0), ev2 = eventfd(0, 0), p[2];
	int sealed = rawc_region_fd(size, true), unsealed = rawc_region_fd(size, false);
	int small = rawc_region_fd(4096, true);
	int fds[4] = { sealed, ev1, ev2, ev1 };
	enum { N = TMEM_LOCAL_NR_FDS };

	rawc_good_hello(&good, "hostile-hs");
	ck_assert_int_eq(pipe(p), 0);
	h = good;
	h.magic ^= 1;
	ck_assert_int_lt(rawc_hello(d->sock, &h, fds, N), 0);
	h = good;
	h.nr_entries = 6;
	ck_assert_int_lt(rawc_hello(d->sock, &h, fds, N), 0);
	h = good;
	h.region_size += 4096;
	ck_assert_int_lt(rawc_hello(d->sock, &h, fds, N), 0);
	h = good;
	memset(h.name, 'x', sizeof(h.name)); /* no NUL */
	ck_assert_int_lt(rawc_hello(d->sock, &h, fds, N), 0);
	h = good;
	strcpy((char *)h.name, "bad/name");
	ck_assert_int_lt(rawc_hello(d->sock, &h, fds, N), 0);
	h = good;
	h.rsvd[3] = 1;
	ck_assert_int_lt(rawc_hello(d->sock, &h, fds, N), 0);
	ck_assert_int_lt(rawc_hello(d->sock, &good, fds, N - 1), 0); /* too few fds */
	ck_assert_int_lt(rawc_hello(d->sock, &good, fds, N + 1), 0); /* too many */
	fds[0] = unsealed;
	ck_assert_int_eq(rawc_hello(d->sock, &good, fds, N), -EPERM);
	fds[0] = small;
	ck_assert_int_lt(rawc_hello(d->sock, &good, fds, N), 0);
	fds[0] = sealed;
	fds[1] = p[0];                                        /* not an eventfd */
	ck_assert_int_lt(rawc_hello(d->sock, &good, fds, N), 0);
	fds[1] = ev1;
	ck_assert_int_eq(rawc_hello(d->sock, &good, fds, N), 0);    /* the control */
	close(ev1);
	close(ev2);
	close(p[0]);
	close(p[1]);
	close(sealed);
	close(unsealed);
	close(small);
}

START_TEST(test_hostile_client)
{
	int stop[2], st, nhonest = 2;
	pid_t kids[2];
	struct daemon d;
	json_t *stats;

	daemon_start(&d, NULL, "32M");
	ck_assert_int_eq(pipe(stop), 0);
	for (int i = 0; i < nhonest; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			char name[32];

			snprintf(name, sizeof(name), "honest%d", i);
			close(stop[1]);
			_exit(harness_honest(d.sock, name, stop[0]));
		}
	}
	close(stop[0]);
	bad_requests(&d);
	corrupt_rings(&d);
	racing_scribbler(&d);
	socket_garbage(&d);
	bad_handshakes(&d);
	ck_assert(daemon_alive(&d));
	close(stop[1]); /* the honest clients stop at EOF */
	for (int i = 0; i < nhonest; i++) {
		ck_assert_int_eq(waitpid(kids[i], &st, 0), kids[i]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "honest client %d saw errors: status %d", i, st);
	}
	usleep(100000);
	stats = daemon_stats(&d);
	ck_assert_int_eq(json_array_size(json_object_get(stats, "clients")), 0);
	json_decref(stats);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

/* 0 when the peer closed fd within timeout_ms, -1 if it stayed open. */
static int closed_within(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b;

	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	return recv(fd, &b, 1, MSG_DONTWAIT) == 0 ? 0 : -1;
}

/*
 * Connections that never send a hello: one uid may hold 16 at a time
 * (the 17th is closed at once) and each is closed once its 5 s
 * handshake deadline passes; then the same uid connects normally.
 */
START_TEST(test_silent_connections)
{
	enum { CAP = 16 };
	int idle[CAP], extra;
	struct tmem_conn *c;
	struct daemon d;

	daemon_start(&d, NULL, "8M");
	for (int i = 0; i < CAP; i++)
		idle[i] = rawc_socket(d.sock);
	usleep(100000);  /* tmemd has accepted them all */
	for (int i = 0; i < CAP; i++)
		ck_assert_int_eq(closed_within(idle[i], 0), -1);
	extra = rawc_socket(d.sock);
	ck_assert_msg(closed_within(extra, 2000) == 0, "17th silent connection kept");
	close(extra);
	ck_assert_int_lt(tmem_connect(d.sock, "while-full", &c), 0);
	for (int i = 0; i < CAP; i++) {
		ck_assert_msg(closed_within(idle[i], 8000) == 0,
			      "silent connection %d outlived the handshake deadline", i);
		close(idle[i]);
	}
	ck_assert_int_eq(tmem_connect(d.sock, "after", &c), 0);
	tmem_disconnect(c);
	ck_assert(daemon_alive(&d));
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

static Suite *hostile_suite(void)
{
	Suite *s = suite_create("tmemd-hostile");
	TCase *tc = tcase_create("hostile");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_hostile_client);
	tcase_add_test(tc, test_silent_connections);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return tmem_test_main(hostile_suite(), 0);
}
