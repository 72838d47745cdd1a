// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cleancache_ops and frontswap_ops semantics on top of the ring (the
 * core half of tmem_shim_hooks.c); see shim_ops.h.  Which of these may sleep follows where the kernel calls
 * them: cleancache put_page and the invalidates of single pages run
 * under the page-cache lock with interrupts off, so they only post;
 * get, frontswap store/load, init and the whole-area invalidates run
 * in process context and wait for the answer.
 */
#include "shim_ops.h"

#define SHIM_PAGE_SIZE 4096u

/* An index tmem cannot carry (it is 32 bits on the wire). */
static int index_too_big(uint64_t index)
{
	return index > 0xffffffffull;
}

int shim_cc_init_fs(struct shim_ops *o, size_t page_size)
{
	if (page_size != SHIM_PAGE_SIZE)
		return -EINVAL;
	return shim_pool_new(o, 0, NULL, 1);
}

int shim_cc_init_shared_fs(struct shim_ops *o, const uint8_t uuid[16],
			   size_t page_size)
{
	struct tmem_uuid u;

	if (page_size != SHIM_PAGE_SIZE || !uuid)
		return -EINVAL;
	/* lo holds bytes 0..7 of the byte string, as tmem_proto.h says. */
	memcpy(&u.lo, uuid, 8);
	memcpy(&u.hi, uuid + 8, 8);
	return shim_pool_new(o, TMEM_POOL_SHARED, &u, 1);
}

int shim_cc_get_page(struct shim_ops *o, int pool, const struct tmem_oid *key,
		     uint64_t index, void *page)
{
	uint32_t gen;
	int ret = 0;

	if (shim_pool_remote(o, pool, &gen) == -ESTALE)
		shim_pool_renew(o, pool);	/* then miss: it is empty */
	else if (!index_too_big(index) &&
		 !shim_owed_eph_settle(o, pool, key, (uint32_t)index))
		ret = shim_pool_call(o, pool, TMEM_OP_GET_PAGE, key,
				     (uint32_t)index, NULL, page);
	if (ret == 1) {
		shim_stat_inc(&o->cc.succ_gets);
		return 0;
	}
	shim_stat_inc(&o->cc.failed_gets);
	return -1;
}

void shim_cc_put_page(struct shim_ops *o, int pool, const struct tmem_oid *key,
		      uint64_t index, const void *page)
{
	struct tmem_req req;
	uint32_t gen;
	int remote, ret;

	shim_stat_inc(&o->cc.puts);
	if (index_too_big(index))
		return;
	remote = shim_pool_remote(o, pool, &gen);
	if (remote < 0) {
		shim_stat_inc(&o->cc.puts_dropped);
		return;
	}
	tmem_req_init(&req, TMEM_OP_PUT_PAGE, remote, key, (uint32_t)index);
	ret = shim_ring_post_put(o->ring, gen, &req, page);
	if (ret == -EBUSY) {
		/*
		 * Dropped for want of a slot.  The pool may still hold an
		 * older copy of this page (a full-page write never read
		 * it back), so the dropped put becomes a flush of that
		 * handle: posted, or owed to the pool's next get
		 * (shim_owed_eph.c), or with that table full the pool is
		 * poisoned.
		 */
		shim_stat_inc(&o->cc.puts_dropped);
		shim_pool_flush(o, pool, TMEM_OP_FLUSH_PAGE, key,
				(uint32_t)index, 0);
	} else if (ret < 0) {
		shim_stat_inc(&o->cc.puts_dropped);
	}
}

void shim_cc_invalidate_page(struct shim_ops *o, int pool,
			     const struct tmem_oid *key, uint64_t index)
{
	shim_stat_inc(&o->cc.flushes);
	if (!index_too_big(index))
		shim_pool_flush(o, pool, TMEM_OP_FLUSH_PAGE, key,
				(uint32_t)index, 0);
}

void shim_cc_invalidate_inode(struct shim_ops *o, int pool,
			      const struct tmem_oid *key)
{
	shim_stat_inc(&o->cc.flushes);
	shim_pool_flush(o, pool, TMEM_OP_FLUSH_OBJECT, key, 0, 0);
}

void shim_cc_invalidate_fs(struct shim_ops *o, int pool)
{
	shim_stat_inc(&o->cc.flushes);
	shim_pool_destroy(o, pool);
}

/*
 * One pool serves every swap type, as in Xen.  Old kernels call init
 * under swap_lock, so it only reserves the local pool; the first store
 * (which may sleep) asks the backend for it.
 */
void shim_fs_init(struct shim_ops *o, unsigned int type)
{
	(void)type;
	if (o->swap_pool < 0)
		o->swap_pool = shim_pool_new(o, TMEM_POOL_PERSIST, NULL, 0);
}

int shim_fs_store(struct shim_ops *o, unsigned int type, uint64_t offset,
		  const void *page)
{
	struct tmem_oid oid;
	uint32_t index;
	int ret = 0;

	shim_pool_ensure(o, o->swap_pool);
	if (!index_too_big(offset)) {
		shim_swizzle(type, (uint32_t)offset, &oid, &index);
		ret = shim_pool_call(o, o->swap_pool, TMEM_OP_PUT_PAGE, &oid,
				     index, page, NULL);
	}
	if (ret == 1) {
		shim_stat_inc(&o->fs.succ_stores);
		return 0;
	}
	shim_stat_inc(&o->fs.failed_stores);
	return -1;
}

int shim_fs_load(struct shim_ops *o, unsigned int type, uint64_t offset,
		 void *page)
{
	struct tmem_oid oid;
	uint32_t index;
	int ret = 0;

	if (!index_too_big(offset)) {
		shim_swizzle(type, (uint32_t)offset, &oid, &index);
		ret = shim_pool_call(o, o->swap_pool, TMEM_OP_GET_PAGE, &oid,
				     index, NULL, page);
	}
	if (ret == 1) {
		shim_stat_inc(&o->fs.loads);
		return 0;
	}
	shim_stat_inc(&o->fs.failed_loads);
	return -1;
}

void shim_fs_invalidate_page(struct shim_ops *o, unsigned int type,
			     uint64_t offset)
{
	struct tmem_oid oid;
	uint32_t index;

	if (index_too_big(offset))
		return;
	shim_stat_inc(&o->fs.invalidates);
	shim_swizzle(type, (uint32_t)offset, &oid, &index);
	/* Persistent: never poisoned, so wait (bounded) for an entry. */
	shim_pool_flush(o, o->swap_pool, TMEM_OP_FLUSH_PAGE, &oid, index, 1);
}

/* swapoff: every object this type's offsets were swizzled into. */
void shim_fs_invalidate_area(struct shim_ops *o, unsigned int type)
{
	struct tmem_oid oid;
	uint32_t low, index;

	shim_stat_inc(&o->fs.invalidates);
	for (low = 0; low <= SHIM_SWIZ_MASK; low++) {
		shim_swizzle(type, low, &oid, &index);
		shim_pool_call(o, o->swap_pool, TMEM_OP_FLUSH_OBJECT, &oid, 0,
			       NULL, NULL);
	}
}
