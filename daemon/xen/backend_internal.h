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
	struct xen_conn *conn;       /* NULL unless connected */
	int faulted;                 /* atomic: the worker saw a ring fault */
	struct xen_dom *next;
};

struct tmemd_xen_backend {
	struct tmemd_env env;
	struct tmemd_xs xs;
	struct tmemd_hyp hyp;
	uint32_t self;               /* our domid (0: dom0) */
	int fault_fd;                /* eventfd: a worker saw a fault */
	int retry_fd;                /* timerfd: a deferred connect is due */
	struct tmemd_watch xs_w, fault_w, retry_w;
	bool in_loop;
	bool watching;               /* @introduceDomain/@releaseDomain set */
	struct xen_dom *doms;
	struct tmemd_xen_allow allow;
	struct xen_kept *kept;       /* clients of the last run, kept (resume.c) */
	unsigned nr_kept;
	char allow_spec[sizeof(((struct tmemd_config *)0)->xen_domains)];
};

/* resume.c */
#define XEN_IDENT_MARK 'X'  /* first byte of a domain's tmem_ident */
struct xen_kept {
	uint32_t domid;
	char name[TMEM_CLIENT_NAME_MAX];
	struct tmem_ident ident;
};
/* At start, before any domain connects: keeps the clients the last run
 * left for domains still there (same domid and handle), frees the rest. */
void xen_sort_previous_domains(struct tmemd_xen_backend *be);
/* The kept client of d, taken off the list: 0, or -ENOENT. */
int xen_take_kept(struct tmemd_xen_backend *be, const struct xen_dom *d,
		  struct xen_kept *out);
/* A new client's identity for d, with a fresh nonce. */
int xen_ident_new(const struct xen_dom *d, struct tmem_ident *out);
/* The nonce: the backend's "session" node (never 0). */
uint64_t xen_ident_nonce(const struct tmem_ident *id);

/* conn.c */
/* Reads, checks and maps what the frontend published, binds its event
 * channel, registers the client and hands the ring to a worker.  0, or
 * -errno with the reason in *why (the frontend's fault when -EINVAL,
 * -EPROTO or -EFAULT). */
int xen_conn_open(struct xen_dom *d, const char **why);
/* Undoes xen_conn_open; accepts a dom without a connection. */
void xen_conn_close(struct xen_dom *d);

#endif /* TMEMD_XEN_BACKEND_INTERNAL_H */
