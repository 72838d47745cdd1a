/* SPDX-License-Identifier: MIT */
/*
 * The control server: tmemctl's side of tmemd.  It owns
 * <runtime>/control.sock, the per-connection buffers, peer credentials,
 * the JSON protocol (man/tmemctl.8), the stats document and the state
 * file that makes admin settings survive a restart.
 *
 * How the daemon drives it:
 *
 *   tmemd_control_start()        once, after the store and policy exist
 *                                and before the first client is added
 *   tmemd_control_fd()           add it to the event loop for EPOLLIN
 *   tmemd_control_handle_event() whenever that fd is readable
 *   tmemd_control_settings_for() when a client connects, before
 *                                tmem_policy_client_add()
 *   tmemd_control_stop()         at shutdown, before the policy and store
 *                                are destroyed
 *
 * The fd is an epoll fd of the server's own (the listening socket and
 * every connection are in it), so the daemon's loop watches one fd while
 * connections come and go.  Everything is non-blocking; a slow or
 * hostile peer costs at most its buffers.
 *
 * Threads: every function here must be called from one thread (the
 * daemon's loop).  The hooks are called from inside
 * tmemd_control_handle_event() on that thread; the store and policy APIs
 * they lead to are thread-safe on their own.
 */
#ifndef TMEMD_CONTROL_H
#define TMEMD_CONTROL_H

#include <jansson.h>
#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>
#include <sys/types.h>

#include "tmem_store.h"
#include "tmem_policy.h"

struct tmemd_control;

#define TMEMD_CONTROL_SOCKET "control.sock"
#define TMEMD_CONTROL_STATE_FILE "state.json"
#define TMEMD_CONTROL_PROTO_VERSION 1
#define TMEMD_CONTROL_MAX_MSG (64 * 1024)   /* request bytes, newline included */
#define TMEMD_CONTROL_DEFAULT_PER_UID 8
#define TMEMD_CONTROL_DEFAULT_MAX_CONNS 64

struct tmemd_control_config {
	const char *runtime_dir;   /* holds control.sock; must exist */
	const char *state_dir;     /* holds state.json; created (0700) if missing */
	/*
	 * Group that may change state (with uid 0) and that owns the socket
	 * file.  NULL or "" = root only, socket group left as created.  A
	 * name that does not exist is a startup error (-ENOENT).
	 */
	const char *admin_group;
	unsigned socket_mode;      /* 0 = 0660; 0666 lets any local user read stats */
	unsigned max_conns_per_uid; /* 0 = TMEMD_CONTROL_DEFAULT_PER_UID */
	unsigned max_conns;        /* 0 = TMEMD_CONTROL_DEFAULT_MAX_CONNS */
	const char *transport;     /* shown by "status": "local", "xen", ... */
	const char *version;       /* shown by "status": the daemon's version */
	/* Optional: asked while the state file is read; true cuts the start
	 * short (-ECANCELED), as a SIGTERM during tmemd's start must. */
	bool (*should_stop)(void *ctx);
	void *stop_ctx;
};

/* One client as the daemon knows it. */
struct tmemd_control_client {
	/* Its key, canonical principal text: a domain's "uuid:U" ("domid:N"
	 * when it has no handle), a local client's name. */
	const char *name;
	const char *label;         /* shown as its name (a domain's xl name, or dom<N>) */
	int domid;                 /* Xen domain id, or -1 for a local client */
	struct tmem_pclient *pc;
	/*
	 * Where its settings come from (issue 30; NULL names: unknown).
	 * names: the principals stored settings apply to it by, in order
	 * (NULL-terminated); file: what tmemd.conf gives it ([defaults],
	 * then its [client] sections), which "unset" goes back to;
	 * file_has: the CTL_HAS_* settings the file sets rather than leaving
	 * at the built-in value.
	 */
	const char *const *names;
	struct tmem_client_settings file;
	unsigned file_has;
};

typedef int (*tmemd_control_client_fn)(const struct tmemd_control_client *,
				       void *arg);

/*
 * A parked client (man/tmemd.8, "Save, restore and migration"): a domain
 * that suspended for xl save or migrate, its persistent pages kept under
 * its key until the domain that goes on with its identity claims them.
 */
struct tmemd_control_parked {
	const char *key;           /* the store's name for it: "uuid:U" */
	const char *label;         /* what it was called (its xl name) */
	uint64_t parked_at;        /* CLOCK_REALTIME, seconds */
	uint64_t pages;            /* persistent pages kept */
	uint32_t pools;            /* persistent pools kept */
};

/* Parking since start: pools and pages parked, claimed by the domain
 * that went on, and expired (freed unclaimed); clients parked now. */
struct tmemd_control_park_stats {
	uint64_t pools_parked, pools_claimed, pools_expired;
	uint64_t pages_parked, pages_claimed, pages_expired;
	uint32_t parked;
};

typedef int (*tmemd_control_parked_fn)(const struct tmemd_control_parked *, void *arg);

/* Migration between hosts (tmem(7)): a peer is "HOST:PORT". */
struct tmemd_control_migrate_check {
	bool reachable, authenticated, room;
	uint64_t pages;            /* the client's persistent pages here */
	uint64_t stored_pages;     /* the frames they take as stored */
	uint64_t peer_free_pages;
};
struct tmemd_control_migrate_stats {
	bool enabled;
	uint64_t transfers_out, transfers_in;
	uint64_t pages_sent, bytes_sent, pages_received, bytes_received;
	uint64_t send_ns, transfer_ns, refused, failed_pulls, unreachable;
};

/*
 * What the daemon gives the control server.  store and policy are the
 * daemon's; the control server only calls their public APIs.  The
 * client a hook passes to fn must stay valid while fn runs: the daemon
 * may hold its client-registry lock across the call (fn only calls
 * pools/ and policy/, whose locks come after it), so a client is never
 * freed while a control command uses it.
 */
/*
 * Refusals the daemon counted (the stats' "refusals" object): of the
 * handshakes of guests and of their requests, by reason.  Exact, though
 * the log lines about them are rate-limited.
 */
#define TMEMD_CONTROL_MAX_REASONS 16
struct tmemd_control_refusals {
	unsigned nr;                                   /* reasons used */
	const char *reason[TMEMD_CONTROL_MAX_REASONS]; /* "EPROTO", "timeout", ... */
	uint64_t handshakes[TMEMD_CONTROL_MAX_REASONS];
	uint64_t requests[TMEMD_CONTROL_MAX_REASONS];
};

struct tmemd_control_hooks {
	struct tmem_store *store;
	struct tmem_policy *policy;
	/* Calls fn for every connected client; stops at and returns fn's
	 * first non-zero return. */
	int (*for_each_client)(void *ctx, tmemd_control_client_fn fn, void *arg);
	/* Finds the attached client spec (canonical principal text,
	 * proto/tmem_names.h) names and calls fn on it: "uuid:U" the one
	 * keyed so, "domid:N" the domain whose id is N now, a NAME the
	 * domain whose xl name is NAME or the local client NAME.  Returns
	 * fn's return, or -ENOENT when no attached client matches. */
	int (*with_client)(void *ctx, const char *spec, tmemd_control_client_fn fn,
			   void *arg);
	/* Optional (NULL: "set" changes the named client's running
	 * settings directly): gives every attached client its settings
	 * again (the config's, then tmemd_control_settings_for()), after
	 * the stored ones changed.  0 or the policy's -errno. */
	int (*reapply)(void *ctx);
	/* Optional: the stored shared-pool authorisations changed; the
	 * daemon grants each attached client's key what is granted to any
	 * principal naming it (tmemd_control_stored_auths()). */
	void (*grants_changed)(void *ctx);
	/* Optional (NULL: none parked): calls fn on each parked client;
	 * stops at and returns fn's first non-zero. */
	int (*for_each_parked)(void *ctx, tmemd_control_parked_fn fn, void *arg);
	/* Optional (NULL: zeros). */
	void (*park_stats)(void *ctx, struct tmemd_control_park_stats *out);
	/* Optional: frees the parked client spec names (its key, or for a
	 * NAME its xl name) with its pages; key gets its key, *pages how
	 * many pages went.  0, or -ENOENT when spec names none parked. */
	int (*forget_parked)(void *ctx, const char *spec, char key[TMEM_CLIENT_NAME_MAX],
			     uint64_t *pages);
	/* Optional (NULL = silent): one log line, priority as syslog(3).
	 * Used for refused connections and peers dropped for bad input. */
	void (*log)(void *ctx, int priority, const char *fmt, va_list ap);
	/* Optional (NULL = none): whether the daemon's config file grants
	 * principal the shared pool uuid.  "forget" leaves such a grant in
	 * force (it removes what tmemctl stored, not what the file says). */
	bool (*file_grants)(void *ctx, const struct tmem_uuid *uuid, const char *principal);
	/* Optional (NULL: through log): a line a control peer (uid) can
	 * cause at will, which the daemon rate-limits per fmt and uid. */
	void (*log_peer)(void *ctx, int priority, uid_t uid, const char *fmt, va_list ap);
	/* Optional (NULL: none in stats): the daemon's refusal counters. */
	void (*refusals)(void *ctx, struct tmemd_control_refusals *out);
	/* Optional (NULL: through log): one audit line, a state change peer
	 * uid asked for about client (NULL: not about one), as syslog(3). */
	void (*audit)(void *ctx, int priority, uid_t uid, const char *client, const char *msg);
	/* Optional (NULL: null in status and stats): the elastic pool's
	 * figures, a new reference (daemon/fallow_json.c). */
	json_t *(*memory_json)(void *ctx);
	/* Optional (NULL: "release" is refused): give bytes of the pool
	 * back to the host now; *released gets what went.  0 or -errno. */
	int (*release)(void *ctx, uint64_t bytes, uint64_t *released);
	/* Optional (NULL: EOPNOTSUPP, stats say disabled): migration between
	 * hosts.  check: can client's pages go to peer; push: the parked
	 * client goes to peer now.  0, or -errno with a reason in why. */
	int (*migrate_check)(void *ctx, const char *client, const char *peer,
			     struct tmemd_control_migrate_check *out, char *why, size_t len);
	int (*migrate_push)(void *ctx, const char *client, const char *peer, uint64_t *pages,
			    char *why, size_t len);
	void (*migrate_stats)(void *ctx, struct tmemd_control_migrate_stats *out);
};

/*
 * Creates the socket (mode cfg->socket_mode, group cfg->admin_group),
 * reads the state file and re-applies its shared-pool authorisations to
 * the store.  An existing control.sock is replaced, so the daemon must
 * make sure it is the only tmemd on this runtime dir first.  On failure returns
 * -errno, sets *out to NULL and writes a one-line reason to errbuf
 * (e.g. "state file /var/lib/tmemd/state.json: line 3: ..."): a corrupt
 * state file is a startup error, never silently discarded.
 */
int tmemd_control_start(const struct tmemd_control_config *cfg,
			const struct tmemd_control_hooks *hooks, void *hooks_ctx,
			struct tmemd_control **out, char *errbuf, size_t errlen);

/* The fd to watch for EPOLLIN (an epoll fd, CLOEXEC). */
int tmemd_control_fd(const struct tmemd_control *ctl);

/*
 * Does all pending control work without blocking: accepts connections,
 * reads, answers complete requests, flushes replies.  events is what the
 * daemon's epoll reported for tmemd_control_fd() (informational).
 * Returns 0; -errno only when the server itself is broken (the daemon
 * should log it and may stop the control server); a misbehaving peer
 * only loses its own connection.
 */
int tmemd_control_handle_event(struct tmemd_control *ctl, uint32_t events);

/*
 * Overlays the settings an admin stored for this client on *out, which
 * the caller fills with the defaults first.  names: every principal
 * that names the client, least specific first, NULL-terminated (a
 * domain: "domid:N", its xl name, "uuid:U"); each one's entry is laid
 * over the last, so the most specific wins.  Returns 1 when stored
 * settings were applied, 0 when there were none.
 */
int tmemd_control_settings_for(const struct tmemd_control *ctl,
			       const char *const *names,
			       struct tmem_client_settings *out);

/*
 * The shared pools an admin authorised principal for (tmemctl
 * shared-auth), up to max of them into out.  Returns how many there are
 * (may exceed max).
 */
unsigned tmemd_control_stored_auths(const struct tmemd_control *ctl, const char *principal,
				    struct tmem_uuid *out, unsigned max);

/*
 * Writes the "stats" document (the schema man/tmemctl.8 documents, the
 * one "tmemctl stats --json" prints) to path atomically, with
 * control.sock's mode (less x bits) and group.
 * tmemd's SIGUSR1 dump.  0 or -errno.
 */
int tmemd_control_write_stats(struct tmemd_control *ctl, const char *path);

/* True when an admin stored the authorisation of principal for uuid
 * (tmemctl shared-auth): a config reload must not revoke it. */
bool tmemd_control_auth_stored(const struct tmemd_control *ctl,
			       const struct tmem_uuid *uuid, const char *principal);
/* Records the daemon's last config reload (rc 0 or -errno, a one-line
 * message) for "status", with the restart-only keys whose new values wait
 * for a restart (comma-separated, "" or NULL for none; after a failed
 * reload, NULL keeps the list of the last good one). */
void tmemd_control_note_reload(struct tmemd_control *ctl, int rc, const char *message,
			       const char *restart_pending);

/* Closes every connection, unlinks the socket.  Accepts NULL. */
void tmemd_control_stop(struct tmemd_control *ctl);

/*
 * The default state dir: /var/lib/tmemd as root, else
 * $XDG_STATE_HOME/tmemd or ~/.local/state/tmemd.  0 or -ENAMETOOLONG /
 * -ENOENT (no HOME).
 */
int tmemd_control_default_state_dir(char *buf, size_t len);

#endif /* TMEMD_CONTROL_H */
