/* SPDX-License-Identifier: MIT */
/*
 * Issue 32: every refusal code the man pages name is the code tmemd
 * returns, and refusals cost tmemd little.
 *
 *  - test_documented_hello_refusals: one table of bad hellos, each with
 *    the code tmemd(8) (THE LOCAL TRANSPORT) and tmemd.conf(5) name for
 *    it; a version-1 hello is -EPROTO whatever descriptors it carries.
 *  - test_documented_request_refusals: one table of bad requests, each
 *    with the code tmemd(8) (REQUESTS) and tmemd.conf(5) name.
 *    Both check the stats' exact refusal counters afterwards.
 *  - test_refusal_flood_log_bounded: 10,000 refused handshakes make at
 *    most 100 log lines, the counters stay exact, an honest client's
 *    puts and gets beside them see no error, and the next interval's
 *    first line says how many were held back.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/test_main.h"
#include "harness.h"
#include "rawclient.h"
#include "tmem.h"

/* ---- hellos ---- */

/* What one bad hello changes, on a good hello and good fds. */
struct fds {
	int memfd, kick, other;
};

enum fd_set_kind {
	FDS_GOOD,       /* memfd, kick */
	FDS_THREE,      /* memfd, kick, another eventfd (version 1's wake) */
	FDS_ONE,        /* memfd only */
	FDS_NONE,
	FDS_UNSEALED,   /* a memfd without F_SEAL_SHRINK */
	FDS_SMALL,      /* a memfd of the wrong size */
	FDS_PIPE_KICK,  /* the doorbell is a pipe, not an eventfd */
	FDS_PIPE_MEM,   /* the region is a pipe, not shmem */
};

struct hello_case {
	const char *what;
	uint32_t version;       /* 0: TMEM_LOCAL_VERSION */
	uint32_t magic_xor, ring_version_xor;
	uint32_t nr_entries;    /* 0: 8 */
	uint64_t region_delta;
	const char *name;       /* NULL: "refused" */
	uint32_t rsvd;
	enum fd_set_kind fds;
	bool fill_uid;          /* attach one more client of this uid first */
	int32_t code;           /* what tmemd(8) says */
};

static const struct hello_case hello_cases[] = {
	/* version mismatch: -EPROTO, before anything else is looked at */
	{ "version 1, three descriptors (its handshake)", .version = 1, .fds = FDS_THREE,
	  .code = -EPROTO },
	{ "version 1, two descriptors", .version = 1, .fds = FDS_GOOD, .code = -EPROTO },
	{ "version 1, one descriptor", .version = 1, .fds = FDS_ONE, .code = -EPROTO },
	{ "version 1, no descriptor", .version = 1, .fds = FDS_NONE, .code = -EPROTO },
	{ "version 3", .version = 3, .fds = FDS_THREE, .code = -EPROTO },
	{ "bad magic", .magic_xor = 1, .fds = FDS_GOOD, .code = -EPROTO },
	{ "bad ring version", .ring_version_xor = 1, .fds = FDS_GOOD, .code = -EPROTO },
	/* a bad field or descriptor: -EINVAL */
	{ "three descriptors", .fds = FDS_THREE, .code = -EINVAL },
	{ "one descriptor", .fds = FDS_ONE, .code = -EINVAL },
	{ "no descriptor", .fds = FDS_NONE, .code = -EINVAL },
	{ "entries not a power of two", .nr_entries = 6, .fds = FDS_GOOD, .code = -EINVAL },
	{ "region size wrong", .region_delta = 4096, .fds = FDS_GOOD, .code = -EINVAL },
	{ "name all digits", .name = "1234", .fds = FDS_GOOD, .code = -EINVAL },
	{ "name domid:", .name = "domid:3", .fds = FDS_GOOD, .code = -EINVAL },
	{ "name with a slash", .name = "bad/name", .fds = FDS_GOOD, .code = -EINVAL },
	{ "reserved field set", .rsvd = 1, .fds = FDS_GOOD, .code = -EINVAL },
	{ "memfd of the wrong size", .fds = FDS_SMALL, .code = -EINVAL },
	{ "doorbell not an eventfd", .fds = FDS_PIPE_KICK, .code = -EINVAL },
	{ "region not shmem", .fds = FDS_PIPE_MEM, .code = -EINVAL },
	/* memfd not sealed: -EPERM */
	{ "memfd not sealed", .fds = FDS_UNSEALED, .code = -EPERM },
	/* name already attached: -EEXIST */
	{ "name attached already", .name = "holder", .fds = FDS_GOOD, .code = -EEXIST },
	/* the uid's clients at local-max-clients-per-uid: -EUSERS (tmemd.conf(5)) */
	{ "uid at its client limit", .name = "one-too-many", .fds = FDS_GOOD, .fill_uid = true,
	  .code = -EUSERS },
};

static int32_t send_case(struct daemon *d, const struct hello_case *hc)
{
	uint64_t size = tmem_region_size(8, 4);
	struct tmem_local_hello h;
	int p[2], fds[3], n = 2;
	int memfd = rawc_region_fd(size, hc->fds != FDS_UNSEALED);
	int kick = eventfd(0, EFD_CLOEXEC), other = eventfd(0, EFD_CLOEXEC);
	int32_t rc;

	ck_assert_int_eq(pipe(p), 0);
	rawc_good_hello(&h, hc->name ? hc->name : "refused");
	if (hc->version)
		h.version = hc->version;
	h.magic ^= hc->magic_xor;
	h.ring_version ^= hc->ring_version_xor;
	if (hc->nr_entries)
		h.nr_entries = hc->nr_entries;
	h.region_size += hc->region_delta;
	h.rsvd[1] = hc->rsvd;
	fds[0] = memfd;
	fds[1] = kick;
	fds[2] = other;
	switch (hc->fds) {
	case FDS_THREE:
		n = 3;
		break;
	case FDS_ONE:
		n = 1;
		break;
	case FDS_NONE:
		n = 0;
		break;
	case FDS_SMALL:
		close(memfd);
		memfd = fds[0] = rawc_region_fd(4096, true);
		break;
	case FDS_PIPE_KICK:
		fds[1] = p[0];
		break;
	case FDS_PIPE_MEM:
		fds[0] = p[0];
		break;
	default:
		break;
	}
	rc = rawc_hello(d->sock, &h, fds, (unsigned)n);
	close(memfd);
	close(kick);
	close(other);
	close(p[0]);
	close(p[1]);
	return rc;
}

static json_t *refusal_counts(struct daemon *d, const char *kind)
{
	json_t *stats = daemon_stats(d);
	json_t *o = json_object_get(json_object_get(stats, "refusals"), kind);

	ck_assert_msg(json_is_object(o), "stats have no refusals.%s", kind);
	json_incref(o);
	json_decref(stats);
	return o;
}

static const char *code_name(int32_t code)
{
	switch (-code) {
	case EPROTO: return "EPROTO";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EEXIST: return "EEXIST";
	case EUSERS: return "EUSERS";
	case ENOSYS: return "ENOSYS";
	case ERANGE: return "ERANGE";
	case ENOENT: return "ENOENT";
	case ENOSPC: return "ENOSPC";
	default: return "other";
	}
}

/* counts has, for each code of the table, how often the table has it. */
static void expect_counts(json_t *counts, const int32_t *codes, size_t n)
{
	long long total = 0;

	for (size_t i = 0; i < n; i++) {
		long long want = 0;

		for (size_t j = 0; j < n; j++)
			want += codes[j] == codes[i];
		ck_assert_msg(json_integer_value(json_object_get(counts, code_name(codes[i]))) == want,
			      "stats count %lld %s, the table %lld",
			      json_integer_value(json_object_get(counts, code_name(codes[i]))),
			      code_name(codes[i]), want);
	}
	total = json_integer_value(json_object_get(counts, "total"));
	ck_assert_int_eq(total, (long long)n);
}

START_TEST(test_documented_hello_refusals)
{
	const size_t n = sizeof(hello_cases) / sizeof(hello_cases[0]);
	int32_t codes[sizeof(hello_cases) / sizeof(hello_cases[0])];
	struct rawc holder, second, third = { .ring.sock_fd = -1 };
	struct daemon d;
	json_t *counts;

	daemon_start(&d, "[tmemd]\nlocal-max-clients-per-uid = 3\n", NULL);
	/* "holder" attached for -EEXIST; with "second" and, for the -EUSERS
	 * case, "third", the uid is at its limit of 3. */
	ck_assert_int_eq(rawc_connect(&holder, d.sock, "holder"), 0);
	ck_assert_int_eq(rawc_connect(&second, d.sock, "second"), 0);
	for (size_t i = 0; i < n; i++) {
		if (hello_cases[i].fill_uid)
			ck_assert_int_eq(rawc_connect(&third, d.sock, "third"), 0);
		codes[i] = send_case(&d, &hello_cases[i]);
		ck_assert_msg(codes[i] == hello_cases[i].code, "%s: %d (%s), documented %d (%s)",
			      hello_cases[i].what, codes[i], code_name(codes[i]),
			      hello_cases[i].code, code_name(hello_cases[i].code));
	}
	counts = refusal_counts(&d, "handshakes");
	expect_counts(counts, codes, n);
	json_decref(counts);
	tmem_raw_disconnect(&holder.ring);
	tmem_raw_disconnect(&second.ring);
	if (third.ring.sock_fd >= 0)
		tmem_raw_disconnect(&third.ring);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

/* ---- requests ---- */

struct req_case {
	const char *what;
	uint32_t op;
	int32_t pool;           /* POOL_OWN: the client's pool */
	uint32_t slot;          /* 0: TMEM_NO_SLOT */
	uint32_t flags, rsvd, index;
	uint64_t oid0;
	int32_t code;
	bool ok;                /* a pool id (>= 0), not code */
	bool bad_request;       /* counted in refusals.requests */
};

#define POOL_OWN 1000

static const struct req_case req_cases[] = {
	{ "unknown operation", .op = 99, .pool = POOL_OWN, .code = -ENOSYS, .bad_request = true },
	{ "operation 3 (Xen's, unused)", .op = 3, .pool = POOL_OWN, .code = -ENOSYS,
	  .bad_request = true },
	{ "reserved field set", .op = TMEM_OP_FLUSH_PAGE, .pool = POOL_OWN, .rsvd = 1,
	  .code = -EINVAL, .bad_request = true },
	{ "flags on a put", .op = TMEM_OP_PUT_PAGE, .pool = POOL_OWN, .slot = 1, .flags = 1,
	  .code = -EINVAL, .bad_request = true },
	{ "slot on a flush", .op = TMEM_OP_FLUSH_PAGE, .pool = POOL_OWN, .slot = 1,
	  .code = -EINVAL, .bad_request = true },
	{ "index on a flush-object", .op = TMEM_OP_FLUSH_OBJECT, .pool = POOL_OWN, .index = 1,
	  .code = -EINVAL, .bad_request = true },
	{ "oid on a destroy", .op = TMEM_OP_DESTROY_POOL, .pool = POOL_OWN, .oid0 = 1,
	  .code = -EINVAL, .bad_request = true },
	{ "unknown pool flag", .op = TMEM_OP_NEW_POOL, .flags = 1u << 20, .code = -EINVAL,
	  .bad_request = true },
	{ "slot out of range (put)", .op = TMEM_OP_PUT_PAGE, .pool = POOL_OWN, .slot = 4,
	  .code = -ERANGE, .bad_request = true },
	{ "slot out of range (get)", .op = TMEM_OP_GET_PAGE, .pool = POOL_OWN, .slot = 0xfffffffe,
	  .code = -ERANGE, .bad_request = true },
	{ "pool never given", .op = TMEM_OP_GET_PAGE, .pool = 7, .slot = 1, .code = -ENOENT,
	  .bad_request = true },
	{ "negative pool", .op = TMEM_OP_FLUSH_PAGE, .pool = -1, .code = -ENOENT,
	  .bad_request = true },
	{ "pool past the largest id", .op = TMEM_OP_FLUSH_PAGE, .pool = 1 << 20, .code = -ENOENT,
	  .bad_request = true },
	/* tmemd.conf(5): a shared pool without an authorisation */
	{ "shared pool, not authorised", .op = TMEM_OP_NEW_POOL, .flags = TMEM_POOL_SHARED,
	  .oid0 = 0x1234, .code = -EPERM },
	{ "a second private pool, within the limit", .op = TMEM_OP_NEW_POOL, .ok = true },
	/* tmemd.conf(5): the uid's pools at local-max-pools-per-uid (2) */
	{ "uid at its pool limit", .op = TMEM_OP_NEW_POOL, .code = -ENOSPC },
};

START_TEST(test_documented_request_refusals)
{
	const size_t n = sizeof(req_cases) / sizeof(req_cases[0]);
	int32_t codes[sizeof(req_cases) / sizeof(req_cases[0])];
	size_t nbad = 0;
	struct tmem_req r;
	struct tmem_rsp rsp;
	struct daemon d;
	struct rawc c;
	int32_t pool;
	json_t *counts;

	daemon_start(&d, "[tmemd]\nlocal-max-pools-per-uid = 2\n", NULL);
	ck_assert_int_eq(rawc_connect(&c, d.sock, "requests"), 0);
	rawc_req(&r, TMEM_OP_NEW_POOL, 0);
	r.flags = tmem_pool_flags(TMEM_POOL_PERSIST);
	ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
	pool = rsp.ret;
	ck_assert_int_ge(pool, 0);
	for (size_t i = 0; i < n; i++) {
		const struct req_case *rc = &req_cases[i];

		rawc_req(&r, rc->op, rc->pool == POOL_OWN ? pool : rc->pool);
		r.id = i + 1;
		if (rc->slot)
			r.slot = rc->slot;
		r.flags = rc->flags | (rc->op == TMEM_OP_NEW_POOL ? tmem_pool_flags(0) : 0);
		r.rsvd[2] = rc->rsvd;
		r.index = rc->index;
		r.oid[0] = rc->oid0;
		ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
		ck_assert_uint_eq(rsp.id, i + 1);
		ck_assert_msg(rc->ok ? rsp.ret >= 0 : rsp.ret == rc->code, "%s: %d (%s), documented %d (%s)", rc->what,
			      rsp.ret, code_name(rsp.ret), rc->code, code_name(rc->code));
		if (rc->bad_request)
			codes[nbad++] = rsp.ret;
	}
	/* The client is still served after all that. */
	rawc_req(&r, TMEM_OP_FLUSH_OBJECT, pool);
	ck_assert_int_eq(rawc_call(&c, &r, &rsp), 0);
	ck_assert_int_eq(rsp.ret, 0);
	counts = refusal_counts(&d, "requests");
	expect_counts(counts, codes, nbad);
	json_decref(counts);
	tmem_raw_disconnect(&c.ring);
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

/* ---- the flood ---- */

#define FLOOD 10000
#define FLOOD_MAX_LINES 100

static unsigned count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned n = 0;
	int ch;

	ck_assert_ptr_nonnull(f);
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

static bool log_has(const char *path, const char *what)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	bool found = false;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

START_TEST(test_refusal_flood_log_bounded)
{
	struct tmem_local_hello h;
	unsigned before, after;
	int stop[2], st;
	struct daemon d;
	json_t *counts;
	pid_t kid;

	daemon_start(&d, NULL, NULL);
	ck_assert_int_eq(pipe(stop), 0);
	kid = fork();
	ck_assert_int_ge(kid, 0);
	if (kid == 0) {
		close(stop[1]);
		_exit(harness_honest(d.sock, "honest", stop[0]));
	}
	close(stop[0]);
	harness_msleep(100);
	before = count_lines(d.log);
	/* Version 1's hello, refused (-EPROTO) 10,000 times, from one uid. */
	rawc_good_hello(&h, "flood");
	h.version = 1;
	for (unsigned i = 0; i < FLOOD; i++)
		ck_assert_int_eq(rawc_hello(d.sock, &h, NULL, 0), -EPROTO);
	close(stop[1]);
	ck_assert_int_eq(waitpid(kid, &st, 0), kid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "the honest client saw errors (status %d)", WEXITSTATUS(st));
	counts = refusal_counts(&d, "handshakes");
	ck_assert_int_eq(json_integer_value(json_object_get(counts, "EPROTO")), FLOOD);
	ck_assert_int_eq(json_integer_value(json_object_get(counts, "total")), FLOOD);
	json_decref(counts);
	after = count_lines(d.log);
	fprintf(stderr, "%u refused handshakes: %u log lines\n", FLOOD, after - before);
	if (after - before > FLOOD_MAX_LINES)
		daemon_dump_log(&d);
	ck_assert_msg(after - before <= FLOOD_MAX_LINES, "%u refused handshakes: %u log lines",
		      FLOOD, after - before);
	ck_assert_uint_ge(after - before, 5); /* the burst, at least */
	/* The next interval's first line says how many were held back:
	 * all but the uid's burst of 5 (ratelimit.h). */
	harness_msleep(5200);
	ck_assert_int_eq(rawc_hello(d.sock, &h, NULL, 0), -EPROTO);
	harness_msleep(100);
	ck_assert_msg(log_has(d.log, "9995 similar messages suppressed"),
		      "no \"9995 similar messages suppressed\" line");
	ck_assert_int_eq(daemon_stop(&d), 0);
}
END_TEST

static Suite *refusals_suite(void)
{
	Suite *s = suite_create("refusals");
	TCase *tc = tcase_create("documented");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_documented_hello_refusals);
	tcase_add_test(tc, test_documented_request_refusals);
	tcase_add_test(tc, test_refusal_flood_log_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return tmem_test_main(refusals_suite(), 0);
}
