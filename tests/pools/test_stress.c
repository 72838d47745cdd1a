/*
 * pools/: multi-threaded stress.  Threads race puts, gets, flushes,
 * evictions, pool destroy/re-create and arena resizes on the same and on
 * different pools; every page read back must be exactly a page that was
 * written to that handle (and, where no eviction can happen, the latest
 * one).  Also run under ThreadSanitizer.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/test_main.h"
#include "pool_helpers.h"

#define MAX_KEYS 512

static struct tmem_store *s;
static atomic_bool stop;
static atomic_int failures;

/* A page that names its own handle and version: self-checking. */
static void stamp_page(uint8_t *page, uint64_t key, uint64_t ver)
{
	page_fill(page, key * 1000003 + ver);
	memcpy(page, &key, 8);
	memcpy(page + 8, &ver, 8);
}

static bool page_ok(const uint8_t *page, uint64_t key, uint64_t *ver)
{
	uint64_t k;

	memcpy(&k, page, 8);
	memcpy(ver, page + 8, 8);
	if (k != key)
		return false;
	{
		uint8_t ref[PG];

		stamp_page(ref, key, *ver);
		return memcmp(ref, page, PG) == 0;
	}
}

static void stress_fail(const char *what, uint64_t key)
{
	fprintf(stderr, "stress: %s (key %llu)\n", what, (unsigned long long)key);
	atomic_fetch_add(&failures, 1);
}

struct worker {
	pthread_t th;
	struct tmem_client *c;
	int pool;
	bool persistent; /* nothing evicts it: checked again at the end */
	bool exclusive;  /* private ephemeral: a hit removes the page */
	bool churn;      /* another thread destroys and re-creates this pool */
	uint64_t key_base;
	unsigned nkeys;   /* keys this worker uses (default 64) */
	unsigned per_obj; /* pages per object (default 8) */
	uint64_t ops;
	uint64_t rng;
	uint64_t ver[MAX_KEYS];
};

static uint64_t wrand(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static void worker_get(struct worker *w, unsigned k, uint8_t *page)
{
	struct tmem_oid oid = mkoid(w->key_base + k / w->per_obj, 1, 2);
	uint64_t key = w->key_base + k, ver;
	int ret = store_get_page(w->c, w->pool, &oid, k % w->per_obj, page);

	if (ret < 0 && !(w->churn && ret == -ENOENT))
		stress_fail("get error", key);
	if (ret != 1)
		return;
	/* Each handle has one writer, so a hit is exactly the latest put. */
	if (!page_ok(page, key, &ver))
		stress_fail("get returned a page never put to this handle", key);
	else if (ver != w->ver[k])
		stress_fail("get returned a stale version", key);
	if (w->exclusive)
		w->ver[k] = 0; /* nothing may come back until the next put */
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t page[PG];

	for (uint64_t n = 0; n < w->ops; n++) {
		unsigned k = wrand(w) % w->nkeys, r = wrand(w) % 10;
		unsigned first = k - k % w->per_obj;
		struct tmem_oid oid = mkoid(w->key_base + k / w->per_obj, 1, 2);
		int ret;

		if (r < 5) {
			stamp_page(page, w->key_base + k, w->ver[k] + 1);
			ret = store_put_page(w->c, w->pool, &oid, k % w->per_obj, page,
					     TMEM_PUT_CAP(TMEM_NO_CAP));
			if (ret == 1)
				w->ver[k]++;
			else if (ret == -ENOSPC)
				w->ver[k] = 0; /* the old copy was removed */
			else if (!(w->churn && ret == -ENOENT))
				stress_fail("put error", w->key_base + k);
		} else if (r < 9) {
			worker_get(w, k, page);
		} else if (wrand(w) % 4) {
			if (store_flush_page(w->c, w->pool, &oid, k % w->per_obj) >= 0)
				w->ver[k] = 0;
		} else if (store_flush_object(w->c, w->pool, &oid) >= 0) {
			for (unsigned j = first; j < first + w->per_obj; j++)
				w->ver[j] = 0;
		}
	}
	return NULL;
}

static void *evictor_main(void *arg)
{
	struct tmem_client **cs = arg;

	while (!atomic_load(&stop))
		for (int i = 0; cs[i]; i++)
			store_client_evict_oldest(cs[i]);
	return NULL;
}

static void *resizer_main(void *arg)
{
	(void)arg;
	for (unsigned n = 0; !atomic_load(&stop); n++) {
		int ret = store_resize(s, n % 2 ? 4096 : 3072);

		if (ret != 0 && ret != -EBUSY)
			stress_fail("resize error", n);
	}
	return NULL;
}

struct churn_arg {
	struct tmem_client *c;
};

static void *churner_main(void *arg)
{
	struct churn_arg *ca = arg;

	while (!atomic_load(&stop)) {
		if (store_destroy_pool(ca->c, 0) != 1 || store_new_pool(ca->c, EPH, NULL) != 0)
			stress_fail("churn", 0);
	}
	return NULL;
}

#define NWORKERS 10

START_TEST(test_stress_threads)
{
	struct tmem_uuid u = { 7, 7 };
	struct tmem_client *pers, *e1, *e2, *e3, *sh1, *sh2, *ch, *evictees[7];
	struct worker w[NWORKERS];
	struct churn_arg ca;
	pthread_t ev, rs, cht;
	uint64_t ops = test_quick() ? 3000 : 40000;

	s = mkstore(4096, 4096);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(store_client_create(s, "pers", &pers), 0);
	ck_assert_int_eq(store_client_create(s, "e1", &e1), 0);
	ck_assert_int_eq(store_client_create(s, "e2", &e2), 0);
	ck_assert_int_eq(store_client_create(s, "e3", &e3), 0);
	ck_assert_int_eq(store_client_create(s, "sh1", &sh1), 0);
	ck_assert_int_eq(store_client_create(s, "sh2", &sh2), 0);
	ck_assert_int_eq(store_client_create(s, "churn", &ch), 0);
	ck_assert_int_eq(store_new_pool(pers, PERS, NULL), 0);
	ck_assert_int_eq(store_new_pool(e1, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(e2, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(e3, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(e3, EPH, NULL), 1);
	ck_assert_int_eq(store_new_pool(ch, EPH, NULL), 0);
	store_shared_auth(s, &u, "sh1", true);
	store_shared_auth(s, &u, "sh2", true);
	ck_assert_int_eq(store_new_pool(sh1, SHR, &u), 0);
	ck_assert_int_eq(store_new_pool(sh2, SHR, &u), 0);

	/* Two threads in one persistent pool (disjoint keys), two in one
	 * ephemeral pool of one client, one alone, two on one shared pool
	 * from two clients, one on a pool being destroyed under it, and two
	 * with one page per object in two pools of one client (object
	 * chunks emptied and reused all the time, under eviction). */
	w[0] = (struct worker){ .c = pers, .persistent = true, .key_base = 0 };
	w[1] = (struct worker){ .c = pers, .persistent = true, .key_base = 1000 };
	w[2] = (struct worker){ .c = e1, .exclusive = true, .key_base = 2000 };
	w[3] = (struct worker){ .c = e1, .exclusive = true, .key_base = 3000 };
	w[4] = (struct worker){ .c = e2, .exclusive = true, .key_base = 4000 };
	w[5] = (struct worker){ .c = sh1, .key_base = 5000 };
	w[6] = (struct worker){ .c = sh2, .key_base = 6000 };
	w[7] = (struct worker){ .c = ch, .exclusive = true, .churn = true, .key_base = 7000 };
	w[8] = (struct worker){ .c = e3, .exclusive = true, .key_base = 8000,
				.nkeys = MAX_KEYS, .per_obj = 1 };
	w[9] = (struct worker){ .c = e3, .pool = 1, .exclusive = true, .key_base = 9000,
				.nkeys = MAX_KEYS, .per_obj = 1 };
	evictees[0] = e1;
	evictees[1] = e2;
	evictees[2] = e3;
	evictees[3] = ch;
	evictees[4] = store_shared_client(s);
	evictees[5] = pers;
	evictees[6] = NULL;
	atomic_store(&stop, false);
	for (int i = 0; i < NWORKERS; i++) {
		w[i].ops = ops;
		w[i].rng = 0x9e3779b97f4a7c15ull * (i + 1);
		w[i].nkeys = w[i].nkeys ? w[i].nkeys : 64;
		w[i].per_obj = w[i].per_obj ? w[i].per_obj : 8;
		ck_assert_int_eq(pthread_create(&w[i].th, NULL, worker_main, &w[i]), 0);
	}
	ca.c = ch;
	ck_assert_int_eq(pthread_create(&ev, NULL, evictor_main, evictees), 0);
	ck_assert_int_eq(pthread_create(&rs, NULL, resizer_main, NULL), 0);
	ck_assert_int_eq(pthread_create(&cht, NULL, churner_main, &ca), 0);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(w[i].th, NULL);
	atomic_store(&stop, true);
	pthread_join(ev, NULL);
	pthread_join(rs, NULL);
	pthread_join(cht, NULL);
	ck_assert_int_eq(atomic_load(&failures), 0);

	/* Quiet now: every persistent page is exactly its latest version. */
	for (int t = 0; t < 2; t++) {
		for (unsigned k = 0; k < w[t].nkeys; k++) {
			struct tmem_oid oid = mkoid(w[t].key_base + k / 8, 1, 2);
			uint8_t page[PG];
			uint64_t ver;
			int ret = store_get_page(pers, 0, &oid, k % 8, page);

			ck_assert_int_eq(ret, w[t].ver[k] ? 1 : 0);
			if (ret == 1) {
				ck_assert(page_ok(page, w[t].key_base + k, &ver));
				ck_assert_uint_eq(ver, w[t].ver[k]);
			}
		}
	}
	store_destroy(s);
}
END_TEST

static struct tmem_client *cap_client;
static atomic_int cap_ok, cap_quota;

static void *cap_main(void *arg)
{
	uintptr_t t = (uintptr_t)arg;
	uint8_t page[PG];

	page_fill(page, t);
	for (uint32_t i = 0; i < 400; i++) {
		struct tmem_oid oid = mkoid(t, i, 0);
		int ret = store_put_page(cap_client, 0, &oid, 0, page, TMEM_PUT_CAP(1000));

		if (ret == 1)
			atomic_fetch_add(&cap_ok, 1);
		else if (ret == -EDQUOT)
			atomic_fetch_add(&cap_quota, 1);
	}
	return NULL;
}

START_TEST(test_stress_cap_no_overshoot)
{
	pthread_t th[4];
	struct tmem_page_counts pc;

	s = mkstore(2048, 2048);
	ck_assert_int_eq(store_client_create(s, "cap", &cap_client), 0);
	ck_assert_int_eq(store_new_pool(cap_client, EPH, NULL), 0);
	ck_assert_int_eq(store_new_pool(cap_client, EPH, NULL), 1);
	for (uintptr_t t = 0; t < 4; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, cap_main, (void *)t), 0);
	for (int t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
	store_client_page_counts(cap_client, &pc);
	ck_assert_int_eq(atomic_load(&cap_ok), 1000);
	ck_assert_int_eq(atomic_load(&cap_quota), 600);
	ck_assert_uint_eq(pc.ephemeral, 1000);
	store_destroy(s);
}
END_TEST

static Suite *stress_suite(void)
{
	Suite *suite = suite_create("pools-stress");
	TCase *tc = tcase_create("threads");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_stress_threads);
	tcase_add_test(tc, test_stress_cap_no_overshoot);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return tmem_test_main(stress_suite(), 0);
}
