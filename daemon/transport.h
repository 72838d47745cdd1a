/* SPDX-License-Identifier: MIT */
/*
 * Transports: how guests reach tmemd.  Each is an ops table in its own
 * file, chosen by name; they differ only in how a guest attaches, how the
 * shared region is mapped and how doorbells ring.  All of them feed the
 * same ring code (ring.c) and request path (dispatch.c).
 *
 *   local  unix socket + memfd + eventfds (local/transport_local.c, with the
 *          per-uid limits in local/local_uids.c and sessions in
 *          local/session.c)
 *   xen    xenstore + grant tables + event channels (xen/transport_xen.c,
 *          state machine in xen/backend.c)
 */
#ifndef TMEMD_TRANSPORT_H
#define TMEMD_TRANSPORT_H

#include <stdbool.h>

#include "client_registry.h"
#include "loop.h"
#include "workers.h"

/* What a transport gets from the daemon; it keeps the pointers. */
struct tmemd_fallow;

struct tmemd_env {
	struct tmemd_loop *loop;
	struct tmemd_clients *clients;
	struct tmemd_workers *workers;
	const char *runtime_dir;
	/* The config in force (reloads update it in place); NULL in tests.
	 * The xen transport reads xen-domains from it. */
	const struct tmemd_config *cfg;
	/* The elastic pool, for the xen transport's balloon hooks; NULL in tests. */
	struct tmemd_fallow *fallow;
};

struct tmem_transport_ops {
	const char *name;
	/* Whether this host can run the transport at all (auto selection);
	 * xen's checks that /dev/xen/evtchn and /dev/xen/gntdev open. */
	bool (*usable)(void);
	/* Starts accepting guests; *state is the transport's own. 0 or -errno
	 * (the transport logs the details). */
	int (*start)(const struct tmemd_env *env, void **state);
	/* Disconnects every guest (freeing their clients) and stops. */
	void (*stop)(void *state);
};

extern const struct tmem_transport_ops tmemd_transport_local;
extern const struct tmem_transport_ops tmemd_transport_xen;

/*
 * The transport for a --transport/transport= name: "local", "xen" or
 * "auto" (xen when it is built in and usable, else local).  NULL when
 * the named one is not built in or not usable; *why says which.
 */
const struct tmem_transport_ops *tmemd_transport_find(const char *name,
							const char **why);

#endif /* TMEMD_TRANSPORT_H */
