/* SPDX-License-Identifier: MIT */
/*
 * htab.c: a pool's two chained hash tables of descriptor indices, the
 * chain links kept in the descriptors.  Used by object.c, recover.c and
 * pool.c.
 */
#ifndef TMEM_POOLS_HTAB_H
#define TMEM_POOLS_HTAB_H

#include <stdint.h>

#include "tmem_proto.h"

struct tmem_store;
struct tmem_pool;

#define TMEM_HTAB_MIN 64u          /* buckets in a new pool's tables */
#define TMEM_PAGE_HTAB_LOAD 2u     /* grow the page table above this load */
#define TMEM_OBJ_HTAB_LOAD 4u      /* grow the object table above this load */

/* A chained hash table of uint32 indices; the chain link lives in the entries. */
struct tmem_htab {
	uint32_t *b;    /* mask + 1 buckets, TMEM_NIL = empty */
	uint32_t mask;
	uint32_t count; /* entries */
};

/* ---- htab.c: per-pool hash tables; pool lock held ----------------------- */
int htab_init(struct tmem_store *s, struct tmem_htab *t);
void htab_fini(struct tmem_store *s, struct tmem_htab *t);
uint64_t oid_hash(const struct tmem_store *s, const struct tmem_oid *oid);
uint32_t do_page_lookup(struct tmem_pool *pool, const struct tmem_oid *oid,
			uint32_t index, uint64_t oh);
void do_page_hash_add(struct tmem_pool *pool, uint32_t page, uint64_t oh);
void do_page_hash_del(struct tmem_pool *pool, uint32_t page, uint64_t oh);
uint32_t do_obj_lookup(struct tmem_pool *pool, const struct tmem_oid *oid,
		       uint64_t oh);
/* Replace head page old by new (TMEM_NIL: remove) in the object table. */
void do_obj_hash_replace(struct tmem_pool *pool, uint32_t old, uint32_t new,
			 uint64_t oh);
void do_obj_hash_add(struct tmem_pool *pool, uint32_t head, uint64_t oh);

#endif /* TMEM_POOLS_HTAB_H */
