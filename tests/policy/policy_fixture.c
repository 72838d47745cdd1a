/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "policy_fixture.h"

bool fx_quick(void)
{
	const char *q = getenv("TMEM_TEST_QUICK");

	return q && *q && strcmp(q, "0") != 0;
}

void fx_setup(struct fx *f, uint64_t pages, const struct tmem_policy_config *cfg)
{
	struct tmem_store_config sc = {
		.arena_bytes = pages * TMEM_PAGE_SIZE,
		.max_arena_bytes = 4 * pages * TMEM_PAGE_SIZE,
	};

	memset(f, 0, sizeof(*f));
	f->pages = pages;
	ck_assert_int_eq(store_create(&sc, &f->store), 0);
	ck_assert_int_eq(tmem_policy_create(f->store, cfg, &f->policy), 0);
}

void fx_teardown(struct fx *f)
{
	tmem_policy_destroy(f->policy);
	store_destroy(f->store);
}

struct tmem_pclient *fx_client(struct fx *f, const char *name, uint32_t weight)
{
	struct tmem_policy_config cfg;
	struct tmem_pclient *pc;

	tmem_policy_config_defaults(&cfg);
	cfg.defaults.weight = weight;
	ck_assert_int_eq(tmem_policy_client_add(f->policy, name, &cfg.defaults, &pc), 0);
	return pc;
}

int32_t fx_pool(struct tmem_pclient *pc, bool persistent)
{
	int id = store_new_pool(tmem_pclient_store_client(pc),
				tmem_pool_flags(persistent ? TMEM_POOL_PERSIST : 0),
				NULL);

	ck_assert_int_ge(id, 0);
	return id;
}

void fx_set_caps(struct tmem_pclient *pc, uint64_t ephemeral_max,
		 uint64_t persistent_max)
{
	struct tmem_client_settings s;

	tmem_policy_client_get(pc, &s);
	s.ephemeral_max = ephemeral_max;
	s.persistent_max = persistent_max;
	ck_assert_int_eq(tmem_policy_client_set(pc, &s), 0);
}

/* A cheap generator: every 8-byte word depends on tag, n and position. */
void fx_fill(void *page, uint64_t tag, uint64_t n)
{
	uint64_t *w = page, x = (tag << 40) ^ (n * 0x9e3779b97f4a7c15ull) ^ 1;

	for (size_t i = 0; i < TMEM_PAGE_SIZE / sizeof(*w); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
}

struct tmem_oid fx_oid(uint64_t tag, uint64_t n)
{
	struct tmem_oid oid = { .oid = { tag, n, 0x7a } };

	return oid;
}

int fx_put(struct tmem_pclient *pc, int32_t pool, uint64_t tag, uint64_t n)
{
	uint64_t page[TMEM_PAGE_SIZE / 8];
	struct tmem_oid oid = fx_oid(tag, n / 64);

	fx_fill(page, tag, n);
	return tmem_policy_put(pc, pool, &oid, (uint32_t)(n % 64), page);
}

int fx_check(struct tmem_pclient *pc, int32_t pool, uint64_t tag, uint64_t n)
{
	uint64_t want[TMEM_PAGE_SIZE / 8], got[TMEM_PAGE_SIZE / 8];
	struct tmem_oid oid = fx_oid(tag, n / 64);
	int rc;

	fx_fill(want, tag, n);
	rc = store_get_page(tmem_pclient_store_client(pc), pool, &oid,
			    (uint32_t)(n % 64), got);
	if (rc != 1)
		return rc;
	return memcmp(want, got, sizeof(got)) == 0 ? 1 : -1;
}

uint64_t fx_ephemeral(struct tmem_pclient *pc)
{
	struct tmem_page_counts c;

	store_client_page_counts(tmem_pclient_store_client(pc), &c);
	return c.ephemeral;
}

uint64_t fx_persistent(struct tmem_pclient *pc)
{
	struct tmem_page_counts c;

	store_client_page_counts(tmem_pclient_store_client(pc), &c);
	return c.persistent;
}

void fx_ops(struct tmem_pclient *pc, struct tmem_op_counters *out)
{
	struct tmem_client_info info;

	store_client_info(tmem_pclient_store_client(pc), &info);
	*out = info.ops;
}

struct pool_ops_ctx {
	int32_t id;
	bool found;
	struct tmem_op_counters ops;
};

static int pool_ops_match(const struct tmem_pool_info *info, void *arg)
{
	struct pool_ops_ctx *ctx = arg;

	if (info->id != ctx->id)
		return 0;
	ctx->ops = info->ops;
	ctx->found = true;
	return 1;
}

void fx_pool_ops(struct tmem_pclient *pc, int32_t pool, struct tmem_op_counters *out)
{
	struct pool_ops_ctx ctx = { .id = pool };

	store_client_for_each_pool(tmem_pclient_store_client(pc), pool_ops_match, &ctx);
	ck_assert(ctx.found);
	*out = ctx.ops;
}

void fx_arena(struct fx *f, struct tmem_arena_counts *out)
{
	store_arena_counts(f->store, out);
}
