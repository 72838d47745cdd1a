/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the request path: the input becomes the contents
 * of a ring (entries, then producer index values) served by
 * tmemd_ring_process() against a real store and policy.  Any crash,
 * sanitizer report or response outside the contract is a bug.
 * Build and run: make fuzz-dispatch [FUZZ_SECONDS=N] (needs clang).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client_registry.h"
#include "config.h"
#include "fake_ring.h"

#define ENTRIES 8u
#define SLOTS 4u

static struct tmemd_config cfg;
static struct tmem_store *store;
static struct tmem_policy *policy;
static struct tmemd_clients *reg;
static void *region;

static void init_once(void)
{
	struct tmem_store_config sc = { .arena_bytes = 1u << 20 };
	struct tmem_policy_config pc;

	tmemd_config_init(&cfg);
	if (store_create(&sc, &store))
		abort();
	tmem_policy_config_defaults(&pc);
	if (tmem_policy_create(store, &pc, &policy) ||
	    tmemd_clients_create(store, policy, &cfg, &reg))
		abort();
	region = aligned_alloc(4096, tmem_region_size(ENTRIES, SLOTS));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fake_ring fr;
	struct tmemd_ring *ring = &fr.ring;
	struct tmemd_client *c;
	struct tmem_ring_hdr *h;
	union tmem_ring_entry *e;

	if (!store)
		init_once();
	if (tmemd_client_add(reg, "fuzz", "fuzz", -1, &c))
		abort();
	fake_ring_init(&fr, region, ENTRIES, SLOTS, c);
	h = region;
	e = tmem_ring_entries(region);
	/* Rounds: one byte says how many entries the "guest" publishes,
	 * then that many 64-byte requests follow. */
	while (size > 0 && !fr.faulted) {
		uint32_t n = data[0] % (ENTRIES + 3);

		data++;
		size--;
		for (uint32_t i = 0; i < n && i < ENTRIES && size >= 64; i++) {
			memcpy(&e[(ring->req_cons + i) & (ENTRIES - 1)], data, 64);
			data += 64;
			size -= 64;
		}
		h->req_prod = ring->req_cons + n;
		if (tmemd_ring_process(ring, 64) >= 0) {
			for (uint32_t i = 0; i < ENTRIES; i++)
				if (e[i].rsp.ret > 1 && e[i].rsp.op != TMEM_OP_NEW_POOL)
					abort(); /* only NEW_POOL returns more than 1 */
		}
	}
	tmemd_client_remove(c);
	return 0;
}
