/* SPDX-License-Identifier: MIT */
/*
 * Page and object descriptors: index-addressed arrays in the store's
 * mapping (durable.h).  Page descriptors are handed out from a free
 * list (through hnext) or a bump index.  Object descriptors come in
 * chunks of TMEM_OBJS_PER_CHUNK that belong to one pool, so an object
 * needs no pool field: its pool is its chunk's owner.  Chunks work like
 * slabs (see struct tmem_chunk): empty ones go back to the store.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

void descs_geometry(uint32_t max_frames, uint32_t *page_cap, uint32_t *chunk_cap)
{
	uint64_t pages = (uint64_t)max_frames * TMEM_DESCS_PER_FRAME, chunks;

	if (pages > TMEM_MAX_DESCS)
		pages = TMEM_MAX_DESCS;
	/* A chunk in use holds a live object (each has a page) or is the one
	 * empty chunk a pool keeps, so this many never run out however the
	 * objects are scattered; it is only address space (NORESERVE).
	 * Object indices must stay below TMEM_OBJ_HEAD, which caps it for
	 * arenas above 128 GiB. */
	chunks = pages + TMEM_MAX_POOLS_TOTAL;
	if (chunks > TMEM_OBJ_HEAD / TMEM_OBJS_PER_CHUNK)
		chunks = TMEM_OBJ_HEAD / TMEM_OBJS_PER_CHUNK;
	*page_cap = (uint32_t)pages;
	*chunk_cap = (uint32_t)chunks;
}

int descs_page_alloc(struct tmem_store *s, const struct tmem_enc *e,
		     struct tmem_pool *held, uint32_t *page)
{
	struct tmem_descs *d = &s->descs;
	uint32_t handle, i;
	int ret;

	pthread_mutex_lock(&s->alloc_lock);
	ret = do_data_alloc(s, e, held, &handle);
	if (ret < 0)
		goto out;
	if (d->page_free != TMEM_NIL) {
		i = d->page_free;
		d->page_free = d->pages[i].hnext;
	} else if (d->page_bump < d->page_cap) {
		i = d->page_bump++;
		relaxed_set(&d->hdr->page_bump, d->page_bump);
	} else {
		data_ops(handle)->free(s, handle);
		ret = -ENOSPC;
		goto out;
	}
	d->pages[i].data = handle; /* not TMEM_DATA_LIVE: unpublished */
	d->pages_live++;
	*page = i;
out:
	pthread_mutex_unlock(&s->alloc_lock);
	return ret;
}

void do_descs_page_free(struct tmem_store *s, uint32_t page)
{
	struct tmem_descs *d = &s->descs;
	struct tmem_pagedesc *p = &d->pages[page];

	pd_unpublish(p); /* already, unless it never was published */
	data_ops(pd_handle(p))->free(s, pd_handle(p));
	pd_set_obj(p, TMEM_NIL);
	p->hnext = d->page_free;
	d->page_free = page;
	d->pages_live--;
}

static int chunk_get(struct tmem_store *s, uint32_t gid, uint32_t *chunk)
{
	struct tmem_descs *d = &s->descs;
	int ret = 0;

	pthread_mutex_lock(&s->alloc_lock);
	if (d->chunk_free != TMEM_NIL) {
		*chunk = d->chunk_free;
		d->chunk_free = d->chunks[*chunk].next;
	} else if (d->chunk_bump < d->chunk_cap) {
		*chunk = d->chunk_bump++;
		relaxed_set(&d->hdr->chunk_bump, d->chunk_bump);
	} else {
		ret = -ENOSPC;
	}
	if (ret == 0)
		d->chunks[*chunk].owner = gid;
	pthread_mutex_unlock(&s->alloc_lock);
	return ret;
}

static void chunk_put(struct tmem_store *s, uint32_t chunk)
{
	struct tmem_descs *d = &s->descs;

	pthread_mutex_lock(&s->alloc_lock);
	d->chunks[chunk].next = d->chunk_free;
	d->chunk_free = chunk;
	pthread_mutex_unlock(&s->alloc_lock);
}

static void partial_add(struct tmem_pool *pool, uint32_t c)
{
	struct tmem_chunk *ch = pool->store->descs.chunks;

	ch[c].prev = TMEM_NIL;
	ch[c].next = pool->partial;
	if (pool->partial != TMEM_NIL)
		ch[pool->partial].prev = c;
	pool->partial = c;
}

static void partial_del(struct tmem_pool *pool, uint32_t c)
{
	struct tmem_chunk *ch = pool->store->descs.chunks;

	if (ch[c].prev != TMEM_NIL)
		ch[ch[c].prev].next = ch[c].next;
	else
		pool->partial = ch[c].next;
	if (ch[c].next != TMEM_NIL)
		ch[ch[c].next].prev = ch[c].prev;
}

/* A new chunk for the pool: every slot free, on the partial list. */
static int pool_chunk_new(struct tmem_pool *pool)
{
	struct tmem_store *s = pool->store;
	struct tmem_chunk *ch;
	uint32_t c, first;
	int ret = chunk_get(s, pool->gid, &c);

	if (ret < 0)
		return ret;
	ch = &s->descs.chunks[c];
	first = c * TMEM_OBJS_PER_CHUNK;
	for (uint32_t i = 0; i < TMEM_OBJS_PER_CHUNK; i++)
		od(s, first + i)->oid.oid[0] = i + 1; /* the last links to "none" */
	ch->free = 0;
	ch->live = 0;
	partial_add(pool, c);
	return 0;
}

int do_pool_obj_alloc(struct tmem_pool *pool, uint32_t *obj)
{
	struct tmem_store *s = pool->store;
	struct tmem_chunk *ch;
	uint32_t c;
	int ret;

	if (pool->partial == TMEM_NIL) {
		ret = pool_chunk_new(pool);
		if (ret < 0)
			return ret;
	}
	c = pool->partial;
	ch = &s->descs.chunks[c];
	*obj = c * TMEM_OBJS_PER_CHUNK + ch->free;
	ch->free = (uint8_t)od(s, *obj)->oid.oid[0];
	ch->live++;
	if (ch->free == TMEM_OBJS_PER_CHUNK)
		partial_del(pool, c); /* full */
	return 0;
}

void do_pool_obj_free(struct tmem_pool *pool, uint32_t obj)
{
	struct tmem_store *s = pool->store;
	uint32_t c = obj / TMEM_OBJS_PER_CHUNK;
	struct tmem_chunk *ch = &s->descs.chunks[c];

	if (ch->free == TMEM_OBJS_PER_CHUNK)
		partial_add(pool, c); /* was full */
	od(s, obj)->oid.oid[0] = ch->free;
	ch->free = obj % TMEM_OBJS_PER_CHUNK;
	ch->live--;
	/* Empty: back to the store, unless it is the pool's last partial one. */
	if (ch->live == 0 && (ch->prev != TMEM_NIL || ch->next != TMEM_NIL)) {
		partial_del(pool, c);
		chunk_put(s, c);
	}
}

void do_pool_chunks_release(struct tmem_pool *pool)
{
	while (pool->partial != TMEM_NIL) {
		uint32_t c = pool->partial;

		partial_del(pool, c);
		chunk_put(pool->store, c);
	}
}

void descs_chunk_adopt(struct tmem_pool *pool, uint32_t c, uint64_t live)
{
	struct tmem_store *s = pool->store;
	struct tmem_chunk *ch = &s->descs.chunks[c];
	uint32_t first = c * TMEM_OBJS_PER_CHUNK;
	uint8_t next = TMEM_OBJS_PER_CHUNK;

	/* Free slots relinked from the top, so the lowest is handed out first. */
	for (uint32_t i = TMEM_OBJS_PER_CHUNK; i-- > 0;) {
		if (live & (1ull << i))
			continue;
		od(s, first + i)->oid.oid[0] = next;
		next = (uint8_t)i;
	}
	ch->free = next;
	ch->live = (uint8_t)__builtin_popcountll(live);
	ch->prev = ch->next = TMEM_NIL;
	if (ch->free != TMEM_OBJS_PER_CHUNK)
		partial_add(pool, c);
}

void descs_chunk_release(struct tmem_store *s, uint32_t c)
{
	s->descs.chunks[c].next = s->descs.chunk_free;
	s->descs.chunk_free = c;
}
