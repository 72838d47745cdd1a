/* SPDX-License-Identifier: MIT */
/*
 * Page and object descriptors: index-addressed arrays in one
 * MAP_NORESERVE mapping.  Page descriptors are handed out from a free
 * list (through hnext) or a bump index.  Object descriptors come in
 * chunks of TMEM_OBJS_PER_CHUNK that belong to one pool, so an object
 * needs no pool field: its pool is its chunk's owner.  Chunks work like
 * slabs (see struct tmem_chunk): empty ones go back to the store.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "store_internal.h"

#define CHUNK_BYTES (TMEM_OBJS_PER_CHUNK * sizeof(struct tmem_objdesc))

int descs_init(struct tmem_descs *d, uint32_t max_frames)
{
	uint64_t page_cap = (uint64_t)max_frames * TMEM_DESCS_PER_FRAME;
	uint64_t chunk_cap, pages_bytes, objs_bytes, total;
	uint8_t *map;

	memset(d, 0, sizeof(*d));
	d->page_free = TMEM_NIL;
	d->chunk_free = TMEM_NIL;
	if (page_cap > TMEM_MAX_DESCS)
		page_cap = TMEM_MAX_DESCS;
	/* A chunk in use holds a live object (each has a page) or is the one
	 * empty chunk a pool keeps, so this many never run out however the
	 * objects are scattered; it is only address space (NORESERVE).
	 * Object indices must stay below TMEM_OBJ_HEAD, which caps it for
	 * arenas above 128 GiB. */
	chunk_cap = page_cap + TMEM_MAX_POOLS_TOTAL;
	if (chunk_cap > TMEM_OBJ_HEAD / TMEM_OBJS_PER_CHUNK)
		chunk_cap = TMEM_OBJ_HEAD / TMEM_OBJS_PER_CHUNK;
	pages_bytes = page_cap * sizeof(struct tmem_pagedesc);
	objs_bytes = chunk_cap * CHUNK_BYTES;
	total = pages_bytes + objs_bytes + chunk_cap * sizeof(struct tmem_chunk);
	map = mmap(NULL, total, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return -errno;
	/* Descriptors are reached at random: huge pages save TLB misses. */
	(void)madvise(map, total, MADV_HUGEPAGE);
	d->map_bytes = total;
	d->pages = (struct tmem_pagedesc *)map;
	d->page_cap = page_cap;
	d->objs = (struct tmem_objdesc *)(map + pages_bytes);
	d->chunk_cap = chunk_cap;
	d->chunks = (struct tmem_chunk *)(map + pages_bytes + objs_bytes);
	return 0;
}

void descs_fini(struct tmem_descs *d)
{
	if (d->pages)
		munmap(d->pages, d->map_bytes);
	d->pages = NULL;
}

int descs_page_alloc(struct tmem_store *s, uint32_t len, uint32_t *page)
{
	struct tmem_descs *d = &s->descs;
	uint32_t handle, i;
	int ret;

	pthread_mutex_lock(&s->alloc_lock);
	ret = s->data->alloc(&s->arena, len, &handle);
	if (ret < 0)
		goto out;
	if (d->page_free != TMEM_NIL) {
		i = d->page_free;
		d->page_free = d->pages[i].hnext;
	} else if (d->page_bump < d->page_cap) {
		i = d->page_bump++;
	} else {
		s->data->free(&s->arena, handle);
		ret = -ENOSPC;
		goto out;
	}
	d->pages[i].data = handle;
	d->pages_live++;
	*page = i;
out:
	pthread_mutex_unlock(&s->alloc_lock);
	return ret;
}

void descs_page_free_locked(struct tmem_store *s, uint32_t page)
{
	struct tmem_descs *d = &s->descs;
	struct tmem_pagedesc *p = &d->pages[page];

	s->data->free(&s->arena, p->data);
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

int pool_obj_alloc(struct tmem_pool *pool, uint32_t *obj)
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

void pool_obj_free(struct tmem_pool *pool, uint32_t obj)
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

void pool_chunks_release(struct tmem_pool *pool)
{
	while (pool->partial != TMEM_NIL) {
		uint32_t c = pool->partial;

		partial_del(pool, c);
		chunk_put(pool->store, c);
	}
}

struct tmem_pool *page_pool(const struct tmem_store *s, uint32_t page)
{
	uint32_t chunk = pd_obj(pd(s, page)) / TMEM_OBJS_PER_CHUNK;

	return s->pool_tab[s->descs.chunks[chunk].owner];
}
