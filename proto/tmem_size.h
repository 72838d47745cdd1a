/* SPDX-License-Identifier: MIT */
/*
 * Sizes as administrators write them, parsed one way for tmemd (its
 * config file and --memory) and tmemctl (set, pool-size): the same value
 * must mean the same thing, or fail with the same words, in both.  It is
 * in proto/ because that is the one folder both may include; it is
 * freestanding like the rest of proto/ (no libc).
 *
 * Grammar (case-insensitive suffixes):
 *   N                bytes
 *   N{K,M,G,T}[B|iB] bytes, powers of 1024
 *   Np               N pages of 4 KiB
 *   N%               N percent (1..100) of the host's RAM, when allowed
 *   none, unlimited  no limit, when allowed
 * Bytes must make whole 4 KiB pages: "1000" is refused, not rounded to 0.
 */
#ifndef TMEM_SIZE_H
#define TMEM_SIZE_H

#include "tmem_proto.h"

/* The limits by value: the kernel has no UINT64_MAX or INT64_MAX (it
 * calls them U64_MAX and S64_MAX), and this header must build there too. */
#define TMEM_SIZE_U64_MAX (~(uint64_t)0)
#define TMEM_SIZE_S64_MAX (TMEM_SIZE_U64_MAX >> 1)

enum tmem_size_flags {
	TMEM_SIZE_ALLOW_NONE = 1u << 0,
	TMEM_SIZE_ALLOW_PERCENT = 1u << 1,
};

enum tmem_size_result {
	TMEM_SIZE_OK = 0,
	TMEM_SIZE_SYNTAX,     /* not in the grammar above */
	TMEM_SIZE_NOT_PAGES,  /* bytes that are not a whole number of pages */
	TMEM_SIZE_RANGE,      /* overflow, or a percent outside 1..100 */
};

/* A parsed size: exactly one of none, percent (1..100) or pages. */
struct tmem_size {
	uint64_t pages;
	uint32_t percent;
	uint8_t none;
};

/* The reason for a result, and the grammar, for error messages. */
#define TMEM_SIZE_GRAMMAR \
	"bytes with K, M, G or T (powers of 1024) making whole 4 KiB pages, or Np pages"

static inline const char *tmem_size_strerror(enum tmem_size_result r)
{
	switch (r) {
	case TMEM_SIZE_OK:
		return "ok";
	case TMEM_SIZE_NOT_PAGES:
		return "not a whole number of 4 KiB pages";
	case TMEM_SIZE_RANGE:
		return "out of range";
	default:
		return "not a size";
	}
}

static inline int tmem_size_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* True when s, case-insensitively, is word. */
static inline int tmem_size_is(const char *s, const char *word)
{
	while (*word && tmem_size_lower(*s) == *word) {
		s++;
		word++;
	}
	return !*s && !*word;
}

/* The power of 1024 a K/M/G/T[B|iB] suffix (or none) stands for; -1 if
 * s is not such a suffix. */
static inline int tmem_size_shift(const char *s)
{
	static const char units[] = "kmgt";
	int i;

	if (!*s || tmem_size_is(s, "b"))
		return 0;
	for (i = 0; units[i] && units[i] != tmem_size_lower(*s); i++)
		;
	if (!units[i])
		return -1;
	s++;
	return !*s || tmem_size_is(s, "b") || tmem_size_is(s, "ib") ? 10 * (i + 1) : -1;
}

static inline enum tmem_size_result tmem_size_parse(const char *s, unsigned flags,
						    struct tmem_size *out)
{
	uint64_t v = 0;
	int shift;

	out->pages = 0;
	out->percent = 0;
	out->none = 0;
	if ((flags & TMEM_SIZE_ALLOW_NONE) &&
	    (tmem_size_is(s, "none") || tmem_size_is(s, "unlimited"))) {
		out->none = 1;
		return TMEM_SIZE_OK;
	}
	if (*s < '0' || *s > '9')
		return TMEM_SIZE_SYNTAX;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (TMEM_SIZE_U64_MAX - (uint64_t)(*s - '0')) / 10)
			return TMEM_SIZE_RANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if ((flags & TMEM_SIZE_ALLOW_PERCENT) && s[0] == '%' && !s[1]) {
		if (v < 1 || v > 100)
			return TMEM_SIZE_RANGE;
		out->percent = (uint32_t)v;
		return TMEM_SIZE_OK;
	}
	if (tmem_size_is(s, "p")) {
		if (v > TMEM_SIZE_S64_MAX)
			return TMEM_SIZE_RANGE;
		out->pages = v;
		return TMEM_SIZE_OK;
	}
	shift = tmem_size_shift(s);
	if (shift < 0)
		return TMEM_SIZE_SYNTAX;
	if (v > (TMEM_SIZE_U64_MAX >> shift))
		return TMEM_SIZE_RANGE;
	v <<= shift;
	if (v % TMEM_PAGE_SIZE)
		return TMEM_SIZE_NOT_PAGES;
	if (v / TMEM_PAGE_SIZE > TMEM_SIZE_S64_MAX)
		return TMEM_SIZE_RANGE;
	out->pages = v / TMEM_PAGE_SIZE;
	return TMEM_SIZE_OK;
}

#endif /* TMEM_SIZE_H */
