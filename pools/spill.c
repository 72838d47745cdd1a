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
 *      list it in flight (tier.h); a removal or a replace from here on
 *      marks it dirty.
 *   2. write: every lock dropped, pwritev() the objects, fdatasync().
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

struct victim {
	uint32_t page;
	struct tmem_pool *pool;
	uint32_t gen;
	uint32_t handle;          /* at copy time */
	uint64_t te;              /* the tier entry it will get */
	uint32_t slot;            /* its index in tier->inflight */
	uint8_t obj[TMEM_ZS_HDR + TMEM_PAGE_SIZE];
};

struct spill {
	struct tmem_store *s;
	struct victim *v;
	uint32_t n;
	int err;                  /* why picking stopped early, or 0 */
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
	uint32_t h = pd_handle(pd(s, page)), len, *hd = (uint32_t *)v->obj;
	uint8_t codec;
	const void *src;
	uint64_t unit;
	int ret;

	src = data_ops(h)->map(s, h, v->obj + TMEM_ZS_HDR, &len, &codec);
	if (!src)
		return -EIO;
	if (codec == TMEM_CODEC_NONE)
		len = TMEM_PAGE_SIZE;
	if (len > *room)
		return -EDQUOT;
	if (src != v->obj + TMEM_ZS_HDR)
		memcpy(v->obj + TMEM_ZS_HDR, src, len);
	hd[0] = page;
	hd[1] = (uint32_t)XXH3_64bits(v->obj + TMEM_ZS_HDR, len);
	pthread_mutex_lock(&t->lock);
	ret = do_tier_alloc(t, tier_units(len), &unit);
	if (ret == 0) {
		v->slot = t->nr_inflight++;
		t->inflight[v->slot] = (struct tier_inflight){ .page = page };
		/* Before the pool lock goes: a removal after it sees it. */
		atomic_store_explicit(&t->spilling, t->nr_inflight, memory_order_release);
	}
	pthread_mutex_unlock(&t->lock);
	if (ret < 0)
		return ret;
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

/* What c may still put in the tier, in bytes. */
static uint64_t client_room(const struct tmem_client *c)
{
	uint64_t max = atomic_load_explicit(&c->spill_max, memory_order_relaxed);
	uint64_t has = atomic_load_explicit(&c->tier_bytes, memory_order_relaxed);

	return max > has ? max - has : 0;
}

/* The client not tried yet with the most persistent pages in RAM and
 * room in the tier; store->lock held.  NULL: none. */
static struct tmem_client *do_pick_client(struct tmem_store *s, struct tmem_client **tried,
					  uint32_t ntried)
{
	struct tmem_client *best = NULL;
	uint64_t best_n = 0;

	for (struct tmem_client *c = s->clients; c; c = c->next) {
		uint64_t ram = atomic_load_explicit(&c->charged[TMEM_KIND_PERS], memory_order_relaxed) -
			       atomic_load_explicit(&c->tier_pages, memory_order_relaxed);
		bool seen = false;

		for (uint32_t i = 0; i < ntried; i++)
			seen |= tried[i] == c;
		if (seen || ram <= best_n || client_room(c) < TMEM_ZS_HDR + 1)
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
	uint64_t room = client_room(c);
	uint32_t scanned = 0, limit = 4 * want + 64, busy = 0;
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
		if (!s->cfg.spill_fifo && __atomic_load_n(&s->pref[page], __ATOMIC_RELAXED)) {
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
	return more;
}

static void pick(struct spill *sp, uint32_t want)
{
	struct tmem_store *s = sp->s;
	struct tmem_client *tried[16];
	uint32_t ntried = 0;

	pthread_mutex_lock(&s->lock);
	while (sp->n < want && ntried < 16) {
		struct tmem_client *c = do_pick_client(s, tried, ntried);

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
 * started at once, so the device works while the next is copied in. */
static int write_run(struct tmem_tier *t, struct victim *v, uint32_t n, size_t *len)
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
	*len = bytes;
	return 0;
}

static int write_batch(struct tmem_tier *t, struct victim *v, uint32_t n)
{
	struct run runs[TMEM_TIER_BATCH];
	size_t len[TMEM_TIER_BATCH];
	uint32_t nr = runs_of(v, n, runs);

	for (uint32_t r = 0; r < nr; r++) {
		int ret = write_run(t, v + runs[r].first, runs[r].end - runs[r].first, &len[r]);

		if (ret < 0)
			return ret;
	}
	/* Durable before any page leaves RAM (COMMIT.md). */
	if (fdatasync(t->fd) < 0)
		return -errno;
	/* Written and synced: the page cache need not keep a copy (a
	 * read-back reads the device); only the runs written, so that
	 * others' pages read back lately stay cached. */
	for (uint32_t r = 0; r < nr; r++)
		(void)posix_fadvise(t->fd, unit_off(v[runs[r].first].te & ZENT_UNIT_MASK),
				    (off_t)len[r], POSIX_FADV_DONTNEED);
	return 0;
}

/* Pool lock held: whether v may be committed (the page is the one copied). */
static bool do_still_there(struct tmem_store *s, const struct victim *v)
{
	struct tmem_tier *t = &s->tier;
	const struct tmem_pagedesc *p = pd(s, v->page);
	bool dirty;

	if (!v->pool->live || v->pool->gen != v->gen || !pd_live(p) ||
	    pd_handle(p) != v->handle)
		return false;
	pthread_mutex_lock(&t->lock);
	dirty = t->inflight[v->slot].dirty;
	pthread_mutex_unlock(&t->lock);
	return !dirty;
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

static void inflight_clear(struct tmem_tier *t)
{
	pthread_mutex_lock(&t->lock);
	t->nr_inflight = 0;
	atomic_store_explicit(&t->spilling, 0, memory_order_release);
	pthread_mutex_unlock(&t->lock);
}

/* One batch of up to want pages; spill_lock held.  Pages moved, or -errno. */
static int64_t spill_batch(struct tmem_store *s, uint32_t want)
{
	struct tmem_tier *t = &s->tier;
	struct spill sp = { .s = s };
	uint64_t moved = 0, bytes = 0;
	int ret;

	if (!t->staging)
		t->staging = malloc(TMEM_TIER_BATCH * sizeof(*sp.v));
	if (!t->staging)
		return -ENOMEM;
	sp.v = t->staging;
	pick(&sp, want);
	if (sp.n == 0) {
		ret = sp.err ? sp.err : 0;
		goto out;
	}
	/* Unit order, for the runs (each victim keeps its inflight slot). */
	qsort(sp.v, sp.n, sizeof(*sp.v), cmp_unit);
	ret = write_batch(t, sp.v, sp.n);
	if (ret < 0) {
		for (uint32_t i = 0; i < sp.n; i++)
			requeue(s, &sp.v[i]);
		units_back(t, sp.v, sp.n);
		/* The next spill takes the lowest free units: on a sparse
		 * file whose disk filled up, their blocks exist already (the
		 * units freed by flushes, and this batch's). */
		pthread_mutex_lock(&t->lock);
		t->cursor = 0;
		if (ret == -ENOSPC)
			t->full_until = clock_nsec(CLOCK_MONOTONIC) + SPILL_FULL_BACKOFF_NS;
		pthread_mutex_unlock(&t->lock);
		atomic_fetch_add_explicit(&t->write_errors, 1, memory_order_relaxed);
		pthread_mutex_lock(&t->lock);
		t->last_error = ret;
		pthread_mutex_unlock(&t->lock);
		goto out;
	}
	for (uint32_t i = 0; i < sp.n; i++) {
		struct victim *v = &sp.v[i];

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
	ret = 0;
out:
	inflight_clear(t);
	return ret < 0 ? ret : (int64_t)moved;
}

int64_t store_spill(struct tmem_store *s, uint64_t pages)
{
	struct tmem_tier *t;
	uint64_t done = 0, t0, batch = TMEM_TIER_BATCH;
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
	while (done < pages) {
		uint64_t want = pages - done < batch ? pages - done : batch;

		got = spill_batch(s, (uint32_t)want);
		/* A device nearly full may still take a smaller batch. */
		if (got == -ENOSPC && batch > 1) {
			batch /= 2;
			continue;
		}
		if (got <= 0)
			break;
		done += (uint64_t)got;
	}
	pthread_mutex_unlock(&t->spill_lock);
	atomic_fetch_add_explicit(&t->spill_nsec, clock_nsec(CLOCK_MONOTONIC) - t0,
				  memory_order_relaxed);
	return done ? (int64_t)done : got;
}
