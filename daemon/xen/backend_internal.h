/* SPDX-License-Identifier: MIT */
/*
 * Shared by backend.c (domains, watches, XenbusState) and conn.c (one
 * connected ring).  Everything is main-thread state except the fields
 * marked as the worker's.
 */
#ifndef TMEMD_XEN_BACKEND_INTERNAL_H
#define TMEMD_XEN_BACKEND_INTERNAL_H

#include <stdbool.h>

#include "log.h"
#include "xen/allow.h"
#include "xen/backend.h"
#include "xen/rate.h"

/* A line about a domain, which the guest can cause: rate-limited per
 * line and domain (ratelimit.h). */
#define log_dom(level, domid, ...) \
	tmemd_log_limited(level, TMEMD_RL_DOMID(domid), __VA_ARGS__)

/* Room for /local/domain/4294967295/backend/tmem/4294967295/0 */
#define TMEMD_XEN_DIR_MAX 96
#define TMEMD_XEN_MAX_DOMAINS 1024

struct xen_conn {
	void *region;                /* the mapped grants */
	uint32_t nr_pages;
	struct tmemd_evtchn *ch;
	struct tmemd_client *client;
	struct tmemd_ring ring;
	bool attached;               /* ring handed to a worker */
	bool resumed;                /* the client came back with its pools */
	struct tmem_ident ident;     /* the client's (resume.c) */
	const char *fault_why;       /* set by the worker before dom->faulted */
};

struct xen_pull;

struct xen_dom {
	struct tmemd_xen_backend *be;
	uint32_t domid;
	uint8_t handle[TMEMD_XEN_HANDLE_LEN];
	char name[TMEM_CLIENT_NAME_MAX]; /* from /local/domain/N/name; may be "" */
	char fe_path[TMEMD_XEN_DIR_MAX];
	char be_path[TMEMD_XEN_DIR_MAX];
	char state_path[TMEMD_XS_PATH_MAX]; /* fe_path/state, watched */
	char token[TMEMD_XS_TOKEN_MAX];
	unsigned failures;           /* connects failed on our side in a row */
	struct xen_rate rate;        /* connects allowed (xen/rate.h) */
	uint64_t retry_at;           /* CLOCK_MONOTONIC: deferred connect due; 0 none */
	int be_state;                /* XenbusState last written; -1 none */
	bool watching;
	bool cut;                    /* cut off: ignore it until it dies */
	int shutdown_reason;         /* TMEMD_XEN_SHUTDOWN_* last seen; -1 running */
	bool released;               /* dying or gone: being let go */
	char name_path[TMEMD_XS_PATH_MAX]; /* /local/domain/N/name, watched */
	char name_token[TMEMD_XS_TOKEN_MAX];
	bool watching_name;
	struct xen_conn *conn;       /* NULL unless connected */
	struct xen_pull *pull;       /* pull.c: its pages coming from a peer */
	int faulted;                 /* atomic: the worker saw a ring fault */
	struct xen_dom *next;
};

struct tmemd_xen_backend {
	struct tmemd_env env;
	struct tmemd_xs xs;
	struct tmemd_hyp hyp;
	uint32_t self;               /* our domid (0: dom0) */
	int fault_fd;                /* eventfd: a worker saw a fault, or a pull ended */
	int retry_fd;                /* timerfd: a deferred connect is due */
	int park_fd;                 /* timerfd (CLOCK_REALTIME): a parked client expires */
	struct tmemd_watch xs_w, fault_w, retry_w, park_w;
	bool in_loop;
	bool stopping;               /* tmemd stops: clients stay for the next run */
	bool watching;               /* @introduceDomain/@releaseDomain set */
	struct xen_dom *doms;
	struct xen_pull *orphan_pulls; /* pull.c: of domains gone meanwhile */
	struct tmemd_xen_allow allow;
	struct xen_kept *kept;       /* clients of the last run, kept (resume.c) */
	unsigned nr_kept;
	char allow_spec[sizeof(((struct tmemd_config *)0)->xen_domains)];
	bool balloon_watched;        /* balloon.c watches dom0's memory/target */
	uint64_t freeable_published; /* bytes in memory/tmem-freeable; UINT64_MAX: none */
};

/* balloon.c: the elastic pool's Xen hooks (fallow.h). */
#define XEN_TOKEN_BALLOON "tmemd:balloon"
int xen_balloon_start(struct tmemd_xen_backend *be);
void xen_balloon_target_changed(struct tmemd_xen_backend *be);
void xen_balloon_stop(struct tmemd_xen_backend *be);

/* resume.c */
#define XEN_IDENT_MARK TMEMD_XEN_IDENT_MARK /* client_registry.h */
struct xen_kept {
	uint32_t domid;
	char name[TMEM_CLIENT_NAME_MAX];
	struct tmem_ident ident;
};
/* At start, before any domain connects: keeps the clients the last run
 * left for domains still there (same domid and handle), frees the rest. */
void xen_sort_previous_domains(struct tmemd_xen_backend *be);
/* A new client's identity for d, with a fresh nonce. */
int xen_ident_new(const struct xen_dom *d, struct tmem_ident *out);
/* The nonce: the backend's "session" node (never 0). */
uint64_t xen_ident_nonce(const struct tmem_ident *id);
/* d's identity had its pools been made under session nonce (elsewhere). */
void xen_ident_with_nonce(const struct xen_dom *d, uint64_t nonce, struct tmem_ident *out);

/* A kept client of the last run whose domain is a live one; taken by
 * handle, so a restored domain (new domid) finds it too. */
int xen_take_kept_by_handle(struct tmemd_xen_backend *be, const struct xen_dom *d,
			    struct xen_kept *out);
/* A handle the toolstack gave (all zero: none; such a domain is known by
 * its domid only, and never parked). */
bool xen_handle_known(const uint8_t *handle);
/* The domain's identity as the registry knows it. */
void xen_dom_id(const struct xen_dom *d, struct tmemd_domain_id *out);

/* park.c: save, restore and migration (man/tmemd.8). */
#define XEN_PARKED_DIR "/tool/tmemd/parked"
/* d ended for a suspend: parks its client (its connection is closed). */
void xen_park(struct xen_dom *d);
/* The client d's identity parked, claimed into d->conn: 0, -ENOENT none,
 * or -errno. */
int xen_claim_parked(struct xen_dom *d);
/* Pages a pull brought for a domain that went away meanwhile: parked
 * under key for the next domain with its UUID, as xen_park() does. */
void xen_park_pulled(struct tmemd_xen_backend *be, const char *key, const char *label,
		     const struct tmem_ident *ident);
/* Another domain with d's handle that only waits to end after a suspend
 * (the source of a migration to this host): its client is parked now,
 * so d can claim it. */
void xen_park_twin(struct xen_dom *d);
/* At start: was the detached client key parked (a marker in the
 * xenstore)?  Then it is noted as parked: 1; 0 not parked. */
int xen_note_parked_at_start(struct tmemd_xen_backend *be, const char *key,
			     const struct tmem_ident *ident);
/* Frees what is parked past parked-max-age and re-arms park_fd. */
void xen_expire_parked(struct tmemd_xen_backend *be);
void xen_arm_park_timer(struct tmemd_xen_backend *be);

/* pull.c: a guest that moved here from another host. */
#define XEN_PULL_WAIT_MS 10000u  /* for its old domain there to be let go, or a peer back */
/*
 * The pages d's guest parked on a migrate-peer under session (its
 * frontend's): -EINPROGRESS while a pull runs (it is started here; its
 * end wakes fault_fd, and the next connect comes back here), then 0
 * with them claimed into d->conn, or -ENOENT (no session, no peer has
 * them, the pull failed: start afresh), or -errno.
 */
int xen_claim_pulled(struct xen_dom *d, uint64_t session);
/* Whether d's pull has ended (the next connect claims its result). */
bool xen_pull_done(const struct xen_dom *d);
/* d goes away: its running pull is let finish as an orphan. */
void xen_pull_orphan(struct xen_dom *d);
/* Ends the orphans whose pull ended (all, waiting, with wait): the
 * pages one brought are parked for the next domain with its UUID. */
void xen_pull_reap(struct tmemd_xen_backend *be, bool wait);

/* conn.c */
/* Reads, checks and maps what the frontend published, binds its event
 * channel, registers the client and hands the ring to a worker.  0, or
 * -errno with the reason in *why (the frontend's fault when -EINVAL,
 * -EPROTO or -EFAULT). */
int xen_conn_open(struct xen_dom *d, const char **why);
/* Undoes xen_conn_open; accepts a dom without a connection.  The client
 * goes with it (its private pools freed), unless park: then its
 * persistent pools are parked (xen_park). */
void xen_conn_close(struct xen_dom *d);
void xen_conn_close_park(struct xen_dom *d);

#endif /* TMEMD_XEN_BACKEND_INTERNAL_H */
