/* SPDX-License-Identifier: MIT */
/*
 * The local transport's handshake: how a process on the host (libtmem)
 * attaches a ring to tmemd over <runtime>/guest.sock, a SOCK_SEQPACKET
 * unix socket.  man/tmemd.8 describes it for users.
 *
 *  1. The client creates the shared region itself: a (shmem, not
 *     hugetlbfs) memfd of exactly
 *     tmem_region_size(nr_entries, nr_slots) bytes, sealed at least with
 *     F_SEAL_SHRINK (so it cannot truncate the file under tmemd and make
 *     tmemd fault), and fills in line 0 of the ring header.  It also
 *     creates the kick eventfd (client -> tmemd doorbell).
 *  2. It sends one struct tmem_local_hello with exactly two fds in an
 *     SCM_RIGHTS message, in the order memfd, kick.
 *  3. tmemd checks everything (magic, version, sizes, name, geometry
 *     limits, shmem, seals, then fstat size, fd kinds), maps the region, writes its
 *     own header line (rsp_prod = 0, req_event = 1) and answers with one
 *     struct tmem_local_welcome.  status < 0 is a refusal (-TMEM_E*) and
 *     tmemd closes the socket.
 *  4. From then on the client sends nothing: any message, EOF or hang-up
 *     ends the connection, and tmemd frees the client's private pools.
 *     tmemd rings the client's doorbell (tmemd -> client) by sending a
 *     one-byte message on the socket; the client reads and drops them.
 *
 * Why the doorbell back is the socket and not an eventfd (version 1 had
 * a wake eventfd): tmemd must never block on a descriptor the client can
 * change, and a client can clear O_NONBLOCK on any open file description
 * it shares with tmemd, while eventfd writes have no per-call
 * non-blocking flag (RWF_NOWAIT is refused).  tmemd's end of the socket
 * is its own and it sends with MSG_DONTWAIT.  tmemd never reads the kick
 * eventfd either; it only polls it, edge-triggered.
 *
 * Sessions (version 2).  The welcome carries a random session token.
 * When tmemd restarts (crash, kill -9, upgrade) with its pages kept (an
 * arena in systemd's fd store or --arena), the client connects again
 * with a new ring and the same name, and hands the token back in
 * hello.session: tmemd then gives it its pools back, with the same ids
 * and pages (welcome.flags has TMEM_LOCAL_RESUMED, welcome.pools lists
 * the pool ids it holds).  A zero token, or one that does not match, is
 * a new client: a detached client of that name is freed.  Requests that
 * were on the old ring are not answered; the client fails or repeats
 * them (libtmem: tmem.h).
 *
 * Fixed-width little-endian fields, explicit reserved space (zero).
 */
#ifndef TMEM_LOCAL_H
#define TMEM_LOCAL_H

#include "tmem_proto.h"

#define TMEM_LOCAL_MAGIC 0x4c4d4d54u /* "TMML" little-endian */
#define TMEM_LOCAL_VERSION 2u
#define TMEM_LOCAL_NAME_MAX 64u      /* bytes, NUL-padded, at least one NUL */
#define TMEM_LOCAL_NR_FDS 2u         /* memfd, kick eventfd */
#define TMEM_LOCAL_SESSION_LEN 16u   /* bytes of a session token */
#define TMEM_LOCAL_RESUMED 1u        /* welcome.flags: pools and pages are back */

/*
 * Client -> tmemd after the handshake, the one message it may send
 * (optional; any other ends the connection as in step 4): park, for a
 * migration to another host (man tmem(7), "Migration between hosts").
 * tmemd parks the client's persistent pools for a peer tmemd to take,
 * answers with the same struct (status 0 parked, or -TMEM_E*: nothing
 * kept, e.g. -TMEM_ENOENT for a client with no persistent pool) and
 * closes the socket; the client then connects to the other tmemd with
 * its name and session token.  A socket that closes without the answer
 * (tmemd died) parked nothing: the client reconnects as after a restart.
 * A tmemd without migration parks them all the same, for the client to
 * come back to it.
 */
#define TMEM_LOCAL_OP_PARK 1u
struct tmem_local_op {
	uint32_t magic;        /* TMEM_LOCAL_MAGIC */
	uint32_t op;           /* TMEM_LOCAL_OP_PARK */
	int32_t status;        /* the answer's; zero in the request */
	uint32_t rsvd;         /* zero */
};

/* Client -> tmemd, with the two fds. */
struct tmem_local_hello {
	uint32_t magic;        /* TMEM_LOCAL_MAGIC */
	uint32_t version;      /* TMEM_LOCAL_VERSION */
	uint32_t ring_version; /* TMEM_RING_VERSION */
	uint32_t nr_entries;   /* power of two, TMEM_RING_{MIN,MAX}_ENTRIES */
	uint32_t nr_slots;     /* TMEM_RING_{MIN,MAX}_SLOTS */
	uint32_t rsvd0;
	uint64_t region_size;  /* tmem_region_size(nr_entries, nr_slots) */
	uint8_t name[TMEM_LOCAL_NAME_MAX]; /* client name: [A-Za-z0-9._:-]+ */
	uint8_t session[TMEM_LOCAL_SESSION_LEN]; /* zero, or a welcome's token */
	uint32_t rsvd[4];      /* zero */
};

/* tmemd -> client. */
struct tmem_local_welcome {
	uint32_t magic;        /* TMEM_LOCAL_MAGIC */
	uint32_t version;      /* TMEM_LOCAL_VERSION */
	int32_t status;        /* 0 attached, or -TMEM_E* */
	uint32_t client_id;    /* tmemd's id for this client (stats) */
	uint32_t flags;        /* TMEM_LOCAL_RESUMED */
	uint32_t pools;        /* resumed: bit n set when pool id n exists */
	uint8_t session[TMEM_LOCAL_SESSION_LEN]; /* hand back to resume */
	uint32_t rsvd[8];      /* zero */
};

_Static_assert(sizeof(struct tmem_local_hello) == 128, "hello is 128 bytes");
_Static_assert(__builtin_offsetof(struct tmem_local_hello, region_size) == 24,
	       "hello.region_size");
_Static_assert(__builtin_offsetof(struct tmem_local_hello, name) == 32,
	       "hello.name");
_Static_assert(__builtin_offsetof(struct tmem_local_hello, session) == 96,
	       "hello.session");
_Static_assert(sizeof(struct tmem_local_welcome) == 72, "welcome is 72 bytes");
_Static_assert(__builtin_offsetof(struct tmem_local_welcome, session) == 24,
	       "welcome.session");
_Static_assert(__builtin_offsetof(struct tmem_local_welcome, client_id) == 12,
	       "welcome.client_id");

_Static_assert(sizeof(struct tmem_local_op) == 16, "op is 16 bytes");

#endif /* TMEM_LOCAL_H */
