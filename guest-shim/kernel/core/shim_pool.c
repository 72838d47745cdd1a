// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Local pool ids and their remote twins; see shim_ops.h.  pools[] is
 * guarded by the ring's lock, taken here only for a few loads or
 * stores, never across a request.
 */
#include "shim_ops.h"

static unsigned long pools_lock(struct shim_ops *o)
{
	return o->ring->env.ops->lock(o->ring->env.priv);
}

static void pools_unlock(struct shim_ops *o, unsigned long flags)
{
	o->ring->env.ops->unlock(o->ring->env.priv, flags);
}

void shim_ops_init(struct shim_ops *o, struct shim_ring *ring)
{
	memset(o, 0, sizeof(*o));
	o->ring = ring;
	o->swap_pool = -1;
}

void shim_swizzle(uint32_t type, uint32_t offset, struct tmem_oid *oid,
		  uint32_t *index)
{
	memset(oid, 0, sizeof(*oid));
	oid->oid[0] = (uint64_t)type << SHIM_SWIZ_BITS |
		      (offset & SHIM_SWIZ_MASK);
	*index = offset >> SHIM_SWIZ_BITS;
}

/* Asks the backend for a pool like local pool p; stores the answer. */
static void remote_create(struct shim_ops *o, int p)
{
	struct shim_pool snap;
	struct tmem_req req;
	unsigned long flags;
	uint32_t gen = shim_ring_gen(o->ring);
	int ret;

	if (!gen)
		return;
	flags = pools_lock(o);
	snap = o->pools[p];
	if (!snap.used || snap.creating || (o->conn_gen && o->conn_gen != gen) ||
	    (snap.remote_id >= 0 && snap.remote_gen == gen)) {
		pools_unlock(o, flags);
		return;
	}
	tmem_store_once(&o->pools[p].creating, 1);
	pools_unlock(o, flags);
	tmem_req_init(&req, TMEM_OP_NEW_POOL, 0, NULL, 0);
	req.flags = tmem_pool_flags(snap.kind);
	req.oid[0] = snap.uuid.lo;
	req.oid[1] = snap.uuid.hi;
	ret = shim_ring_call(o->ring, gen, &req, NULL, NULL);
	flags = pools_lock(o);
	if (ret >= 0 && o->pools[p].used) {
		o->pools[p].remote_id = ret;
		o->pools[p].remote_gen = gen;
		o->pools[p].poisoned = 0;	/* a new pool is empty */
		shim_owed_eph_clear(o, p);
	}
	tmem_store_once(&o->pools[p].creating, 0);
	pools_unlock(o, flags);
	o->ring->env.ops->wake(o->ring->env.priv);
}

struct pool_wait {
	struct shim_ops *o;
	int pool;
};

static int pool_created(void *arg)
{
	struct pool_wait *w = arg;

	return !tmem_load_once(&w->o->pools[w->pool].creating);
}

/*
 * Under the lock: the local pools (bit per local id) that take their
 * remote pool back, each remote id once.
 */
static uint32_t adoptable(struct shim_ops *o, uint32_t kept)
{
	uint32_t remotes = 0, locals = 0;
	struct shim_pool *sp;
	int p;

	for (p = 0; p < SHIM_MAX_POOLS; p++) {
		sp = &o->pools[p];
		if (!o->conn_gen || !sp->used || sp->creating ||
		    sp->remote_gen != o->conn_gen ||
		    sp->kind != TMEM_POOL_PERSIST || sp->remote_id < 0 ||
		    sp->remote_id >= 32 || !(kept & 1u << sp->remote_id) ||
		    (remotes & 1u << sp->remote_id))
			continue;
		remotes |= 1u << sp->remote_id;
		locals |= 1u << p;
	}
	return locals;
}

/* Under the lock: hands the pools back on gen; returns their remote ids. */
static uint32_t adopt(struct shim_ops *o, uint32_t locals, uint32_t gen)
{
	uint32_t remotes = 0;
	int p;

	for (p = 0; p < SHIM_MAX_POOLS; p++) {
		if (!(locals & 1u << p))
			continue;
		o->pools[p].remote_gen = gen;
		remotes |= 1u << o->pools[p].remote_id;
		o->pools_resumed++;
	}
	o->conn_gen = gen;
	return remotes;
}

/* The listed pools nobody took back: the backend's to free. */
static void destroy_orphans(struct shim_ops *o, uint32_t gen, uint32_t orphans)
{
	struct tmem_req req;
	int p;

	for (p = 0; p < 32; p++) {
		if (!(orphans & 1u << p))
			continue;
		tmem_req_init(&req, TMEM_OP_DESTROY_POOL, p, NULL, 0);
		shim_ring_call(o->ring, gen, &req, NULL, NULL);
	}
}

/*
 * The owed flushes go first, while no pool of this connection is handed
 * out yet (remote_gen and conn_gen are still the old connection's), so
 * no request can overtake them; a connection lost meanwhile leaves
 * everything for the next resume.
 */
void shim_ops_resume(struct shim_ops *o, uint32_t kept, uint32_t listed)
{
	uint32_t gen = shim_ring_gen(o->ring), locals, adopted;
	unsigned long flags;
	int p, same;

	if (!gen)
		return;
	flags = pools_lock(o);
	locals = adoptable(o, kept & listed);
	pools_unlock(o, flags);
	if (shim_owed_persist_replay(o, gen, locals))
		return;
	flags = pools_lock(o);
	same = o->ring->connected && o->ring->gen == gen;
	adopted = same ? adopt(o, locals, gen) : 0;
	pools_unlock(o, flags);
	if (!same)
		return;
	o->ring->env.ops->wake(o->ring->env.priv);
	destroy_orphans(o, gen, listed & ~adopted);
	for (p = 0; p < SHIM_MAX_POOLS; p++)
		remote_create(o, p);
}

void shim_ops_reconnect(struct shim_ops *o)
{
	shim_ops_resume(o, 0, 0);
}

int shim_pool_new(struct shim_ops *o, uint32_t kind,
		  const struct tmem_uuid *uuid, int connect)
{
	unsigned long flags;
	int p;

	if (kind & ~(TMEM_POOL_PERSIST | TMEM_POOL_SHARED) ||
	    kind == (TMEM_POOL_PERSIST | TMEM_POOL_SHARED))
		return -EINVAL;
	flags = pools_lock(o);
	for (p = 0; p < SHIM_MAX_POOLS; p++)
		if (!o->pools[p].used)
			break;
	if (p == SHIM_MAX_POOLS) {
		pools_unlock(o, flags);
		return -ENOSPC;
	}
	memset(&o->pools[p], 0, sizeof(o->pools[p]));
	o->pools[p].used = 1;
	o->pools[p].kind = kind;
	o->pools[p].remote_id = -1;
	if (uuid)
		o->pools[p].uuid = *uuid;
	pools_unlock(o, flags);
	if (connect)
		remote_create(o, p);
	return p;
}

/*
 * The first stores may race: one asks the backend, the others wait for
 * its answer rather than fail (bounded by the ring's timeout).
 */
void shim_pool_ensure(struct shim_ops *o, int pool)
{
	struct pool_wait w = { .o = o, .pool = pool };

	if (pool < 0 || pool >= SHIM_MAX_POOLS)
		return;
	remote_create(o, pool);
	if (!pool_created(&w))
		o->ring->env.ops->sleep(o->ring->env.priv, pool_created, &w,
					o->ring->timeout_ms);
}

int shim_pool_remote(struct shim_ops *o, int pool, uint32_t *gen)
{
	unsigned long flags;
	int ret = -ENOTCONN;

	if (pool < 0 || pool >= SHIM_MAX_POOLS)
		return -EINVAL;
	flags = pools_lock(o);
	if (o->pools[pool].used && o->pools[pool].remote_id >= 0 &&
	    o->ring->connected && o->pools[pool].remote_gen == o->ring->gen) {
		ret = o->pools[pool].remote_id;
		*gen = o->pools[pool].remote_gen;
		if (o->pools[pool].poisoned)
			ret = -ESTALE;
	}
	pools_unlock(o, flags);
	return ret;
}

void shim_pool_poison(struct shim_ops *o, int pool)
{
	unsigned long flags;

	if (pool < 0 || pool >= SHIM_MAX_POOLS)
		return;
	flags = pools_lock(o);
	if (!(o->pools[pool].kind & TMEM_POOL_PERSIST))
		o->pools[pool].poisoned = 1;
	pools_unlock(o, flags);
}

void shim_pool_renew(struct shim_ops *o, int pool)
{
	struct tmem_req req;
	unsigned long flags;
	int remote = -1;
	uint32_t gen = 0;

	if (pool < 0 || pool >= SHIM_MAX_POOLS)
		return;
	flags = pools_lock(o);
	if (o->pools[pool].used && o->pools[pool].poisoned &&
	    o->ring->connected && o->pools[pool].remote_gen == o->ring->gen) {
		remote = o->pools[pool].remote_id;
		gen = o->pools[pool].remote_gen;
		o->pools[pool].remote_id = -1;
	}
	pools_unlock(o, flags);
	if (remote >= 0) {
		tmem_req_init(&req, TMEM_OP_DESTROY_POOL, remote, NULL, 0);
		shim_ring_call(o->ring, gen, &req, NULL, NULL);
	}
	remote_create(o, pool);
}

void shim_pool_destroy(struct shim_ops *o, int pool)
{
	struct tmem_req req;
	unsigned long flags;
	uint32_t gen;
	int remote = shim_pool_remote(o, pool, &gen);

	if (remote >= 0) {
		tmem_req_init(&req, TMEM_OP_DESTROY_POOL, remote, NULL, 0);
		shim_ring_call(o->ring, gen, &req, NULL, NULL);
	}
	if (pool < 0 || pool >= SHIM_MAX_POOLS)
		return;
	flags = pools_lock(o);
	o->pools[pool].used = 0;
	o->pools[pool].remote_id = -1;
	shim_owed_eph_clear(o, pool);
	pools_unlock(o, flags);
}

/* The request never got its answer: the connection went, or it hung. */
static int answer_lost(int ret)
{
	return ret == -ENOTCONN || ret == -ETIMEDOUT;
}

/*
 * Nothing more will change for the pool on this connection without a
 * request: connected, resumed (shim_ops_resume ran), no NEW_POOL in
 * flight.  Until then a persistent pool's request waits.
 */
static int pool_settled(void *arg)
{
	struct pool_wait *w = arg;
	uint32_t gen = shim_ring_gen(w->o->ring);

	return gen && tmem_load_once(&w->o->conn_gen) == gen &&
	       !tmem_load_once(&w->o->pools[w->pool].creating);
}

/*
 * A persistent pool's request whose answer was lost: waits until the
 * pool is settled again (a reconnect) or *deadline (set on the first
 * call) passes.  Non-zero: try again.
 */
static int await_pool(struct shim_ops *o, int pool, uint64_t *deadline)
{
	const struct shim_env *env = &o->ring->env;
	struct pool_wait w = { .o = o, .pool = pool };
	uint64_t now = env->ops->now_ms(env->priv);

	if (!o->persist_wait_ms || pool < 0 || pool >= SHIM_MAX_POOLS ||
	    !(tmem_load_once(&o->pools[pool].kind) & TMEM_POOL_PERSIST))
		return 0;
	if (!*deadline)
		*deadline = now + o->persist_wait_ms;
	if (now >= *deadline)
		return 0;
	if (!pool_settled(&w) &&
	    !env->ops->sleep(env->priv, pool_settled, &w,
			     (unsigned int)(*deadline - now)))
		return 0;
	shim_stat_inc(&o->persist_retries);
	return 1;
}

/* -ENOTCONN from shim_pool_remote that no waiting will change. */
static int unreachable_for_good(struct shim_ops *o, int pool, int ret)
{
	struct pool_wait w = { .o = o, .pool = pool };

	return ret != -ENOTCONN || pool < 0 || pool >= SHIM_MAX_POOLS ||
	       pool_settled(&w);
}

int shim_pool_call(struct shim_ops *o, int pool, uint32_t op,
		   const struct tmem_oid *oid, uint32_t index,
		   const void *src, void *dst)
{
	struct tmem_req req;
	uint64_t deadline = 0;
	uint32_t gen;
	int ret;

	do {
		ret = shim_pool_remote(o, pool, &gen);
		if (ret >= 0) {
			tmem_req_init(&req, op, ret, oid, index);
			ret = shim_ring_call(o->ring, gen, &req, src, dst);
		} else if (unreachable_for_good(o, pool, ret)) {
			return ret;
		}
	} while (answer_lost(ret) && await_pool(o, pool, &deadline));
	if (answer_lost(ret))
		shim_owed_persist_note(o, pool, op, oid, index);
	return ret;
}

/*
 * Posts calls[*done..n) on connection gen: 0 or the error that stopped
 * it.  A round whose connection went under it still counts its calls as
 * handled, each with a lost answer in its ret: *done stops at the first
 * such call, so the repeat starts there (the calls after it that did get
 * an answer are idempotent to send again).
 */
static int batch_post(struct shim_ops *o, uint32_t gen, int remote,
		      struct shim_call *calls, uint32_t n, uint32_t *done)
{
	uint32_t i, end;
	int ret = 0;

	for (i = *done; i < n; i++)
		calls[i].req.pool_id = remote;
	while (ret >= 0 && *done < n) {
		ret = shim_ring_call_batch(o->ring, gen, calls + *done,
					   n - *done);
		if (ret <= 0)
			break;
		for (i = *done, end = *done + (uint32_t)ret; i < end; i++)
			if (answer_lost(calls[i].ret))
				break;
		*done = i;
		if (i < end)
			return calls[i].ret;
	}
	return ret < 0 ? ret : 0;
}

int shim_pool_call_batch(struct shim_ops *o, int pool,
			 struct shim_call *calls, uint32_t n)
{
	uint64_t deadline = 0;
	uint32_t i, gen, done = 0;
	struct tmem_oid oid;
	int ret;

	do {
		ret = shim_pool_remote(o, pool, &gen);
		if (ret >= 0)
			ret = batch_post(o, gen, ret, calls, n, &done);
		else if (unreachable_for_good(o, pool, ret))
			break;
	} while (answer_lost(ret) && await_pool(o, pool, &deadline));
	if (ret >= 0)
		return 0;
	for (i = done; i < n; i++) {
		calls[i].ret = ret;
		if (answer_lost(ret)) {
			memcpy(oid.oid, calls[i].req.oid, sizeof(oid.oid));
			shim_owed_persist_note(o, pool, calls[i].req.op, &oid,
					       calls[i].req.index);
		}
	}
	return ret;
}

int shim_pool_flush(struct shim_ops *o, int pool, uint32_t op,
		    const struct tmem_oid *oid, uint32_t index, int may_spin)
{
	struct tmem_req req;
	uint32_t gen;
	int ret, remote = shim_pool_remote(o, pool, &gen);

	if (remote < 0) {
		if (remote == -ENOTCONN)
			shim_owed_persist_note(o, pool, op, oid, index);
		return remote;
	}
	tmem_req_init(&req, op, remote, oid, index);
	ret = shim_ring_post_nodata(o->ring, gen, &req, may_spin);
	if ((ret == -EBUSY || ret == -ETIMEDOUT) &&
	    shim_owed_eph_note(o, pool, op, oid, index))
		shim_pool_poison(o, pool);
	if (ret == -ENOTCONN)
		shim_owed_persist_note(o, pool, op, oid, index);
	return ret;
}
