/* SPDX-License-Identifier: MIT */
/*
 * A client's compression setting: its text form and check
 * (proto/tmem_compress.h's grammar, in errno form), and the packed word
 * the put path reads (algo | level << 8) without a lock.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

bool store_compress_valid(const struct tmem_compress *cz)
{
	return tmem_compress_valid(cz);
}

uint32_t compress_mode(const struct tmem_compress *cz)
{
	if (!store_compress_valid(cz))
		return TMEM_COMPRESS_OFF;
	return (uint32_t)cz->algo | (uint32_t)(uint8_t)cz->level << 8;
}

int store_compress_parse(const char *text, struct tmem_compress *out)
{
	if (!text || !out)
		return -EINVAL;
	return tmem_compress_parse(text, out) == TMEM_COMPRESS_OK ? 0 : -EINVAL;
}

const char *store_compress_format(const struct tmem_compress *cz, char *buf, size_t len)
{
	return tmem_compress_format(cz, buf, len);
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
