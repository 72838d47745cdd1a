/* SPDX-License-Identifier: MIT */
/*
 * The host tier's device: its header (checked before a byte of it is
 * trusted, formatted when blank), its space map, and reading an object
 * back.  Writing and committing pages is spill.c.  The protocol is
 * pools/COMMIT.md, "Host tier".
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "clock.h"
#include "internal.h"

/* ---- latency histogram ----------------------------------------------------- */

static unsigned lat_bucket(uint64_t ns)
{
	unsigned lg, frac;

	if (ns < 2)
		return 0;
	lg = 63u - (unsigned)__builtin_clzll(ns);
	/* Two bits below the leading one: quarter steps of the octave. */
	frac = lg >= 2 ? (unsigned)(ns >> (lg - 2)) & 3u : (unsigned)(ns << (2 - lg)) & 3u;
	return lg * 4 + frac < TMEM_LAT_BUCKETS ? lg * 4 + frac : TMEM_LAT_BUCKETS - 1;
}

void lat_record(struct tmem_lat_hist *h, uint64_t ns)
{
	atomic_fetch_add_explicit(&h->b[lat_bucket(ns)], 1, memory_order_relaxed);
}

uint64_t lat_quantile(const struct tmem_lat_hist *h, double q)
{
	uint64_t n = 0, seen = 0, want;

	for (unsigned i = 0; i < TMEM_LAT_BUCKETS; i++)
		n += atomic_load_explicit(&h->b[i], memory_order_relaxed);
	if (n == 0)
		return 0;
	want = (uint64_t)(q * (double)n);
	if (want >= n)
		want = n - 1;
	for (unsigned i = 0; i < TMEM_LAT_BUCKETS; i++) {
		seen += atomic_load_explicit(&h->b[i], memory_order_relaxed);
		if (seen > want) {
			/* The bucket's upper bound: 2^((i+1)/4), from its octave. */
			unsigned lg = (i + 1) / 4, frac = (i + 1) % 4;

			return (1ull << lg) + ((1ull << lg) * frac) / 4;
		}
	}
	return 0;
}

/* ---- the header -------------------------------------------------------- */

static uint64_t hdr_sum(const struct tmem_tier_hdr *h)
{
	return XXH64(h, offsetof(struct tmem_tier_hdr, sum), 0);
}

static int why_set(char *why, size_t len, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int why_set(char *why, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* The device's size: a block device's, or a file's. */
static int dev_bytes(int fd, uint64_t *out, bool *blk)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*blk = S_ISBLK(st.st_mode);
	if (*blk)
		return ioctl(fd, BLKGETSIZE64, out) < 0 ? -errno : 0;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*out = (uint64_t)st.st_size;
	return 0;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* Published pages of the arena in the tier (recovery has not run yet:
 * nothing here is trusted beyond bounds).  Only a handle tells a tier
 * entry from a same-filled page's word, which may have any bit set. */
static uint64_t arena_tier_entries(const struct tmem_store *s)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < s->hdr->page_bump && i < s->descs.page_cap; i++) {
		uint32_t d = __atomic_load_n(&s->descs.pages[i].data, __ATOMIC_RELAXED);
		uint32_t h = d & ~TMEM_DATA_LIVE;

		if ((d & TMEM_DATA_LIVE) && (h & TMEM_H_ZS) && !(h & TMEM_H_SUB) &&
		    (h & TMEM_H_IDX) < s->zs.zobj_cap &&
		    ent_is_tier(__atomic_load_n(&s->zs.zobjs[h & TMEM_H_IDX], __ATOMIC_RELAXED)))
			n++;
	}
	return n;
}

/* Write a new header binding the tier to s's arena, and make it durable. */
static int tier_format(struct tmem_store *s, struct tmem_tier *t, bool blk)
{
	struct tmem_tier_hdr *h = &t->hdr;
	uint8_t page[TMEM_TIER_HDR_BYTES];

	if (!blk && ftruncate(t->fd, (off_t)t->bytes) < 0)
		return -errno;
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, TMEM_TIER_MAGIC, sizeof(h->magic));
	h->layout = TMEM_TIER_LAYOUT;
	h->unit = TMEM_TIER_UNIT;
	h->bytes = t->bytes;
	h->arena_created = s->hdr->created_usec;
	h->arena_sum = s->hdr->geom_sum;
	h->created_usec = clock_nsec(CLOCK_REALTIME) / 1000u;
	h->sum = hdr_sum(h);
	memset(page, 0, sizeof(page));
	memcpy(page, h, sizeof(*h));
	if (pwrite(t->fd, page, sizeof(page), 0) != (ssize_t)sizeof(page))
		return errno ? -errno : -EIO;
	return fdatasync(t->fd) < 0 ? -errno : 0;
}

/* Check the header read into h against the arena and the config. */
static int tier_check(const struct tmem_store *s, const struct tmem_tier *t,
		      const struct tmem_tier_hdr *h, uint64_t have, char *why, size_t why_len)
{
	if (memcmp(h->magic, TMEM_TIER_MAGIC, sizeof(h->magic)) != 0)
		return why_set(why, why_len, -EBADMSG,
			       "host tier: it holds something else (no tier magic)");
	if (h->layout != TMEM_TIER_LAYOUT)
		return why_set(why, why_len, -EPROTO,
			       "host tier: layout %u, this tmemd knows %u",
			       h->layout, TMEM_TIER_LAYOUT);
	if (hdr_sum(h) != h->sum || h->unit != TMEM_TIER_UNIT)
		return why_set(why, why_len, -EBADMSG, "host tier: its header is damaged");
	if (h->arena_created != s->hdr->created_usec || h->arena_sum != s->hdr->geom_sum)
		return why_set(why, why_len, -EBADMSG,
			       "host tier: it belongs to another arena (made %llu, this one %llu)",
			       (unsigned long long)h->arena_created,
			       (unsigned long long)s->hdr->created_usec);
	if (h->bytes != t->bytes)
		return why_set(why, why_len, -EBADMSG,
			       "host tier: it was made for %llu bytes, the config says %llu",
			       (unsigned long long)h->bytes, (unsigned long long)t->bytes);
	if (have < h->bytes)
		return why_set(why, why_len, -EBADMSG,
			       "host tier: it is truncated, %llu bytes of %llu",
			       (unsigned long long)have, (unsigned long long)h->bytes);
	return 0;
}

static int tier_state_alloc(struct tmem_tier *t)
{
	t->nunits = (t->bytes - TMEM_TIER_HDR_BYTES) / TMEM_TIER_UNIT;
	t->map = calloc((size_t)(t->nunits + 63) / 64 + 1, sizeof(*t->map));
	return t->map ? 0 : -ENOMEM;
}

int tier_open(struct tmem_store *s, const struct tmem_store_config *cfg, bool adopted,
	      char *why, size_t why_len)
{
	struct tmem_tier *t = &s->tier;
	uint8_t page[TMEM_TIER_HDR_BYTES];
	uint64_t have, named = adopted ? arena_tier_entries(s) : 0;
	bool blk;
	ssize_t got;
	int ret;

	t->fd = -1;
	if (!cfg->tier_bytes) {
		if (named)
			return why_set(why, why_len, -EBADMSG,
				       "host tier: the arena has %llu pages in one, and no tier is configured",
				       (unsigned long long)named);
		return 0;
	}
	if (cfg->tier_fd < 0 || cfg->tier_bytes < TMEM_TIER_HDR_BYTES + 64ull * TMEM_TIER_UNIT ||
	    cfg->tier_bytes % TMEM_PAGE_SIZE)
		return why_set(why, why_len, -EINVAL, "host tier: its size must be whole pages, "
			       "at least %u bytes", TMEM_TIER_HDR_BYTES + 64u * TMEM_TIER_UNIT);
	t->bytes = cfg->tier_bytes;
	ret = dev_bytes(cfg->tier_fd, &have, &blk);
	if (ret < 0)
		return why_set(why, why_len, ret, "host tier: not a file or a block device");
	got = have >= TMEM_TIER_HDR_BYTES ? pread(cfg->tier_fd, page, sizeof(page), 0) : 0;
	if (got < 0)
		return why_set(why, why_len, -errno, "host tier: cannot read its header");
	if (got < (ssize_t)sizeof(page))
		memset(page + got, 0, sizeof(page) - (size_t)got);
	t->fd = cfg->tier_fd;
	if (all_zero(page, sizeof(page))) {
		/* Blank: ours to format, unless the arena already has pages
		 * in a tier (then this one cannot be it). */
		if (named) {
			t->fd = -1;
			return why_set(why, why_len, -EBADMSG,
				       "host tier: it is blank, but the arena has %llu pages in one",
				       (unsigned long long)named);
		}
		if (blk && have < t->bytes) {
			t->fd = -1;
			return why_set(why, why_len, -EINVAL,
				       "host tier: the block device has %llu bytes, spill-size says %llu",
				       (unsigned long long)have, (unsigned long long)t->bytes);
		}
		ret = tier_format(s, t, blk);
		if (ret < 0) {
			t->fd = -1;
			return why_set(why, why_len, ret, "host tier: cannot format it");
		}
	} else {
		memcpy(&t->hdr, page, sizeof(t->hdr));
		ret = tier_check(s, t, &t->hdr, have, why, why_len);
		if (ret < 0) {
			t->fd = -1;
			return ret;
		}
	}
	ret = tier_state_alloc(t);
	if (ret < 0)
		t->fd = -1;
	return ret;
}

void tier_close(struct tmem_store *s)
{
	struct tmem_tier *t = &s->tier;

	free(t->map);
	free(t->pending);
	free(t->staging);
	t->map = NULL;
	t->pending = NULL;
	t->staging = NULL;
	t->fd = -1;
}

/* ---- space ----------------------------------------------------------------- */

static bool unit_used(const struct tmem_tier *t, uint64_t u)
{
	return t->map[u / 64] >> (u % 64) & 1;
}

static void units_set(struct tmem_tier *t, uint64_t u, uint64_t n, bool used)
{
	for (uint64_t i = u; i < u + n; i++) {
		if (used)
			t->map[i / 64] |= 1ull << (i % 64);
		else
			t->map[i / 64] &= ~(1ull << (i % 64));
	}
}

/* A run of n free units at or after from, below end: its start, or end. */
static uint64_t find_run(const struct tmem_tier *t, uint64_t from, uint64_t end, uint64_t n)
{
	uint64_t run = 0, start = from;

	for (uint64_t u = from; u < end; u++) {
		if (!(u % 64) && t->map[u / 64] == ~0ull && u + 64 <= end) {
			run = 0;
			u += 63;
			start = u + 1;
			continue;
		}
		if (unit_used(t, u)) {
			run = 0;
			start = u + 1;
		} else if (++run == n) {
			return start;
		}
	}
	return end;
}

int do_tier_alloc(struct tmem_tier *t, uint64_t n, uint64_t *unit)
{
	uint64_t u;

	if (n == 0 || t->nunits - t->used_units < n)
		return -ENOSPC;
	u = find_run(t, t->cursor, t->nunits, n);
	if (u == t->nunits)
		u = find_run(t, 0, t->cursor + n < t->nunits ? t->cursor + n : t->nunits, n);
	if (u >= t->nunits)
		return -ENOSPC;
	units_set(t, u, n, true);
	t->used_units += n;
	t->cursor = u + n < t->nunits ? u + n : 0;
	*unit = u;
	return 0;
}

static void units_release(struct tmem_tier *t, uint64_t unit, uint64_t n)
{
	units_set(t, unit, n, false);
	t->used_units -= n;
	t->full_until = 0; /* their blocks exist: a full device has room again */
}

/*
 * A read-back in progress holds no pool lock while it reads (guest_ops.c),
 * so units freed meanwhile wait for the last reader: only then may a
 * spill write over them.  Out of memory for the wait list, the units stay
 * used until the next restart (a leak of tier space, never a torn read).
 */
void do_tier_free(struct tmem_tier *t, uint64_t unit, uint64_t n)
{
	if (t->readers == 0) {
		units_release(t, unit, n);
		return;
	}
	if (t->nr_pending == t->cap_pending) {
		uint32_t cap = t->cap_pending ? 2 * t->cap_pending : 64;
		struct tier_extent *p = realloc(t->pending, cap * sizeof(*p));

		if (!p)
			return;
		t->pending = p;
		t->cap_pending = cap;
	}
	t->pending[t->nr_pending++] = (struct tier_extent){ unit, n };
}

void tier_pin(struct tmem_tier *t)
{
	pthread_mutex_lock(&t->lock);
	t->readers++;
	pthread_mutex_unlock(&t->lock);
}

void tier_unpin(struct tmem_tier *t)
{
	pthread_mutex_lock(&t->lock);
	if (--t->readers == 0) {
		for (uint32_t i = 0; i < t->nr_pending; i++)
			units_release(t, t->pending[i].unit, t->pending[i].n);
		t->nr_pending = 0;
	}
	pthread_mutex_unlock(&t->lock);
}

static inline uint32_t tent_len(uint64_t e)
{
	return (uint32_t)(e >> ZENT_LEN_SHIFT) & ZENT_LEN_MASK;
}

static inline uint8_t tent_codec(uint64_t e)
{
	return (uint8_t)(e >> ZENT_CODEC_SHIFT) & ZENT_CODEC_MASK;
}

void tier_free_entry(struct tmem_store *s, uint64_t ent)
{
	struct tmem_tier *t = &s->tier;
	uint32_t len = tent_len(ent);

	atomic_fetch_sub_explicit(&t->pages, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&t->obj_bytes, len, memory_order_relaxed);
	pthread_mutex_lock(&t->lock);
	do_tier_free(t, ent & ZENT_UNIT_MASK, tier_units(len));
	pthread_mutex_unlock(&t->lock);
}

/* A well-formed tier entry within the tier's units. */
static bool entry_ok(const struct tmem_tier *t, uint64_t ent)
{
	uint32_t len = tent_len(ent);
	uint8_t codec = tent_codec(ent);
	uint64_t u = ent & ZENT_UNIT_MASK;

	if (ent & (0xfull << 60 & ~ZENT_TIER))
		return false;
	if (codec == TMEM_CODEC_NONE ? len != TMEM_PAGE_SIZE
				     : (codec != TMEM_CODEC_LZ4 && codec != TMEM_CODEC_ZSTD) ||
				       len == 0 || len > TMEM_PAGE_SIZE - TMEM_ZS_HDR)
		return false;
	return u < t->nunits && tier_units(len) <= t->nunits - u;
}

bool tier_recover_claim(struct tmem_store *s, uint64_t ent)
{
	struct tmem_tier *t = &s->tier;
	uint64_t u = ent & ZENT_UNIT_MASK, n;

	if (!tier_on(t) || !entry_ok(t, ent))
		return false;
	n = tier_units(tent_len(ent));
	for (uint64_t i = u; i < u + n; i++)
		if (unit_used(t, i))
			return false; /* two pages name it: a bug loses a page, never serves one twice */
	units_set(t, u, n, true);
	t->used_units += n;
	atomic_fetch_add_explicit(&t->pages, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&t->obj_bytes, tent_len(ent), memory_order_relaxed);
	return true;
}

int tier_read_obj(struct tmem_tier *t, uint64_t ent, uint32_t page, void *buf)
{
	return tier_read_obj_flags(t, ent, page, buf, 0);
}

int tier_read_obj_flags(struct tmem_tier *t, uint64_t ent, uint32_t page, void *buf, int flags)
{
	uint32_t len = tent_len(ent);
	size_t want = TMEM_ZS_HDR + len;
	off_t off;
	ssize_t got;
	const uint32_t *h = buf;

	if (!tier_on(t) || !entry_ok(t, ent))
		return -EIO;
	off = (off_t)(TMEM_TIER_HDR_BYTES + (ent & ZENT_UNIT_MASK) * TMEM_TIER_UNIT);
	do {
		struct iovec iov = { buf, want };

		got = preadv2(t->fd, &iov, 1, off, flags);
	} while (got < 0 && errno == EINTR);
	if (got < 0 && (flags & RWF_NOWAIT) && (errno == EAGAIN || errno == EOPNOTSUPP))
		return -EAGAIN;
	/* RWF_NOWAIT may read part of it (the rest not cached): the wait. */
	if ((flags & RWF_NOWAIT) && got >= 0 && got < (ssize_t)want)
		return -EAGAIN;
	/* Not the page it should be, or not its bytes: an error, never
	 * wrong bytes (COMMIT.md, "Host tier"). */
	if (got != (ssize_t)want || h[0] != page ||
	    h[1] != (uint32_t)XXH3_64bits((const uint8_t *)buf + TMEM_ZS_HDR, len))
		return -EIO;
	return 0;
}

int tier_decode(uint64_t ent, const void *obj, void *dst)
{
	const uint8_t *src = (const uint8_t *)obj + TMEM_ZS_HDR;

	if (tent_codec(ent) == TMEM_CODEC_NONE) {
		memcpy(dst, src, TMEM_PAGE_SIZE);
		return 0;
	}
	return codec_decode(tent_codec(ent), src, tent_len(ent), dst);
}

void tier_page_changed(struct tmem_store *s, uint32_t page)
{
	struct tmem_tier *t = &s->tier;
	uint8_t copied = SPILL_MARK_COPIED;

	if (!atomic_load_explicit(&t->spilling, memory_order_acquire))
		return;
	__atomic_compare_exchange_n(&s->spill_mark[page], &copied, SPILL_MARK_DIRTY, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
