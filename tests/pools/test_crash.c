/*
 * pools/: kill -9 at random instants of put, flush, evict, resize, pool
 * destroy, client teardown, spill to the host tier and read-back, then
 * recover and check every handle.  The arena has a host tier (a second
 * memfd), and persistent pages move there and back all along: a put or a
 * flush of a spilled page frees its units, and the next spill reuses them.
 *
 * Each round a child adopts the arena in a memfd, claims client "a" (a
 * persistent pool 0 and an ephemeral pool 1) and runs random ops on it,
 * and a scratch client "t" that is created, filled and torn down over and
 * over.  Before an op the child logs it (in a shared log), after it the
 * result.  The parent SIGKILLs it at a random moment, adopts the arena
 * and checks each handle against the log:
 *   - an acknowledged persistent put is there, with its bytes;
 *   - nothing is ever wrong or stale: a page present is the last one put
 *     there, or the one the op in flight was putting;
 *   - client "a" is always claimed back, never started over.
 * The next round goes on from the recovered arena.
 *
 * Random timing rarely lands inside the few instructions between two
 * commit stores, so a second test stops the child (ptrace) just before an
 * op of a chosen kind, single-steps it a random number of instructions
 * and kills it there: kill -9 at any instruction, literally.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "durable_helpers.h"
#include "pool_helpers.h"
#include "test_pools.h"

#define NOID 4u
#define NIDX 32u
#define NH (NOID * NIDX)          /* handles per pool */
#define MAXE (1u << 18)           /* log entries per round */
#define MAGIC 0x746d656d43524153ull
#define POOL_T 2                  /* the scratch client's pool 0, in the model */

enum op { OP_PUT, OP_FLUSH, OP_FLUSH_OBJ, OP_GET, OP_EVICT, OP_RESIZE,
	  OP_T_CREATE, OP_T_POOL, OP_T_DESTROY_POOL, OP_T_DESTROY, OP_COMPACT,
	  OP_RELEASE, OP_SPILL };

#define TIER_BYTES (2u << 20)     /* the host tier: room for every page */
#define FORCED_OPS 12u            /* kinds of op step mode single-steps into */

struct logent {
	uint32_t op;
	int32_t pool;             /* 0, 1, or POOL_T */
	uint32_t h;               /* handle: oid * NIDX + index */
	int32_t ret;
	uint64_t seq;
	_Atomic uint32_t done;
};

struct shared {
	_Atomic uint32_t n;       /* entries started */
	_Atomic uint32_t ready;
	uint32_t child_errors;    /* wrong bytes the child itself saw */
	uint32_t stop_at;         /* step mode: stop before this op (0: free run) */
	uint32_t force_op;        /* step mode: which kind of op that is */
	uint32_t started_over;    /* the child found no "a" to claim */
	uint64_t next_seq;
	uint64_t tier_pages_seen;  /* pages found in the tier after each kill, summed */
	uint64_t readback_errors;
	uint32_t killed_in_spill, killed_in_get; /* rounds the kill landed in one */
	int64_t want[3][NH];      /* the model at the start of the round: seq or -1 */
	struct logent e[MAXE];
};

static const struct tmem_ident ID_A = { { 'A' } }, ID_T = { { 'T' } };

/* A same-filled page's word: tagged, and (pool, h, seq) in it. */
static uint64_t same_word(int32_t pool, uint32_t h, uint64_t seq)
{
	return 0xa5ull << 56 | (uint64_t)pool << 52 | (uint64_t)h << 40 | (seq & 0xffffffffffull);
}

/*
 * Page contents of many compressed sizes: every 7th put is same-filled
 * (stored as its word), the rest a header, a random run of a length drawn
 * from the seq (so from a few bytes compressed to incompressible) and
 * zeros, so that a compressed store's spans of every class see puts,
 * flushes and evictions.
 */
static void content(uint8_t *pg, int32_t pool, uint32_t h, uint64_t seq)
{
	uint64_t *w = (uint64_t *)pg;
	uint32_t run = (uint32_t)((seq * 2654435761u) % PG) & ~7u;

	if (seq % 7 == 3) {
		for (unsigned i = 0; i < PG / 8; i++)
			w[i] = same_word(pool, h, seq);
		return;
	}
	page_fill_random(pg, seq * 7919 + h * 31 + (uint64_t)pool);
	memset(pg + 24 + run, 0, PG - 24 - (run < PG - 24 ? run : PG - 24));
	w[0] = MAGIC;
	w[1] = (uint64_t)pool << 32 | h;
	w[2] = seq;
}

/* The seq a page holds, or -2 when it is not a page of (pool, h) at all. */
static int64_t page_seq(const uint8_t *pg, int32_t pool, uint32_t h)
{
	const uint64_t *w = (const uint64_t *)pg;
	uint8_t ref[PG];
	uint64_t seq;

	if (w[0] >> 56 == 0xa5 && w[0] == w[PG / 8 - 1]) {
		seq = w[0] & 0xffffffffffull;
		content(ref, pool, h, seq);
		return memcmp(ref, pg, PG) == 0 ? (int64_t)seq : -2;
	}
	if (w[0] != MAGIC || w[1] != ((uint64_t)pool << 32 | h))
		return -2;
	content(ref, pool, h, w[2]);
	return memcmp(ref, pg, PG) == 0 ? (int64_t)w[2] : -2;
}

static struct tmem_oid hoid(uint32_t h)
{
	return mkoid(h / NIDX, 0x5eed, 0);
}

/* ---- the child ---------------------------------------------------------- */

struct child {
	struct shared *sh;
	struct tmem_store *s;
	struct tmem_client *a, *t;
	int64_t want[3][NH];
	uint64_t rng;
	bool stop_next;           /* step mode: stop before the next store call */
};

/* Step mode: stop right before the store call, so that the parent's
 * single steps count instructions of the store, not of the test. */
static void stop_point(struct child *c)
{
	if (!c->stop_next)
		return;
	c->stop_next = false;
	raise(SIGSTOP);
}

static uint32_t rnd(struct child *c, uint32_t n)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return (uint32_t)(c->rng % n);
}

static struct logent *log_start(struct child *c, uint32_t op, int32_t pool, uint32_t h)
{
	uint32_t i = atomic_load(&c->sh->n);
	struct logent *e = &c->sh->e[i];

	if (i + 1 >= MAXE)
		_exit(0); /* a long round: end it as if killed between ops */
	e->op = op;
	e->pool = pool;
	e->h = h;
	e->seq = c->sh->next_seq++;
	atomic_store(&e->done, 0);
	atomic_store(&c->sh->n, i + 1);
	return e;
}

static void log_done(struct logent *e, int ret)
{
	e->ret = ret;
	atomic_store(&e->done, 1);
}

static void child_put(struct child *c, int32_t pool, uint32_t h)
{
	struct tmem_client *cl = pool == POOL_T ? c->t : c->a;
	struct logent *e = log_start(c, OP_PUT, pool, h);
	struct tmem_oid o = hoid(h);
	uint8_t pg[PG];
	int ret;

	content(pg, pool, h, e->seq);
	stop_point(c);
	ret = store_put_page(cl, pool == POOL_T ? 0 : pool, &o, h % NIDX, pg, TMEM_PUT_CAP(TMEM_NO_CAP));
	c->want[pool][h] = ret == 1 ? (int64_t)e->seq : -1;
	log_done(e, ret);
}

static void child_get(struct child *c, int32_t pool, uint32_t h)
{
	struct logent *e = log_start(c, OP_GET, pool, h);
	struct tmem_oid o = hoid(h);
	uint8_t pg[PG];
	int ret;

	stop_point(c);
	ret = store_get_page(c->a, pool, &o, h % NIDX, pg);

	if (ret == 1 && page_seq(pg, pool, h) != c->want[pool][h])
		c->sh->child_errors++;
	if (ret == 0 && pool == 0 && c->want[0][h] >= 0)
		c->sh->child_errors++;
	if (pool == 1)
		c->want[1][h] = -1;
	log_done(e, ret);
}

static void child_flush(struct child *c, int32_t pool, uint32_t h, bool object)
{
	struct logent *e = log_start(c, object ? OP_FLUSH_OBJ : OP_FLUSH, pool, h);
	struct tmem_oid o = hoid(h);
	int ret;

	stop_point(c);
	ret = object ? store_flush_object(c->a, pool, &o)
		     : store_flush_page(c->a, pool, &o, h % NIDX);

	for (uint32_t i = 0; i < NH; i++)
		if (i == h || (object && i / NIDX == h / NIDX))
			c->want[pool][i] = -1;
	log_done(e, ret);
}

static void child_misc(struct child *c, uint32_t op)
{
	static const uint32_t sizes[] = { 330, 360, 420, 600 };
	struct logent *e = log_start(c, op, 1, 0);
	int ret = 0;

	stop_point(c);
	if (op == OP_EVICT)
		ret = (int)store_client_evict_oldest_n(c->a, 1 + rnd(c, 8));
	else if (op == OP_COMPACT)
		ret = (int)store_compact(c->s);
	else if (op == OP_RELEASE)
		/* Punches free frames out of the file (issue 28). */
		ret = (int)store_release_cold(c->s, rnd(c, 2) ? 0 : 8);
	else if (op == OP_SPILL)
		/* Persistent pages to the host tier (issue 29); in step mode
		 * one or two, so the steps reach the commit. */
		ret = (int)store_spill(c->s, c->sh->stop_at ? 1 + rnd(c, 2) : 1 + rnd(c, 64));
	else
		ret = store_resize(c->s, sizes[rnd(c, 4)]);
	log_done(e, ret);
}

/* The scratch client's life: create, pool, puts, destroy pool, teardown. */
static void child_scratch(struct child *c)
{
	struct logent *e;
	int ret;

	if (!c->t) {
		e = log_start(c, OP_T_CREATE, POOL_T, 0);
		ret = store_client_create_ident(c->s, "t", &ID_T, &c->t);
		log_done(e, ret);
		e = log_start(c, OP_T_POOL, POOL_T, 0);
		log_done(e, store_new_pool(c->t, PERS, NULL));
		return;
	}
	switch (rnd(c, 12)) {
	case 0:
		e = log_start(c, OP_T_DESTROY_POOL, POOL_T, 0);
		stop_point(c);
		ret = store_destroy_pool(c->t, 0);
		for (uint32_t i = 0; i < NH; i++)
			c->want[POOL_T][i] = -1;
		log_done(e, ret);
		e = log_start(c, OP_T_POOL, POOL_T, 0);
		log_done(e, store_new_pool(c->t, PERS, NULL));
		break;
	case 1:
		e = log_start(c, OP_T_DESTROY, POOL_T, 0);
		stop_point(c);
		store_client_destroy(c->t);
		c->t = NULL;
		for (uint32_t i = 0; i < NH; i++)
			c->want[POOL_T][i] = -1;
		log_done(e, 0);
		break;
	default:
		child_put(c, POOL_T, rnd(c, NH));
	}
}

static void child_attach(struct child *c)
{
	int ret = store_client_claim(c->s, "a", &ID_A, &c->a);

	if (ret == -ENOENT) {
		if (c->sh->next_seq > 1)
			c->sh->started_over++;
		if (store_client_create_ident(c->s, "a", &ID_A, &c->a) ||
		    store_new_pool(c->a, PERS, NULL) != 0 || store_new_pool(c->a, EPH, NULL) != 1)
			_exit(3);
		for (uint32_t i = 0; i < NH; i++)
			c->want[0][i] = c->want[1][i] = -1;
	} else if (ret) {
		_exit(4);
	}
	/* The scratch client from the last round goes: it never comes back. */
	(void)store_drop_detached(c->s, "t");
	for (uint32_t i = 0; i < NH; i++)
		c->want[POOL_T][i] = -1;
}

/* A handle of pool that holds a page, if any: replacing is the hard case. */
static uint32_t full_handle(struct child *c, int32_t pool)
{
	uint32_t h = rnd(c, NH);

	for (uint32_t i = 0; i < NH; i++, h = (h + 1) % NH)
		if (c->want[pool][h] >= 0)
			return h;
	return h;
}

/* Step mode: the op the parent single-steps through. */
static void child_forced_op(struct child *c)
{
	c->stop_next = true;
	switch (c->sh->force_op % FORCED_OPS) {
	case 0: child_put(c, 0, full_handle(c, 0)); break;
	case 1: child_put(c, (int32_t)rnd(c, 2), rnd(c, NH)); break;
	case 2: child_flush(c, 0, full_handle(c, 0), false); break;
	case 3: child_flush(c, 0, full_handle(c, 0), true); break;
	case 4: child_get(c, 1, full_handle(c, 1)); break;
	case 5: child_misc(c, OP_EVICT); break;
	case 6: child_misc(c, c->sh->force_op / FORCED_OPS % 2 ? OP_RELEASE : OP_RESIZE); break;
	case 7: child_put(c, 1, full_handle(c, 1)); break;
	case 10: child_misc(c, OP_SPILL); break;
	case 11:
		/* A read-back: spill, then step into a get of pool 0. */
		c->stop_next = false;
		child_misc(c, OP_SPILL);
		c->stop_next = true;
		child_get(c, 0, full_handle(c, 0));
		break;
	case 8:
		/* Fragment the spans (every other page goes), then step
		 * into the compaction that moves the rest. */
		c->stop_next = false;
		for (uint32_t h = 0; h < NH; h += 2)
			child_flush(c, (int32_t)(h / 2 % 2), h, false);
		c->stop_next = true;
		child_misc(c, OP_COMPACT);
		break;
	default:
		c->stop_next = false;
		if (!c->t)
			child_scratch(c);
		for (int i = 0; i < 6; i++)
			child_put(c, POOL_T, rnd(c, NH));
		c->stop_next = true;
		while (c->t)
			child_scratch(c); /* stops at the pool destroy or the teardown */
	}
}

static struct tmem_store_config crash_config(int tier)
{
	struct tmem_store_config sc = { .arena_bytes = 360 * PG,
					.max_arena_bytes = DURABLE_MAX_FRAMES * PG,
					.compress = test_compress(),
					.tier_fd = tier, .tier_bytes = TIER_BYTES };

	return sc;
}

static void child_run(struct shared *sh, int fd, int tier, uint64_t seed)
{
	struct tmem_store_config sc = crash_config(tier);
	struct child c = { .sh = sh, .rng = seed | 1 };

	if (store_open(&sc, fd, &c.s, NULL, 0))
		_exit(2);
	memcpy(c.want, sh->want, sizeof(c.want));
	child_attach(&c);
	if (sh->stop_at && ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		_exit(5);
	atomic_store(&sh->ready, 1);
	for (uint32_t k = 1;; k++) {
		uint32_t r = rnd(&c, 100), pool = rnd(&c, 2), h = rnd(&c, NH);

		if (k == sh->stop_at) {
			child_forced_op(&c);
			continue;
		}
		if (r < 50)
			child_put(&c, (int32_t)pool, h);
		else if (r < 60)
			child_get(&c, (int32_t)pool, h);
		else if (r < 68)
			child_flush(&c, (int32_t)pool, h, false);
		else if (r < 70)
			child_flush(&c, (int32_t)pool, h, true);
		else if (r < 75)
			child_misc(&c, OP_EVICT);
		else if (r < 76)
			child_misc(&c, OP_RESIZE);
		else if (r < 77)
			child_misc(&c, OP_COMPACT);
		else if (r < 79)
			child_misc(&c, OP_RELEASE);
		else if (r < 83)
			child_misc(&c, OP_SPILL);
		else
			child_scratch(&c);
	}
}

/* ---- the parent ---------------------------------------------------------- */

/* What a handle may hold after the round: the model's seq, or also (for
 * the op in flight) the other outcome; absence where it is allowed. */
struct allowed {
	int64_t want[3][NH];
	int64_t alt[3][NH];       /* -3: none */
	bool t_alive;
};

static bool touches(const struct logent *e, int32_t pool, uint32_t h)
{
	if (e->pool != pool)
		return false;
	switch (e->op) {
	case OP_PUT:
	case OP_FLUSH:
	case OP_GET:
		return e->h == h;
	case OP_FLUSH_OBJ:
		return e->h / NIDX == h / NIDX;
	case OP_T_DESTROY_POOL:
	case OP_T_DESTROY:
		return true;
	default:
		return false;
	}
}

static void apply(struct allowed *m, const struct logent *e)
{
	for (uint32_t h = 0; h < NH; h++) {
		if (!touches(e, e->pool, h))
			continue;
		if (e->op == OP_PUT)
			m->want[e->pool][h] = e->ret == 1 ? (int64_t)e->seq : -1;
		else if (e->op != OP_GET || e->pool == 1)
			m->want[e->pool][h] = -1;
	}
	if (e->op == OP_T_DESTROY)
		m->t_alive = false;
	if (e->op == OP_T_CREATE && e->ret == 0)
		m->t_alive = true;
}

static void model_from_log(const struct shared *sh, struct allowed *m)
{
	uint32_t n = atomic_load(&sh->n);

	memcpy(m->want, sh->want, sizeof(m->want));
	for (uint32_t p = 0; p < 3; p++)
		for (uint32_t h = 0; h < NH; h++)
			m->alt[p][h] = -3;
	m->t_alive = false;
	for (uint32_t i = 0; i < n; i++) {
		const struct logent *e = &sh->e[i];

		if (atomic_load(&e->done)) {
			apply(m, e);
			continue;
		}
		/* In flight: its new outcome is allowed too, and so is absence. */
		for (uint32_t h = 0; h < NH; h++)
			if (touches(e, e->pool, h))
				m->alt[e->pool][h] = e->op == OP_PUT ? (int64_t)e->seq : -1;
		if (e->op == OP_T_CREATE)
			m->t_alive = true; /* may or may not have happened */
	}
}

struct verdict {
	unsigned lost, wrong, present;
};

static void check_handle(struct tmem_client *cl, int32_t pool, int32_t id, uint32_t h,
			 const struct allowed *m, struct verdict *v)
{
	struct tmem_oid o = hoid(h);
	uint8_t pg[PG];
	int ret = cl ? store_get_page(cl, id, &o, h % NIDX, pg) : 0;
	int64_t want = m->want[pool][h], alt = m->alt[pool][h], got;

	if (ret == 1) {
		v->present++;
		got = page_seq(pg, pool, h);
		if (got != want && got != alt)
			v->wrong++;
		return;
	}
	/* Absent: fine for ephemeral pages, for an op in flight, or no put. */
	if (pool != 1 && want >= 0 && alt == -3)
		v->lost++;
}

static void verify(struct tmem_store *s, struct shared *sh, struct verdict *v)
{
	struct allowed m;
	struct tmem_client *a = NULL, *t = NULL;
	int ret;

	model_from_log(sh, &m);
	ret = store_client_claim(s, "a", &ID_A, &a);
	ck_assert_msg(ret == 0 || (ret == -ENOENT && sh->next_seq <= 1 &&
				   atomic_load(&sh->n) == 0),
		      "client a not recovered: %d", ret);
	if (store_client_claim(s, "t", &ID_T, &t) == 0 && !m.t_alive)
		v->wrong++; /* a torn-down client came back */
	for (uint32_t h = 0; h < NH; h++) {
		check_handle(a, 0, 0, h, &m, v);
		check_handle(a, 1, 1, h, &m, v);
		check_handle(t, POOL_T, 0, h, &m, v);
	}
	/* The next round starts from what is there now (gets were exclusive
	 * on the ephemeral pool, and the scratch client is dropped). */
	memcpy(sh->want, m.want, sizeof(m.want));
	for (uint32_t h = 0; h < NH; h++) {
		if (m.alt[0][h] != -3) {
			struct tmem_oid o = hoid(h);
			uint8_t pg[PG];

			sh->want[0][h] = a && store_get_page(a, 0, &o, h % NIDX, pg) == 1
						 ? page_seq(pg, 0, h) : -1;
		}
		sh->want[1][h] = -1;
		sh->want[POOL_T][h] = -1; /* the next child drops "t" */
	}
}

/* Step mode: wait for the stop before the forced op, step into it, kill. */
static void step_and_kill(pid_t pid, unsigned steps)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSTOPPED(st), "child did not stop: %d", st);
	for (unsigned i = 0; i < steps; i++) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0)
			break;
		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
			break;
	}
	kill(pid, SIGKILL);
}

static struct tmem_store *crash_open(int fd, int tier)
{
	struct tmem_store_config sc = crash_config(tier);
	struct tmem_store *s = NULL;
	char why[200] = "";
	int rc = store_open(&sc, fd, &s, why, sizeof(why));

	ck_assert_msg(rc == 0, "store_open: %d %s", rc, why);
	return s;
}

static void run_round(struct shared *sh, int fd, int tier, unsigned round, unsigned steps,
		      struct verdict *v)
{
	struct tmem_store *s;
	struct timespec nap = { 0, (long)(rand() % 8000) * 1000 };
	pid_t pid;
	int st;

	atomic_store(&sh->n, 0);
	atomic_store(&sh->ready, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		child_run(sh, fd, tier, round * 0x9e3779b97f4a7c15ull + 12345);
	if (sh->stop_at) {
		step_and_kill(pid, steps);
	} else {
		for (int i = 0; i < 5000 && !atomic_load(&sh->ready); i++)
			usleep(1000);
		ck_assert_msg(atomic_load(&sh->ready), "child did not start");
		nanosleep(&nap, NULL);
		kill(pid, SIGKILL);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) == 0),
		      "child failed: status %d", st);
	{
		uint32_t n = atomic_load(&sh->n);

		/* Killed inside a spill, or a get (a read-back, if spilled). */
		if (n && !atomic_load(&sh->e[n - 1].done) && sh->e[n - 1].op == OP_SPILL)
			sh->killed_in_spill++;
		if (n && !atomic_load(&sh->e[n - 1].done) && sh->e[n - 1].op == OP_GET &&
		    sh->e[n - 1].pool == 0)
			sh->killed_in_get++;
	}
	s = crash_open(fd, tier);
	verify(s, sh, v);
	{
		struct tmem_tier_info ti;

		store_tier_info(s, &ti);
		sh->tier_pages_seen += ti.st.pages;
		sh->readback_errors += ti.read_errors;
	}
	store_destroy(s);
}

static struct shared *shared_new(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(sh, MAP_FAILED);
	sh->next_seq = 1;
	for (uint32_t p = 0; p < 3; p++)
		for (uint32_t h = 0; h < NH; h++)
			sh->want[p][h] = -1;
	return sh;
}

static void report(const char *what, unsigned rounds, const struct shared *sh,
		   const struct verdict *v)
{
	printf("%s x%u: %llu ops, %u pages checked present, lost %u, wrong or "
	       "stale %u, child saw wrong %u, started over %u; in the host tier "
	       "after the kills %llu pages in all, read-back errors %llu; killed "
	       "inside a spill %u, a persistent get %u\n",
	       what, rounds, (unsigned long long)sh->next_seq - 1, v->present,
	       v->lost, v->wrong, sh->child_errors, sh->started_over,
	       (unsigned long long)sh->tier_pages_seen,
	       (unsigned long long)sh->readback_errors, sh->killed_in_spill,
	       sh->killed_in_get);
	/* The short runs (TMEM_TEST_QUICK: valgrind's, where a round may
	 * end before any spill commits) only check that nothing is lost. */
	if (!getenv("TMEM_TEST_QUICK")) {
		ck_assert_uint_gt(sh->tier_pages_seen, 0);
		if (sh->stop_at)
			ck_assert_uint_gt(sh->killed_in_spill, 0);
	}
	ck_assert_uint_eq(sh->readback_errors, 0);
	ck_assert_uint_eq(v->lost, 0);
	ck_assert_uint_eq(v->wrong, 0);
	ck_assert_uint_eq(sh->child_errors, 0);
	ck_assert_uint_eq(sh->started_over, 0);
	ck_assert_uint_gt(v->present, 0);
}

/* rounds rounds; stepped: stop before an op and single-step into it. */
static void kill9_rounds(const char *what, unsigned rounds, bool stepped)
{
	struct shared *sh = shared_new();
	struct verdict v = { 0 };
	int fd = durable_memfd();
	int tier = memfd_create("tmem-test-tier", MFD_CLOEXEC);

	ck_assert_int_ge(tier, 0);
	srand(stepped ? 4321 : 1234);
	for (unsigned r = 0; r < rounds; r++) {
		/* A spill copies pages before it writes and commits: more
		 * steps to get there. */
		unsigned max_steps = r % FORCED_OPS >= 10 ? 60000 : 6000;

		sh->stop_at = stepped ? 40 + (uint32_t)(rand() % 400) : 0;
		sh->force_op = r;
		run_round(sh, fd, tier, r, stepped ? (unsigned)(rand() % max_steps) : 0, &v);
	}
	close(tier);
	report(what, rounds, sh, &v);
	munmap(sh, sizeof(*sh));
	close(fd);
}

START_TEST(kill9_loses_nothing_acknowledged)
{
	kill9_rounds("kill -9 at random times", getenv("TMEM_TEST_QUICK") ? 6 : 60, false);
}
END_TEST

START_TEST(kill9_at_any_instruction)
{
	kill9_rounds("kill -9 single-stepped into an op",
		     getenv("TMEM_TEST_QUICK") ? 18 : 180, true);
}
END_TEST

void add_crash_tests(Suite *suite)
{
	TCase *tc = tcase_create("crash");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, kill9_loses_nothing_acknowledged);
	tcase_add_test(tc, kill9_at_any_instruction);
	suite_add_tcase(suite, tc);
}
