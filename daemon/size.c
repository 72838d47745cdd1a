/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "size.h"

uint64_t tmemd_host_ram_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long psz = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || psz <= 0)
		return 0;
	return (uint64_t)pages * (uint64_t)psz;
}

static int suffix_shift(const char *s, unsigned *shift)
{
	static const char units[] = "KMGT";
	const char *u;

	if (*s == '\0') {
		*shift = 0;
		return 0;
	}
	if (!strcasecmp(s, "B")) {
		*shift = 0;
		return 0;
	}
	u = strchr(units, toupper((unsigned char)*s));
	if (!u)
		return -EINVAL;
	*shift = 10 * (unsigned)(u - units + 1);
	s++;
	if (*s == '\0' || !strcasecmp(s, "B") || !strcasecmp(s, "iB"))
		return 0;
	return -EINVAL;
}

int tmemd_parse_size(const char *s, bool allow_percent, uint64_t *bytes)
{
	unsigned long long v;
	unsigned shift;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (allow_percent && end[0] == '%' && end[1] == '\0') {
		if (v == 0 || v > 100)
			return -EINVAL;
		*bytes = tmemd_host_ram_bytes() / 100 * v;
		return *bytes ? 0 : -EINVAL;
	}
	if (suffix_shift(end, &shift))
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}
