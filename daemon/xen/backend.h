/* SPDX-License-Identifier: MIT */
/*
 * The Xen backend's state machine, independent of libxen*: it talks to
 * the xenstore through struct tmemd_xs and to the hypervisor through
 * struct tmemd_hyp, so tests drive all of it with fakes.
 *
 * For each domU it offers a device to (the xen-domains allow-list), it
 * writes the backend and frontend directories of device/tmem/0 and runs
 * the XenbusState handshake of man/tmem.7; a connected ring is served by
 * the shared ring/dispatch path through a worker.  Domain death
 * (@releaseDomain), frontend Closing/Closed and tmemd stopping tear the
 * connection down; a guest that writes garbage into its xenstore nodes
 * or its ring is cut off (backend state Closed) until it dies.
 *
 * Threads: everything runs on the main thread except the ring ops
 * (notify, ack, fault), which the serving worker calls; a fault only
 * marks the domain and wakes the main thread through an eventfd.
 */
#ifndef TMEMD_XEN_BACKEND_H
#define TMEMD_XEN_BACKEND_H

#include <stdint.h>

#include "transport.h"
#include "xen/front.h"
#include "xen/hyp.h"
#include "xen/xs.h"

struct tmemd_xen_backend;

/*
 * Starts the backend: watches @introduceDomain and @releaseDomain and
 * offers devices to the domUs already running.  Takes ownership of xs
 * and hyp (closed by destroy, also on failure).  With env->loop NULL
 * (tests) nothing is added to a loop: call tmemd_xen_backend_poll().
 * 0 or -errno (logged).
 */
int tmemd_xen_backend_create(const struct tmemd_env *env, struct tmemd_xs xs,
			     struct tmemd_hyp hyp, uint32_t self_domid,
			     struct tmemd_xen_backend **out);

/* Handles every pending watch event and ring fault.  Main thread. */
void tmemd_xen_backend_poll(struct tmemd_xen_backend *be);

/*
 * Disconnects every domain (backend state Closed, so frontends stop
 * using their rings and reconnect when tmemd comes back), removes the
 * watches and frees everything.  Accepts NULL.
 */
void tmemd_xen_backend_destroy(struct tmemd_xen_backend *be);

/* For tests and logs: the XenbusState the backend last wrote for domid,
 * or -ENOENT when it offers domid no device. */
int tmemd_xen_backend_state(struct tmemd_xen_backend *be, uint32_t domid);

#endif /* TMEMD_XEN_BACKEND_H */
