/* SPDX-License-Identifier: MIT */
/*
 * Request validation and dispatch.  Everything here works on a private
 * copy of the request, so the guest changing shared memory meanwhile
 * cannot make a checked field differ from the used one.  The data slot
 * itself stays shared: a guest that scribbles on its own slot during a
 * put only spoils its own page.
 */
#include <errno.h>
#include <string.h>

#include "dispatch.h"

static int32_t check_unused(const struct tmem_req *r, int oid, int index,
			    int slot)
{
	if (!oid && (r->oid[0] | r->oid[1] | r->oid[2]))
		return -TMEM_EINVAL;
	if (!index && r->index)
		return -TMEM_EINVAL;
	if (!slot && r->slot != TMEM_NO_SLOT)
		return -TMEM_EINVAL;
	return 0;
}

int32_t tmemd_req_check(const struct tmem_req *r, uint32_t nr_slots)
{
	if (r->rsvd[0] | r->rsvd[1] | r->rsvd[2])
		return -TMEM_EINVAL;
	if (r->op != TMEM_OP_NEW_POOL && r->flags)
		return -TMEM_EINVAL;
	switch (r->op) {
	case TMEM_OP_NEW_POOL:
		/* oid[0..1] carry the uuid; pool_id is ignored (Xen). */
		if (r->flags & ~TMEM_POOL_VALID_MASK || r->oid[2])
			return -TMEM_EINVAL;
		return check_unused(r, 1, 0, 0);
	case TMEM_OP_DESTROY_POOL:
		break;
	case TMEM_OP_PUT_PAGE:
	case TMEM_OP_GET_PAGE:
		if (r->slot >= nr_slots)
			return -TMEM_ERANGE;
		break;
	case TMEM_OP_FLUSH_PAGE:
		if (check_unused(r, 1, 1, 0))
			return -TMEM_EINVAL;
		break;
	case TMEM_OP_FLUSH_OBJECT:
		if (check_unused(r, 1, 0, 0))
			return -TMEM_EINVAL;
		break;
	default:
		return -TMEM_ENOSYS;
	}
	if (r->op == TMEM_OP_DESTROY_POOL && check_unused(r, 0, 0, 0))
		return -TMEM_EINVAL;
	if (r->pool_id < 0 || r->pool_id >= TMEM_MAX_POOLS_PER_CLIENT)
		return -TMEM_ENOENT;
	return 0;
}

/* Takes one pool from c's budget: false when it is spent. */
static bool budget_take(struct tmemd_client *c)
{
	struct tmemd_pool_budget *b = c->pool_budget;

	if (!b)
		return true;
	if (__atomic_add_fetch(&b->used, 1, __ATOMIC_RELAXED) <=
	    __atomic_load_n(&b->max, __ATOMIC_RELAXED))
		return true;
	__atomic_sub_fetch(&b->used, 1, __ATOMIC_RELAXED);
	return false;
}

static void budget_give(struct tmemd_client *c)
{
	if (c->pool_budget)
		__atomic_sub_fetch(&c->pool_budget->used, 1, __ATOMIC_RELAXED);
}

/* -TMEM_ENOSPC past the budget, before pools/ is asked: one uid's pools
 * must not use up the store's for everyone (man/tmemd.conf.5). */
static int32_t new_pool(struct tmemd_client *c, const struct tmem_req *r)
{
	struct tmem_uuid uuid = { .lo = r->oid[0], .hi = r->oid[1] };
	uint32_t before;
	int rc;

	if (!budget_take(c))
		return -TMEM_ENOSPC;
	rc = store_new_pool(c->sc, r->flags, &uuid);
	before = rc >= 0 && rc < TMEM_MAX_POOLS_PER_CLIENT ?
		 __atomic_fetch_or(&c->owned_pools, 1u << rc, __ATOMIC_RELAXED) : 0;
	/* Failed, or joined a shared pool this client already held. */
	if (rc < 0 || rc >= TMEM_MAX_POOLS_PER_CLIENT || (before & (1u << rc)))
		budget_give(c);
	return rc;
}

static int32_t destroy_pool(struct tmemd_client *c, int32_t pool_id)
{
	int rc = store_destroy_pool(c->sc, pool_id);

	if (rc >= 0 && (__atomic_fetch_and(&c->owned_pools, ~(1u << pool_id),
					   __ATOMIC_RELAXED) & (1u << pool_id)))
		budget_give(c);
	return rc;
}

/* A request refused before pools/ saw it (tmemd(8), REQUESTS): counted
 * for stats, off the path of a request that is served. */
static int32_t bad_request(struct tmemd_client *c, int32_t rc)
{
	if (c->reg)
		tmemd_clients_count_refusal(c->reg, TMEMD_REFUSED_REQUEST, rc);
	return rc;
}

/* rb NULL: a read-back is finished here. */
static int32_t get_page(struct tmemd_client *c, const struct tmem_req *r, void *page,
			struct tmem_readback *rb)
{
	const struct tmem_oid *oid = (const struct tmem_oid *)r->oid;
	int rc;

	if (!rb)
		return store_get_page(c->sc, r->pool_id, oid, r->index, page);
	rc = store_get_page_start(c->sc, r->pool_id, oid, r->index, page, rb);
	if (rc != TMEM_GET_READBACK)
		return rc;
	/* In the page cache: a copy, done here; else a read-back thread's. */
	rc = store_readback_try(rb, page);
	return rc == -EAGAIN ? TMEMD_DEFERRED : rc;
}

static int32_t dispatch(struct tmemd_client *c, const struct tmem_req *r,
			const struct tmemd_slots *slots, struct tmem_readback *rb);

int32_t tmemd_dispatch(struct tmemd_client *c, const struct tmem_req *r,
		       const struct tmemd_slots *slots)
{
	return dispatch(c, r, slots, NULL);
}

int32_t tmemd_dispatch_deferred(struct tmemd_client *c, const struct tmem_req *r,
				const struct tmemd_slots *slots, struct tmem_readback *rb)
{
	return dispatch(c, r, slots, rb);
}

static int32_t dispatch(struct tmemd_client *c, const struct tmem_req *r,
			const struct tmemd_slots *slots, struct tmem_readback *rb)
{
	const struct tmem_oid *oid = (const struct tmem_oid *)r->oid;
	int32_t rc = tmemd_req_check(r, slots->nr_slots);
	uint32_t owned;
	void *page;

	if (rc)
		return bad_request(c, rc);
	if (r->op == TMEM_OP_NEW_POOL)
		return new_pool(c, r);
	/* A pool id this client was not given: it cannot name another
	 * client's pool even if pools/ numbered it the same way. */
	owned = __atomic_load_n(&c->owned_pools, __ATOMIC_RELAXED);
	if (!(owned & (1u << r->pool_id)))
		return bad_request(c, -TMEM_ENOENT);
	switch (r->op) {
	case TMEM_OP_DESTROY_POOL:
		return destroy_pool(c, r->pool_id);
	case TMEM_OP_PUT_PAGE:
		page = tmem_slot_ptr(slots->region, slots->nr_entries, r->slot);
		return tmem_policy_put(c->pc, r->pool_id, oid, r->index, page);
	case TMEM_OP_GET_PAGE:
		page = tmem_slot_ptr(slots->region, slots->nr_entries, r->slot);
		return get_page(c, r, page, rb);
	case TMEM_OP_FLUSH_PAGE:
		return store_flush_page(c->sc, r->pool_id, oid, r->index);
	default: /* TMEM_OP_FLUSH_OBJECT; tmemd_req_check() allowed no other */
		return store_flush_object(c->sc, r->pool_id, oid);
	}
}

void tmemd_make_rsp(const struct tmem_req *req, int32_t ret,
		    struct tmem_rsp *rsp)
{
	memset(rsp, 0, sizeof(*rsp));
	rsp->id = req->id;
	rsp->op = req->op;
	rsp->ret = ret;
	rsp->slot = req->slot;
}
