/* SPDX-License-Identifier: MIT */
/*
 * Spilling: cold persistent pages go to the host tier, as stored (their
 * compressed bytes, or the raw page), in one write per run of adjacent
 * units, made durable with fdatasync() before any page's RAM is given
 * up.  The protocol and why it loses nothing is pools/COMMIT.md, "Host
 * tier"; in short, for a batch:
 *
 *   1. pick: under the store lock and each victim's client LRU lock, with
 *      the victim's pool trylocked (the wrong way round the lock order,
 *      as eviction does), copy its stored bytes, give it tier units and
 *      mark it copied (s->spill_mark, tier.h); a removal or a replace
 *      from here on marks it dirty.
 *   2. write: every lock dropped, pwritev() the objects.  Steps 1 and 2
 *      go on a batch at a time (the copies' buffers are reused) until the
 *      group is whole, then one fdatasync() covers it: a sync costs about
 *      as much as writing a few MiB, so one a batch would halve the rate.
 *   3. commit: under each victim's pool lock, unless it is dirty or its
 *      handle changed, one store moves it to the tier (its zs entry, or
 *      the descriptor's data for a raw page), then its RAM is freed.
 *
 * A failed write (ENOSPC, EIO) commits nothing: the units go back, the
 * pages stay in RAM, the error is counted and returned.
 *
 * Victims: the client with the most persistent pages in RAM (within its
 * spill limit) first, and in it the oldest put first, with a second
 * chance for a page got since the spiller last passed it (s->pref): a
 * page a guest reads back from swap is likely read again, and a swapped
 * out page nobody touched is the coldest there is.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "clock.h"
#include "internal.h"

/* A full device is not asked again for this long, unless units are freed
 * (each try writes until it fails). */
#define SPILL_FULL_BACKOFF_NS 1000000000ull

#define OBJ_BYTES (TMEM_ZS_HDR + TMEM_PAGE_SIZE)

struct victim {
	uint32_t page;
	uint32_t gen;
	struct tmem_pool *pool;
	uint32_t handle;          /* at copy time */
	uint64_t te;              /* the tier entry it will get */
	uint8_t *obj;             /* its copy in the batch's buffers, until written */
};

/* tier->staging: the victims of the two groups on their way, and the
 * copies of the one batch being written. */
struct staging {
	struct victim v[2][TMEM_TIER_GROUP];
	uint8_t objs[TMEM_TIER_BATCH][OBJ_BYTES];
};

/* Bytes picked by client in one store_spill(): its tier_bytes counts them
 * only once they commit (counted twice after that: a spill stops short of
 * a limit, never past it). */
struct took {
	struct {
		const struct tmem_client *c;
		uint64_t bytes;
	} c[16];
	uint32_t n;
};

struct spill {
	struct tmem_store *s;
	struct victim *v;         /* the group's (TMEM_TIER_GROUP) */
	uint8_t (*objs)[OBJ_BYTES]; /* the copies of a batch (TMEM_TIER_BATCH) */
	uint32_t n;
	uint32_t base;            /* the batch's first victim */
	int err;                  /* why picking stopped early, or 0 */
	struct took *took;
};

/*
 * Pool lock held: copy page's stored bytes into the next victim and give
 * it units; *room is what its client may still put in the tier.
 * -EDQUOT: over that; -ENOSPC: the tier is full; -EIO: damaged data.
 */
static int do_pick_page(struct spill *sp, struct tmem_pool *pool, uint32_t page,
			uint64_t *room)
{
	struct tmem_store *s = sp->s;
	struct tmem_tier *t = &s->tier;
	struct victim *v = &sp->v[sp->n];
	uint8_t *obj = sp->objs[sp->n - sp->base];
	uint32_t h = pd_handle(pd(s, page)), len, *hd = (uint32_t *)obj;
	uint8_t codec;
	const void *src;
	uint64_t unit;
	int ret;

	src = data_ops(h)->map(s, h, obj + TMEM_ZS_HDR, &len, &codec);
	if (!src)
		return -EIO;
	if (codec == TMEM_CODEC_NONE)
		len = TMEM_PAGE_SIZE;
	if (len > *room)
		return -EDQUOT;
	if (src != obj + TMEM_ZS_HDR)
		memcpy(obj + TMEM_ZS_HDR, src, len);
	hd[0] = page;
	hd[1] = (uint32_t)XXH3_64bits(obj + TMEM_ZS_HDR, len);
	pthread_mutex_lock(&t->lock);
	ret = do_tier_alloc(t, tier_units(len), &unit);
	pthread_mutex_unlock(&t->lock);
	if (ret < 0)
		return ret;
	/* Before the pool lock goes: a removal after it sees the mark. */
	__atomic_store_n(&s->spill_mark[page], SPILL_MARK_COPIED, __ATOMIC_RELAXED);
	atomic_fetch_add_explicit(&t->spilling, 1, memory_order_release);
	v->obj = obj;
	v->page = page;
	v->pool = pool;
	v->gen = pool->gen;
	v->handle = h;
	v->te = ZENT_TIER | unit | (uint64_t)len << ZENT_LEN_SHIFT |
		(uint64_t)codec << ZENT_CODEC_SHIFT;
	*room -= len;
	sp->n++;
	return 0;
}

/* c's bytes picked in this spill; NULL if it has none (add: its slot,
 * NULL when no more clients fit). */
static uint64_t *group_took(struct spill *sp, const struct tmem_client *c, bool add)
{
	struct took *tk = sp->took;

	for (uint32_t i = 0; i < tk->n; i++)
		if (tk->c[i].c == c)
			return &tk->c[i].bytes;
	if (!add || tk->n == sizeof(tk->c) / sizeof(tk->c[0]))
		return NULL;
	tk->c[tk->n].c = c;
	tk->c[tk->n].bytes = 0;
	return &tk->c[tk->n++].bytes;
}

/* What c may still put in the tier, in bytes, this spill's picks counted. */
static uint64_t client_room(struct spill *sp, const struct tmem_client *c)
{
	uint64_t max = atomic_load_explicit(&c->spill_max, memory_order_relaxed);
	uint64_t has = atomic_load_explicit(&c->tier_bytes, memory_order_relaxed);
	uint64_t *took = group_took(sp, c, false);

	has += took ? *took : 0;
	return max > has ? max - has : 0;
}

/* The client not tried yet with the most persistent pages in RAM and
 * room in the tier; store->lock held.  NULL: none. */
static struct tmem_client *do_pick_client(struct spill *sp, struct tmem_client **tried,
					  uint32_t ntried)
{
	struct tmem_store *s = sp->s;
	struct tmem_client *best = NULL;
	uint64_t best_n = 0;

	for (struct tmem_client *c = s->clients; c; c = c->next) {
		uint64_t ram = atomic_load_explicit(&c->charged[TMEM_KIND_PERS], memory_order_relaxed) -
			       atomic_load_explicit(&c->tier_pages, memory_order_relaxed);
		bool seen = false;

		for (uint32_t i = 0; i < ntried; i++)
			seen |= tried[i] == c;
		if (seen || ram <= best_n || client_room(sp, c) < TMEM_ZS_HDR + 1)
			continue;
		best = c;
		best_n = ram;
	}
	return best;
}

/*
 * Pick up to want pages of c, oldest first, store->lock held.  Returns
 * false when the tier is full (stop picking altogether).
 */
static bool do_pick_from(struct spill *sp, struct tmem_client *c, uint32_t want)
{
	struct tmem_store *s = sp->s;
	uint64_t *took = group_took(sp, c, true);
	uint64_t room = took ? client_room(sp, c) : 0, room0 = room;
	uint32_t scanned = 0, limit = 4 * (want - sp->n) + 64, busy = 0;
	uint32_t page, next;
	bool more = true, stop = false;

	pthread_mutex_lock(&c->lru_lock);
	for (page = c->plru_head; page != TMEM_NIL && sp->n < want && scanned < limit && !stop;
	     scanned++, page = next) {
		struct tmem_pool *pool = page_pool(s, page);
		uint32_t h;
		int ret;

		next = pd(s, page)->lnext;
		if (pthread_mutex_trylock(&pool->lock) != 0) {
			stop = ++busy >= TMEM_EVICT_TRIES;
			continue;
		}
		h = pd_handle(pd(s, page));
		if (__atomic_load_n(&s->spill_mark[page], __ATOMIC_RELAXED)) {
			/* Picked earlier in this group, and since removed and
			 * its descriptor reused: not twice in one group. */
		} else if (!s->cfg.spill_fifo && __atomic_load_n(&s->pref[page], __ATOMIC_RELAXED)) {
			/* Got since we last passed: a second chance. */
			__atomic_store_n(&s->pref[page], 0, __ATOMIC_RELAXED);
			do_plru_del(c, page);
			do_plru_add_tail(c, page);
		} else if (((h & TMEM_H_ZS) && (h & TMEM_H_SUB)) || zs_tier_ent(s, h)) {
			do_plru_del(c, page); /* nothing to spill: never a victim */
		} else {
			ret = do_pick_page(sp, pool, page, &room);
			if (ret == 0)
				do_plru_del(c, page);
			else if (ret == -ENOSPC)
				more = false;
			if (ret == -ENOSPC)
				sp->err = -ENOSPC;
			stop = ret == -ENOSPC || ret == -EDQUOT;
		}
		pthread_mutex_unlock(&pool->lock);
	}
	pthread_mutex_unlock(&c->lru_lock);
	if (took)
		*took += room0 - room;
	return more;
}

static void pick(struct spill *sp, uint32_t want)
{
	struct tmem_store *s = sp->s;
	struct tmem_client *tried[16];
	uint32_t ntried = 0;

	pthread_mutex_lock(&s->lock);
	while (sp->n < want && ntried < 16) {
		struct tmem_client *c = do_pick_client(sp, tried, ntried);

		if (!c)
			break;
		tried[ntried++] = c;
		if (!do_pick_from(sp, c, want))
			break;
	}
	pthread_mutex_unlock(&s->lock);
}

static int cmp_unit(const void *a, const void *b)
{
	uint64_t x = ((const struct victim *)a)->te & ZENT_UNIT_MASK;
	uint64_t y = ((const struct victim *)b)->te & ZENT_UNIT_MASK;

	return x < y ? -1 : x > y;
}

static uint64_t v_units(const struct victim *v)
{
	return tier_units((uint32_t)(v->te >> ZENT_LEN_SHIFT & ZENT_LEN_MASK));
}

/* The runs of adjacent objects of v (in unit order): [first, end) each. */
struct run {
	uint32_t first, end;
};

static uint32_t runs_of(const struct victim *v, uint32_t n, struct run *runs)
{
	uint32_t nr = 0;

	for (uint32_t i = 0; i < n;) {
		uint64_t end = v[i].te & ZENT_UNIT_MASK;
		uint32_t first = i;

		/* IOV_MAX: two iovecs an object at most. */
		for (; i < n && (v[i].te & ZENT_UNIT_MASK) == end && i - first < IOV_MAX / 2; i++)
			end += v_units(&v[i]);
		runs[nr++] = (struct run){ first, i };
	}
	return nr;
}

static off_t unit_off(uint64_t unit)
{
	return (off_t)(TMEM_TIER_HDR_BYTES + unit * TMEM_TIER_UNIT);
}

/* One pwritev() per run, the unit tails padded; writeback of each
 * started at once, so the device works while the next batch is copied. */
static int write_run(struct tmem_tier *t, struct victim *v, uint32_t n)
{
	static const uint8_t zero[TMEM_TIER_UNIT];
	struct iovec iov[2 * TMEM_TIER_BATCH];
	size_t bytes = 0;
	int nio = 0;
	ssize_t got;

	for (uint32_t i = 0; i < n; i++) {
		size_t olen = TMEM_ZS_HDR + (v[i].te >> ZENT_LEN_SHIFT & ZENT_LEN_MASK);
		size_t pad = v_units(&v[i]) * TMEM_TIER_UNIT - olen;

		iov[nio++] = (struct iovec){ v[i].obj, olen };
		if (pad)
			iov[nio++] = (struct iovec){ (void *)zero, pad };
		bytes += olen + pad;
	}
	do {
		got = pwritev(t->fd, iov, nio, unit_off(v[0].te & ZENT_UNIT_MASK));
	} while (got < 0 && errno == EINTR);
	atomic_fetch_add_explicit(&t->writes, 1, memory_order_relaxed);
	if (got < 0)
		return -errno;
	if ((size_t)got != bytes)
		return -ENOSPC; /* a short write: the device is full */
	(void)sync_file_range(t->fd, unit_off(v[0].te & ZENT_UNIT_MASK), (off_t)bytes,
			      SYNC_FILE_RANGE_WRITE);
	return 0;
}

/* A batch's objects, v sorted by unit. */
static int write_runs(struct tmem_tier *t, struct victim *v, uint32_t n)
{
	struct run runs[TMEM_TIER_BATCH];
	uint32_t nr = runs_of(v, n, runs);

	for (uint32_t r = 0; r < nr; r++) {
		int ret = write_run(t, v + runs[r].first, runs[r].end - runs[r].first);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Durable before any page of the group leaves RAM (COMMIT.md). */
static int sync_group(struct tmem_tier *t, const struct victim *v, uint32_t n)
{
	if (fdatasync(t->fd) < 0)
		return -errno;
	/* Written and synced: the page cache need not keep a copy (a
	 * read-back reads the device); only the runs written, so that
	 * others' pages read back lately stay cached. */
	for (uint32_t i = 0; i < n;) {
		uint64_t first = v[i].te & ZENT_UNIT_MASK, end = first;

		for (; i < n && (v[i].te & ZENT_UNIT_MASK) == end; i++)
			end += v_units(&v[i]);
		(void)posix_fadvise(t->fd, unit_off(first), (off_t)((end - first) * TMEM_TIER_UNIT),
				    POSIX_FADV_DONTNEED);
	}
	return 0;
}

/* Pool lock held: whether v may be committed (the page is the one copied). */
static bool do_still_there(struct tmem_store *s, const struct victim *v)
{
	const struct tmem_pagedesc *p = pd(s, v->page);

	if (!v->pool->live || v->pool->gen != v->gen || !pd_live(p) ||
	    pd_handle(p) != v->handle)
		return false;
	return __atomic_load_n(&s->spill_mark[v->page], __ATOMIC_RELAXED) == SPILL_MARK_COPIED;
}

/* Commit one page (COMMIT.md, "Host tier", step 3).  true: it moved. */
static bool commit_one(struct tmem_store *s, struct victim *v)
{
	struct tmem_pool *pool = v->pool;
	struct tmem_pagedesc *p = pd(s, v->page);
	uint32_t nh;
	int ret;

	pthread_mutex_lock(&pool->lock);
	if (!do_still_there(s, v)) {
		pthread_mutex_unlock(&pool->lock);
		return false;
	}
	do_data_account(pool, v->handle, -1);
	pthread_mutex_lock(&s->alloc_lock);
	ret = do_zs_spill_commit(s, v->handle, v->te, &nh);
	pthread_mutex_unlock(&s->alloc_lock);
	if (ret < 0) {
		do_data_account(pool, v->handle, 1);
		pthread_mutex_unlock(&pool->lock);
		return false;
	}
	if (!(v->handle & TMEM_H_ZS)) {
		pd_publish(p, nh); /* commit: a raw page is in the tier */
		pthread_mutex_lock(&s->alloc_lock);
		tmem_raw_data_ops.free(s, v->handle);
		pthread_mutex_unlock(&s->alloc_lock);
	}
	do_data_account(pool, nh, 1);
	pthread_mutex_unlock(&pool->lock);
	return true;
}

/* A page that stays in RAM goes back on its client's list, unless it
 * changed (a replace relinked it; a removal unlinked it for good). */
static void requeue(struct tmem_store *s, struct victim *v)
{
	struct tmem_pool *pool = v->pool;

	pthread_mutex_lock(&pool->lock);
	if (do_still_there(s, v))
		plru_sync(pool, v->page, v->handle);
	pthread_mutex_unlock(&pool->lock);
}

static void units_back(struct tmem_tier *t, const struct victim *v, uint32_t n)
{
	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < n; i++)
		do_tier_free(t, v[i].te & ZENT_UNIT_MASK, v_units(&v[i]));
	pthread_mutex_unlock(&t->lock);
}

static void marks_clear(struct tmem_store *s, const struct victim *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		__atomic_store_n(&s->spill_mark[v[i].page], SPILL_MARK_NONE, __ATOMIC_RELAXED);
	atomic_fetch_sub_explicit(&s->tier.spilling, n, memory_order_release);
}

/* Copies and writes the group's next batch (up to want victims in all).
 * Victims added, or -errno. */
static int write_next_batch(struct spill *sp, uint32_t want)
{
	uint32_t end = want - sp->n > TMEM_TIER_BATCH ? sp->n + TMEM_TIER_BATCH : want;
	int ret;

	sp->base = sp->n;
	pick(sp, end);
	if (sp->n == sp->base)
		return 0;
	/* Unit order, for the runs. */
	qsort(sp->v + sp->base, sp->n - sp->base, sizeof(*sp->v), cmp_unit);
	ret = write_runs(&sp->s->tier, sp->v + sp->base, sp->n - sp->base);
	return ret < 0 ? ret : (int)(sp->n - sp->base);
}

/* A group on its way: picked and written, its sync maybe running. */
struct group {
	struct spill sp;
	int write_ret;            /* the copies and writes' */
	int sync_ret;             /* the sync's: its thread's until joined */
	pthread_t syncer;
	bool syncing;
};

static void *sync_thread(void *arg)
{
	struct group *g = arg;

	g->sync_ret = sync_group(&g->sp.s->tier, g->sp.v, g->sp.n);
	return NULL;
}

/*
 * Picks and writes up to want pages into g, then starts their sync in a
 * thread of its own: the next group is copied and written while the
 * device works on this one (a spill spends about as long in each).  The
 * last group (last: no other follows, as in a put's small spill) syncs
 * here: nothing would overlap a thread's sync.
 */
static void group_start(struct tmem_store *s, struct group *g, struct victim *v,
			struct took *took, uint32_t want, bool last)
{
	struct staging *st = s->tier.staging;
	int ret = 0;

	g->sp = (struct spill){ .s = s, .v = v, .took = took, .objs = st->objs };
	g->syncing = false;
	g->sync_ret = 0;
	while (g->sp.n < want && !g->sp.err && (ret = write_next_batch(&g->sp, want)) > 0)
		;
	g->write_ret = ret < 0 ? ret : 0;
	if (g->sp.n == 0 || g->write_ret < 0)
		return;
	g->syncing = !last && pthread_create(&g->syncer, NULL, sync_thread, g) == 0;
	if (!g->syncing)
		g->sync_ret = sync_group(&s->tier, v, g->sp.n);
}

/* A failed write or sync: every page stays in RAM, its units go back. */
static void group_failed(struct tmem_store *s, struct group *g, int ret)
{
	struct tmem_tier *t = &s->tier;

	for (uint32_t i = 0; i < g->sp.n; i++)
		requeue(s, &g->sp.v[i]);
	units_back(t, g->sp.v, g->sp.n);
	/* The next spill takes the lowest free units: on a sparse file
	 * whose disk filled up, their blocks exist already (the units freed
	 * by flushes, and this group's). */
	pthread_mutex_lock(&t->lock);
	t->cursor = 0;
	if (ret == -ENOSPC)
		t->full_until = clock_nsec(CLOCK_MONOTONIC) + SPILL_FULL_BACKOFF_NS;
	t->last_error = ret;
	pthread_mutex_unlock(&t->lock);
	atomic_fetch_add_explicit(&t->write_errors, 1, memory_order_relaxed);
}

/* Waits for g's sync and commits its pages.  Pages moved, or -errno. */
static int64_t group_finish(struct tmem_store *s, struct group *g)
{
	struct tmem_tier *t = &s->tier;
	uint64_t moved = 0, bytes = 0;
	int ret;

	if (g->syncing)
		pthread_join(g->syncer, NULL);
	g->syncing = false;
	ret = g->write_ret < 0 ? g->write_ret : g->sync_ret;
	if (g->sp.n == 0 && !ret)
		ret = g->sp.err;
	if (g->sp.n == 0 || ret < 0) {
		if (g->sp.n)
			group_failed(s, g, ret);
		goto out;
	}
	for (uint32_t i = 0; i < g->sp.n; i++) {
		struct victim *v = &g->sp.v[i];

		if (commit_one(s, v)) {
			uint32_t len = (uint32_t)(v->te >> ZENT_LEN_SHIFT & ZENT_LEN_MASK);

			moved++;
			bytes += len;
			atomic_fetch_add_explicit(&t->pages, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&t->obj_bytes, len, memory_order_relaxed);
			ctr_inc(&v->pool->owner->spilled);
		} else {
			requeue(s, v);
			units_back(t, v, 1);
			atomic_fetch_add_explicit(&t->aborted, 1, memory_order_relaxed);
		}
	}
	atomic_fetch_add_explicit(&t->spilled, moved, memory_order_relaxed);
	atomic_fetch_add_explicit(&t->spilled_bytes, bytes, memory_order_relaxed);
out:
	marks_clear(s, g->sp.v, g->sp.n);
	return ret < 0 ? ret : (int64_t)moved;
}

/* spill_lock held: groups of up to group_max pages, two on their way at a time. */
static int64_t spill_groups(struct tmem_store *s, uint64_t pages, uint64_t *done)
{
	struct staging *st = s->tier.staging;
	struct group g[2], *prev = NULL, *cur;
	struct took took = { .n = 0 };
	uint64_t group_max = TMEM_TIER_GROUP, queued = 0, left;
	int64_t got = 0, r;

	while (*done + queued < pages) {
		cur = prev == &g[0] ? &g[1] : &g[0];
		left = pages - *done - queued;
		group_start(s, cur, st->v[cur - g], &took,
			    (uint32_t)(left < group_max ? left : group_max), left <= group_max);
		if (prev) {
			r = group_finish(s, prev);
			prev = NULL;
			queued = 0;
			*done += r > 0 ? (uint64_t)r : 0;
			if (r < 0) {
				got = r;
				r = group_finish(s, cur);
				*done += r > 0 ? (uint64_t)r : 0;
				break;
			}
		}
		if (cur->sp.n == 0 || cur->write_ret < 0) {
			r = group_finish(s, cur);
			/* A device nearly full may still take a smaller group. */
			if (r == -ENOSPC && group_max > 1) {
				group_max /= 2;
				continue;
			}
			got = r;
			break;
		}
		prev = cur;
		queued = cur->sp.n;
	}
	if (prev) {
		r = group_finish(s, prev);
		*done += r > 0 ? (uint64_t)r : 0;
		got = r < 0 ? r : got;
	}
	return got;
}

int64_t store_spill(struct tmem_store *s, uint64_t pages)
{
	struct tmem_tier *t;
	uint64_t done = 0, t0;
	int64_t got = 0;

	if (!s)
		return -EINVAL;
	t = &s->tier;
	if (!tier_on(t))
		return -ENODEV;
	t0 = clock_nsec(CLOCK_MONOTONIC);
	pthread_mutex_lock(&t->spill_lock);
	pthread_mutex_lock(&t->lock);
	if (t->full_until > t0) {
		pthread_mutex_unlock(&t->lock);
		pthread_mutex_unlock(&t->spill_lock);
		return -ENOSPC;
	}
	pthread_mutex_unlock(&t->lock);
	if (!t->staging)
		t->staging = malloc(sizeof(struct staging));
	got = t->staging ? spill_groups(s, pages, &done) : -ENOMEM;
	pthread_mutex_unlock(&t->spill_lock);
	atomic_fetch_add_explicit(&t->spill_nsec, clock_nsec(CLOCK_MONOTONIC) - t0,
				  memory_order_relaxed);
	return done ? (int64_t)done : got;
}
