/* SPDX-License-Identifier: MIT */
/*
 * codec.c and zmode.c: a page encoded for the put that stores it, outside
 * every lock (compressed, found same-filled, or kept raw), and decoded
 * back; a client's compression setting as the packed word the put path
 * reads.  Used by pagedata.c, zs.c, frames.c and the put path.
 */
#ifndef TMEM_POOLS_CODEC_H
#define TMEM_POOLS_CODEC_H

#include <stdbool.h>
#include <stdint.h>

#include "tmem_proto.h"
#include "tmem_store.h"

#define TMEM_COMPRESS_THRESHOLD 3072u /* default: bigger compressed pages stay raw */

/* A page, encoded outside every lock (codec.c) for the put that stores it. */
enum tmem_enc_kind { TMEM_ENC_RAW, TMEM_ENC_HUGE, TMEM_ENC_SAME, TMEM_ENC_Z };
struct tmem_enc {
	enum tmem_enc_kind kind;
	uint8_t codec;             /* TMEM_ENC_Z */
	uint32_t len;              /* bytes at bytes: TMEM_PAGE_SIZE raw, else compressed */
	uint64_t word;             /* TMEM_ENC_SAME */
	const void *bytes;         /* the guest's page, or buf */
	const void *page;          /* the guest's page (a raw frame's bytes) */
	uint8_t buf[TMEM_PAGE_SIZE];
};

/* ---- zmode.c: a client's compression setting ---------------------------- */
/* The packed form kept in tmem_client->compress (checked settings only). */
uint32_t compress_mode(const struct tmem_compress *cz);

/* ---- codec.c: compression, outside every lock ---------------------------- */
/* Encode page for a client's mode (tmem_client->compress). */
void codec_encode(uint32_t mode, uint32_t threshold, const void *page,
		  struct tmem_enc *out);
/* Decode len bytes of codec into a whole page; -EIO unless exactly. */
int codec_decode(uint8_t codec, const void *src, uint32_t len, void *page);
bool page_same_filled(const void *page, uint64_t *word);
void page_fill_word(void *page, uint64_t word);

#endif /* TMEM_POOLS_CODEC_H */
