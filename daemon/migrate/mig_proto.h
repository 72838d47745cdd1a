/* SPDX-License-Identifier: MIT */
/*
 * The migration protocol between two tmemds (man/tmem.7, "Migration
 * between hosts"): the messages that travel inside the TLS session
 * (mig_tls.c), fixed-width little-endian, explicit reserved space (zero).
 * Every message is a header and len bytes of payload; mig_wire.c checks
 * each one before anything reads it.
 *
 *   destination                         source
 *   PULL name ident          ->
 *                            <-         OFFER xfer pools pages  (or status < 0)
 *                            <-         BATCH ... (pages as stored)
 *                            <-         END pages bytes
 *   (pages durable, committed)
 *   RELEASE xfer             ->         (frees them)
 *                            <-         DONE status
 *   ABORT xfer               ->         (keeps them parked)
 *                            <-         DONE status
 *   CHECK name               ->
 *                            <-         CHECK_REPLY status free pages
 *
 * and a push (tmemctl migrate-push), the source asking a destination to
 * pull a parked client as above and keep it parked there:
 *
 *   source                              destination
 *   PUSH name ident          ->         (PULL ... RELEASE, to its peers)
 *                            <-         DONE status
 */
#ifndef TMEMD_MIG_PROTO_H
#define TMEMD_MIG_PROTO_H

#include <stdint.h>

#include "tmem_proto.h"

#define TMEM_MIG_MAGIC 0x474d4d54u   /* "TMMG" little-endian */
#define TMEM_MIG_VERSION 1u
#define TMEM_MIG_NAME_MAX 64u        /* bytes, NUL-padded, at least one NUL */
#define TMEM_MIG_IDENT_LEN 32u       /* a client's identity (pools/tmem_ident) */
#define TMEM_MIG_XFER_LEN 16u        /* a transfer's id, random */
#define TMEM_MIG_MAX_POOLS 32u
#define TMEM_MIG_MAX_PAYLOAD (4u << 20) /* a batch: about 1000 pages as stored */
#define TMEM_MIG_BATCH_TARGET (1u << 20)

enum tmem_mig_type {
	TMEM_MIG_PULL = 1,
	TMEM_MIG_OFFER = 2,
	TMEM_MIG_BATCH = 3,
	TMEM_MIG_END = 4,
	TMEM_MIG_RELEASE = 5,
	TMEM_MIG_ABORT = 6,
	TMEM_MIG_DONE = 7,
	TMEM_MIG_CHECK = 8,
	TMEM_MIG_CHECK_REPLY = 9,
	TMEM_MIG_PUSH = 10,
};

struct tmem_mig_hdr {
	uint32_t magic;        /* TMEM_MIG_MAGIC */
	uint16_t version;      /* TMEM_MIG_VERSION */
	uint16_t type;         /* enum tmem_mig_type */
	uint32_t len;          /* payload bytes after the header */
	uint32_t rsvd;
};

/* PULL, CHECK and PUSH: who. */
struct tmem_mig_who {
	uint8_t name[TMEM_MIG_NAME_MAX];
	uint8_t ident[TMEM_MIG_IDENT_LEN]; /* CHECK: zero */
};

struct tmem_mig_pool {
	int32_t id;
	uint32_t flags;        /* TMEM_POOL_* as NEW_POOL takes them */
};

struct tmem_mig_offer {
	int32_t status;        /* 0, or -TMEM_E*: refused, nothing else follows */
	uint32_t nr_pools;
	uint64_t pages;        /* pages that follow */
	uint8_t xfer[TMEM_MIG_XFER_LEN];
	struct tmem_mig_pool pools[TMEM_MIG_MAX_POOLS];
};

/* BATCH: this, then count records, each a tmem_mig_page then len bytes
 * padded to 8. */
struct tmem_mig_batch {
	int32_t pool_id;
	uint32_t count;
};

struct tmem_mig_page {
	uint64_t oid[3];
	uint32_t index;
	uint32_t len;          /* bytes that follow; 0 for a same-filled page */
	uint8_t codec;         /* TMEM_CODEC_* or TMEM_STORED_SAME */
	uint8_t rsvd[7];
	uint64_t word;         /* same-filled: the word; else 0 */
};

struct tmem_mig_end {
	uint64_t pages;
	uint64_t bytes;        /* page bytes sent (as stored) */
};

/* RELEASE and ABORT. */
struct tmem_mig_xfer {
	uint8_t xfer[TMEM_MIG_XFER_LEN];
};

struct tmem_mig_done {
	int32_t status;        /* 0 or -TMEM_E* */
	uint32_t rsvd;
};

struct tmem_mig_check_reply {
	int32_t status;        /* 0, or -TMEM_E* */
	uint32_t rsvd;
	uint64_t free_pages;   /* the arena's free pages */
	uint64_t parked_pages; /* pages parked for the name asked about */
};

_Static_assert(sizeof(struct tmem_mig_hdr) == 16, "hdr");
_Static_assert(sizeof(struct tmem_mig_who) == 96, "who");
_Static_assert(sizeof(struct tmem_mig_offer) == 288, "offer");
_Static_assert(sizeof(struct tmem_mig_batch) == 8, "batch");
_Static_assert(sizeof(struct tmem_mig_page) == 48, "page");
_Static_assert(sizeof(struct tmem_mig_end) == 16, "end");
_Static_assert(sizeof(struct tmem_mig_xfer) == 16, "xfer");
_Static_assert(sizeof(struct tmem_mig_done) == 8, "done");
_Static_assert(sizeof(struct tmem_mig_check_reply) == 24, "check reply");

#endif /* TMEMD_MIG_PROTO_H */
