// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Flushes a persistent pool is owed across a reconnect.  While the
 * backend is away a put that finally fails (persist_wait_ms passed), or
 * a flush that cannot be sent (frontswap's invalidations run in atomic
 * context and cannot wait), would leave an older page gettable in the
 * pool the backend kept: the caller was told the put failed, or thinks
 * the page is gone.  Each is noted here and sent first on the next
 * connection, before the pool is handed back to anyone (shim_ops_resume),
 * so nothing newer can be overtaken.  Only what happened while
 * disconnected is noted: on a live connection a later put to the handle
 * could succeed, and a replayed flush would then drop it.
 *
 * With the table full a note is dropped and counted; the page it meant
 * stays gettable, but its callers never ask for it: frontswap loads only
 * slots it stored since, and /dev/tmemswap0 reads only pages its map says
 * are in tmem.
 */
#include "shim_ops.h"

void shim_owed_persist_note(struct shim_ops *o, int pool, uint32_t op,
			    const struct tmem_oid *oid, uint32_t index)
{
	unsigned long flags;
	struct shim_owed_persist *l;

	if (pool < 0 || pool >= SHIM_MAX_POOLS)
		return;
	if (op == TMEM_OP_PUT_PAGE)
		op = TMEM_OP_FLUSH_PAGE;
	if (op != TMEM_OP_FLUSH_PAGE && op != TMEM_OP_FLUSH_OBJECT)
		return;
	flags = o->ring->env.ops->lock(o->ring->env.priv);
	if (o->ring->connected || !o->pools[pool].used ||
	    !(o->pools[pool].kind & TMEM_POOL_PERSIST)) {
		o->ring->env.ops->unlock(o->ring->env.priv, flags);
		return;
	}
	if (o->nr_owed_persist == SHIM_OWED_PERSIST_MAX) {
		o->lost_dropped++;
	} else {
		l = &o->owed_persist[o->nr_owed_persist++];
		l->pool = pool;
		l->op = op;
		l->oid = *oid;
		l->index = index;
	}
	o->ring->env.ops->unlock(o->ring->env.priv, flags);
}

int shim_owed_persist_replay(struct shim_ops *o, uint32_t gen,
			     uint32_t local_pools)
{
	struct tmem_req req;
	unsigned long flags;
	struct shim_owed_persist l;
	uint32_t i = 0;
	int32_t remote;

	for (;;) {
		flags = o->ring->env.ops->lock(o->ring->env.priv);
		if (i >= o->nr_owed_persist) {
			o->nr_owed_persist = 0;
			o->ring->env.ops->unlock(o->ring->env.priv, flags);
			return 0;
		}
		l = o->owed_persist[i++];
		remote = o->pools[l.pool].remote_id;
		o->ring->env.ops->unlock(o->ring->env.priv, flags);
		if (!(local_pools & 1u << l.pool))
			continue;	/* not taken back: the pool is new */
		tmem_req_init(&req, l.op, remote, &l.oid, l.index);
		if (shim_ring_call(o->ring, gen, &req, NULL, NULL) == -ENOTCONN)
			return -ENOTCONN;	/* kept for the next connection */
		shim_stat_inc(&o->lost_replayed);
	}
}
