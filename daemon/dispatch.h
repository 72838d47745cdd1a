/* SPDX-License-Identifier: MIT */
/*
 * The one request path every transport uses.  A transport's ring code
 * (ring.c) copies each request out of shared memory once, then calls
 * tmemd_dispatch() on the private copy; it never looks at the request
 * itself.
 */
#ifndef TMEMD_DISPATCH_H
#define TMEMD_DISPATCH_H

#include <stdint.h>

#include "client_registry.h"
#include "tmem_proto.h"

/* Where a ring's data slots are, as negotiated at connect time. */
struct tmemd_slots {
	void *region;
	uint32_t nr_entries;
	uint32_t nr_slots;
};

/*
 * Checks the form of a request copy: a known op, reserved fields zero,
 * the fields the op does not use zero (slot TMEM_NO_SLOT), flags only on
 * NEW_POOL and only valid bits, slot < nr_slots for PUT/GET, pool id in
 * range.  Returns 0 or the negative TMEM_E* to answer with.  Ownership
 * of the pool id is checked by tmemd_dispatch().
 */
int32_t tmemd_req_check(const struct tmem_req *req, uint32_t nr_slots);

/*
 * Validates req (a private copy) and performs it for client c: every
 * PUT_PAGE through tmem_policy_put(), the rest straight to pools/.
 * Returns the value for tmem_rsp.ret.
 */
int32_t tmemd_dispatch(struct tmemd_client *c, const struct tmem_req *req,
		       const struct tmemd_slots *slots);
/*
 * The same, except that a GET_PAGE of a page in the host tier that is
 * not in the page cache is only started: TMEMD_DEFERRED, with *rb for
 * store_readback_finish() into the request's slot (readback.h), whose
 * result is the response's ret.
 */
#define TMEMD_DEFERRED INT32_MIN
int32_t tmemd_dispatch_deferred(struct tmemd_client *c, const struct tmem_req *req,
				const struct tmemd_slots *slots, struct tmem_readback *rb);

/* The response entry for req with result ret (reserved fields zero). */
void tmemd_make_rsp(const struct tmem_req *req, int32_t ret,
		    struct tmem_rsp *rsp);

#endif /* TMEMD_DISPATCH_H */
