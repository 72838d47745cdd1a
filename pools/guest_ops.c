/* SPDX-License-Identifier: MIT */
/*
 * The guest ops.  Each takes its pool's lock once, looks the handle up
 * and copies the page while holding it, so puts and gets on one handle
 * are ordered (put-put-get and get-get coherency follow) and the only
 * other locks are the short LRU and allocator sections inside.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "clock.h"
#include "internal.h"

/* Count op field f on the client's pool handle; needs the pool lock. */
#define COUNT(c, id, f) do_ctr_inc(&(c)->slots[id].ops.f)

/*
 * The common start of an op: check the arguments (buf is the page for
 * put and get, or any non-NULL pointer), find and lock the pool, hash
 * the oid.  Returns the locked pool, or NULL with *err set.
 */
static struct tmem_pool *op_enter(struct tmem_client *c, int32_t pool_id,
				  const struct tmem_oid *oid, const void *buf,
				  uint64_t *oh, int *err)
{
	struct tmem_pool *pool;

	if (!c || !oid || !buf) {
		*err = -EINVAL;
		return NULL;
	}
	pool = slot_lock_pool(c, pool_id);
	if (!pool) {
		*err = -ENOENT;
		return NULL;
	}
	*oh = oid_hash(pool->store, oid);
	return pool;
}

/*
 * Put over an existing page: same descriptor and charge, new data
 * (COMMIT.md).  The new room is taken first, so that a put that cannot
 * get it fails having removed the old page, never leaving it gettable.
 * A raw page over a raw page reuses its frame.
 */
static int do_page_replace(struct tmem_pool *pool, uint32_t page, uint64_t oh,
			   const struct tmem_enc *e)
{
	struct tmem_store *s = pool->store;
	struct tmem_pagedesc *p = pd(s, page);
	uint32_t old = pd_handle(p), nh;
	bool reuse = !(old & TMEM_H_ZS) && (e->kind == TMEM_ENC_RAW || e->kind == TMEM_ENC_HUGE);
	int ret = 0;

	if (reuse) {
		nh = (old & TMEM_H_IDX) | (e->kind == TMEM_ENC_HUGE ? TMEM_H_SUB : 0);
	} else {
		pthread_mutex_lock(&s->alloc_lock);
		ret = do_data_alloc(s, e, pool, &nh);
		pthread_mutex_unlock(&s->alloc_lock);
		if (ret < 0) {
			do_page_remove(pool, page, oh);
			return ret;
		}
		do_data_write(s, nh, page, e);
	}
	tier_page_changed(s, page); /* a spill copying the old data must not commit it */
	pd_unpublish(p); /* commit: the old page is gone */
	do_data_account(pool, old, -1);
	if (reuse) {
		do_data_write(s, nh, page, e);
	} else {
		pthread_mutex_lock(&s->alloc_lock);
		data_ops(old)->free(s, old);
		pthread_mutex_unlock(&s->alloc_lock);
	}
	do_data_account(pool, nh, 1);
	pd_publish(p, nh); /* commit: the new one is there */
	if (!pool->persistent)
		lru_touch(pool->owner, page);
	else
		plru_sync(pool, page, nh);
	return 1;
}

/* Pool lock held: whether args leave refusal ret to the caller to retry. */
static bool put_retried(const struct tmem_pool *pool, const struct tmem_put_args *args,
			uint64_t cap, int ret)
{
	if (ret == -ENOSPC)
		return args->retry & TMEM_PUT_RETRY_FULL;
	if (!pool->persistent && cap > 0 && (args->retry & TMEM_PUT_RETRY_OWN))
		return true;
	return args->retry & TMEM_PUT_RETRY_QUOTA;
}

int store_put_page(struct tmem_client *c, int32_t pool_id,
		   const struct tmem_oid *oid, uint32_t index,
		   const void *src, const struct tmem_put_args *args)
{
	struct tmem_enc e;

	if (!args || !src)
		return -EINVAL;
	/* Compress before any lock: it is most of a put's time. */
	if (c)
		codec_encode(atomic_load_explicit(&c->compress, memory_order_relaxed),
			     c->store->cfg.compress_threshold, src, &e);
	return store_put_enc(c, pool_id, oid, index, &e, args);
}

int store_put_enc(struct tmem_client *c, int32_t pool_id,
		  const struct tmem_oid *oid, uint32_t index,
		  const struct tmem_enc *e, const struct tmem_put_args *args)
{
	uint64_t oh, cap;
	int ret;
	struct tmem_pool *pool;
	uint32_t page;

	pool = op_enter(c, pool_id, oid, e, &oh, &ret);
	if (!pool)
		return ret;
	cap = pool->persistent ? args->persistent_max : args->ephemeral_max;
	page = do_page_lookup(pool, oid, index, oh);
	if (page != TMEM_NIL) {
		/* Replacing never changes the charge, so never fails on it. */
		ret = do_page_replace(pool, page, oh, e);
		goto out;
	}
	if (!charge_try(pool->owner, pool_kind(pool), cap)) {
		ret = -EDQUOT;
		goto out;
	}
	ret = do_page_insert(pool, oid, index, oh, e, &page);
	if (ret < 0) {
		charge_drop(pool->owner, pool_kind(pool));
		goto out;
	}
	ret = 1;
out:
	if (ret == 1) {
		COUNT(c, pool_id, puts);
		COUNT(c, pool_id, succ_puts);
	} else if ((ret == -EDQUOT || ret == -ENOSPC) && !put_retried(pool, args, cap, ret)) {
		/* The put's last word: counted here, under this lock. */
		COUNT(c, pool_id, puts);
		COUNT(c, pool_id, failed_puts[ret == -EDQUOT ? TMEM_PUT_FAIL_QUOTA
							     : TMEM_PUT_FAIL_FULL]);
		ret = 0;
	}
	pthread_mutex_unlock(&pool->lock);
	return ret;
}

/*
 * A get of a page in the host tier (a persistent pool's, so not
 * exclusive), first half, pool lock held: the entry is taken and the
 * tier's units pinned, so that a flush or an overwrite meanwhile cannot
 * hand them to a spill before the read is done (tier.c); the read itself
 * (store_readback_finish()) runs with the pool lock dropped, so the
 * pool's other ops do not wait for the device, and may run on another
 * thread.  The page stays in the tier: bringing it back would need room
 * the pool was short of, and frontswap flushes it soon after.
 */
static void do_readback_start(struct tmem_client *c, int32_t pool_id, struct tmem_pool *pool,
			      uint32_t page, uint64_t te, struct tmem_readback *rb)
{
	*rb = (struct tmem_readback){ .store = pool->store, .owner = pool->owner, .te = te,
				      .page = page, .t0 = clock_nsec(CLOCK_MONOTONIC) };
	tier_pin(&pool->store->tier);
	/* Counted as a hit now, under the lock the counters need; a read
	 * that fails is counted in read_errors (and the get returns -EIO). */
	COUNT(c, pool_id, gets);
	COUNT(c, pool_id, succ_gets);
	do_ctr_inc(&pool->readbacks);
}

/* flags for preadv2(); -EAGAIN (RWF_NOWAIT): nothing done, rb still pinned. */
static int readback(struct tmem_readback *rb, void *dst, int flags)
{
	struct tmem_store *s = rb->store;
	uint8_t obj[TMEM_ZS_HDR + TMEM_PAGE_SIZE];
	uint64_t ns;
	int ret;

	ret = tier_read_obj_flags(&s->tier, rb->te, rb->page, obj, flags);
	if (ret == -EAGAIN)
		return ret;
	if (ret == 0)
		ret = tier_decode(rb->te, obj, dst);
	tier_unpin(&s->tier);
	ns = clock_nsec(CLOCK_MONOTONIC) - rb->t0;
	lat_record(&s->tier.lat, ns);
	lat_record(&rb->owner->readback_lat, ns);
	ctr_inc(&s->tier.readbacks);
	ctr_inc(&rb->owner->readbacks);
	if (ret < 0) {
		ctr_inc(&s->tier.read_errors);
		return -EIO;
	}
	return 1;
}

int store_readback_finish(struct tmem_readback *rb, void *dst)
{
	return readback(rb, dst, 0);
}

int store_readback_try(struct tmem_readback *rb, void *dst)
{
	return readback(rb, dst, RWF_NOWAIT);
}

int store_get_page(struct tmem_client *c, int32_t pool_id,
		   const struct tmem_oid *oid, uint32_t index, void *dst)
{
	struct tmem_readback rb;
	int ret = store_get_page_start(c, pool_id, oid, index, dst, &rb);

	return ret == TMEM_GET_READBACK ? store_readback_finish(&rb, dst) : ret;
}

int store_get_page_start(struct tmem_client *c, int32_t pool_id,
			 const struct tmem_oid *oid, uint32_t index, void *dst,
			 struct tmem_readback *rb)
{
	uint64_t oh;
	int ret;
	struct tmem_pool *pool = op_enter(c, pool_id, oid, dst, &oh, &ret);
	uint32_t page;

	if (!pool)
		return ret;
	ret = 0;
	page = do_page_lookup(pool, oid, index, oh);
	if (page != TMEM_NIL) {
		bool exclusive = !pool->persistent && !pool->shared;
		uint32_t h = pd_handle(pd(pool->store, page));
		uint64_t te = pool->persistent ? zs_tier_ent(pool->store, h) : 0;

		if (te) {
			do_readback_start(c, pool_id, pool, page, te, rb);
			pthread_mutex_unlock(&pool->lock);
			return TMEM_GET_READBACK;
		}
		if (pool->store->pref)
			__atomic_store_n(&pool->store->pref[page], 1, __ATOMIC_RELAXED);

		/* Exclusive: unlink first, so that the locked instructions
		 * come before the copy rather than wait for its stores. */
		if (exclusive)
			do_page_unlink(pool, page, oh);
		/* Bytes that do not decode (a damaged arena) are an error,
		 * never a page of garbage. */
		ret = do_data_read(pool->store, page, h, dst) == 0 ? 1 : -EIO;
		if (ret < 0)
			ctr_inc(&pool->store->zs.decode_errors);
		if (exclusive)
			do_page_free(pool, page);
		else if (pool->shared)
			lru_touch(pool->owner, page);
	}
	COUNT(c, pool_id, gets);
	if (ret == 1)
		COUNT(c, pool_id, succ_gets);
	else
		COUNT(c, pool_id, failed_gets);
	pthread_mutex_unlock(&pool->lock);
	return ret;
}

/* Remove the page at (oid, index); count a guest flush_page or not. */
static int page_remove_op(struct tmem_client *c, int32_t pool_id,
			  const struct tmem_oid *oid, uint32_t index, bool count)
{
	uint64_t oh;
	int ret;
	struct tmem_pool *pool = op_enter(c, pool_id, oid, oid, &oh, &ret);
	uint32_t page;

	if (!pool)
		return ret;
	page = do_page_lookup(pool, oid, index, oh);
	if (page != TMEM_NIL)
		do_page_remove(pool, page, oh);
	if (count)
		COUNT(c, pool_id, flush_pages);
	pthread_mutex_unlock(&pool->lock);
	return page != TMEM_NIL;
}

int store_flush_page(struct tmem_client *c, int32_t pool_id,
		     const struct tmem_oid *oid, uint32_t index)
{
	return page_remove_op(c, pool_id, oid, index, true);
}

int store_discard_page(struct tmem_client *c, int32_t pool_id,
		       const struct tmem_oid *oid, uint32_t index)
{
	return page_remove_op(c, pool_id, oid, index, false);
}

int store_flush_object(struct tmem_client *c, int32_t pool_id,
		       const struct tmem_oid *oid)
{
	uint64_t oh;
	int ret;
	struct tmem_pool *pool = op_enter(c, pool_id, oid, oid, &oh, &ret);
	uint32_t head;

	if (!pool)
		return ret;
	head = do_obj_lookup(pool, oid, oh);
	if (head != TMEM_NIL)
		do_object_remove(pool, head, oh);
	COUNT(c, pool_id, flush_objects);
	pthread_mutex_unlock(&pool->lock);
	return head != TMEM_NIL;
}

void store_count_put_failure(struct tmem_client *c, int32_t pool_id,
			     enum tmem_put_fail why)
{
	struct tmem_pool *pool;

	if (!c || (unsigned)why >= TMEM_PUT_FAIL_NR)
		return;
	pool = slot_lock_pool(c, pool_id);
	if (!pool)
		return; /* the pool is gone: nothing to count against */
	COUNT(c, pool_id, puts);
	COUNT(c, pool_id, failed_puts[why]);
	pthread_mutex_unlock(&pool->lock);
}

int store_client_pool_kind(struct tmem_client *c, int32_t pool_id)
{
	struct tmem_pool *pool;
	int kind;

	if (!c)
		return -EINVAL;
	pool = slot_lock_pool(c, pool_id);
	if (!pool)
		return -ENOENT;
	kind = pool->persistent;
	pthread_mutex_unlock(&pool->lock);
	return kind;
}
