/* SPDX-License-Identifier: MIT */
/*
 * Local clients' sessions (proto/tmem_local.h, "Sessions"): a random
 * token per client, kept as its identity in the store, so that after
 * tmemd restarts the same process can take its pools back and a
 * different one with the same name cannot.
 */
#ifndef TMEMD_LOCAL_SESSION_H
#define TMEMD_LOCAL_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "client_registry.h"
#include "tmem_local.h"

struct tmemd_session {
	uint8_t token[TMEM_LOCAL_SESSION_LEN];
	bool resumed;   /* the client's pools and pages came back */
	uint32_t pools; /* resumed: bit n for each pool id n it holds */
};

/*
 * Attaches name: with a non-zero token in, a recovered client with that
 * name and token is resumed; otherwise a new client with a new token.
 * 0 or -errno as tmemd_client_attach(), or 1: nothing here for that
 * token, and its pages may be parked at a migrate-peer: pull them under
 * tmemd_session_ident(token_in) (pull_job.h), then call again with
 * pulled, which resumes what came or makes a new client.
 */
int tmemd_session_attach(struct tmemd_clients *reg, const char *name,
			 const uint8_t token_in[TMEM_LOCAL_SESSION_LEN], bool pulled,
			 struct tmemd_session *out, struct tmemd_client **client);
/* The store identity of a session token. */
void tmemd_session_ident(const uint8_t token[TMEM_LOCAL_SESSION_LEN], struct tmem_ident *id);

#endif /* TMEMD_LOCAL_SESSION_H */
