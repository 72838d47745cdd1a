/* SPDX-License-Identifier: MIT */
/*
 * Sizes on the command line.  A number with K, M, G or T (powers of
 * 1024, an optional trailing "B" or "iB") is bytes, and must be a whole
 * number of 4 KiB pages; a plain number is bytes too; "Np" is N pages.
 * The protocol carries pages.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tmem_proto.h"
#include "tmemctl.h"

int parse_uint(const char *text, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int suffix_shift(const char *s, unsigned *shift)
{
	static const char units[] = "KMGT";
	const char *u;

	if (*s == '\0') {
		*shift = 0;
		return 0;
	}
	u = strchr(units, toupper((unsigned char)*s));
	if (!u || !*u)
		return -EINVAL;
	*shift = 10 * (unsigned)(u - units + 1);
	s++;
	if (*s == '\0' || strcasecmp(s, "b") == 0 || strcasecmp(s, "ib") == 0)
		return 0;
	return -EINVAL;
}

int parse_size_pages(const char *text, bool allow_none, uint64_t *pages)
{
	unsigned long long v;
	unsigned shift;
	char *end;

	if (allow_none && (strcmp(text, "none") == 0 || strcmp(text, "unlimited") == 0)) {
		*pages = UINT64_MAX;
		return 0;
	}
	if (!isdigit((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno)
		return -EINVAL;
	if ((end[0] == 'p' || end[0] == 'P') && end[1] == '\0') {
		if (v > INT64_MAX)
			return -EINVAL;
		*pages = v;
		return 0;
	}
	if (suffix_shift(end, &shift) || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	v <<= shift;
	if (v % TMEM_PAGE_SIZE || v / TMEM_PAGE_SIZE > INT64_MAX)
		return -EINVAL;
	*pages = v / TMEM_PAGE_SIZE;
	return 0;
}
