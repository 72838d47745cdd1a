/* SPDX-License-Identifier: MIT */
/* libtmem internals shared by raw.c and tmem.c; not installed. */
#ifndef TMEM_RAW_INTERNAL_H
#define TMEM_RAW_INTERNAL_H

#include "tmem_local.h"
#include "tmem_raw.h"

/* A session (proto/tmem_local.h): token in (zero: new) and out. */
struct tmem_raw_session {
	uint8_t token[TMEM_LOCAL_SESSION_LEN];
	uint32_t flags;   /* TMEM_LOCAL_RESUMED */
	uint32_t pools;   /* resumed: pool ids the client holds */
};

/* tmem_raw_connect_status() resuming sess (NULL: a new session). */
int tmem_raw_connect_session(const char *path, const char *name,
			     uint32_t nr_entries, uint32_t nr_slots,
			     struct tmem_raw_session *sess,
			     struct tmem_raw_ring *out, int32_t *refusal);

/*
 * tmem_raw_connect(), which also reports tmemd's reason when it refused
 * the handshake (-EPROTO returned): *refusal is the welcome's status,
 * e.g. -EEXIST when the name is attached already.
 */
int tmem_raw_connect_status(const char *path, const char *name,
			    uint32_t nr_entries, uint32_t nr_slots,
			    struct tmem_raw_ring *out, int32_t *refusal);

#endif /* TMEM_RAW_INTERNAL_H */
