/* SPDX-License-Identifier: MIT */
/*
 * Worker threads that serve rings.  Each ring is served by exactly one
 * worker (the least loaded when it attached), so a client's requests are
 * handled in order and its private state needs no lock.
 *
 * A worker that has just served requests keeps polling its rings for a
 * short, adaptive window before it arms req_event and sleeps in
 * epoll_wait on the rings' doorbells: a cross-core eventfd wakeup costs
 * ~30 µs on these VMs, a spin catches the next request of a busy guest
 * in well under one.  The window is bounded (TMEMD_SPIN_MAX_NS) and only
 * starts after work, so an idle tmemd sleeps.
 *
 * A get of a page in the host tier is read by the read-back threads
 * (readback.h) the workers share; its ring waits for it (responses go in
 * order), its worker does not: the read-back's end wakes it like a
 * command.
 */
#ifndef TMEMD_WORKERS_H
#define TMEMD_WORKERS_H

#include "ring.h"

#define TMEMD_SPIN_MIN_NS 5000u    /* 5 µs */
#define TMEMD_SPIN_MAX_NS 200000u  /* 200 µs */
#define TMEMD_SPIN_YIELD_NS 5000u  /* then sched_yield() between polls */

struct tmemd_workers;

int tmemd_workers_create(unsigned nr, struct tmemd_workers **out);
/* Stops and joins the threads.  Rings must have been detached.  Accepts NULL. */
void tmemd_workers_destroy(struct tmemd_workers *ws);

/* Hands ring to the least loaded worker.  0 or -errno. */
int tmemd_workers_attach(struct tmemd_workers *ws, struct tmemd_ring *ring);
/* Takes ring back; returns once no worker touches it.  Accepts unattached. */
void tmemd_workers_detach(struct tmemd_workers *ws, struct tmemd_ring *ring);

#endif /* TMEMD_WORKERS_H */
