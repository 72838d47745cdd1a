/*
 * The page patterns the e2e guest workloads (workload.c, fileset.c)
 * write and verify: a splitmix64 stream and an order-sensitive checksum.
 */
#ifndef E2E_PATTERN_H
#define E2E_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Order-sensitive, so swapped words are caught too. */
static inline uint64_t checksum(const uint64_t *w, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ w[i]) * 0x100000001b3ull + (h >> 29);
	return h;
}

#endif /* E2E_PATTERN_H */
