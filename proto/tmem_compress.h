/* SPDX-License-Identifier: MIT */
/*
 * A client's compression setting as administrators write it, parsed one
 * way for tmemd (its config file and its control protocol, through
 * pools/' store_compress_parse) and tmemctl (set --compress): the same
 * text must mean the same setting, or fail with the same words, in all
 * three.  In proto/ because that is the one folder they all may include,
 * as proto/tmem_size.h is for sizes; freestanding like the rest of
 * proto/ (no libc).
 *
 * Grammar:
 *   off              pages stored raw
 *   lz4              LZ4 (as zswap's default)
 *   zstd             zstd at TMEM_ZSTD_LEVEL_DEFAULT
 *   zstd:LEVEL       zstd at LEVEL, 1..TMEM_ZSTD_LEVEL_MAX (decimal digits)
 * ("on" was the old form: it is refused, and tmem_compress_parse says so.)
 */
#ifndef TMEM_COMPRESS_H
#define TMEM_COMPRESS_H

#include "tmem_proto.h"

enum tmem_compress_algo {
	TMEM_COMPRESS_OFF = 0,
	TMEM_COMPRESS_LZ4 = 1,
	TMEM_COMPRESS_ZSTD = 2,
};
#define TMEM_ZSTD_LEVEL_DEFAULT 3
#define TMEM_ZSTD_LEVEL_MAX 19

struct tmem_compress {
	enum tmem_compress_algo algo;
	int level;                /* ZSTD: 1..TMEM_ZSTD_LEVEL_MAX; else 0 */
};

#define TMEM_COMPRESS_STR_(x) #x
#define TMEM_COMPRESS_STR(x) TMEM_COMPRESS_STR_(x)
/* The grammar, for error messages. */
#define TMEM_COMPRESS_VALUES \
	"off, lz4, zstd or zstd:LEVEL (1.." TMEM_COMPRESS_STR(TMEM_ZSTD_LEVEL_MAX) ")"
/* Room for the text form, NUL included ("zstd:19"). */
#define TMEM_COMPRESS_TEXT_MAX 16

enum tmem_compress_result {
	TMEM_COMPRESS_OK = 0,
	TMEM_COMPRESS_SYNTAX,     /* not in the grammar above */
	TMEM_COMPRESS_RANGE,      /* zstd:LEVEL outside 1..TMEM_ZSTD_LEVEL_MAX */
	TMEM_COMPRESS_OLD_FORM,   /* "on": the old on/off form */
};

static inline int tmem_compress_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* Whether algo and level go together (LZ4 and OFF: level 0). */
static inline int tmem_compress_valid(const struct tmem_compress *cz)
{
	switch (cz->algo) {
	case TMEM_COMPRESS_OFF:
	case TMEM_COMPRESS_LZ4:
		return cz->level == 0;
	case TMEM_COMPRESS_ZSTD:
		return cz->level >= 1 && cz->level <= TMEM_ZSTD_LEVEL_MAX;
	default:
		return 0;
	}
}

/* text into *out (untouched unless TMEM_COMPRESS_OK). */
static inline enum tmem_compress_result tmem_compress_parse(const char *text,
							    struct tmem_compress *out)
{
	struct tmem_compress cz;
	const char *s;
	int level = 0;

	cz.algo = TMEM_COMPRESS_OFF;
	cz.level = 0;
	if (tmem_compress_eq(text, "off")) {
		cz.algo = TMEM_COMPRESS_OFF;
	} else if (tmem_compress_eq(text, "lz4")) {
		cz.algo = TMEM_COMPRESS_LZ4;
	} else if (tmem_compress_eq(text, "zstd")) {
		cz.algo = TMEM_COMPRESS_ZSTD;
		cz.level = TMEM_ZSTD_LEVEL_DEFAULT;
	} else if (text[0] == 'z' && text[1] == 's' && text[2] == 't' && text[3] == 'd' &&
		   text[4] == ':' && text[5] >= '0' && text[5] <= '9') {
		for (s = text + 5; *s >= '0' && *s <= '9'; s++) {
			level = level * 10 + (*s - '0');
			if (level > TMEM_ZSTD_LEVEL_MAX)
				level = TMEM_ZSTD_LEVEL_MAX + 1; /* no overflow */
		}
		if (*s)
			return TMEM_COMPRESS_SYNTAX;
		if (level < 1 || level > TMEM_ZSTD_LEVEL_MAX)
			return TMEM_COMPRESS_RANGE;
		cz.algo = TMEM_COMPRESS_ZSTD;
		cz.level = level;
	} else {
		return tmem_compress_eq(text, "on") ? TMEM_COMPRESS_OLD_FORM
						    : TMEM_COMPRESS_SYNTAX;
	}
	*out = cz;
	return TMEM_COMPRESS_OK;
}

/* The text form of a valid setting into buf (len >= TMEM_COMPRESS_TEXT_MAX
 * is always enough; shorter is cut, NUL-terminated); returns buf. */
static inline const char *tmem_compress_format(const struct tmem_compress *cz,
					       char *buf, unsigned long len)
{
	const char *name = cz->algo == TMEM_COMPRESS_LZ4 ? "lz4" :
			   cz->algo == TMEM_COMPRESS_ZSTD ? "zstd:" : "off";
	char digits[4];
	unsigned long n = 0;
	int d = 0, level = cz->level;

	if (!len)
		return buf;
	while (*name && n + 1 < len)
		buf[n++] = *name++;
	if (cz->algo == TMEM_COMPRESS_ZSTD) {
		if (level < 0 || level > 999)
			level = 0;
		do {
			digits[d++] = (char)('0' + level % 10);
			level /= 10;
		} while (level);
		while (d && n + 1 < len)
			buf[n++] = digits[--d];
	}
	buf[n] = '\0';
	return buf;
}

#endif /* TMEM_COMPRESS_H */
