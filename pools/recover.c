/* SPDX-License-Identifier: MIT */
/*
 * Recovery: rebuild the store from an adopted arena's records (durable.h)
 * following the commit protocol (COMMIT.md).  Only the commit words are
 * trusted as to what exists: a client record's and a pool record's
 * state, a page descriptor's TMEM_DATA_LIVE bit.  Every index read from
 * the file is bounds-checked before use, and a page whose record does not
 * add up (a bad object, pool or frame, a frame claimed twice, an object
 * whose oid another object of the pool already has, a second copy of a
 * handle) is dropped rather than guessed at: recovery may lose a page,
 * never return wrong bytes.  Everything the descriptors link (hash
 * chains, object lists, LRU lists, free lists) and every count is
 * rebuilt; the old links are ignored.
 *
 * Runs single-threaded inside store_open(), before the store is
 * handed out, so it takes no locks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "internal.h"

#define FRAME_FREE TMEM_NIL
#define FRAME_CLASH (TMEM_NIL - 1)
#define FRAME_SPAN 0x80000000u      /* | span: a zs span's (page indices are lower) */

struct recover {
	struct tmem_store *s;
	struct tmem_client **by_rec; /* client_bump entries */
	uint32_t *frame_user;        /* frame_bump entries: adopted page, FRAME_* */
	uint64_t *chunk_live;        /* chunk_bump masks of live objects */
	uint32_t *dups;              /* pages to remove once the lists are whole */
	uint32_t nr_dups;
	struct zs_recover *zs;
	struct tmem_recovery_info *info;
};

static bool is_raw(uint32_t h)
{
	return !(h & TMEM_H_ZS);
}

static bool is_span_frame(uint32_t u)
{
	return u != FRAME_FREE && u != FRAME_CLASH && (u & FRAME_SPAN);
}

static void rec_free(struct tmem_store *s, uint32_t i)
{
	rec_set_state(&s->crec[i].state, TMEM_REC_FREE);
	s->crec[i].free_next = s->crec_free;
	s->crec_free = i;
}

/* LIVE client records become detached clients; the rest are freed. */
static int recover_clients(struct recover *r)
{
	struct tmem_store *s = r->s;

	for (uint32_t i = s->hdr->client_bump; i-- > 0;) {
		struct tmem_client_rec *cr = &s->crec[i];
		struct tmem_client *c;
		int ret;

		cr->name[sizeof(cr->name) - 1] = '\0';
		if (cr->state != TMEM_REC_LIVE || cr->name[0] == '\0' ||
		    strcmp(cr->name, s->shared_client->name) == 0) {
			rec_free(s, i);
			continue;
		}
		ret = client_alloc(s, cr->name, &c);
		if (ret < 0)
			return ret;
		c->id = cr->id;
		if (cr->id >= s->next_client_id)
			s->next_client_id = cr->id + 1;
		c->rec = cr;
		do_client_set_detached(c, true);
		do_client_list_add(c);
		r->by_rec[i] = c;
		r->info->clients++;
	}
	return 0;
}

/* The client a LIVE private pool record names, with its slot still free. */
static struct tmem_client *pool_rec_owner(struct recover *r,
					  const struct tmem_pool_rec *pr)
{
	struct tmem_client *c;

	if (pr->state != TMEM_REC_LIVE || pr->shared ||
	    pr->client >= r->s->hdr->client_bump || pr->slot < 0 ||
	    pr->slot >= (int32_t)TMEM_MAX_POOLS_PER_CLIENT)
		return NULL;
	c = r->by_rec[pr->client];
	if (!c || atomic_load_explicit(&c->slots[pr->slot].ref, memory_order_relaxed))
		return NULL;
	return c;
}

static int recover_one_pool(struct recover *r, struct tmem_pool *pool,
			    struct tmem_client *owner)
{
	struct tmem_store *s = r->s;
	int ret = htab_init(s, &pool->pages);

	if (ret == 0)
		ret = htab_init(s, &pool->objs);
	if (ret < 0)
		return ret;
	pool->gen = pool->rec->gen + 1;
	pool->rec->gen = pool->gen;
	pool->live = true;
	pool->persistent = pool->rec->persistent != 0;
	pool->shared = false;
	pool->owner = owner;
	do_slot_set(owner, pool->rec->slot, pool);
	r->info->pools++;
	return 0;
}

static int recover_pools(struct recover *r)
{
	struct tmem_store *s = r->s;
	int ret = do_pool_structs_reserve(s, s->hdr->pool_bump);

	if (ret < 0)
		return ret;
	for (uint32_t gid = 0; gid < s->pool_bump; gid++) {
		struct tmem_pool *pool = s->pool_tab[gid];
		struct tmem_client *owner = pool_rec_owner(r, pool->rec);

		if (!owner) {
			rec_set_state(&pool->rec->state, TMEM_REC_FREE);
			continue;
		}
		ret = recover_one_pool(r, pool, owner);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The pool a published page belongs to, or NULL when its record is bad. */
static struct tmem_pool *page_rec_pool(struct recover *r, uint32_t i)
{
	struct tmem_store *s = r->s;
	const struct tmem_pagedesc *p = pd(s, i);
	uint32_t obj = pd_obj(p), h = pd_handle(p), gid;

	if (!pd_live(p) || obj >= s->descs.chunk_bump * TMEM_OBJS_PER_CHUNK ||
	    (is_raw(h) && ((h & TMEM_H_IDX) >= s->frames.total_frames ||
			   (h & TMEM_H_IDX) >= s->hdr->frame_bump)))
		return NULL;
	gid = s->descs.chunks[obj / TMEM_OBJS_PER_CHUNK].owner;
	if (gid >= s->pool_bump || !s->pool_tab[gid]->live)
		return NULL;
	return s->pool_tab[gid];
}

/* Pass 1: which frames the published raw pages claim, and which twice
 * (spans claimed theirs first; a page on a span's frame is dropped). */
static void claim_frames(struct recover *r)
{
	struct tmem_store *s = r->s;

	for (uint32_t i = 0; i < s->descs.page_bump; i++) {
		uint32_t h = pd_handle(pd(s, i)), *u;

		if (!is_raw(h) || !page_rec_pool(r, i))
			continue;
		u = &r->frame_user[h & TMEM_H_IDX];
		if (!is_span_frame(*u))
			*u = *u == FRAME_FREE ? i : FRAME_CLASH;
	}
}

/* Pass 2: link page i into its pool if everything about it adds up. */
static bool adopt_page(struct recover *r, uint32_t i)
{
	struct tmem_store *s = r->s;
	struct tmem_pool *pool = page_rec_pool(r, i);
	struct tmem_pagedesc *p = pd(s, i);
	uint32_t obj, head, dup;
	uint64_t oh;

	if (!pool || (is_raw(pd_handle(p)) && r->frame_user[pd_handle(p) & TMEM_H_IDX] != i))
		return false;
	obj = pd_obj(p);
	oh = oid_hash(s, &od(s, obj)->oid);
	head = do_obj_lookup(pool, &od(s, obj)->oid, oh);
	if (head != TMEM_NIL && pd_obj(pd(s, head)) != obj)
		return false; /* two objects with one oid */
	dup = do_page_lookup(pool, &od(s, obj)->oid, p->index, oh);
	if (dup != TMEM_NIL) {
		r->dups[r->nr_dups++] = dup; /* neither copy can be trusted */
		return false;
	}
	if (!is_raw(pd_handle(p)) && !zs_recover_claim(r->zs, i, pd_handle(p)))
		return false;
	do_page_adopt(pool, i, oh);
	r->chunk_live[obj / TMEM_OBJS_PER_CHUNK] |= 1ull << (obj % TMEM_OBJS_PER_CHUNK);
	r->info->pages++;
	if (pool->persistent)
		r->info->persistent_pages++;
	else
		r->info->ephemeral_pages++;
	return true;
}

static void adopt_pages(struct recover *r)
{
	struct tmem_store *s = r->s;
	struct tmem_descs *d = &s->descs;

	d->page_free = TMEM_NIL;
	for (uint32_t i = d->page_bump; i-- > 0;) {
		struct tmem_pagedesc *p = pd(s, i);

		if (adopt_page(r, i)) {
			d->pages_live++;
			continue;
		}
		if (pd_live(p))
			r->info->pages_dropped++;
		p->data = 0;
		pd_set_obj(p, TMEM_NIL);
		p->hnext = d->page_free;
		d->page_free = i;
	}
}

/* Pass 3: chunks, frames and pool gids not in use go on their free lists. */

/*
 * Free frames below the bump may be holes (punched before the restart)
 * or hold a stale page: all go to the released stack, punched out now
 * (a hole costs nothing), so the resident count is right and each is
 * given blocks again before its first touch (frames.c).  The stack came
 * out in descending order: punched a contiguous run at a time.
 */
static void release_free_frames(struct tmem_frames *a)
{
	uint32_t n = a->free_top;

	if (!a->file_backed)
		return;
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i + 1;

		while (j < n && a->free_stack[j] + 1 == a->free_stack[j - 1])
			j++;
		if (frames_punch(a, a->free_stack[j - 1], j - i) < 0)
			return; /* they stay resident and free */
		i = j;
	}
	/* Descending, so the lowest frame is on top: taken first. */
	memcpy(a->released_stack, a->free_stack, (size_t)n * sizeof(*a->free_stack));
	a->released_top = n;
	a->free_top = a->free_low = 0;
}

static void rebuild_free_lists(struct recover *r)
{
	struct tmem_store *s = r->s;
	struct tmem_frames *a = &s->frames;

	s->descs.chunk_free = TMEM_NIL;
	for (uint32_t c = s->descs.chunk_bump; c-- > 0;) {
		if (r->chunk_live[c])
			descs_chunk_adopt(s->pool_tab[s->descs.chunks[c].owner], c,
					  r->chunk_live[c]);
		else
			descs_chunk_release(s, c);
	}
	zs_recover_end(r->zs); /* frees the frames of the spans it drops */
	r->zs = NULL;
	a->bump = s->hdr->frame_bump < a->total_frames ? s->hdr->frame_bump
						       : a->total_frames;
	a->free_top = 0;
	for (uint32_t f = a->bump; f-- > 0;) {
		uint32_t u = r->frame_user[f];

		if (is_span_frame(u))
			continue; /* a kept span's */
		if (u == FRAME_FREE || u == FRAME_CLASH || !is_raw(pd_handle(pd(s, u))) ||
		    (pd_handle(pd(s, u)) & TMEM_H_IDX) != f || pd_obj_raw(pd(s, u)) == TMEM_NIL)
			a->free_stack[a->free_top++] = f;
	}
	a->free_high = a->free_top;
	a->free_low = a->free_top;
	a->released_top = 0;
	a->file_mark = a->bump;
	relaxed_set(&a->used, a->bump - a->free_top);
	release_free_frames(a);
	relaxed_set(&a->used_max, a->used);
	for (uint32_t gid = s->pool_bump; gid-- > 0;)
		if (!s->pool_tab[gid]->live)
			do_pool_struct_release(s->pool_tab[gid]);
}

/* Pass 4: the pages that had a second copy go too, now that every list
 * they are on is whole. */
static void drop_dups(struct recover *r)
{
	struct tmem_store *s = r->s;

	for (uint32_t k = 0; k < r->nr_dups; k++) {
		uint32_t page = r->dups[k];
		struct tmem_pool *pool;

		if (pd_obj_raw(pd(s, page)) == TMEM_NIL || !pd_live(pd(s, page)))
			continue; /* listed twice */
		pool = page_pool(s, page);
		do_page_remove(pool, page, page_oid_hash(pool, page));
		r->info->pages--;
		r->info->pages_dropped++;
		if (pool->persistent)
			r->info->persistent_pages--;
		else
			r->info->ephemeral_pages--;
	}
}

static int recover_alloc(struct recover *r)
{
	struct tmem_store *s = r->s;
	uint32_t frames = s->hdr->frame_bump ? s->hdr->frame_bump : 1;

	r->by_rec = calloc(s->hdr->client_bump + 1, sizeof(*r->by_rec));
	r->frame_user = malloc((size_t)frames * sizeof(*r->frame_user));
	r->chunk_live = calloc(s->descs.chunk_bump + 1, sizeof(*r->chunk_live));
	r->dups = malloc(((size_t)s->descs.page_bump + 1) * sizeof(*r->dups));
	if (!r->by_rec || !r->frame_user || !r->chunk_live || !r->dups)
		return -ENOMEM;
	memset(r->frame_user, 0xff, (size_t)frames * sizeof(*r->frame_user));
	return zs_recover_begin(s, &r->zs, r->frame_user, s->hdr->frame_bump, FRAME_SPAN);
}

int store_recover(struct tmem_store *s)
{
	struct recover r = { .s = s, .info = &s->recovery };
	uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);
	int ret;

	memset(&s->recovery, 0, sizeof(s->recovery));
	s->descs.page_bump = s->hdr->page_bump;
	s->descs.chunk_bump = s->hdr->chunk_bump;
	ret = recover_alloc(&r);
	if (ret == 0)
		ret = recover_clients(&r);
	if (ret == 0)
		ret = recover_pools(&r);
	if (ret == 0) {
		claim_frames(&r);
		adopt_pages(&r);
		rebuild_free_lists(&r);
		drop_dups(&r);
		s->hdr->starts++;
		s->recovery.adopted = true;
		s->recovery.starts = s->hdr->starts;
		s->recovery.wall_usec = clock_nsec(CLOCK_REALTIME) / 1000u;
		s->recovery.duration_nsec = clock_nsec(CLOCK_MONOTONIC) - t0;
	}
	if (r.zs)
		zs_recover_end(r.zs);
	free(r.by_rec);
	free(r.frame_user);
	free(r.chunk_live);
	free(r.dups);
	return ret;
}
