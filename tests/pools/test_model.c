/*
 * pools/: model-based random test.  Seeded random ops (new/destroy pool,
 * put with and without caps, get, flush page/object, evict, client
 * destroy, shared join, arena resize) run against the store and against a plain
 * reference model; every return value and every byte of every get must
 * agree.  The seed is printed; SEED=N replays one run.  1,000,000 ops,
 * or 20,000 with TMEM_TEST_QUICK=1.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "durable.h"
#include "pool_helpers.h"
#include "test_pools.h"

#define NCLI 3
#define NIDS 6      /* pool ids the ops name: 0..5, the model keeps <= 4 pools */
#define MAXPOOLS 4
#define NOID 12
#define NIDX 12
#define NUUID 2
/* Arena pages at the start and at most (3 x 4 x 144 + 2 x 144 = 2016
 * pages are ever stored). */
#define MODEL_ARENA 4096

enum mkind { M_NONE, M_EPH, M_PERS, M_SHARED };

struct mpages {
	uint64_t seed[NOID][NIDX];  /* 0 = absent */
	uint64_t stamp[NOID][NIDX]; /* LRU age of ephemeral pages */
};

struct mslot {
	enum mkind kind;
	int uuid;            /* M_SHARED */
	struct mpages pages; /* private pools */
};

struct mcli {
	struct tmem_client *c;
	struct mslot slot[NIDS];
};

struct model {
	struct tmem_store *s;
	struct mcli cli[NCLI];
	struct mpages shared[NUUID];
	int sharers[NUUID];
	uint64_t rng, stamp, next_seed, op;
	uint64_t arena_pages; /* current arena size */
	uint8_t buf[PG], out[PG];
};

static uint64_t rnd(struct model *m)
{
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return m->rng * 0x2545f4914f6cdd1dull;
}

static unsigned pick(struct model *m, unsigned n)
{
	return (unsigned)(rnd(m) % n);
}

static struct tmem_oid model_oid(unsigned o)
{
	/* Vary every word so hashing and comparison see the whole oid. */
	return mkoid(o % 3, o / 3 * 0x100000001ull, o & 1 ? ~0ull : 0);
}

static struct tmem_uuid model_uuid(int u)
{
	struct tmem_uuid uu = { 0xabc0 + u, 0x5eed };
	return uu;
}

static bool authorised(int cli, int u)
{
	return (cli + u) % 3 != 0;
}

static struct mpages *slot_pages(struct model *m, struct mslot *sl)
{
	return sl->kind == M_SHARED ? &m->shared[sl->uuid] : &sl->pages;
}

#define MCHECK(cond)                                                          \
	ck_assert_msg(cond, "op %" PRIu64 ": %s", m->op, #cond)
#define MEQ(got, want)                                                        \
	ck_assert_msg((got) == (want), "op %" PRIu64 ": %s = %d, model says %d",  \
		      m->op, #got, (int)(got), (int)(want))

static uint64_t count_pages(const struct mpages *p)
{
	uint64_t n = 0;

	for (int o = 0; o < NOID; o++)
		for (int i = 0; i < NIDX; i++)
			n += p->seed[o][i] != 0;
	return n;
}

static uint64_t charged(struct model *m, int cli, enum mkind kind)
{
	uint64_t n = 0;

	if (cli < 0) {
		for (int u = 0; u < NUUID; u++)
			n += m->sharers[u] ? count_pages(&m->shared[u]) : 0;
		return n;
	}
	for (int id = 0; id < NIDS; id++)
		if (m->cli[cli].slot[id].kind == kind)
			n += count_pages(&m->cli[cli].slot[id].pages);
	return n;
}

static void client_make(struct model *m, int cli)
{
	char name[8];

	snprintf(name, sizeof(name), "m%d", cli);
	MEQ(store_client_create(m->s, name, &m->cli[cli].c), 0);
}

static int lowest_free(struct mcli *mc)
{
	for (int id = 0; id < NIDS; id++)
		if (mc->slot[id].kind == M_NONE)
			return id;
	return -1;
}

static void drop_slot(struct model *m, struct mslot *sl)
{
	if (sl->kind == M_SHARED && --m->sharers[sl->uuid] == 0)
		memset(&m->shared[sl->uuid], 0, sizeof(m->shared[0]));
	memset(sl, 0, sizeof(*sl));
}

static void op_new_pool(struct model *m, int cli)
{
	struct mcli *mc = &m->cli[cli];
	unsigned k = pick(m, 20);
	int npools = 0, want;

	for (int id = 0; id < NIDS; id++)
		npools += mc->slot[id].kind != M_NONE;
	if (k == 0) { /* a bad flag: nothing changes */
		MEQ(store_new_pool(mc->c, EPH | 0x100, NULL), -EINVAL);
		return;
	}
	if (npools >= MAXPOOLS)
		return;
	want = lowest_free(mc);
	if (k < 8) {
		MEQ(store_new_pool(mc->c, EPH, NULL), want);
		mc->slot[want].kind = M_EPH;
	} else if (k < 14) {
		MEQ(store_new_pool(mc->c, PERS, NULL), want);
		mc->slot[want].kind = M_PERS;
	} else {
		int u = pick(m, NUUID);
		struct tmem_uuid uu = model_uuid(u);

		for (int id = 0; id < NIDS; id++)
			if (mc->slot[id].kind == M_SHARED && mc->slot[id].uuid == u)
				want = id;
		if (!authorised(cli, u)) {
			MEQ(store_new_pool(mc->c, SHR, &uu), -EPERM);
			return;
		}
		MEQ(store_new_pool(mc->c, SHR, &uu), want);
		if (mc->slot[want].kind == M_NONE) {
			mc->slot[want].kind = M_SHARED;
			mc->slot[want].uuid = u;
			m->sharers[u]++;
		}
	}
}

static void op_destroy_pool(struct model *m, int cli, int id)
{
	struct mslot *sl = &m->cli[cli].slot[id];

	MEQ(store_destroy_pool(m->cli[cli].c, id), sl->kind == M_NONE ? -ENOENT : 1);
	drop_slot(m, sl);
}

/* Pages stored over the whole store. */
static uint64_t used_pages(struct model *m)
{
	uint64_t n = charged(m, -1, M_EPH);

	for (int cli = 0; cli < NCLI; cli++)
		n += charged(m, cli, M_EPH) + charged(m, cli, M_PERS);
	return n;
}

static void op_put(struct model *m, int cli, int id, unsigned o, unsigned i)
{
	struct mslot *sl = &m->cli[cli].slot[id];
	struct tmem_oid oid = model_oid(o);
	uint64_t seed = ++m->next_seed, cap = TMEM_NO_CAP, have;
	struct mpages *p;
	int want = 1;

	page_fill(m->buf, seed);
	if (sl->kind == M_NONE) {
		MEQ(store_put_page(m->cli[cli].c, id, &oid, i, m->buf, TMEM_PUT_CAP(cap)), -ENOENT);
		return;
	}
	p = slot_pages(m, sl);
	have = sl->kind == M_SHARED ? charged(m, -1, M_EPH) : charged(m, cli, sl->kind);
	switch (pick(m, 8)) {
	case 0:
		cap = have; /* a new page is over the cap; a replacement is not */
		if (!p->seed[o][i])
			want = -EDQUOT;
		break;
	case 1:
		cap = have + 1;
		break;
	}
	if (want == 1 && !p->seed[o][i] && used_pages(m) >= m->arena_pages)
		want = -ENOSPC;
	if (want != -EDQUOT && test_compress().algo != TMEM_COMPRESS_OFF) {
		/* Compressed, pages take less than a frame each, or a new
		 * span of up to TMEM_ZSPAN_FRAMES: room depends on the sizes.
		 * A refusal must be real, and removes the old page. */
		struct tmem_arena_counts ac;
		int ret;

		store_arena_counts(m->s, &ac); /* a refusal frees the old page */
		ret = store_put_page(m->cli[cli].c, id, &oid, i, m->buf, TMEM_PUT_CAP(cap));
		MCHECK(ret == 1 || ret == -ENOSPC);
		if (ret == -ENOSPC) {
			MCHECK(ac.free_pages < TMEM_ZSPAN_FRAMES);
			p->seed[o][i] = 0;
			return;
		}
		want = 1;
	} else {
		MEQ(store_put_page(m->cli[cli].c, id, &oid, i, m->buf, TMEM_PUT_CAP(cap)), want);
	}
	if (want == 1) {
		p->seed[o][i] = seed;
		p->stamp[o][i] = ++m->stamp;
	}
}

static void op_get(struct model *m, int cli, int id, unsigned o, unsigned i)
{
	struct mslot *sl = &m->cli[cli].slot[id];
	struct tmem_oid oid = model_oid(o);
	struct mpages *p;
	int ret = store_get_page(m->cli[cli].c, id, &oid, i, m->out);

	if (sl->kind == M_NONE) {
		MEQ(ret, -ENOENT);
		return;
	}
	p = slot_pages(m, sl);
	MEQ(ret, p->seed[o][i] ? 1 : 0);
	if (!ret)
		return;
	MCHECK(page_check(m->out, p->seed[o][i]));
	if (sl->kind == M_EPH)
		p->seed[o][i] = 0; /* exclusive */
	else if (sl->kind == M_SHARED)
		p->stamp[o][i] = ++m->stamp;
}

static void op_flush(struct model *m, int cli, int id, unsigned o, unsigned i,
		     bool object)
{
	struct mslot *sl = &m->cli[cli].slot[id];
	struct tmem_oid oid = model_oid(o);
	struct mpages *p;
	int want = 0;

	if (sl->kind == M_NONE) {
		MEQ(object ? store_flush_object(m->cli[cli].c, id, &oid)
			   : store_flush_page(m->cli[cli].c, id, &oid, i), -ENOENT);
		return;
	}
	p = slot_pages(m, sl);
	if (!object) {
		want = p->seed[o][i] != 0;
		p->seed[o][i] = 0;
		MEQ(store_flush_page(m->cli[cli].c, id, &oid, i), want);
		return;
	}
	for (int j = 0; j < NIDX; j++) {
		want |= p->seed[o][j] != 0;
		p->seed[o][j] = 0;
	}
	MEQ(store_flush_object(m->cli[cli].c, id, &oid), want);
}

/* The model's oldest ephemeral page charged to cli (-1: the shared client). */
static uint64_t *oldest(struct model *m, int cli)
{
	uint64_t *best = NULL, best_stamp = UINT64_MAX;

	for (int k = 0; k < (cli < 0 ? NUUID : NIDS); k++) {
		struct mpages *p;

		if (cli < 0) {
			if (!m->sharers[k])
				continue;
			p = &m->shared[k];
		} else {
			if (m->cli[cli].slot[k].kind != M_EPH)
				continue;
			p = &m->cli[cli].slot[k].pages;
		}
		for (int o = 0; o < NOID; o++)
			for (int i = 0; i < NIDX; i++)
				if (p->seed[o][i] && p->stamp[o][i] < best_stamp) {
					best_stamp = p->stamp[o][i];
					best = &p->seed[o][i];
				}
	}
	return best;
}

/* Evict n pages (n == 1: the single-page call; else the batched one). */
static void op_evict(struct model *m, int cli, unsigned int n)
{
	struct tmem_client *c = cli < 0 ? store_shared_client(m->s) : m->cli[cli].c;
	unsigned int want = 0;
	uint64_t *victim;

	while (want < n && (victim = oldest(m, cli))) {
		*victim = 0;
		want++;
	}
	if (n == 1)
		MEQ(store_client_evict_oldest(c), (int)want);
	else
		MEQ(store_client_evict_oldest_n(c, n), want);
}

static void op_client_restart(struct model *m, int cli)
{
	store_client_destroy(m->cli[cli].c);
	for (int id = 0; id < NIDS; id++)
		drop_slot(m, &m->cli[cli].slot[id]);
	client_make(m, cli);
}

/* Resize the arena; shrinking moves pages, and fails while they do not fit. */
static void op_resize(struct model *m)
{
	uint64_t used = used_pages(m);
	/* Half the time near what is in use (so shrinks refuse and puts run
	 * out of room), half anywhere up to the full size. */
	uint64_t want = pick(m, 2) ? 1 + pick(m, used + used / 4 + 8)
				   : 1 + pick(m, MODEL_ARENA);

	struct tmem_arena_counts ac;
	int ret;

	if (test_compress().algo == TMEM_COMPRESS_OFF) {
		MEQ(store_resize(m->s, want), used > want ? -EBUSY : 0);
		if (used <= want)
			m->arena_pages = want;
		return;
	}
	/* Compressed: refused exactly when the frames in use do not fit. */
	ret = store_resize(m->s, want);
	MCHECK(ret == 0 || ret == -EBUSY);
	store_arena_counts(m->s, &ac);
	if (ret == 0)
		m->arena_pages = want;
	else
		MCHECK(ac.total_pages - ac.free_pages > want);
}

static void check_counts(struct model *m)
{
	struct tmem_page_counts pc;
	struct tmem_arena_counts ac;
	uint64_t eph = 0, pers = 0;

	for (int cli = 0; cli < NCLI; cli++) {
		store_client_page_counts(m->cli[cli].c, &pc);
		MEQ(pc.ephemeral, charged(m, cli, M_EPH));
		MEQ(pc.persistent, charged(m, cli, M_PERS));
		eph += pc.ephemeral;
		pers += pc.persistent;
	}
	store_client_page_counts(store_shared_client(m->s), &pc);
	MEQ(pc.ephemeral, charged(m, -1, M_EPH));
	store_arena_counts(m->s, &ac);
	MEQ(ac.ephemeral, eph + pc.ephemeral);
	MEQ(ac.persistent, pers);
	/* A raw page takes a frame; compressed ones share spans' frames or
	 * (same-filled) take none, so then only the bounds are known. */
	if (test_compress().algo == TMEM_COMPRESS_OFF)
		MEQ(ac.free_pages, ac.total_pages - ac.ephemeral - ac.persistent);
	else if (ac.ephemeral + ac.persistent == 0)
		MEQ(ac.free_pages, ac.total_pages);
	else
		MEQ(ac.free_pages <= ac.total_pages, 1);
	MEQ(ac.total_pages, m->arena_pages);
}

static void model_step(struct model *m)
{
	int cli = pick(m, NCLI), id = pick(m, NIDS);
	unsigned o = pick(m, NOID), i = pick(m, NIDX), r = pick(m, 1000);

	if (r < 20)
		op_new_pool(m, cli);
	else if (r < 27)
		op_destroy_pool(m, cli, id);
	else if (r < 500)
		op_put(m, cli, id, o, i);
	else if (r < 800)
		op_get(m, cli, id, o, i);
	else if (r < 900)
		op_flush(m, cli, id, o, i, false);
	else if (r < 940)
		op_flush(m, cli, id, o, i, true);
	else if (r < 997)
		op_evict(m, pick(m, 4) == 0 ? -1 : cli,
			 pick(m, 2) ? 1 : 2 + pick(m, 40));
	else if (r < 998)
		op_resize(m);
	else
		op_client_restart(m, cli);
}

START_TEST(test_model_random)
{
	static struct model m0;
	struct model *m = &m0;
	const char *env = getenv("SEED");
	uint64_t seed, nops = test_quick() ? 20000 : 1000000;

	seed = env ? strtoull(env, NULL, 0)
		   : (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();
	printf("pools model test: SEED=%" PRIu64 " (%" PRIu64 " ops)\n", seed, nops);
	fflush(stdout);
	memset(m, 0, sizeof(*m));
	m->rng = seed | 1;
	m->arena_pages = MODEL_ARENA;
	m->s = mkstore(MODEL_ARENA, MODEL_ARENA);
	MCHECK(m->s != NULL);
	for (int cli = 0; cli < NCLI; cli++) {
		client_make(m, cli);
		for (int u = 0; u < NUUID; u++) {
			struct tmem_uuid uu = model_uuid(u);
			char name[8];

			snprintf(name, sizeof(name), "m%d", cli);
			if (authorised(cli, u))
				MEQ(store_shared_auth(m->s, &uu, name, true), 0);
		}
	}
	for (m->op = 0; m->op < nops; m->op++) {
		model_step(m);
		if (m->op % 997 == 0)
			check_counts(m);
	}
	check_counts(m);
	store_destroy(m->s);
}
END_TEST

void add_model_tests(Suite *suite)
{
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, test_model_random);
	suite_add_tcase(suite, tc);
}
