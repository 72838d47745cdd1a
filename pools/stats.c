/* SPDX-License-Identifier: MIT */
/*
 * Counters and info snapshots.  Op counters are relaxed atomics read
 * without stopping the store, so a snapshot may be off by the ops in
 * flight; page and object counts are read under the pool lock.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static uint64_t ld(const _Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

_Static_assert(sizeof(struct tmem_counters) == sizeof(struct tmem_op_counters),
	       "tmem_counters mirrors tmem_op_counters field for field");

/* out += c */
static void counters_add(const struct tmem_counters *c,
			 struct tmem_op_counters *out)
{
	const _Atomic uint64_t *src = (const _Atomic uint64_t *)c;
	uint64_t *dst = (uint64_t *)out;

	for (size_t i = 0; i < TMEM_NR_CTRS; i++)
		dst[i] += ld(&src[i]);
}

static void counters_snapshot(const struct tmem_counters *c,
			      struct tmem_op_counters *out)
{
	memset(out, 0, sizeof(*out));
	counters_add(c, out);
}

static void op_counters_add(struct tmem_op_counters *sum, const struct tmem_op_counters *o)
{
	uint64_t *dst = (uint64_t *)sum;
	const uint64_t *src = (const uint64_t *)o;

	for (size_t i = 0; i < TMEM_NR_CTRS; i++)
		dst[i] += src[i];
}

/* store->lock held: c's ops by kind (retired plus live slots) added to by_kind. */
static void do_client_ops(struct tmem_client *c, struct tmem_op_counters by_kind[2])
{
	for (int k = 0; k < 2; k++)
		counters_add(&c->ops[k], &by_kind[k]);
	for (uint32_t i = 0; i < TMEM_MAX_POOLS_PER_CLIENT; i++) {
		uint64_t ref = ld(&c->slots[i].ref);

		if (ref)
			counters_add(&c->slots[i].ops,
				     &by_kind[pool_kind(c->store->pool_tab[(uint32_t)ref - 1])]);
	}
}

void store_arena_counts(struct tmem_store *s, struct tmem_arena_counts *out)
{
	uint32_t total, used, limit;

	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	/* Without alloc_lock: every put asks (policy/ watches its reserve),
	 * and a global lock there would serialise all guests.  The two
	 * reads may straddle an op; a shrink never leaves used above total,
	 * but a racing pair of reads might, hence the clamp. */
	used = relaxed_get(&s->frames.used);
	total = relaxed_get(&s->frames.total_frames);
	limit = frames_limit(&s->frames);
	out->total_pages = total;
	out->limit_pages = limit;
	out->used_pages = used;
	out->free_pages = limit > used ? limit - used : 0;
	out->ephemeral = ld(&s->kind_pages[TMEM_KIND_EPH]);
	out->persistent = ld(&s->kind_pages[TMEM_KIND_PERS]);
}

/* Resident metadata: descriptors, records and the free-frame stack up to
 * their high-water marks, tables, structs. */
static uint64_t metadata_bytes(struct tmem_store *s)
{
	uint64_t bytes;

	pthread_mutex_lock(&s->alloc_lock);
	bytes = (uint64_t)s->descs.page_bump * sizeof(struct tmem_pagedesc) +
		(uint64_t)s->descs.chunk_bump *
			(TMEM_OBJS_PER_CHUNK * sizeof(struct tmem_objdesc) +
			 sizeof(struct tmem_chunk)) +
		(uint64_t)s->frames.free_high * sizeof(uint32_t) +
		TMEM_PAGE_SIZE + /* the durable header, and the records in use */
		(uint64_t)s->hdr->client_bump * sizeof(struct tmem_client_rec) +
		(uint64_t)s->hdr->pool_bump * sizeof(struct tmem_pool_rec) +
		/* compression: an entry a page, a record and its derived
		 * state a span */
		(uint64_t)s->zs.zobj_bump * sizeof(uint64_t) +
		(uint64_t)s->zs.span_bump *
			(sizeof(struct tmem_zspan_rec) + sizeof(struct tmem_zspan_rt));
	pthread_mutex_unlock(&s->alloc_lock);
	return bytes + ld(&s->table_bytes) + ld(&s->struct_bytes);
}

/* pool->lock held: its compression counts, of the pages in memory (those
 * in the host tier have their own: tier_pages, tier_bytes). */
static void do_pool_zstats(const struct tmem_pool *pool, struct tmem_zstats *z)
{
	z->pages = pool->pages.count - ld(&pool->tier_pages);
	z->compr_data_size = ld(&pool->zbytes);
	z->same_pages = ld(&pool->same_pages);
	z->huge_pages = ld(&pool->huge_pages);
}

static void zstats_add(struct tmem_zstats *sum, const struct tmem_zstats *z)
{
	sum->pages += z->pages;
	sum->compr_data_size += z->compr_data_size;
	sum->same_pages += z->same_pages;
	sum->huge_pages += z->huge_pages;
}

/* The store's compression and allocator figures (zram's mm_stat). */
static void store_zinfo(struct tmem_store *s, struct tmem_store_info *out)
{
	struct tmem_zs *z = &s->zs;
	uint64_t capacity, frames;

	pthread_mutex_lock(&s->lock);
	for (uint32_t gid = 0; gid < s->pool_bump; gid++) {
		struct tmem_pool *pool = s->pool_tab[gid];
		struct tmem_zstats pz;

		pthread_mutex_lock(&pool->lock);
		if (pool->live) {
			do_pool_zstats(pool, &pz);
			zstats_add(&out->z, &pz);
			zstats_add(&out->z_kind[pool_kind(pool)], &pz);
		}
		pthread_mutex_unlock(&pool->lock);
	}
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&s->alloc_lock);
	do_zs_frag(s, &capacity);
	frames = ld(&z->span_frames);
	out->zs_fragmentation = capacity - ld(&z->slot_bytes);
	out->zs_overhead = frames * TMEM_PAGE_SIZE - capacity + ld(&z->slot_bytes) -
			   ld(&z->obj_bytes);
	out->mem_used_total = (uint64_t)relaxed_get(&s->frames.used) * TMEM_PAGE_SIZE;
	pthread_mutex_unlock(&s->alloc_lock);
	out->compactions = ld(&z->compactions);
	out->pages_compacted = ld(&z->pages_compacted);
	out->decode_errors = ld(&z->decode_errors);
}

void store_info(struct tmem_store *s, struct tmem_store_info *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	store_arena_counts(s, &out->arena);
	out->evictions = ld(&s->evictions);
	pthread_mutex_lock(&s->lock);
	out->nr_clients = s->nr_clients;
	for (int k = 0; k < 2; k++)
		counters_snapshot(&s->gone_ops[k], &out->ops_kind[k]);
	for (struct tmem_client *c = s->clients; c; c = c->next) {
		out->nr_detached += c->detached;
		do_client_ops(c, out->ops_kind);
	}
	out->clients_reattached = ld(&s->clients_reattached);
	out->clients_expired = ld(&s->clients_expired);
	pthread_mutex_unlock(&s->lock);
	out->metadata_bytes = metadata_bytes(s);
	store_zinfo(s, out);
	pthread_mutex_lock(&s->alloc_lock);
	out->mem_used_max = (uint64_t)s->frames.used_max * TMEM_PAGE_SIZE;
	out->mem_resident = (uint64_t)frames_resident(&s->frames) * TMEM_PAGE_SIZE;
	out->frames_released = s->frames.released_total;
	out->frames_warmed = s->frames.warmed_total;
	out->frames_cold_taken = s->frames.cold_taken;
	pthread_mutex_unlock(&s->alloc_lock);
}

static uint32_t do_nr_pools(const struct tmem_client *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < TMEM_MAX_POOLS_PER_CLIENT; i++)
		n += ld(&c->slots[i].ref) != 0;
	return n;
}

static void tier_stats(struct tmem_tier_stats *out, const _Atomic uint64_t *pages,
		       const _Atomic uint64_t *bytes, const _Atomic uint64_t *spilled,
		       const _Atomic uint64_t *readbacks, const struct tmem_lat_hist *lat)
{
	out->pages = ld(pages);
	out->bytes = ld(bytes);
	out->spilled = ld(spilled);
	out->readbacks = ld(readbacks);
	out->readback_p50_ns = lat_quantile(lat, 0.50);
	out->readback_p99_ns = lat_quantile(lat, 0.99);
}

void store_client_info(struct tmem_client *c, struct tmem_client_info *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	out->id = c->id;
	memcpy(out->name, c->name, sizeof(out->name));
	store_client_page_counts(c, &out->pages);
	pthread_mutex_lock(&c->store->lock);
	do_client_ops(c, out->ops_kind);
	for (int k = 0; k < 2; k++)
		op_counters_add(&out->ops, &out->ops_kind[k]);
	out->nr_pools = do_nr_pools(c);
	for (uint32_t i = 0; i < TMEM_MAX_POOLS_PER_CLIENT; i++) {
		uint64_t ref = ld(&c->slots[i].ref);
		struct tmem_pool *pool;
		struct tmem_zstats pz;

		if (!ref)
			continue;
		pool = c->store->pool_tab[(uint32_t)ref - 1];
		pthread_mutex_lock(&pool->lock);
		do_pool_zstats(pool, &pz);
		pthread_mutex_unlock(&pool->lock);
		zstats_add(&out->z, &pz);
	}
	pthread_mutex_unlock(&c->store->lock);
	store_client_get_compress(c, &out->compress);
	tier_stats(&out->tier, &c->tier_pages, &c->tier_bytes, &c->spilled, &c->readbacks,
		   &c->readback_lat);
	out->spill_max = ld(&c->spill_max);
	if (tier_on(&c->store->tier)) {
		struct tmem_tier_info ti;
		uint64_t room = out->spill_max > out->tier.bytes ? out->spill_max - out->tier.bytes : 0;

		store_tier_info(c->store, &ti);
		out->tier_free_bytes = room < ti.free_bytes ? room : ti.free_bytes;
	}
}

void store_tier_info(struct tmem_store *s, struct tmem_tier_info *out)
{
	struct tmem_tier *t;

	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!s || !tier_on(&s->tier))
		return;
	t = &s->tier;
	out->configured = true;
	pthread_mutex_lock(&t->lock);
	out->capacity_bytes = t->nunits * TMEM_TIER_UNIT;
	out->used_bytes = t->used_units * TMEM_TIER_UNIT;
	out->last_error = t->last_error;
	pthread_mutex_unlock(&t->lock);
	out->free_bytes = out->capacity_bytes - out->used_bytes;
	tier_stats(&out->st, &t->pages, &t->obj_bytes, &t->spilled, &t->readbacks, &t->lat);
	out->spilled_bytes = ld(&t->spilled_bytes);
	out->writes = ld(&t->writes);
	out->write_errors = ld(&t->write_errors);
	out->aborted = ld(&t->aborted);
	out->read_errors = ld(&t->read_errors);
	out->spill_nsec = ld(&t->spill_nsec);
}

int store_client_set_spill_max(struct tmem_client *c, uint64_t bytes)
{
	if (!c)
		return -EINVAL;
	atomic_store_explicit(&c->spill_max, bytes, memory_order_relaxed);
	return 0;
}

uint64_t store_client_spill_max(const struct tmem_client *c)
{
	return c ? ld(&c->spill_max) : 0;
}

static void do_pool_info(struct tmem_client *c, int32_t id,
			 struct tmem_pool_info *info)
{
	struct tmem_pool *pool = c->store->pool_tab[(uint32_t)ld(&c->slots[id].ref) - 1];

	memset(info, 0, sizeof(*info));
	info->id = id;
	info->persistent = pool->persistent;
	info->shared = pool->shared;
	info->uuid = pool->uuid;
	info->sharers = pool->shared ? pool->sharers : 1;
	pthread_mutex_lock(&pool->lock);
	info->pages = pool->pages.count;
	info->objects = pool->objs.count;
	do_pool_zstats(pool, &info->z);
	info->tier_pages = ld(&pool->tier_pages);
	info->tier_bytes = ld(&pool->tier_bytes);
	info->readbacks = ld(&pool->readbacks);
	pthread_mutex_unlock(&pool->lock);
	counters_snapshot(&c->slots[id].ops, &info->ops);
	info->ops.evictions = ld(&pool->evictions);
}

int store_client_for_each_pool(struct tmem_client *c,
			       int (*fn)(const struct tmem_pool_info *, void *),
			       void *ctx)
{
	struct tmem_pool_info info[TMEM_MAX_POOLS_PER_CLIENT];
	uint32_t n = 0;
	int ret = 0;

	if (!c || !fn)
		return -EINVAL;
	/* Snapshot under the store lock, call fn without it. */
	pthread_mutex_lock(&c->store->lock);
	for (int32_t i = 0; i < (int32_t)TMEM_MAX_POOLS_PER_CLIENT; i++)
		if (ld(&c->slots[i].ref))
			do_pool_info(c, i, &info[n++]);
	pthread_mutex_unlock(&c->store->lock);
	for (uint32_t i = 0; i < n && ret == 0; i++)
		ret = fn(&info[i], ctx);
	return ret;
}

void store_client_page_counts(const struct tmem_client *c,
			      struct tmem_page_counts *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	out->ephemeral = atomic_load_explicit(&c->charged[TMEM_KIND_EPH],
					      memory_order_relaxed);
	out->persistent = atomic_load_explicit(&c->charged[TMEM_KIND_PERS],
					       memory_order_relaxed);
}
