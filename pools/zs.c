/* SPDX-License-Identifier: MIT */
/*
 * zs: the size-class allocator for compressed pages, in the manner of
 * zsmalloc, inside the durable arena.
 *
 * An object is an 8-byte header (the page descriptor that owns it: the
 * back-reference compaction follows; and 32 bits of an XXH3 of the compressed
 * bytes, checked on every get, so that a damaged arena gives an error
 * rather than wrong bytes) and the compressed bytes.  Objects
 * of one class (slot size a multiple of 32 up to 4096) live back to back
 * in spans of 1..8 arena frames, crossing frame boundaries; each class
 * picks the span length that wastes least (as zsmalloc picks pages per
 * zspage), with at most 128 slots a span.  The frames of a span need not
 * be adjacent: they are listed in its durable record (durable.h).
 *
 * A page's handle is TMEM_H_ZS | entry, an index into the durable entry
 * table (zsmalloc's handles are indirect too): the entry holds the
 * object's span, slot, length and codec, or for a same-filled page the
 * word itself.  The commit protocol (COMMIT.md) is:
 *   - new span: frames, then cls/nframes/frames[], then state = LIVE;
 *   - new object: slot and entry, then header and bytes, then the page
 *     is published (pd_publish: the only store that makes it exist);
 *   - compaction: copy to a free slot of another span, then one 64-bit
 *     store of the entry (the move), then the old slot is free;
 *   - free: the page is unpublished first (by its remover), then the
 *     slot; an empty span's state = FREE before its frames go.
 * So recovery trusts a span's record only if LIVE, an entry only if a
 * published page names it, an object only if its header names that page.
 *
 * Alloc and free are O(1): a class keeps its spans that have a free slot
 * on a list (any one will do), and a span links its free slots through
 * their headers.  Fragmentation (free slots in live spans) is bounded by
 * compaction (do_zs_compact): it empties the least used spans of a class
 * while the class has a whole span's worth of free slots.
 *
 * Everything here runs under store->alloc_lock, except zs_write and
 * zs_map, which need only the owning page's pool lock: compaction moves
 * an object only holding that lock as well.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "internal.h"

#define MAX_SLOTS 128u
#define SPAN_BYTES(n) ((uint32_t)(n) * TMEM_PAGE_SIZE)

/* ---- geometry ---------------------------------------------------------- */

/*
 * The span length of a class: the shortest that wastes at most 1/16 of
 * it, else the one that wastes least.  Long spans waste less at their
 * tail but each class keeps one part-filled, so a store holding few
 * pages in many classes would pay for them (2.8 frames a span on
 * average this way, 4.4 for the least waste).
 */
static void class_geometry(struct tmem_zclass *c, uint32_t size)
{
	uint32_t best_n = 1, best_waste = UINT32_MAX;

	for (uint32_t n = 1; n <= TMEM_ZSPAN_FRAMES; n++) {
		uint32_t slots = SPAN_BYTES(n) / size, waste;

		if (slots > MAX_SLOTS)
			break;
		waste = (SPAN_BYTES(n) - slots * size) * 64 / n; /* per frame */
		if (waste < best_waste) {
			best_waste = waste;
			best_n = n;
		}
		if (waste * 16 <= TMEM_PAGE_SIZE * 64)
			break;
	}
	c->size = size;
	c->nframes = (uint8_t)best_n;
	c->slots = (uint16_t)(SPAN_BYTES(best_n) / size);
	c->partial = TMEM_NIL;
}

static uint32_t class_of(uint32_t len)
{
	return (len + TMEM_ZS_HDR + TMEM_ZS_ALIGN - 1) / TMEM_ZS_ALIGN - 1;
}

int zs_init(struct tmem_store *s)
{
	struct tmem_zs *z = &s->zs;

	for (uint32_t i = 0; i < TMEM_ZS_CLASSES; i++)
		class_geometry(&z->cls[i], (i + 1) * TMEM_ZS_ALIGN);
	z->span_free = z->zobj_free = TMEM_NIL;
	z->rt = mmap(NULL, (size_t)z->span_cap * sizeof(*z->rt) + 1, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (z->rt == MAP_FAILED) {
		z->rt = NULL;
		return -errno;
	}
	return 0;
}

void zs_fini(struct tmem_store *s)
{
	struct tmem_zs *z = &s->zs;

	if (z->rt)
		munmap(z->rt, (size_t)z->span_cap * sizeof(*z->rt) + 1);
	z->rt = NULL;
}

/* ---- entries ----------------------------------------------------------- */

static inline uint64_t ent_get(const struct tmem_zs *z, uint32_t i)
{
	return __atomic_load_n(&z->zobjs[i], __ATOMIC_RELAXED);
}

/* A release store: the move it commits (compaction) is copied before. */
static inline void ent_set(struct tmem_zs *z, uint32_t i, uint64_t v)
{
	__atomic_store_n(&z->zobjs[i], v, __ATOMIC_RELEASE);
}

static inline uint64_t ent_make(uint32_t span, uint32_t slot, uint32_t len, uint8_t codec)
{
	return (uint64_t)span | (uint64_t)slot << ZENT_SLOT_SHIFT |
	       (uint64_t)len << ZENT_LEN_SHIFT | (uint64_t)codec << ZENT_CODEC_SHIFT;
}

static inline uint32_t ent_span(uint64_t e) { return (uint32_t)e; }
static inline uint32_t ent_slot(uint64_t e)
{
	return (uint32_t)(e >> ZENT_SLOT_SHIFT) & ZENT_SLOT_MASK;
}

static inline uint32_t ent_len(uint64_t e)
{
	return (uint32_t)(e >> ZENT_LEN_SHIFT) & ZENT_LEN_MASK;
}

static inline uint8_t ent_codec(uint64_t e)
{
	return (uint8_t)(e >> ZENT_CODEC_SHIFT) & ZENT_CODEC_MASK;
}

static int ent_alloc(struct tmem_store *s, uint32_t *i)
{
	struct tmem_zs *z = &s->zs;

	if (z->zobj_free != TMEM_NIL) {
		*i = z->zobj_free;
		z->zobj_free = (uint32_t)ent_get(z, *i);
		return 0;
	}
	if (z->zobj_bump >= z->zobj_cap)
		return -ENOSPC;
	*i = z->zobj_bump++;
	relaxed_set(&s->hdr->zobj_bump, z->zobj_bump);
	return 0;
}

static void ent_free(struct tmem_zs *z, uint32_t i)
{
	ent_set(z, i, z->zobj_free);
	z->zobj_free = i;
}

/* ---- spans ------------------------------------------------------------- */

static inline uint8_t *span_at(const struct tmem_store *s, const struct tmem_zspan_rec *r,
			       uint32_t off)
{
	return frame_at(&s->frames, r->frames[off / TMEM_PAGE_SIZE]) + off % TMEM_PAGE_SIZE;
}

/* Copy len bytes in or out at byte off of span r, across its frames. */
static void span_copy(const struct tmem_store *s, const struct tmem_zspan_rec *r,
		      uint32_t off, void *buf, uint32_t len, bool in)
{
	uint8_t *b = buf;

	while (len) {
		uint32_t n = TMEM_PAGE_SIZE - off % TMEM_PAGE_SIZE;
		uint8_t *p = span_at(s, r, off);

		if (n > len)
			n = len;
		if (in)
			memcpy(p, b, n);
		else
			memcpy(b, p, n);
		b += n;
		off += n;
		len -= n;
	}
}

/* A slot's header: slots start at multiples of 32, so it never straddles. */
static inline uint32_t *slot_hdr(const struct tmem_store *s, uint32_t sp, uint32_t slot)
{
	const struct tmem_zspan_rec *r = &s->zs.spans[sp];

	return (uint32_t *)span_at(s, r, slot * s->zs.cls[r->cls].size);
}

/* Its first word (the owner page, or the free-list link): written by a
 * put under its pool lock while compaction may read it under
 * alloc_lock (and then ignore the slot, its page not yet published). */
static inline uint32_t hdr_get(const struct tmem_store *s, uint32_t sp, uint32_t slot)
{
	return __atomic_load_n(slot_hdr(s, sp, slot), __ATOMIC_RELAXED);
}

static inline void hdr_set(const struct tmem_store *s, uint32_t sp, uint32_t slot, uint32_t v)
{
	__atomic_store_n(slot_hdr(s, sp, slot), v, __ATOMIC_RELAXED);
}

static void partial_add(struct tmem_zs *z, uint32_t cls, uint32_t sp)
{
	struct tmem_zclass *c = &z->cls[cls];
	struct tmem_zspan_rt *rt = &z->rt[sp];

	rt->prev = TMEM_NIL;
	rt->next = c->partial;
	if (c->partial != TMEM_NIL)
		z->rt[c->partial].prev = sp;
	c->partial = sp;
	rt->on_partial = 1;
	c->nr_partial++;
}

static void partial_del(struct tmem_zs *z, uint32_t cls, uint32_t sp)
{
	struct tmem_zclass *c = &z->cls[cls];
	struct tmem_zspan_rt *rt = &z->rt[sp];

	if (rt->prev != TMEM_NIL)
		z->rt[rt->prev].next = rt->next;
	else
		c->partial = rt->next;
	if (rt->next != TMEM_NIL)
		z->rt[rt->next].prev = rt->prev;
	rt->on_partial = 0;
	c->nr_partial--;
}

/* Link the slots of span sp not set in used (NULL: all) as its free list. */
static void span_link_free(struct tmem_store *s, uint32_t sp, const uint64_t *used)
{
	struct tmem_zclass *c = &s->zs.cls[s->zs.spans[sp].cls];
	uint16_t next = TMEM_ZS_NO_SLOT;

	for (uint32_t i = c->slots; i-- > 0;) {
		if (used && (used[i / 64] >> (i % 64) & 1))
			continue;
		hdr_set(s, sp, i, next);
		next = (uint16_t)i;
	}
	s->zs.rt[sp].free = next;
}

static void span_account(struct tmem_zs *z, uint32_t cls, int d)
{
	z->cls[cls].spans += (uint64_t)(int64_t)d;
	atomic_fetch_add_explicit(&z->span_frames, (uint64_t)(int64_t)(d * z->cls[cls].nframes),
				  memory_order_relaxed);
}

static int span_new(struct tmem_store *s, uint32_t cls, uint32_t *out)
{
	struct tmem_zs *z = &s->zs;
	struct tmem_zclass *c = &z->cls[cls];
	struct tmem_zspan_rec *r;
	uint32_t sp, n = 0;
	int ret = 0;

	if (z->span_free != TMEM_NIL) {
		sp = z->span_free;
		z->span_free = z->rt[sp].next;
	} else if (z->span_bump < z->span_cap) {
		sp = z->span_bump++;
		relaxed_set(&s->hdr->span_bump, z->span_bump);
	} else {
		return -ENOSPC;
	}
	r = &z->spans[sp];
	for (; n < c->nframes && ret == 0; n++)
		ret = frames_alloc(&s->frames, &r->frames[n]);
	if (ret < 0) {
		while (--n > 0)
			frames_free(&s->frames, r->frames[n - 1]);
		z->rt[sp].next = z->span_free;
		z->span_free = sp;
		return ret;
	}
	r->cls = (uint8_t)cls;
	r->nframes = c->nframes;
	rec_set_state(&r->state, TMEM_REC_LIVE); /* commit: the span exists */
	z->rt[sp].inuse = 0;
	span_link_free(s, sp, NULL);
	partial_add(z, cls, sp);
	span_account(z, cls, 1);
	*out = sp;
	return 0;
}

static void span_release(struct tmem_store *s, uint32_t sp)
{
	struct tmem_zs *z = &s->zs;
	struct tmem_zspan_rec *r = &z->spans[sp];

	rec_set_state(&r->state, TMEM_REC_FREE); /* before its frames go */
	for (uint32_t i = 0; i < r->nframes; i++)
		frames_free(&s->frames, r->frames[i]);
	span_account(z, r->cls, -1);
	z->rt[sp].next = z->span_free;
	z->span_free = sp;
}

/* A free slot of class cls (a new span if none): *sp, *slot. */
static int slot_alloc(struct tmem_store *s, uint32_t cls, uint32_t avoid,
		      uint32_t *sp, uint32_t *slot)
{
	struct tmem_zs *z = &s->zs;
	struct tmem_zspan_rt *rt;
	int ret;

	*sp = z->cls[cls].partial;
	if (*sp == avoid && *sp != TMEM_NIL)
		*sp = z->rt[*sp].next;
	if (*sp == TMEM_NIL) {
		if (avoid != TMEM_NIL)
			return -ENOSPC; /* compaction never makes spans */
		ret = span_new(s, cls, sp);
		if (ret < 0)
			return ret;
	}
	rt = &z->rt[*sp];
	*slot = rt->free;
	rt->free = (uint16_t)hdr_get(s, *sp, *slot);
	rt->inuse++;
	z->cls[cls].objs++;
	if (rt->free == TMEM_ZS_NO_SLOT)
		partial_del(z, cls, *sp);
	return 0;
}

static void slot_free(struct tmem_store *s, uint32_t sp, uint32_t slot)
{
	struct tmem_zs *z = &s->zs;
	struct tmem_zspan_rt *rt = &z->rt[sp];
	uint32_t cls = z->spans[sp].cls;

	hdr_set(s, sp, slot, rt->free);
	rt->free = (uint16_t)slot;
	rt->inuse--;
	z->cls[cls].objs--;
	if (!rt->on_partial)
		partial_add(z, cls, sp);
	if (rt->inuse == 0) {
		partial_del(z, cls, sp);
		span_release(s, sp);
	}
}

/* ---- the data ops ------------------------------------------------------ */

static void obj_account(struct tmem_zs *z, uint32_t len, int d)
{
	atomic_fetch_add_explicit(&z->obj_bytes, (uint64_t)(int64_t)d * len,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&z->slot_bytes,
				  (uint64_t)(int64_t)d * z->cls[class_of(len)].size,
				  memory_order_relaxed);
}

static int zs_alloc(struct tmem_store *s, const struct tmem_enc *e, uint32_t *handle)
{
	struct tmem_zs *z = &s->zs;
	uint32_t i, sp, slot;
	int ret = ent_alloc(s, &i);

	if (ret < 0)
		return ret;
	if (e->kind == TMEM_ENC_SAME) {
		ent_set(z, i, e->word);
		atomic_fetch_add_explicit(&z->same_pages, 1, memory_order_relaxed);
		*handle = TMEM_H_ZS | TMEM_H_SUB | i;
		return 0;
	}
	if (e->len == 0 || e->len > TMEM_PAGE_SIZE - TMEM_ZS_HDR) {
		ent_free(z, i);
		return -EINVAL;
	}
	ret = slot_alloc(s, class_of(e->len), TMEM_NIL, &sp, &slot);
	if (ret < 0) {
		ent_free(z, i);
		return ret;
	}
	ent_set(z, i, ent_make(sp, slot, e->len, e->codec));
	obj_account(z, e->len, 1);
	*handle = TMEM_H_ZS | i;
	return 0;
}

static void zs_free(struct tmem_store *s, uint32_t h)
{
	struct tmem_zs *z = &s->zs;
	uint32_t i = h & TMEM_H_IDX;
	uint64_t e = ent_get(z, i);

	if (h & TMEM_H_SUB) {
		atomic_fetch_sub_explicit(&z->same_pages, 1, memory_order_relaxed);
	} else if (ent_is_tier(e)) {
		tier_free_entry(s, e);
	} else {
		obj_account(z, ent_len(e), -1);
		slot_free(s, ent_span(e), ent_slot(e));
	}
	ent_free(z, i);
}

static void zs_write(struct tmem_store *s, uint32_t h, uint32_t page,
		     const struct tmem_enc *e)
{
	uint64_t ent;
	const struct tmem_zspan_rec *r;
	uint32_t off;

	if (h & TMEM_H_SUB)
		return; /* the word is the entry */
	ent = ent_get(&s->zs, h & TMEM_H_IDX);
	r = &s->zs.spans[ent_span(ent)];
	off = ent_slot(ent) * s->zs.cls[r->cls].size;
	hdr_set(s, ent_span(ent), ent_slot(ent), page);
	((uint32_t *)span_at(s, r, off))[1] = (uint32_t)XXH3_64bits(e->bytes, e->len);
	span_copy(s, r, off + TMEM_ZS_HDR, (void *)e->bytes, e->len, true);
}

/*
 * Trust nothing: an entry, a span record or a frame number that does not
 * check out (a damaged arena) gives NULL, never a read outside the
 * mapping or past the object's slot.
 */
static const void *zs_map(const struct tmem_store *s, uint32_t h, void *bounce,
			  uint32_t *len, uint8_t *codec)
{
	const struct tmem_zs *z = &s->zs;
	uint32_t i = h & TMEM_H_IDX, sp, slot, off;
	const struct tmem_zspan_rec *r;
	const struct tmem_zclass *c;
	const void *src;
	uint64_t e;

	if ((h & TMEM_H_SUB) || i >= z->zobj_cap)
		return NULL;
	e = ent_get(z, i);
	if (ent_is_tier(e))
		return NULL; /* read back by do_data_map() (pagedata.c) */
	sp = ent_span(e);
	slot = ent_slot(e);
	*len = ent_len(e);
	*codec = ent_codec(e);
	if (sp >= z->span_cap)
		return NULL;
	r = &z->spans[sp];
	if (r->cls >= TMEM_ZS_CLASSES)
		return NULL;
	c = &z->cls[r->cls];
	if (r->nframes != c->nframes || slot >= c->slots || *len == 0 ||
	    *len > c->size - TMEM_ZS_HDR)
		return NULL;
	for (uint32_t f = 0; f < r->nframes; f++)
		if (r->frames[f] >= s->frames.max_frames)
			return NULL;
	off = slot * c->size + TMEM_ZS_HDR;
	if (off / TMEM_PAGE_SIZE == (off + *len - 1) / TMEM_PAGE_SIZE) {
		src = span_at(s, r, off);
	} else {
		span_copy(s, r, off, bounce, *len, false);
		src = bounce;
	}
	if ((uint32_t)XXH3_64bits(src, *len) != ((const uint32_t *)span_at(s, r, off - TMEM_ZS_HDR))[1])
		return NULL; /* damaged: an error, not wrong bytes */
	return src;
}

static uint32_t zs_relocate(struct tmem_store *s, uint32_t h)
{
	(void)s;
	return h; /* spans move whole frames: do_zs_shrink() */
}

const struct tmem_data_ops tmem_zs_data_ops = {
	.name = "zs",
	.alloc = zs_alloc,
	.free = zs_free,
	.write = zs_write,
	.map = zs_map,
	.relocate = zs_relocate,
};

uint64_t zs_word(const struct tmem_store *s, uint32_t h)
{
	return ent_get(&s->zs, h & TMEM_H_IDX);
}

uint32_t zs_len(const struct tmem_store *s, uint32_t h)
{
	return ent_len(ent_get(&s->zs, h & TMEM_H_IDX));
}

uint64_t zs_tier_ent(const struct tmem_store *s, uint32_t h)
{
	uint64_t e;

	if (!(h & TMEM_H_ZS) || (h & TMEM_H_SUB) || (h & TMEM_H_IDX) >= s->zs.zobj_cap)
		return 0;
	e = ent_get(&s->zs, h & TMEM_H_IDX);
	return ent_is_tier(e) ? e : 0;
}

/*
 * The spill's commit (COMMIT.md, "Host tier"), alloc_lock held and the
 * page's pool lock: handle h's data now lives at tier entry te, written
 * and durable.  A compressed page: one 64-bit store of its entry, then
 * its slot goes.  A raw page: a new entry holding te, then the caller
 * publishes the returned handle (the commit) and frees the frame with
 * zs_raw_spilled_free().  -ENOSPC: no entry left (the page stays).
 */
int do_zs_spill_commit(struct tmem_store *s, uint32_t h, uint64_t te, uint32_t *nh)
{
	struct tmem_zs *z = &s->zs;
	uint32_t i;
	uint64_t e;
	int ret;

	if (h & TMEM_H_ZS) {
		i = h & TMEM_H_IDX;
		e = ent_get(z, i);
		ent_set(z, i, te); /* commit: the page is in the tier */
		obj_account(z, ent_len(e), -1);
		slot_free(s, ent_span(e), ent_slot(e));
		*nh = h;
		return 0;
	}
	ret = ent_alloc(s, &i);
	if (ret < 0)
		return ret;
	ent_set(z, i, te);
	*nh = TMEM_H_ZS | i;
	return 0;
}

uint64_t zs_frames(const struct tmem_store *s)
{
	return atomic_load_explicit(&s->zs.span_frames, memory_order_relaxed);
}

/* One store per frame commits its move: the copy is made first. */
void do_zs_shrink(struct tmem_store *s)
{
	struct tmem_zs *z = &s->zs;

	for (uint32_t sp = 0; sp < z->span_bump; sp++) {
		struct tmem_zspan_rec *r = &z->spans[sp];

		if (r->state != TMEM_REC_LIVE)
			continue;
		for (uint32_t f = 0; f < r->nframes; f++) {
			uint32_t to = frames_relocate(&s->frames, r->frames[f]);

			__atomic_store_n(&r->frames[f], to, __ATOMIC_RELEASE);
		}
	}
}

/* ---- compaction -------------------------------------------------------- */

/* The page whose object sits in (sp, slot), or TMEM_NIL: a free slot.
 * Exact, since a slot's header names its page only while that page is
 * published with an entry pointing back here. */
static uint32_t slot_owner(const struct tmem_store *s, uint32_t sp, uint32_t slot,
			   uint32_t *ent)
{
	uint32_t page = hdr_get(s, sp, slot), h;
	uint64_t e;

	if (page >= s->descs.page_bump)
		return TMEM_NIL;
	h = __atomic_load_n(&pd(s, page)->data, __ATOMIC_RELAXED);
	if (!(h & TMEM_DATA_LIVE) || !(h & TMEM_H_ZS) || (h & TMEM_H_SUB) ||
	    (h & TMEM_H_IDX) >= s->zs.zobj_bump || pd_obj_raw(pd(s, page)) == TMEM_NIL)
		return TMEM_NIL;
	e = ent_get(&s->zs, h & TMEM_H_IDX);
	if (ent_span(e) != sp || ent_slot(e) != slot)
		return TMEM_NIL;
	*ent = h & TMEM_H_IDX;
	return page;
}

/* Move the object of entry i from (sp, slot) to another span of its class. */
static int obj_move(struct tmem_store *s, uint32_t i, uint32_t sp, uint32_t slot)
{
	struct tmem_zs *z = &s->zs;
	uint64_t e = ent_get(z, i);
	uint32_t cls = z->spans[sp].cls, size = z->cls[cls].size, dsp, dslot;
	uint8_t buf[TMEM_PAGE_SIZE];
	int ret = slot_alloc(s, cls, sp, &dsp, &dslot);

	if (ret < 0)
		return ret;
	span_copy(s, &z->spans[sp], slot * size, buf, TMEM_ZS_HDR + ent_len(e), false);
	span_copy(s, &z->spans[dsp], dslot * size, buf, TMEM_ZS_HDR + ent_len(e), true);
	ent_set(z, i, ent_make(dsp, dslot, ent_len(e), ent_codec(e))); /* commit */
	slot_free(s, sp, slot);
	return 0;
}

/* Empty span sp into its class's other spans; how many moved (*busy: a
 * page's pool was busy). */
static uint64_t span_evacuate(struct tmem_store *s, uint32_t sp,
			      struct tmem_pool *held, bool all_held, bool *busy)
{
	struct tmem_zs *z = &s->zs;
	uint32_t slots = z->cls[z->spans[sp].cls].slots;
	uint64_t moved = 0;

	for (uint32_t slot = 0; slot < slots && z->rt[sp].inuse; slot++) {
		uint32_t i, page = slot_owner(s, sp, slot, &i);
		struct tmem_pool *pool;
		bool locked = false;
		int ret;

		if (page == TMEM_NIL)
			continue;
		pool = page_pool(s, page);
		if (!all_held && pool != held) {
			if (pthread_mutex_trylock(&pool->lock) != 0) {
				*busy = true;
				continue;
			}
			locked = true;
		}
		/* Under the pool lock now: still that page's object? */
		if (slot_owner(s, sp, slot, &i) == page) {
			ret = obj_move(s, i, sp, slot);
			moved += ret == 0;
		} else {
			ret = 0;
		}
		if (locked)
			pthread_mutex_unlock(&pool->lock);
		if (ret < 0)
			break;
	}
	return moved;
}

/* The partial span of class c with the fewest objects, and the free slots
 * of all its partial spans. */
static uint32_t emptiest(const struct tmem_zs *z, const struct tmem_zclass *c,
			 uint64_t *free_slots)
{
	uint32_t best = TMEM_NIL;

	*free_slots = 0;
	for (uint32_t sp = c->partial; sp != TMEM_NIL; sp = z->rt[sp].next) {
		*free_slots += c->slots - z->rt[sp].inuse;
		if (best == TMEM_NIL || z->rt[sp].inuse < z->rt[best].inuse)
			best = sp;
	}
	return best;
}

uint64_t do_zs_compact(struct tmem_store *s, struct tmem_pool *held, bool all_held)
{
	struct tmem_zs *z = &s->zs;
	uint64_t moved = 0;

	for (uint32_t k = 0; k < TMEM_ZS_CLASSES; k++) {
		struct tmem_zclass *c = &z->cls[k];
		uint64_t free_slots;

		while (c->nr_partial >= 2) {
			uint32_t sp = emptiest(z, c, &free_slots);
			bool busy = false;
			uint64_t n;

			if (free_slots < c->slots)
				break; /* the bound holds: less than a span free */
			n = span_evacuate(s, sp, held, all_held, &busy);
			moved += n;
			if (z->rt[sp].inuse && (busy || n == 0))
				break; /* try again later */
		}
	}
	if (moved) {
		atomic_fetch_add_explicit(&z->compactions, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&z->pages_compacted, moved, memory_order_relaxed);
	}
	return moved;
}

void do_zs_frag(struct tmem_store *s, uint64_t *capacity)
{
	struct tmem_zs *z = &s->zs;

	*capacity = 0;
	for (uint32_t k = 0; k < TMEM_ZS_CLASSES; k++)
		*capacity += z->cls[k].spans * z->cls[k].slots * z->cls[k].size;
}

/* ---- recovery ---------------------------------------------------------- */

struct zs_recover {
	struct tmem_store *s;
	uint32_t *frame_user;     /* recover.c's: frame -> claimant */
	uint32_t frames;          /* its length */
	uint32_t span_tag;        /* or'd with a span index there */
	uint8_t *span_ok;         /* span_bump: its record and frames check out */
	uint64_t (*used)[2];      /* span_bump slot bitmaps */
	uint64_t *ent_used;       /* zobj_bump bits */
};

static bool span_rec_ok(const struct zs_recover *r, uint32_t sp)
{
	const struct tmem_zspan_rec *rec = &r->s->zs.spans[sp];

	if (rec->state != TMEM_REC_LIVE || rec->cls >= TMEM_ZS_CLASSES ||
	    rec->nframes != r->s->zs.cls[rec->cls].nframes)
		return false;
	for (uint32_t f = 0; f < rec->nframes; f++)
		if (rec->frames[f] >= r->frames || rec->frames[f] >= r->s->frames.total_frames)
			return false;
	return true;
}

/* Spans claim their frames before any raw page does; a frame two spans
 * claim is nobody's, and both spans go (with their pages). */
static void claim_span_frames(struct zs_recover *r)
{
	struct tmem_zs *z = &r->s->zs;

	for (uint32_t sp = 0; sp < z->span_bump; sp++) {
		r->span_ok[sp] = span_rec_ok(r, sp);
		for (uint32_t f = 0; r->span_ok[sp] && f < z->spans[sp].nframes; f++) {
			uint32_t *u = &r->frame_user[z->spans[sp].frames[f]];

			*u = *u == TMEM_NIL ? (r->span_tag | sp) : TMEM_NIL - 1;
		}
	}
	for (uint32_t sp = 0; sp < z->span_bump; sp++)
		for (uint32_t f = 0; r->span_ok[sp] && f < z->spans[sp].nframes; f++)
			if (r->frame_user[z->spans[sp].frames[f]] != (r->span_tag | sp))
				r->span_ok[sp] = 0;
}

int zs_recover_begin(struct tmem_store *s, struct zs_recover **out,
		     uint32_t *frame_user, uint32_t frames, uint32_t span_tag)
{
	struct tmem_zs *z = &s->zs;
	struct zs_recover *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	z->span_bump = s->hdr->span_bump;
	z->zobj_bump = s->hdr->zobj_bump;
	r->s = s;
	r->frame_user = frame_user;
	r->frames = frames;
	r->span_tag = span_tag;
	r->span_ok = calloc(z->span_bump + 1, 1);
	r->used = calloc(z->span_bump + 1, sizeof(*r->used));
	r->ent_used = calloc(z->zobj_bump / 64 + 1, sizeof(uint64_t));
	if (!r->span_ok || !r->used || !r->ent_used) {
		free(r->span_ok);
		free(r->used);
		free(r->ent_used);
		free(r);
		return -ENOMEM;
	}
	claim_span_frames(r);
	*out = r;
	return 0;
}

static bool bit_claim(uint64_t *map, uint32_t i)
{
	if (map[i / 64] >> (i % 64) & 1)
		return false;
	map[i / 64] |= 1ull << (i % 64);
	return true;
}

bool zs_recover_claim(struct zs_recover *r, uint32_t page, uint32_t h)
{
	struct tmem_store *s = r->s;
	uint32_t i = h & TMEM_H_IDX, sp, slot, len;
	const struct tmem_zclass *c;
	uint64_t e;

	if (i >= s->zs.zobj_bump || (r->ent_used[i / 64] >> (i % 64) & 1))
		return false;
	e = ent_get(&s->zs, i);
	if (!(h & TMEM_H_SUB) && ent_is_tier(e)) {
		if (!tier_recover_claim(s, e))
			return false;
	} else if (!(h & TMEM_H_SUB)) {
		sp = ent_span(e);
		slot = ent_slot(e);
		len = ent_len(e);
		if (sp >= s->zs.span_bump || !r->span_ok[sp])
			return false;
		c = &s->zs.cls[s->zs.spans[sp].cls];
		if (slot >= c->slots || len == 0 || class_of(len) != s->zs.spans[sp].cls ||
		    (ent_codec(e) != TMEM_CODEC_LZ4 && ent_codec(e) != TMEM_CODEC_ZSTD) ||
		    hdr_get(s, sp, slot) != page || !bit_claim(r->used[sp], slot))
			return false;
		obj_account(&s->zs, len, 1);
	} else {
		atomic_fetch_add_explicit(&s->zs.same_pages, 1, memory_order_relaxed);
	}
	bit_claim(r->ent_used, i);
	return true;
}

void zs_recover_end(struct zs_recover *r)
{
	struct tmem_store *s = r->s;
	struct tmem_zs *z = &s->zs;

	z->span_free = TMEM_NIL;
	for (uint32_t sp = z->span_bump; sp-- > 0;) {
		struct tmem_zspan_rec *rec = &z->spans[sp];
		uint32_t n = (uint32_t)(__builtin_popcountll(r->used[sp][0]) +
					__builtin_popcountll(r->used[sp][1]));

		if (r->span_ok[sp] && n) {
			z->rt[sp].inuse = (uint16_t)n;
			z->cls[rec->cls].objs += n;
			span_link_free(s, sp, r->used[sp]);
			if (n < z->cls[rec->cls].slots)
				partial_add(z, rec->cls, sp);
			span_account(z, rec->cls, 1);
			continue;
		}
		/* No page left in it: its frames are free, unless another
		 * span claimed them too (then nobody has them). */
		for (uint32_t f = 0; span_rec_ok(r, sp) && f < rec->nframes; f++)
			if (r->frame_user[rec->frames[f]] == (r->span_tag | sp))
				r->frame_user[rec->frames[f]] = TMEM_NIL;
		rec_set_state(&rec->state, TMEM_REC_FREE);
		z->rt[sp].next = z->span_free;
		z->span_free = sp;
	}
	z->zobj_free = TMEM_NIL;
	for (uint32_t i = z->zobj_bump; i-- > 0;)
		if (!(r->ent_used[i / 64] >> (i % 64) & 1))
			ent_free(z, i);
	free(r->span_ok);
	free(r->used);
	free(r->ent_used);
	free(r);
}
