/* SPDX-License-Identifier: MIT */
/*
 * mig_wire.c: checking and building the migration messages
 * (mig_proto.h).  Pure functions, no I/O: the peer is authenticated but
 * its bytes are still checked before any is used (tests/fuzz/fuzz_migrate.c).
 */
#ifndef TMEMD_MIG_WIRE_H
#define TMEMD_MIG_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "migrate/mig_proto.h"
#include "tmem_store.h"

/* 0, or -EPROTO: bad magic, version, type, reserved field or length. */
int mig_hdr_check(const struct tmem_mig_hdr *h);
/* 0, or -EPROTO: payload p of len bytes is not a good message of type. */
int mig_payload_check(uint16_t type, const void *p, uint32_t len);
/* A name field as a C string: 0, or -EPROTO when it is not a client name. */
int mig_name_get(const uint8_t field[TMEM_MIG_NAME_MAX], char out[TMEM_MIG_NAME_MAX]);
void mig_name_put(uint8_t field[TMEM_MIG_NAME_MAX], const char *name);

/* The records of a checked BATCH payload, one by one. */
struct mig_batch_iter {
	const uint8_t *p;
	uint32_t len, off, left;
	int32_t pool_id;
};
void mig_batch_begin(struct mig_batch_iter *it, const void *payload, uint32_t len);
/* 1 and *out (bytes point into the payload), 0 at the end, -EPROTO. */
int mig_batch_next(struct mig_batch_iter *it, struct tmem_stored_page *out);

/* Building a BATCH in buf (cap bytes, at least TMEM_MIG_MAX_PAYLOAD). */
struct mig_batch_buf {
	uint8_t *buf;
	uint32_t cap, used, count;
};
void mig_batch_start(struct mig_batch_buf *b, int32_t pool_id);
/* 0 added, or 1: no room for it (send what is there first). */
int mig_batch_add(struct mig_batch_buf *b, const struct tmem_stored_page *p);
uint32_t mig_batch_len(const struct mig_batch_buf *b);

#endif /* TMEMD_MIG_WIRE_H */
