/* SPDX-License-Identifier: MIT */
/*
 * Sizes on the command line, in proto/tmem_size.h's grammar: the one
 * tmemd's config file uses, so a value means the same in both and fails
 * with the same reason.  The protocol carries pages.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "tmem_size.h"
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

int parse_size_pages(const char *text, bool allow_none, uint64_t *pages)
{
	struct tmem_size sz;
	enum tmem_size_result r;

	r = tmem_size_parse(text, allow_none ? TMEM_SIZE_ALLOW_NONE : 0, &sz);
	if (!r)
		*pages = sz.none ? UINT64_MAX : sz.pages;
	return (int)r;
}
