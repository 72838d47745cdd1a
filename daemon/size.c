/* SPDX-License-Identifier: MIT */
/* Sizes: proto/tmem_size.h's grammar, plus the host's RAM for "N%". */
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "size.h"

uint64_t tmemd_host_ram_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long psz = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || psz <= 0)
		return 0;
	return (uint64_t)pages * (uint64_t)psz;
}

enum tmem_size_result tmemd_parse_size(const char *s, bool allow_percent, uint64_t *bytes)
{
	struct tmem_size sz;
	enum tmem_size_result r;

	r = tmem_size_parse(s, allow_percent ? TMEM_SIZE_ALLOW_PERCENT : 0, &sz);
	if (r)
		return r;
	if (sz.percent) {
		/* A share of RAM, rounded down to whole pages. */
		*bytes = tmemd_host_ram_bytes() / 100 * sz.percent / TMEM_PAGE_SIZE * TMEM_PAGE_SIZE;
		return *bytes ? TMEM_SIZE_OK : TMEM_SIZE_RANGE;
	}
	if (sz.pages > UINT64_MAX / TMEM_PAGE_SIZE)
		return TMEM_SIZE_RANGE;
	*bytes = sz.pages * TMEM_PAGE_SIZE;
	return TMEM_SIZE_OK;
}

enum tmem_size_result tmemd_parse_memory(const char *s, uint64_t *bytes)
{
	enum tmem_size_result r;

	if (s && !strcmp(s, "auto")) {
		*bytes = TMEMD_MEMORY_AUTO;
		return TMEM_SIZE_OK;
	}
	r = tmemd_parse_size(s, true, bytes);
	if (!r && *bytes < 16 * TMEM_PAGE_SIZE)
		r = TMEM_SIZE_RANGE;
	return r;
}
