// SPDX-License-Identifier: GPL-2.0 OR MIT
/* tmemcache's read-cache decisions and their ordering; see shim_rcache.h. */
#include "shim_rcache.h"

static unsigned long rc_lock(struct shim_rcache *rc)
{
	return rc->ops->ring->env.ops->lock(rc->ops->ring->env.priv);
}

static void rc_unlock(struct shim_rcache *rc, unsigned long flags)
{
	rc->ops->ring->env.ops->unlock(rc->ops->ring->env.priv, flags);
}

static struct shim_rc_slot *slot_of(struct shim_rcache *rc, uint64_t blk)
{
	return &rc->slots[blk & rc->slot_mask];
}

void shim_rc_key(uint64_t blk, struct tmem_oid *oid, uint32_t *index)
{
	memset(oid, 0, sizeof(*oid));
	oid->oid[0] = blk >> SHIM_RC_OBJ_SHIFT;
	*index = (uint32_t)(blk & (SHIM_RC_OBJ_BLOCKS - 1));
}

int shim_rc_init(struct shim_rcache *rc, struct shim_ops *ops,
		 uint64_t nr_blocks, struct shim_rc_slot *slots,
		 uint32_t nr_slots)
{
	int pool;

	/* Cleared first, so shim_rc_fini is safe after any failure. */
	memset(rc, 0, sizeof(*rc));
	rc->pool = -1;
	if (!slots || !nr_blocks || !nr_slots || (nr_slots & (nr_slots - 1)))
		return -EINVAL;
	rc->nr_blocks = nr_blocks;
	rc->slots = slots;
	rc->slot_mask = nr_slots - 1;
	pool = shim_pool_new(ops, 0, NULL, 1);
	if (pool < 0)
		return pool;
	rc->ops = ops;
	rc->pool = pool;
	return 0;
}

void shim_rc_fini(struct shim_rcache *rc)
{
	if (rc && rc->ops && rc->pool >= 0)
		shim_pool_destroy(rc->ops, rc->pool);
	if (rc)
		rc->pool = -1;
}

static void fill_call(struct shim_call *c, uint32_t op, uint64_t blk)
{
	struct tmem_oid oid;
	uint32_t index;

	shim_rc_key(blk, &oid, &index);
	tmem_req_init(&c->req, op, 0, &oid, index);
	c->src = NULL;
	c->dst = NULL;
}

/*
 * A request that may still be served although its wait gave up: the
 * pool may now hold a block a write flushed meanwhile, so empty it
 * before the next get.  No connection: the pool went with it.
 */
static void check_late(struct shim_rcache *rc, int ret)
{
	if (ret < 0 && ret != -ENOTCONN && ret != -ESTALE)
		shim_pool_poison(rc->ops, rc->pool);
}

/* Gets every block; hit[i] says which came back. */
static void get_batch(struct shim_rcache *rc, uint64_t blk,
		      void *const *pages, uint32_t n, struct shim_call *calls,
		      uint8_t *hit)
{
	uint32_t gen, i;

	memset(hit, 0, n);
	if (shim_pool_remote(rc->ops, rc->pool, &gen) == -ESTALE) {
		shim_pool_renew(rc->ops, rc->pool);	/* empty now: all miss */
		return;
	}
	for (i = 0; i < n; i++) {
		fill_call(&calls[i], TMEM_OP_GET_PAGE, blk + i);
		calls[i].dst = pages[i];
	}
	shim_pool_call_batch(rc->ops, rc->pool, calls, n);
	for (i = 0; i < n; i++)
		hit[i] = calls[i].ret == 1;
}

/* Reads each run of misses from the disk; ok[i] says which are good. */
static int read_misses(struct shim_rcache *rc, uint64_t blk,
		       void *const *pages, uint32_t n, const uint8_t *hit,
		       uint8_t *ok, const struct shim_rc_disk *disk)
{
	uint32_t i = 0, j;
	int ret, err = 0;

	while (i < n) {
		if (hit[i]) {
			shim_stat_inc(&rc->stats.hits);
			ok[i++] = 1;
			continue;
		}
		for (j = i; j < n && !hit[j]; j++)
			shim_stat_inc(&rc->stats.misses);
		ret = disk->read(disk->ctx, blk + i, j - i, pages + i);
		if (ret < 0) {
			shim_stat_inc(&rc->stats.errors);
			err = err ?: ret;
		}
		memset(ok + i, ret >= 0, j - i);
		i = j;
	}
	return err;
}

/*
 * The blocks whose slot still shows snap[i] and no invalidation become
 * put calls, counted in putting; returns how many (their blocks in
 * which[]).
 */
static uint32_t claim_puts(struct shim_rcache *rc, uint64_t blk,
			   void *const *pages, uint32_t n, const uint8_t *ok,
			   const uint32_t *snap, struct shim_call *calls,
			   uint8_t *which)
{
	unsigned long flags = rc_lock(rc);
	uint32_t i, k = 0;

	for (i = 0; i < n; i++) {
		struct shim_rc_slot *s = slot_of(rc, blk + i);

		if (!ok[i])
			continue;
		if (s->gen != snap[i] || s->inval) {
			shim_stat_inc(&rc->stats.puts_raced);
			continue;
		}
		/* Atomic: puts_drained reads it without the lock. */
		__atomic_fetch_add(&s->putting, 1, __ATOMIC_RELAXED);
		fill_call(&calls[k], TMEM_OP_PUT_PAGE, blk + i);
		calls[k].src = pages[i];
		which[k++] = (uint8_t)i;
	}
	rc_unlock(rc, flags);
	return k;
}

/* Answers counted; late ones poison first, then putting drains. */
static void release_puts(struct shim_rcache *rc, uint64_t blk,
			 const struct shim_call *calls, const uint8_t *which,
			 uint32_t k)
{
	unsigned long flags;
	uint32_t i;

	for (i = 0; i < k; i++) {
		check_late(rc, calls[i].ret);
		shim_stat_inc(calls[i].ret == 1 ? &rc->stats.puts :
				&rc->stats.puts_refused);
	}
	flags = rc_lock(rc);
	for (i = 0; i < k; i++)
		__atomic_fetch_sub(&slot_of(rc, blk + which[i])->putting, 1,
				   __ATOMIC_RELEASE);
	rc_unlock(rc, flags);
	rc->ops->ring->env.ops->wake(rc->ops->ring->env.priv);
}

int shim_rc_read(struct shim_rcache *rc, uint64_t blk, void *const *pages,
		 uint32_t n, struct shim_call *calls,
		 const struct shim_rc_disk *disk)
{
	uint32_t snap[SHIM_RC_BATCH], i, k;
	uint8_t hit[SHIM_RC_BATCH], ok[SHIM_RC_BATCH], which[SHIM_RC_BATCH];
	unsigned long flags;
	int err;

	if (!n || n > SHIM_RC_BATCH || blk >= rc->nr_blocks ||
	    n > rc->nr_blocks - blk)
		return -EINVAL;
	flags = rc_lock(rc);
	for (i = 0; i < n; i++)
		snap[i] = slot_of(rc, blk + i)->gen;
	rc_unlock(rc, flags);
	get_batch(rc, blk, pages, n, calls, hit);
	err = read_misses(rc, blk, pages, n, hit, ok, disk);
	k = claim_puts(rc, blk, pages, n, ok, snap, calls, which);
	if (k) {
		shim_pool_call_batch(rc->ops, rc->pool, calls, k);
		release_puts(rc, blk, calls, which, k);
	}
	return err;
}

/* The slots [first, first + n) of an invalidation, n <= nr_slots. */
struct inval_wait {
	struct shim_rcache *rc;
	uint64_t first;
	uint64_t n;
};

static int puts_drained(void *arg)
{
	struct inval_wait *w = arg;
	uint64_t i;

	for (i = 0; i < w->n; i++)
		if (__atomic_load_n(&slot_of(w->rc, w->first + i)->putting,
				    __ATOMIC_ACQUIRE))
			return 0;
	return 1;
}

/* Raises (up = 1) or lowers inval on the range's slots; lowering bumps gen. */
static void mark_inval(struct shim_rcache *rc, const struct inval_wait *w,
		       int up)
{
	unsigned long flags = rc_lock(rc);
	uint64_t i;

	for (i = 0; i < w->n; i++) {
		struct shim_rc_slot *s = slot_of(rc, w->first + i);

		if (up) {
			s->inval++;
			continue;
		}
		s->inval--;
		s->gen++;
	}
	rc_unlock(rc, flags);
}

/* Posts calls[0..k) and checks the answers. */
static void flush_calls(struct shim_rcache *rc, struct shim_call *calls,
			uint32_t k)
{
	uint32_t i;

	shim_pool_call_batch(rc->ops, rc->pool, calls, k);
	for (i = 0; i < k; i++)
		check_late(rc, calls[i].ret);
}

/* Whole objects go as one FLUSH_OBJECT each, the ends page by page. */
static void flush_range(struct shim_rcache *rc, uint64_t blk, uint64_t count,
			struct shim_call *calls)
{
	uint64_t end = blk + count;
	uint32_t k = 0;

	while (blk < end) {
		if (!(blk & (SHIM_RC_OBJ_BLOCKS - 1)) &&
		    end - blk >= SHIM_RC_OBJ_BLOCKS) {
			fill_call(&calls[k++], TMEM_OP_FLUSH_OBJECT, blk);
			blk += SHIM_RC_OBJ_BLOCKS;
		} else {
			fill_call(&calls[k++], TMEM_OP_FLUSH_PAGE, blk++);
		}
		if (k == SHIM_RC_BATCH) {
			flush_calls(rc, calls, k);
			k = 0;
		}
	}
	if (k)
		flush_calls(rc, calls, k);
}

void shim_rc_invalidate(struct shim_rcache *rc, uint64_t blk, uint64_t count,
			struct shim_call *calls)
{
	struct inval_wait w = { .rc = rc, .first = blk };
	const struct shim_env *env = &rc->ops->ring->env;

	if (blk >= rc->nr_blocks)
		return;
	if (count > rc->nr_blocks - blk)
		count = rc->nr_blocks - blk;
	if (!count)
		return;
	w.n = count > (uint64_t)rc->slot_mask + 1 ? rc->slot_mask + 1 : count;
	mark_inval(rc, &w, 1);
	/* Every put answered before its flush goes out (see the header). */
	while (!puts_drained(&w))
		env->ops->sleep(env->priv, puts_drained, &w,
				rc->ops->ring->timeout_ms);
	flush_range(rc, blk, count, calls);
	mark_inval(rc, &w, 0);
	__atomic_fetch_add(&rc->stats.invalidations, count, __ATOMIC_RELAXED);
}
