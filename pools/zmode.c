/* SPDX-License-Identifier: MIT */
/*
 * A client's compression setting: its text form ("off", "lz4", "zstd",
 * "zstd:LEVEL"), its check, and the packed word the put path reads
 * (algo | level << 8) without a lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

bool store_compress_valid(const struct tmem_compress *cz)
{
	switch (cz->algo) {
	case TMEM_COMPRESS_OFF:
	case TMEM_COMPRESS_LZ4:
		return cz->level == 0;
	case TMEM_COMPRESS_ZSTD:
		return cz->level >= 1 && cz->level <= TMEM_ZSTD_LEVEL_MAX;
	default:
		return false;
	}
}

uint32_t compress_mode(const struct tmem_compress *cz)
{
	if (!store_compress_valid(cz))
		return TMEM_COMPRESS_OFF;
	return (uint32_t)cz->algo | (uint32_t)(uint8_t)cz->level << 8;
}

int store_compress_parse(const char *text, struct tmem_compress *out)
{
	struct tmem_compress cz = { TMEM_COMPRESS_OFF, 0 };
	char *end;
	long level;

	if (!text || !out)
		return -EINVAL;
	if (!strcmp(text, "off")) {
		cz.algo = TMEM_COMPRESS_OFF;
	} else if (!strcmp(text, "lz4")) {
		cz.algo = TMEM_COMPRESS_LZ4;
	} else if (!strcmp(text, "zstd")) {
		cz.algo = TMEM_COMPRESS_ZSTD;
		cz.level = TMEM_ZSTD_LEVEL_DEFAULT;
	} else if (!strncmp(text, "zstd:", 5) && text[5] >= '0' && text[5] <= '9') {
		level = strtol(text + 5, &end, 10);
		if (*end || level < 1 || level > TMEM_ZSTD_LEVEL_MAX)
			return -EINVAL;
		cz.algo = TMEM_COMPRESS_ZSTD;
		cz.level = (int)level;
	} else {
		return -EINVAL;
	}
	*out = cz;
	return 0;
}

const char *store_compress_format(const struct tmem_compress *cz, char *buf, size_t len)
{
	switch (cz->algo) {
	case TMEM_COMPRESS_LZ4:
		snprintf(buf, len, "lz4");
		break;
	case TMEM_COMPRESS_ZSTD:
		snprintf(buf, len, "zstd:%d", cz->level);
		break;
	default:
		snprintf(buf, len, "off");
		break;
	}
	return buf;
}

int store_client_set_compress(struct tmem_client *c, const struct tmem_compress *cz)
{
	if (!c || !cz || !store_compress_valid(cz))
		return -EINVAL;
	atomic_store_explicit(&c->compress, compress_mode(cz), memory_order_relaxed);
	return 0;
}

void store_client_get_compress(const struct tmem_client *c, struct tmem_compress *out)
{
	uint32_t m;

	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	m = atomic_load_explicit(&((struct tmem_client *)c)->compress, memory_order_relaxed);
	out->algo = (enum tmem_compress_algo)(m & 0xff);
	out->level = (int8_t)(m >> 8);
}
