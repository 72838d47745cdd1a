/* SPDX-License-Identifier: MIT */
/*
 * tmem wire ABI: op codes, pool flags, ring entries and the shared-region
 * layout.  This header is shared by tmemd, libtmem and the guest kernel
 * module, so it is freestanding: no libc, fixed-width fields only, every
 * size and offset checked at compile time.  man/tmem.7 documents it.
 *
 * Numbers follow Xen's public/tmem.h (hypercall 38) wherever Xen had one,
 * so that a guest written for Xen tmem needs only a new transport.
 *
 * The shared region (one per connection) is:
 *
 *   offset 0                   struct tmem_ring_hdr (256 bytes)
 *   offset 256                 nr_entries x union tmem_ring_entry (64 bytes)
 *   tmem_slot_offset(n)        nr_slots x 4096-byte data slots
 *
 * nr_entries is a power of two.  The ring part is rounded up to whole
 * pages so that every data slot is one page, which the Xen transport
 * grants one reference per page.
 */
#ifndef TMEM_PROTO_H
#define TMEM_PROTO_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define TMEM_PAGE_SHIFT 12
#define TMEM_PAGE_SIZE (1u << TMEM_PAGE_SHIFT)

/* Op codes: Xen's TMEM_* numbers.  3 and 8..10 were pre-4.4 ops, never used. */
#define TMEM_OP_NEW_POOL 1
#define TMEM_OP_DESTROY_POOL 2
#define TMEM_OP_PUT_PAGE 4
#define TMEM_OP_GET_PAGE 5
#define TMEM_OP_FLUSH_PAGE 6
#define TMEM_OP_FLUSH_OBJECT 7

/* NEW_POOL flags: Xen's TMEM_POOL_* bits. */
#define TMEM_POOL_PERSIST 0x1u
#define TMEM_POOL_SHARED 0x2u
#define TMEM_POOL_PRECOMPRESSED 0x4u /* Xen rejected it; so do we */
#define TMEM_POOL_PAGESIZE_SHIFT 4
#define TMEM_POOL_PAGESIZE_MASK 0xfu /* value is PAGE_SHIFT - 12 */
#define TMEM_POOL_VERSION_SHIFT 24
#define TMEM_POOL_VERSION_MASK 0xffu
#define TMEM_POOL_RESERVED_MASK 0x00ffff00u
#define TMEM_SPEC_VERSION 1u
/* Every bit a valid NEW_POOL request may set. */
#define TMEM_POOL_VALID_MASK                                                 \
	(TMEM_POOL_PERSIST | TMEM_POOL_SHARED |                              \
	 (TMEM_POOL_PAGESIZE_MASK << TMEM_POOL_PAGESIZE_SHIFT) |             \
	 (TMEM_POOL_VERSION_MASK << TMEM_POOL_VERSION_SHIFT))

/* The flags a current guest sends for a 4 KiB pool of spec version 1. */
static inline uint32_t tmem_pool_flags(uint32_t kind_bits)
{
	return kind_bits | (TMEM_SPEC_VERSION << TMEM_POOL_VERSION_SHIFT);
}

/*
 * Error values carried in tmem_rsp.ret, negated.  These are Linux errno
 * numbers (the ABI is Linux/x86 and Linux/arm64 only, which agree);
 * tests/proto checks them against <errno.h>.  EFROZEN and EEMPTY are
 * Xen's private values.
 */
#define TMEM_EPERM 1
#define TMEM_ENOENT 2
#define TMEM_EIO 5
#define TMEM_E2BIG 7
#define TMEM_ENOMEM 12
#define TMEM_EBUSY 16
#define TMEM_EEXIST 17
#define TMEM_EINVAL 22
#define TMEM_ENOSPC 28
#define TMEM_ERANGE 34
#define TMEM_ENOSYS 38
#define TMEM_EPROTO 71
#define TMEM_EUSERS 87
#define TMEM_EOPNOTSUPP 95
#define TMEM_EFROZEN 1000
#define TMEM_EEMPTY 1001

/* 192-bit object id, Xen's xen_tmem_oid. */
struct tmem_oid {
	uint64_t oid[3];
};

/* 128-bit shared-pool UUID; lo holds bytes 0..7 of the RFC 4122 byte string. */
struct tmem_uuid {
	uint64_t lo;
	uint64_t hi;
};

#define TMEM_NO_SLOT 0xffffffffu

/*
 * One request, written by the frontend.  The backend copies it out of
 * shared memory once and validates the copy.
 *
 *   NEW_POOL      flags, uuid in oid[0] (lo) / oid[1] (hi); pool_id ignored
 *   DESTROY_POOL  pool_id
 *   PUT_PAGE      pool_id, oid, index, slot (the page to store)
 *   GET_PAGE      pool_id, oid, index, slot (where the page goes)
 *   FLUSH_PAGE    pool_id, oid, index
 *   FLUSH_OBJECT  pool_id, oid
 * Fields an op does not use must be zero (slot: TMEM_NO_SLOT).
 */
struct tmem_req {
	uint64_t id;       /* frontend cookie, echoed in the response */
	uint32_t op;       /* TMEM_OP_* */
	int32_t pool_id;   /* as returned by NEW_POOL */
	uint64_t oid[3];   /* object id, or the uuid for NEW_POOL */
	uint32_t index;    /* page index within the object */
	uint32_t slot;     /* data slot number, or TMEM_NO_SLOT */
	uint32_t flags;    /* NEW_POOL flags; zero for other ops */
	uint32_t rsvd[3];  /* must be zero */
};

/*
 * A request skeleton: op, pool, oid (NULL: zeros) and index; flags and
 * the reserved words zero, no slot.  The ring sets id and slot.  The one
 * request builder of the kernel shim and libtmem.
 */
static inline void tmem_req_init(struct tmem_req *req, uint32_t op, int32_t pool_id,
				 const struct tmem_oid *oid, uint32_t index)
{
	int i;

	req->id = 0;
	req->op = op;
	req->pool_id = pool_id;
	for (i = 0; i < 3; i++)
		req->oid[i] = oid ? oid->oid[i] : 0;
	req->index = index;
	req->slot = TMEM_NO_SLOT;
	req->flags = 0;
	for (i = 0; i < 3; i++)
		req->rsvd[i] = 0;
}

/*
 * One response, written by the backend over the request's entry.
 * ret: put 1 stored / 0 refused; get 1 hit / 0 miss; flush and destroy
 * 0 or 1; NEW_POOL the pool id (>= 0); negative TMEM_E* on a bad request.
 */
struct tmem_rsp {
	uint64_t id;       /* the request's id */
	uint32_t op;       /* the request's op */
	int32_t ret;
	uint32_t slot;     /* the request's slot */
	uint32_t rsvd[11]; /* zero */
};

#define TMEM_RING_ENTRY_SIZE 64u

union tmem_ring_entry {
	struct tmem_req req;
	struct tmem_rsp rsp;
	uint8_t raw[TMEM_RING_ENTRY_SIZE];
};

#define TMEM_RING_MAGIC 0x4d454d54u /* "TMEM" little-endian */
#define TMEM_RING_VERSION 1u
#define TMEM_RING_HDR_SIZE 256u
#define TMEM_RING_MIN_ENTRIES 2u
#define TMEM_RING_MAX_ENTRIES 1024u
#define TMEM_RING_MIN_SLOTS 1u
#define TMEM_RING_MAX_SLOTS 1024u

/*
 * The ring header.  Each 64-byte line has one writer, so the two sides do
 * not bounce a cache line on every request:
 *   line 0: geometry, written by the frontend before it connects; the
 *           backend never trusts it, it uses the values negotiated at
 *           connect time and treats a mismatch as a corrupt ring;
 *   line 1: written by the frontend (req_prod, rsp_event);
 *   line 2: written by the backend (rsp_prod, req_event).
 * Producer indices are free-running uint32_t; entry = index & (n - 1).
 * *_event is Xen's notification hold-off: "send me a doorbell when the
 * producer index passes this value".
 */
struct tmem_ring_hdr {
	uint32_t magic;       /* TMEM_RING_MAGIC */
	uint32_t version;     /* TMEM_RING_VERSION */
	uint32_t nr_entries;  /* power of two */
	uint32_t nr_slots;
	uint32_t slot_offset; /* tmem_slot_offset(nr_entries) */
	uint32_t rsvd0[11];

	uint32_t req_prod;
	uint32_t rsp_event;
	uint32_t rsvd1[14];

	uint32_t rsp_prod;
	uint32_t req_event;
	uint32_t rsvd2[14];

	uint32_t rsvd3[16];
};

_Static_assert(sizeof(struct tmem_oid) == 24, "tmem_oid is 24 bytes");
_Static_assert(sizeof(struct tmem_uuid) == 16, "tmem_uuid is 16 bytes");
_Static_assert(sizeof(struct tmem_req) == TMEM_RING_ENTRY_SIZE, "req size");
_Static_assert(sizeof(struct tmem_rsp) == TMEM_RING_ENTRY_SIZE, "rsp size");
_Static_assert(sizeof(union tmem_ring_entry) == TMEM_RING_ENTRY_SIZE, "entry");
_Static_assert(__builtin_offsetof(struct tmem_req, op) == 8, "req.op");
_Static_assert(__builtin_offsetof(struct tmem_req, pool_id) == 12, "req.pool");
_Static_assert(__builtin_offsetof(struct tmem_req, oid) == 16, "req.oid");
_Static_assert(__builtin_offsetof(struct tmem_req, index) == 40, "req.index");
_Static_assert(__builtin_offsetof(struct tmem_req, slot) == 44, "req.slot");
_Static_assert(__builtin_offsetof(struct tmem_req, flags) == 48, "req.flags");
_Static_assert(__builtin_offsetof(struct tmem_req, rsvd) == 52, "req.rsvd");
_Static_assert(__builtin_offsetof(struct tmem_rsp, op) == 8, "rsp.op");
_Static_assert(__builtin_offsetof(struct tmem_rsp, ret) == 12, "rsp.ret");
_Static_assert(__builtin_offsetof(struct tmem_rsp, slot) == 16, "rsp.slot");
_Static_assert(sizeof(struct tmem_ring_hdr) == TMEM_RING_HDR_SIZE, "hdr");
_Static_assert(__builtin_offsetof(struct tmem_ring_hdr, req_prod) == 64,
	       "req_prod starts line 1");
_Static_assert(__builtin_offsetof(struct tmem_ring_hdr, rsp_event) == 68,
	       "rsp_event");
_Static_assert(__builtin_offsetof(struct tmem_ring_hdr, rsp_prod) == 128,
	       "rsp_prod starts line 2");
_Static_assert(__builtin_offsetof(struct tmem_ring_hdr, req_event) == 132,
	       "req_event");

static inline uint32_t tmem_round_up_page(uint32_t bytes)
{
	return (bytes + TMEM_PAGE_SIZE - 1) & ~(TMEM_PAGE_SIZE - 1);
}

/* Byte offset of data slot 0: header plus entries, rounded up to a page. */
static inline uint32_t tmem_slot_offset(uint32_t nr_entries)
{
	return tmem_round_up_page(TMEM_RING_HDR_SIZE +
				  nr_entries * TMEM_RING_ENTRY_SIZE);
}

/* Total bytes of a shared region with this geometry. */
static inline uint64_t tmem_region_size(uint32_t nr_entries, uint32_t nr_slots)
{
	return (uint64_t)tmem_slot_offset(nr_entries) +
	       (uint64_t)nr_slots * TMEM_PAGE_SIZE;
}

/* Geometry both sides must agree on; 0 if valid, -TMEM_EINVAL if not. */
static inline int tmem_ring_geometry_check(uint32_t nr_entries,
					   uint32_t nr_slots)
{
	if (nr_entries < TMEM_RING_MIN_ENTRIES ||
	    nr_entries > TMEM_RING_MAX_ENTRIES ||
	    (nr_entries & (nr_entries - 1)) != 0)
		return -TMEM_EINVAL;
	if (nr_slots < TMEM_RING_MIN_SLOTS || nr_slots > TMEM_RING_MAX_SLOTS)
		return -TMEM_EINVAL;
	return 0;
}

static inline union tmem_ring_entry *tmem_ring_entries(void *region)
{
	return (union tmem_ring_entry *)((uint8_t *)region +
					 TMEM_RING_HDR_SIZE);
}

static inline void *tmem_slot_ptr(void *region, uint32_t nr_entries,
				  uint32_t slot)
{
	return (uint8_t *)region + tmem_slot_offset(nr_entries) +
	       (uint64_t)slot * TMEM_PAGE_SIZE;
}

/*
 * Xen's notification hold-off test: after moving a producer index from
 * old to new, the peer wants a doorbell if its event index lies in
 * (old, new].  Unsigned wrap-around arithmetic, as RING_PUSH_*_AND_CHECK.
 */
static inline int tmem_ring_need_notify(uint32_t old_prod, uint32_t new_prod,
					uint32_t event)
{
	return (uint32_t)(new_prod - event) < (uint32_t)(new_prod - old_prod);
}

/*
 * A producer index the peer published is only believable if it is at
 * most one ring ahead of what this side has answered: more means the
 * peer overwrote entries still owned by us (RING_REQUEST_PROD_OVERFLOW).
 */
static inline int tmem_ring_prod_overflow(uint32_t prod, uint32_t answered,
					  uint32_t nr_entries)
{
	return (uint32_t)(prod - answered) > nr_entries;
}

#include "tmem_barrier.h"

#endif /* TMEM_PROTO_H */
