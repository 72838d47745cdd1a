/* SPDX-License-Identifier: MIT */
/*
 * libtmem: transcendent memory for a userspace program, over tmemd's
 * local transport (<runtime>/guest.sock).  The calls mirror Xen's tmem
 * ops and return Xen's values:
 *
 *   tmem_new_pool      pool id (>= 0)
 *   tmem_put           1 stored, 0 refused (full, over quota, frozen)
 *   tmem_get           1 hit (page copied out), 0 miss
 *   tmem_flush_page/_object, tmem_destroy_pool   1 or 0
 *   any of them        -errno: a bad request (-EINVAL, -ENOENT no such
 *                      pool, -EPERM, -ERANGE ...) or a lost connection
 *                      (-EPIPE; every later call fails the same way)
 *
 * A connection is thread-safe: calls from several threads are
 * serialised on the ring in call order.  Requests are served in ring
 * order, so an asynchronous put followed by a get of the same handle
 * sees the put.
 *
 * Pipelining: tmem_put_async() returns as soon as the page is copied
 * into a ring slot (cleancache's fire-and-forget put); tmem_get_async()
 * returns once the request is queued.  Their results land in *result
 * (if not NULL) and get's page in page, no later than tmem_wait_all()
 * returns or the next synchronous call on the connection completes.
 * The buffers must stay valid until then.
 *
 * Restarts: when tmemd goes away (crash, kill -9, upgrade) and comes back
 * with its pages kept, the connection reconnects by itself, for up to
 * $TMEM_RECONNECT_MS milliseconds (default 30000; 0 never), and gets its
 * pools back with the same ids and pages.  Requests that were in flight
 * are settled exactly once in effect: a put is reported refused (0) and
 * its handle flushed, so no older copy of it can be got; a get, a flush
 * and the pool ops are sent again.  If tmemd comes back without this
 * client's pools (it kept no pages, or the client's grace period ran
 * out), calls fail with -EPIPE as for a lost connection.
 */
#ifndef TMEM_H
#define TMEM_H

#include <stdint.h>

#include "tmem_proto.h"

struct tmem_conn;

#define TMEM_DEFAULT_ENTRIES 64u
#define TMEM_DEFAULT_SLOTS 64u
#define TMEM_DEFAULT_RECONNECT_MS 30000u

/*
 * Connects as client name (1..63 bytes of [A-Za-z0-9._:-], not all
 * digits and not starting with "domid:", which name Xen domains;
 * proto/tmem_names.h).  path NULL
 * means $TMEM_SOCKET, else $XDG_RUNTIME_DIR/tmemd/guest.sock for a
 * non-root user, else /run/tmemd/guest.sock.  Returns 0 or -errno:
 * -ENOENT/-ECONNREFUSED no tmemd there, -EEXIST the name is attached
 * already, -EINVAL a bad name, another -errno tmemd refused with.
 */
int tmem_connect(const char *path, const char *name, struct tmem_conn **out);
/* The same with a chosen ring geometry (see tmem_ring_geometry_check). */
int tmem_connect_geometry(const char *path, const char *name,
			  uint32_t nr_entries, uint32_t nr_slots,
			  struct tmem_conn **out);
/* Waits for outstanding requests, then closes.  Accepts NULL. */
void tmem_disconnect(struct tmem_conn *c);

/* tmemd's id for this client, from the last connect or reconnect: the
 * "id" of its entry in tmemd's stats (tmemctl stats --json), to find it
 * there.  Not synchronised with a reconnect another thread is making. */
uint32_t tmem_conn_client_id(const struct tmem_conn *c);
/* How many times the connection reconnected to a restarted tmemd. */
uint64_t tmem_conn_reconnects(struct tmem_conn *c);

/*
 * Migration to another host's tmemd (man tmem(7), "Migration between
 * hosts"): waits for outstanding requests, asks the tmemd it is attached
 * to to park its persistent pools, then attaches at path (another
 * tmemd's guest.sock) with the same name and session, which takes them
 * from its peer before it answers.  The connection goes on there with
 * the same pool ids and pages (ephemeral pools are dropped).  0, or
 * -errno: -ENOENT the pages did not follow (that tmemd has no peer
 * holding them, or could not reach it, within $TMEM_RECONNECT_MS, or the
 * client had no persistent pool to park); every other call then fails
 * with -EPIPE, never returning a wrong page, and the pages stay parked:
 * tmem_migrate() again (to the same tmemd or another) tries once more.
 * A tmemd that dies before it parks the client is waited for, and asked
 * again when it is back; -EPIPE if it is not back in time (nothing was
 * parked, and the connection goes on as after any restart).
 */
int tmem_migrate(struct tmem_conn *c, const char *path);

/* flags: TMEM_POOL_* with the spec version, e.g.
 * tmem_pool_flags(TMEM_POOL_PERSIST); uuid is used for shared pools. */
int tmem_new_pool(struct tmem_conn *c, uint32_t flags,
		  const struct tmem_uuid *uuid);
int tmem_destroy_pool(struct tmem_conn *c, int32_t pool_id);

int tmem_put(struct tmem_conn *c, int32_t pool_id, const struct tmem_oid *oid,
	     uint32_t index, const void *page);
int tmem_get(struct tmem_conn *c, int32_t pool_id, const struct tmem_oid *oid,
	     uint32_t index, void *page);
int tmem_flush_page(struct tmem_conn *c, int32_t pool_id,
		    const struct tmem_oid *oid, uint32_t index);
int tmem_flush_object(struct tmem_conn *c, int32_t pool_id,
		      const struct tmem_oid *oid);

/* Asynchronous forms: 0 queued, or -errno (nothing queued). */
int tmem_put_async(struct tmem_conn *c, int32_t pool_id,
		   const struct tmem_oid *oid, uint32_t index,
		   const void *page, int *result);
int tmem_get_async(struct tmem_conn *c, int32_t pool_id,
		   const struct tmem_oid *oid, uint32_t index, void *page,
		   int *result);
/* Waits until every queued request is answered.  0 or -errno. */
int tmem_wait_all(struct tmem_conn *c);

#endif /* TMEM_H */
