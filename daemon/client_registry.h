/* SPDX-License-Identifier: MIT */
/*
 * The daemon's client registry: one struct tmemd_client per attached
 * guest, whatever its transport, wrapping its policy/ client.  Transports
 * add a client when a guest attaches and remove it when the guest goes;
 * removal frees the client's private pools (tmem_policy_client_remove)
 * while shared pools stay for their other sharers.
 *
 * Locking: reg->lock guards the list and is held across
 * tmemd_clients_for_each() callbacks (stats), so a client is never
 * freed while stats read it.  Order: reg->lock, then pools/ and policy/
 * locks (taken inside their calls).  The request path takes no registry
 * lock: a client's ring is served by exactly one worker at a time, and
 * owned_pools is only touched there.
 */
#ifndef TMEMD_CLIENT_REGISTRY_H
#define TMEMD_CLIENT_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "tmem_policy.h"
#include "tmem_store.h"

struct tmemd_clients;

/*
 * Pools several clients may hold between them (the local transport's
 * per-uid limit).  used and max are atomic: the workers serving those
 * clients count NEW_POOL and DESTROY_POOL, the main thread sets max.
 */
struct tmemd_pool_budget {
	unsigned used;
	unsigned max;
};

struct tmemd_client {
	struct tmemd_clients *reg;
	struct tmem_pclient *pc;      /* policy/ client; owns the store client */
	struct tmem_client *sc;       /* tmem_pclient_store_client(pc) */
	/* The client's principal in canonical text (proto/tmem_names.h):
	 * "domid:N" for a Xen domain, else the local client's name.  The
	 * registry, the store, tmemd.conf, tmemctl and state.json all key
	 * clients by it, so a local client and a domain never share a key. */
	char name[TMEM_CLIENT_NAME_MAX];
	/* What "list" and "stats" show as the name: a local client's name,
	 * a domain's xenstore name (or dom<N>).  Never matched. */
	char label[TMEM_CLIENT_NAME_MAX];
	const char *transport;        /* "local", "xen": for stats */
	int domid;                    /* Xen domain id; -1 for a local client */
	uint32_t owned_pools;         /* bit n: pool id n came from this client's NEW_POOL */
	/* Each owned pool counts against it; NULL: no limit but pools/'s.
	 * The transport sets it before serving, and gives back what is
	 * still owned when the client goes. */
	struct tmemd_pool_budget *pool_budget;
	struct tmemd_client *next;
};

_Static_assert(TMEM_MAX_POOLS_PER_CLIENT <= 32, "owned_pools is a 32-bit map");

int tmemd_clients_create(struct tmem_store *store, struct tmem_policy *policy,
			 const struct tmemd_config *cfg,
			 struct tmemd_clients **out);
/* Removes any client left, then frees the registry.  Accepts NULL. */
void tmemd_clients_destroy(struct tmemd_clients *reg);

/*
 * Registers a client with the settings tmemd.conf gives its principal.
 * domid < 0: the local client called name (tmem_local_name_valid());
 * domid >= 0: Xen domain domid, whose principal is "domid:<domid>" and
 * whose name (its xenstore name, or dom<domid>) is only its label, so
 * no local client's name can keep a domain out or stand for it.
 * -EINVAL bad name or domid, -EEXIST already attached, or -errno from
 * policy/.
 */
int tmemd_client_add(struct tmemd_clients *reg, const char *name,
		     const char *transport, int domid,
		     struct tmemd_client **out);
/*
 * The same for a client that may be coming back after tmemd restarted:
 * with ident, a recovered client of that name and identity is claimed
 * with its pools and pages, and *resumed says so; resumed NULL only
 * records the identity (see tmem_policy_client_attach()).
 */
int tmemd_client_attach(struct tmemd_clients *reg, const char *name,
			const char *transport, int domid,
			const struct tmem_ident *ident,
			struct tmemd_client **out, bool *resumed);
/*
 * tmemd is stopping: from now on tmemd_client_remove() leaves each
 * client's pages in the store, detached, for the next start, instead of
 * freeing them.
 */
void tmemd_clients_keep_on_stop(struct tmemd_clients *reg);
/* Frees the client and its private pools.  Accepts NULL. */
void tmemd_client_remove(struct tmemd_client *c);

/* Calls fn on each client under reg->lock; stops at fn's first non-zero. */
int tmemd_clients_for_each(struct tmemd_clients *reg,
			   int (*fn)(struct tmemd_client *, void *), void *ctx);

/*
 * The attached client whose principal text (tmemd_client.name) is name,
 * or NULL.  The pointer stays valid
 * until the client is removed; transports add and remove clients only
 * on the main thread, so main-thread code (the control server) may keep
 * it for the duration of one event.
 */
struct tmemd_client *tmemd_clients_find(struct tmemd_clients *reg,
					const char *name);

/*
 * A hook that adjusts a new client's settings after tmemd.conf's (e.g.
 * the control server's stored admin settings).  Called from
 * tmemd_client_add() without the registry lock.  NULL removes it.
 */
typedef void (*tmemd_settings_hook)(void *ctx, const char *name, int domid,
				    struct tmem_client_settings *settings);
void tmemd_clients_set_settings_hook(struct tmemd_clients *reg,
				     tmemd_settings_hook hook, void *ctx);

/*
 * After the config was reloaded: gives every attached client its
 * settings again (config, then the hook), keeping its frozen flag, which
 * is run-time state.  Returns 0 or the first -errno from policy/.
 */
int tmemd_clients_reapply(struct tmemd_clients *reg);

/*
 * Refusals, counted exactly whatever the log shows (its lines about them
 * are rate-limited): handshakes a transport refused and requests
 * dispatch.c refused as malformed, by reason.  The reasons are the
 * -TMEM_E* code answered, TMEMD_REASON_TIMEOUT (no handshake in time)
 * and TMEMD_REASON_LIMIT (a connection refused at accept for a limit).
 * Any thread may count (relaxed atomics, no lock); stats read them.
 */
enum tmemd_refusal_kind { TMEMD_REFUSED_HANDSHAKE, TMEMD_REFUSED_REQUEST, TMEMD_NR_REFUSAL_KINDS };
#define TMEMD_REASON_TIMEOUT (-10001)
#define TMEMD_REASON_LIMIT (-10002)
#define TMEMD_NR_REASONS 14
/* The reason's name for stats ("EPROTO", "timeout", "other"): index i. */
const char *tmemd_refusal_reason_name(unsigned i);
void tmemd_clients_count_refusal(struct tmemd_clients *reg, enum tmemd_refusal_kind kind,
				 int32_t code);
/* counts[kind][i]: refusals of kind for reason i. */
void tmemd_clients_refusals(struct tmemd_clients *reg,
			    uint64_t counts[TMEMD_NR_REFUSAL_KINDS][TMEMD_NR_REASONS]);

struct tmem_store *tmemd_clients_store(const struct tmemd_clients *reg);
struct tmem_policy *tmemd_clients_policy(const struct tmemd_clients *reg);

#endif /* TMEMD_CLIENT_REGISTRY_H */
