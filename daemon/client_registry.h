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
	/* The client's key, a principal in canonical text
	 * (proto/tmem_names.h): a Xen domain's "uuid:U" ("domid:N" when it
	 * has no handle), else the local client's name.  The registry and
	 * the store key clients by it, so a local client and a domain never
	 * share a key; tmemd_client_names() gives every principal naming it. */
	char name[TMEM_CLIENT_NAME_MAX];
	/* What "list" and "stats" show as the name: a local client's name,
	 * a domain's xenstore name (or dom<N>).  Never matched. */
	char label[TMEM_CLIENT_NAME_MAX];
	const char *transport;        /* "local", "xen": for stats */
	int domid;                    /* Xen domain id; -1 for a local client */
	/* A domain's handle (the toolstack's UUID); all zero: none known. */
	struct tmem_uuid uuid;
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
 * Who a Xen domain is (DESIGN.md: a guest is its identity, not its
 * domid): its id now, its handle, and its xl name ("" if unusable).
 */
struct tmemd_domain_id {
	uint32_t domid;
	struct tmem_uuid uuid;       /* all zero: the toolstack gave none */
	const char *name;
	/* NULL: tmemd_domain_key(); else the key a client of this domain
	 * was stored under by an older tmemd ("domid:N"), to claim it. */
	const char *key;
};
/*
 * The principals that name a client, least specific first, each a
 * canonical text (proto/tmem_names.h): a local client's name; a domain's
 * "domid:N", its xl name and "uuid:U".  Settings apply in this order, so
 * the most specific wins.  key is the one it is registered and stored
 * under: the local name, or a domain's "uuid:U" ("domid:N" without a
 * handle).
 */
#define TMEMD_CLIENT_ALIASES 3
struct tmemd_client_names {
	const char *key;
	const char *by[TMEMD_CLIENT_ALIASES + 1];   /* NULL-terminated */
	int domid;
};
/* The names of c; the strings live in c and bufs. */
void tmemd_client_names(const struct tmemd_client *c, struct tmemd_client_names *out,
			char bufs[2][TMEM_CLIENT_NAME_MAX]);
/*
 * A Xen domain's identity (daemon/xen/resume.c): TMEMD_XEN_IDENT_MARK,
 * the domid it had when its client was made (4 bytes at
 * TMEMD_XEN_IDENT_DOMID), its handle and a nonce.  A guest that moved
 * to another host has another domid there: it is the same guest when
 * everything else is the same.  Any other identity matches itself only.
 */
#define TMEMD_XEN_IDENT_MARK 'X'
#define TMEMD_XEN_IDENT_DOMID 1
bool tmemd_ident_same_guest(const struct tmem_ident *a, const struct tmem_ident *b);
/* The principal a domain is registered and stored under (see above). */
void tmemd_domain_key(const struct tmemd_domain_id *dom, char key[TMEM_CLIENT_NAME_MAX]);
/*
 * A Xen domain's client, as tmemd_client_attach() below: with ident, a
 * detached client stored under the domain's key (uuid:U) and identity
 * is claimed with its pools and pages, whatever domid it had then.
 */
int tmemd_client_attach_domain(struct tmemd_clients *reg,
			       const struct tmemd_domain_id *dom,
			       const struct tmem_ident *ident,
			       struct tmemd_client **out, bool *resumed);
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
/*
 * A domain's xl name changed: c is shown by it and takes the settings
 * that name now has (its frozen flag kept).  0 or -errno from policy/.
 */
int tmemd_client_relabel(struct tmemd_client *c, const char *name);
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
 * the control server's stored admin settings), given every principal
 * that names it.  Called from tmemd_client_add() without the registry
 * lock.  NULL removes it.
 */
typedef void (*tmemd_settings_hook)(void *ctx, const struct tmemd_client_names *names,
				    struct tmem_client_settings *settings);
void tmemd_clients_set_settings_hook(struct tmemd_clients *reg,
				     tmemd_settings_hook hook, void *ctx);

/*
 * A hook called after a client was registered (tmemd_client_add() and
 * the attach calls), without the registry lock, on the thread that
 * added it, before the transport serves it: the control server hands
 * on the shared-pool authorisations given to its names.  NULL removes it.
 */
typedef void (*tmemd_attach_hook)(void *ctx, struct tmemd_client *c);
void tmemd_clients_set_attach_hook(struct tmemd_clients *reg,
				   tmemd_attach_hook hook, void *ctx);

/*
 * After the config was reloaded: gives every attached client its
 * settings again (config, then the hook), keeping its frozen flag, which
 * is run-time state.  Returns 0 or the first -errno from policy/.
 */
int tmemd_clients_reapply(struct tmemd_clients *reg);

/*
 * Parked clients (client_park.c): a guest whose domain ended only to go
 * on elsewhere (xl save, xl migrate) leaves its persistent pools in the
 * store, detached, under its key, until the domain that goes on with
 * the same identity claims them or max age passes (man/tmemd.8, "Save,
 * restore and migration").  The registry keeps when and what was parked
 * and counts; the store keeps the pages, so a parked client survives a
 * restart as every detached one does, and the transport says at start
 * which detached clients were parked (tmemd_clients_note_parked()).
 */
struct tmemd_parked {
	char key[TMEM_CLIENT_NAME_MAX];    /* the store's name for it */
	char label[TMEM_CLIENT_NAME_MAX];  /* what it was called (xl name) */
	struct tmem_ident ident;
	uint64_t parked_at;                /* CLOCK_REALTIME, seconds */
	uint64_t pages;                    /* persistent pages parked */
	uint32_t pools;                    /* persistent pools parked */
	/* The bytes they take as stored (arena and host tier): what a peer
	 * needs room for; 0 not known (noted at a start: count pages). */
	uint64_t stored_bytes;
};

struct tmemd_park_stats {
	uint64_t pools_parked, pools_claimed, pools_expired;
	uint64_t pages_parked, pages_claimed, pages_expired;
	uint32_t parked;                   /* clients parked now */
};

/*
 * Parks c: its ephemeral and shared pools go (a suspend may drop
 * them), its persistent pools stay in the store, detached, and c is
 * freed.  out (may be NULL) gets the entry.  0, or -errno with c removed
 * as tmemd_client_remove() would (nothing to keep, or no memory).
 */
int tmemd_client_park(struct tmemd_client *c, uint64_t now_sec,
		      struct tmemd_parked *out);
/* After a restart: the detached client key was parked at parked_at. */
int tmemd_clients_note_parked(struct tmemd_clients *reg, const char *key,
			      const char *label, const struct tmem_ident *ident,
			      uint64_t parked_at);
/* The parked entry for key, taken off the list (the caller claims it
 * next): 0, or -ENOENT. */
int tmemd_clients_unpark(struct tmemd_clients *reg, const char *key,
			 struct tmemd_parked *out);
/* Whether key (a store name) is parked; ctx is the registry. */
bool tmemd_clients_is_parked(void *ctx, const char *key);
/* A copy of the parked entry for key, left in place: 0, or -ENOENT. */
int tmemd_clients_parked(struct tmemd_clients *reg, const char *key,
			 struct tmemd_parked *out);
/*
 * Frees every parked client parked before now_sec - max_age_sec (all,
 * with max_age_sec 0 and now_sec UINT64_MAX), calling gone (may be NULL)
 * for each after its pages are freed.  Returns how many.
 */
unsigned tmemd_clients_expire_parked(struct tmemd_clients *reg, uint64_t now_sec,
				     uint64_t max_age_sec,
				     void (*gone)(void *ctx, const struct tmemd_parked *p),
				     void *ctx);
/* Forgets key's entry (its store client was dropped): 0 or -ENOENT. */
int tmemd_clients_forget_parked(struct tmemd_clients *reg, const char *key);
/* Calls fn on a copy of each parked entry; stops at fn's first non-zero. */
int tmemd_clients_for_each_parked(struct tmemd_clients *reg,
				  int (*fn)(const struct tmemd_parked *, void *), void *ctx);
/* The earliest parked_at (0: none parked). */
uint64_t tmemd_clients_oldest_parked(struct tmemd_clients *reg);
/* A claim took back pools persistent pools holding pages pages. */
void tmemd_clients_count_claimed(struct tmemd_clients *reg, uint32_t pools, uint64_t pages);
void tmemd_clients_park_stats(struct tmemd_clients *reg, struct tmemd_park_stats *out);

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

/*
 * Migration between hosts (daemon/migrate/migrate.h), when configured:
 * pull fetches the pages a peer holds parked for name and identity into
 * the store, detached, for the attach to claim (0; -ENOENT no peer has
 * them; -EAGAIN a peer has them and has not let them go yet;
 * -EHOSTDOWN a peer could not be asked and no other had them: both
 * worth asking again soon; -errno); park parks c for a peer to take
 * (takes c).  Set once at start, before any transport.
 */
struct tmemd_migrate_hooks {
	int (*pull)(void *ctx, const char *name, const struct tmem_ident *ident);
	int (*park)(void *ctx, struct tmemd_client *c);
	/* name was claimed here: no longer parked. */
	void (*claimed)(void *ctx, const char *name);
	/* name is lent to a peer, in doubt: not to be claimed here. */
	bool (*held)(void *ctx, const char *name);
};
void tmemd_clients_set_migrate(struct tmemd_clients *reg, const struct tmemd_migrate_hooks *h,
			       void *ctx);
/* The hooks' calls.  With none set: pull -ENOENT; park parks c in the
 * registry only, for the client to come back here. */
int tmemd_clients_pull(struct tmemd_clients *reg, const char *name,
		       const struct tmem_ident *ident);
/* Whether a pull can be asked for at all (migration configured). */
bool tmemd_clients_may_pull(const struct tmemd_clients *reg);
int tmemd_clients_park_for_peer(struct tmemd_client *c);
void tmemd_clients_claimed(struct tmemd_clients *reg, const char *name);
bool tmemd_clients_held(struct tmemd_clients *reg, const char *name);

struct tmem_store *tmemd_clients_store(const struct tmemd_clients *reg);
struct tmem_policy *tmemd_clients_policy(const struct tmemd_clients *reg);

#endif /* TMEMD_CLIENT_REGISTRY_H */
