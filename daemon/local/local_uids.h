/* SPDX-License-Identifier: MIT */
/*
 * What each uid holds on guest.sock, for the local transport's per-uid
 * limits (tmemd.conf(5): local-max-clients-per-uid,
 * local-max-pools-per-uid, local-max-handshakes-per-uid).  One uid must
 * not be able to lock the others out: without them, one uid could
 * attach every connection tmemd allows, or create every pool the store
 * holds.  Xen domains are not counted here; each is one client with
 * pools/'s per-client limit.
 *
 * Main thread only, except pools, which the workers serving the uid's
 * clients count (struct tmemd_pool_budget, atomics).
 */
#ifndef TMEMD_LOCAL_UIDS_H
#define TMEMD_LOCAL_UIDS_H

#include <sys/types.h>

#include "client_registry.h"
#include "config.h"

#define TMEMD_LOCAL_CLIENTS_PER_UID 64u
#define TMEMD_LOCAL_POOLS_PER_UID 512u
#define TMEMD_LOCAL_HANDSHAKES_PER_UID 16u

struct local_uid {
	uid_t uid;
	unsigned conns;    /* connections, in the handshake or attached */
	unsigned pending;  /* of which still in the handshake */
	struct tmemd_pool_budget pools;
	struct local_uid *next;
};

struct local_limits {
	unsigned clients, pools, handshakes;
};

/* The limits in force: cfg's, or the defaults above (cfg may be NULL). */
void local_limits_get(const struct tmemd_config *cfg, struct local_limits *out);

/* uid's entry in *list, made if missing (NULL: out of memory).  The
 * caller then counts a connection in it. */
struct local_uid *local_uid_get(struct local_uid **list, uid_t uid);
/* Frees u once it counts no connection. */
void local_uid_put(struct local_uid **list, struct local_uid *u);

#endif /* TMEMD_LOCAL_UIDS_H */
