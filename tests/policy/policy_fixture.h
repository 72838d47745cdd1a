/* SPDX-License-Identifier: MIT */
/* Helpers shared by the policy/ tests: a store plus a policy over it. */
#ifndef POLICY_FIXTURE_H
#define POLICY_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "tmem_policy.h"
#include "tmem_store.h"

struct fx {
	struct tmem_store *store;
	struct tmem_policy *policy;
	uint64_t pages;
};

/* TMEM_TEST_QUICK=1 (the valgrind run) asks for smaller loops. */
bool fx_quick(void);
/* A store of pages pages (growable to 4x) and a policy; cfg may be NULL. */
void fx_setup(struct fx *f, uint64_t pages, const struct tmem_policy_config *cfg);
void fx_teardown(struct fx *f);
struct tmem_pclient *fx_client(struct fx *f, const char *name, uint32_t weight);
int32_t fx_pool(struct tmem_pclient *pc, bool persistent);
void fx_set_caps(struct tmem_pclient *pc, uint64_t ephemeral_max,
		 uint64_t persistent_max);

/* Page contents that differ for every (tag, n). */
void fx_fill(void *page, uint64_t tag, uint64_t n);
struct tmem_oid fx_oid(uint64_t tag, uint64_t n);
/* tmem_policy_put of page (tag, n) at handle (fx_oid(tag, n / 64), n % 64). */
int fx_put(struct tmem_pclient *pc, int32_t pool, uint64_t tag, uint64_t n);
/* 1 when the page reads back byte-identical, 0 on a miss, -1 on wrong data. */
int fx_check(struct tmem_pclient *pc, int32_t pool, uint64_t tag, uint64_t n);

uint64_t fx_ephemeral(struct tmem_pclient *pc);
uint64_t fx_persistent(struct tmem_pclient *pc);
void fx_ops(struct tmem_pclient *pc, struct tmem_op_counters *out);
/* The counters of one pool of pc. */
void fx_pool_ops(struct tmem_pclient *pc, int32_t pool, struct tmem_op_counters *out);
void fx_arena(struct fx *f, struct tmem_arena_counts *out);

#endif /* POLICY_FIXTURE_H */
