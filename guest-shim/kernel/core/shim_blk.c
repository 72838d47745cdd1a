// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The block path's page map and write-through decisions; see shim_blk.h. */
#include "shim_blk.h"

/* What a tmem answer leaves for the batch paths to do. */
enum shim_blk_action {
	SHIM_BLK_DONE = 0,		/* finished here */
	SHIM_BLK_USE_BACKING = 1,	/* do this I/O on the backing device */
};

static unsigned long blk_lock(struct shim_blk *b)
{
	return b->ops->ring->env.ops->lock(b->ops->ring->env.priv);
}

static void blk_unlock(struct shim_blk *b, unsigned long flags)
{
	b->ops->ring->env.ops->unlock(b->ops->ring->env.priv, flags);
}

static void set_where(struct shim_blk *b, uint64_t pgno, uint8_t where)
{
	unsigned long flags = blk_lock(b);

	b->map[pgno] = where;
	blk_unlock(b, flags);
}

int shim_blk_where(struct shim_blk *b, uint64_t pgno)
{
	unsigned long flags;
	int where;

	if (pgno >= b->nr_pages)
		return -EINVAL;
	flags = blk_lock(b);
	where = b->map[pgno];
	blk_unlock(b, flags);
	return where;
}

int shim_blk_init(struct shim_blk *b, struct shim_ops *ops, uint32_t dev,
		  uint64_t nr_pages, uint8_t *map, int has_backing)
{
	int pool;

	/* The swizzled index must fit in 32 bits. */
	if (!map || !nr_pages || nr_pages > (1ull << 32))
		return -EINVAL;
	memset(b, 0, sizeof(*b));
	b->ops = ops;
	b->dev = dev;
	b->nr_pages = nr_pages;
	b->map = map;
	b->has_backing = has_backing;
	pool = shim_pool_new(ops, TMEM_POOL_PERSIST, NULL, 1);
	if (pool < 0)
		return pool;
	b->pool = pool;
	return 0;
}

void shim_blk_fini(struct shim_blk *b)
{
	if (b && b->ops)
		shim_pool_destroy(b->ops, b->pool);
}

static void blk_key(struct shim_blk *b, uint64_t pgno, struct tmem_oid *oid,
		    uint32_t *index)
{
	shim_swizzle(SHIM_BLK_TYPE_BASE + b->dev, (uint32_t)pgno, oid, index);
}

/* Drops the tmem copy of pgno; synchronous, so it is gone on return. */
static void flush_tmem(struct shim_blk *b, uint64_t pgno)
{
	struct tmem_oid oid;
	uint32_t index;

	blk_key(b, pgno, &oid, &index);
	shim_pool_call(b->ops, b->pool, TMEM_OP_FLUSH_PAGE, &oid, index,
		       NULL, NULL);
}

/* What a put's ret means for pgno: SHIM_BLK_DONE, _USE_BACKING or -EIO. */
static int put_result(struct shim_blk *b, uint64_t pgno, int ret)
{
	if (ret == 1) {
		set_where(b, pgno, SHIM_BLK_TMEM);
		shim_stat_inc(&b->stats.tmem_writes);
		return SHIM_BLK_DONE;
	}
	if (b->has_backing)
		return SHIM_BLK_USE_BACKING;
	/* Refused and nowhere else to go: the old contents are gone too. */
	flush_tmem(b, pgno);
	set_where(b, pgno, SHIM_BLK_EMPTY);
	shim_stat_inc(&b->stats.errors);
	return -EIO;
}

void shim_blk_backing_written(struct shim_blk *b, uint64_t pgno)
{
	if (pgno >= b->nr_pages)
		return;
	/* Map first: from now on reads go to the backing device. */
	set_where(b, pgno, SHIM_BLK_BACKING);
	flush_tmem(b, pgno);
	shim_stat_inc(&b->stats.backing_writes);
}

/* A page that tmem holds: fetch it, or fail loudly. */
static int get_result(struct shim_blk *b, int ret)
{
	if (ret == 1) {
		shim_stat_inc(&b->stats.tmem_reads);
		return SHIM_BLK_DONE;
	}
	/* An accepted page did not come back: the backend lost it. */
	shim_stat_inc(&b->stats.errors);
	return -EIO;
}

/* A page that tmem does not hold: SHIM_BLK_DONE or _USE_BACKING. */
static int read_elsewhere(struct shim_blk *b, int where, void *dst)
{
	if (where == SHIM_BLK_BACKING) {
		shim_stat_inc(&b->stats.backing_reads);
		return SHIM_BLK_USE_BACKING;
	}
	b->ops->ring->env.ops->zero_page(b->ops->ring->env.priv, dst);
	shim_stat_inc(&b->stats.zero_reads);
	return SHIM_BLK_DONE;
}

/* After a put answered ret: the backing write it may call for. */
static int finish_write(struct shim_blk *b, uint64_t pgno, void *page,
			int ret, const struct shim_blk_backing *bk)
{
	ret = put_result(b, pgno, ret);
	if (ret != SHIM_BLK_USE_BACKING)
		return ret;
	if (!bk || bk->io(bk->ctx, 1, pgno, page) < 0) {
		/* Neither place holds the new data; the old is stale. */
		flush_tmem(b, pgno);
		set_where(b, pgno, SHIM_BLK_EMPTY);
		shim_stat_inc(&b->stats.errors);
		return -EIO;
	}
	shim_blk_backing_written(b, pgno);
	return 0;
}

static void fill_call(struct shim_blk *b, struct shim_call *c, uint32_t op,
		      uint64_t pgno)
{
	struct tmem_oid oid;
	uint32_t index;

	blk_key(b, pgno, &oid, &index);
	tmem_req_init(&c->req, op, 0, &oid, index);
	c->src = NULL;
	c->dst = NULL;
}

/* Every page put in one batch, then each answer acted on. */
static int write_batch(struct shim_blk *b, uint64_t pgno, void *const *pages,
		       uint32_t n, struct shim_call *calls,
		       const struct shim_blk_backing *bk)
{
	uint32_t i;
	int ret, err = 0;

	for (i = 0; i < n; i++) {
		fill_call(b, &calls[i], TMEM_OP_PUT_PAGE, pgno + i);
		calls[i].src = pages[i];
	}
	shim_pool_call_batch(b->ops, b->pool, calls, n);
	for (i = 0; i < n; i++) {
		ret = finish_write(b, pgno + i, pages[i], calls[i].ret, bk);
		if (ret < 0 && !err)
			err = ret;
	}
	return err;
}

/* Pages elsewhere are served first; those in tmem are got in one batch. */
static int read_batch(struct shim_blk *b, uint64_t pgno, void *const *pages,
		      uint32_t n, struct shim_call *calls,
		      const struct shim_blk_backing *bk)
{
	uint32_t i, k = 0;
	int ret, err = 0;

	for (i = 0; i < n; i++) {
		int where = shim_blk_where(b, pgno + i);

		if (where == SHIM_BLK_TMEM) {
			fill_call(b, &calls[k], TMEM_OP_GET_PAGE, pgno + i);
			calls[k++].dst = pages[i];
			continue;
		}
		ret = read_elsewhere(b, where, pages[i]);
		if (ret == SHIM_BLK_USE_BACKING &&
		    (!bk || bk->io(bk->ctx, 0, pgno + i, pages[i]) < 0)) {
			shim_stat_inc(&b->stats.errors);
			err = err ?: -EIO;
		}
	}
	if (k)
		shim_pool_call_batch(b->ops, b->pool, calls, k);
	for (i = 0; i < k; i++) {
		ret = get_result(b, calls[i].ret);
		if (ret < 0 && !err)
			err = ret;
	}
	return err;
}

/* Every page reads as zeros at once; the tmem copies go in one batch. */
static int discard_batch(struct shim_blk *b, uint64_t pgno, uint32_t n,
			 struct shim_call *calls)
{
	unsigned long flags;
	uint32_t i, k = 0;

	for (i = 0; i < n; i++) {
		flags = blk_lock(b);
		if (b->map[pgno + i] == SHIM_BLK_TMEM)
			fill_call(b, &calls[k++], TMEM_OP_FLUSH_PAGE, pgno + i);
		b->map[pgno + i] = SHIM_BLK_EMPTY;
		blk_unlock(b, flags);
		shim_stat_inc(&b->stats.discards);
	}
	if (k)
		shim_pool_call_batch(b->ops, b->pool, calls, k);
	return 0;
}

int shim_blk_rw(struct shim_blk *b, enum shim_blk_op op, uint64_t pgno,
		void *const *pages, uint32_t n, struct shim_call *calls,
		const struct shim_blk_backing *bk)
{
	if (!n || n > SHIM_BLK_BATCH || pgno >= b->nr_pages ||
	    n > b->nr_pages - pgno)
		return -EINVAL;
	switch (op) {
	case SHIM_BLK_OP_WRITE:
		return write_batch(b, pgno, pages, n, calls, bk);
	case SHIM_BLK_OP_READ:
		return read_batch(b, pgno, pages, n, calls, bk);
	case SHIM_BLK_OP_DISCARD:
		return discard_batch(b, pgno, n, calls);
	default:
		return -EINVAL;
	}
}

int shim_blk_page_io(struct shim_blk *b, enum shim_blk_op op, uint64_t pgno,
		     void *page, const struct shim_blk_backing *bk)
{
	struct shim_call call;

	return shim_blk_rw(b, op, pgno, &page, 1, &call, bk);
}
