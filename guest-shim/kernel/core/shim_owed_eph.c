// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Flushes an ephemeral pool is owed on a live connection.  cleancache's
 * put_page and single-page invalidates run with interrupts off, so they
 * only post, and with the ring full they cannot.  A put that is not sent
 * leaves whatever older copy of the page the pool held (a full-page
 * write replaces a page without reading it back), and an invalidate that
 * is not sent leaves the page it meant: either way a later get could
 * return stale bytes.  Each such flush is noted here.  A get first sends
 * what its pool is owed (gets may sleep), and a get of a handle whose
 * flush is still unanswered misses.  Only a full table poisons the pool,
 * which empties it whole at its next get: a slow backend used to make
 * that happen often enough to keep the cache cold.
 *
 * An entry is NOTED until a getter takes it to send (SENDING), and freed
 * when the backend answered; seq tells a sender whether the entry it
 * took is still the one in its place (a new pool clears the table).
 */
#include "shim_ops.h"

enum { OWED_FREE, OWED_NOTED, OWED_SENDING };

static unsigned long owed_lock(struct shim_ops *o)
{
	return o->ring->env.ops->lock(o->ring->env.priv);
}

static void owed_unlock(struct shim_ops *o, unsigned long flags)
{
	o->ring->env.ops->unlock(o->ring->env.priv, flags);
}

static int same_oid(const struct tmem_oid *a, const struct tmem_oid *b)
{
	return !memcmp(a, b, sizeof(*a));
}

int shim_owed_eph_note(struct shim_ops *o, int pool, uint32_t op,
		       const struct tmem_oid *oid, uint32_t index)
{
	struct shim_owed_eph *e, *slot = NULL;
	unsigned long flags;
	uint32_t i;
	int ret = 0;

	if (pool < 0 || pool >= SHIM_MAX_POOLS ||
	    (op != TMEM_OP_FLUSH_PAGE && op != TMEM_OP_FLUSH_OBJECT))
		return -EINVAL;
	flags = owed_lock(o);
	if (!o->pools[pool].used || (o->pools[pool].kind & TMEM_POOL_PERSIST)) {
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < SHIM_OWED_EPH_MAX; i++) {
		e = &o->owed_eph[i];
		if (e->state == OWED_NOTED && e->pool == pool && e->op == op &&
		    e->index == index && same_oid(&e->oid, oid))
			goto out;	/* owed already, and not yet sent */
		if (e->state == OWED_FREE && !slot)
			slot = e;
	}
	if (!slot) {
		ret = -ENOSPC;
		goto out;
	}
	*slot = (struct shim_owed_eph){ .state = OWED_NOTED, .pool = pool,
				    .op = op, .index = index, .oid = *oid,
				    .seq = ++o->owed_eph_seq };
	/* Written under the lock, read without it by shim_owed_eph_settle. */
	tmem_store_once(&o->pools[pool].owed, o->pools[pool].owed + 1);
	shim_stat_inc(&o->cc.flushes_owed);
out:
	owed_unlock(o, flags);
	return ret;
}

/* Takes one NOTED entry of pool to send: its index, or -1 if none. */
static int owed_take(struct shim_ops *o, int pool, struct shim_owed_eph *copy)
{
	unsigned long flags = owed_lock(o);
	int i;

	for (i = 0; i < (int)SHIM_OWED_EPH_MAX; i++) {
		if (o->owed_eph[i].state == OWED_NOTED && o->owed_eph[i].pool == pool) {
			o->owed_eph[i].state = OWED_SENDING;
			*copy = o->owed_eph[i];
			owed_unlock(o, flags);
			return i;
		}
	}
	owed_unlock(o, flags);
	return -1;
}

/* A flush's answer that settles it: any but a lost one or a poisoned pool. */
static int answered(int ret)
{
	return ret != -ENOTCONN && ret != -ETIMEDOUT && ret != -ESTALE;
}

static void owed_done(struct shim_ops *o, int i, const struct shim_owed_eph *copy,
		      int ret)
{
	unsigned long flags = owed_lock(o);
	struct shim_owed_eph *e = &o->owed_eph[i];

	if (e->state == OWED_SENDING && e->seq == copy->seq) {
		if (answered(ret)) {
			e->state = OWED_FREE;
			tmem_store_once(&o->pools[copy->pool].owed,
					o->pools[copy->pool].owed - 1);
		} else {
			e->state = OWED_NOTED;
		}
	}
	owed_unlock(o, flags);
}

static int owed_covers(struct shim_ops *o, int pool, const struct tmem_oid *oid,
		       uint32_t index)
{
	unsigned long flags = owed_lock(o);
	const struct shim_owed_eph *e;
	uint32_t i;
	int hit = 0;

	for (i = 0; i < SHIM_OWED_EPH_MAX && !hit; i++) {
		e = &o->owed_eph[i];
		hit = e->state != OWED_FREE && e->pool == pool &&
		      same_oid(&e->oid, oid) &&
		      (e->op == TMEM_OP_FLUSH_OBJECT || e->index == index);
	}
	owed_unlock(o, flags);
	return hit;
}

int shim_owed_eph_settle(struct shim_ops *o, int pool,
			 const struct tmem_oid *oid, uint32_t index)
{
	struct shim_owed_eph copy;
	uint32_t n;
	int i, ret;

	if (pool < 0 || pool >= SHIM_MAX_POOLS ||
	    !tmem_load_once(&o->pools[pool].owed))
		return 0;
	/* Bounded: other CPUs may keep noting while this one sends. */
	for (n = 0; n < SHIM_OWED_EPH_MAX; n++) {
		i = owed_take(o, pool, &copy);
		if (i < 0)
			break;
		ret = shim_pool_call(o, pool, copy.op, &copy.oid, copy.index,
				     NULL, NULL);
		owed_done(o, i, &copy, ret);
		if (!answered(ret))
			break;
	}
	return owed_covers(o, pool, oid, index);
}

void shim_owed_eph_clear(struct shim_ops *o, int pool)
{
	uint32_t i;

	for (i = 0; i < SHIM_OWED_EPH_MAX; i++)
		if (o->owed_eph[i].state != OWED_FREE && o->owed_eph[i].pool == pool)
			o->owed_eph[i].state = OWED_FREE;
	tmem_store_once(&o->pools[pool].owed, 0);
}
