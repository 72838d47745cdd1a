/* SPDX-License-Identifier: MIT */
/*
 * The copy ceiling: 4 KiB pages copied from a cold 256 MiB buffer to
 * another (both pre-faulted, larger than any cache here), page by page.
 * Two cases: a shuffled destination, as a store's arena allocates pages
 * (pages_per_s, what the pipelined put rate is compared with), and a
 * sequential one (sequential_pages_per_s, the friendlier upper bound,
 * printed for reference).  Both are measured in the same run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"

#define BUF_BYTES (256ull << 20)
#define PAGES (BUF_BYTES / 4096)

int phase_memcpy(const struct bench_opts *o, json_t *out)
{
	char *src = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	char *dst = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	uint32_t *order = malloc(PAGES * sizeof(*order));
	uint64_t rng = 42, t0, t1, t2, t3;

	(void)o;
	if (src == MAP_FAILED || dst == MAP_FAILED || !order)
		return -ENOMEM;
	memset(src, 1, BUF_BYTES);
	memset(dst, 2, BUF_BYTES);
	for (uint32_t i = 0; i < PAGES; i++)
		order[i] = i;
	for (uint32_t i = PAGES - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(xorshift(&rng) % (i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	t0 = now_ns();
	for (uint32_t i = 0; i < PAGES; i++)
		memcpy(dst + (uint64_t)order[i] * 4096, src + (uint64_t)i * 4096, 4096);
	t1 = now_ns();
	__asm__ __volatile__("" : : "r"(dst) : "memory");
	/* Sequential, the other way: the last pages touched above are a
	 * tiny share of 2 x 256 MiB, so both sides are still cold. */
	t2 = now_ns();
	for (uint32_t i = 0; i < PAGES; i++)
		memcpy(src + (uint64_t)i * 4096, dst + (uint64_t)i * 4096, 4096);
	t3 = now_ns();
	__asm__ __volatile__("" : : "r"(src) : "memory");
	json_object_set_new(out, "memcpy",
		json_pack("{s:s,s:I,s:f,s:f}", "case", "cold 256 MiB -> 256 MiB",
			  "pages", (json_int_t)PAGES,
			  "pages_per_s", (double)PAGES * 1e9 / (double)(t1 - t0),
			  "sequential_pages_per_s", (double)PAGES * 1e9 / (double)(t3 - t2)));
	munmap(src, BUF_BYTES);
	munmap(dst, BUF_BYTES);
	free(order);
	return 0;
}
