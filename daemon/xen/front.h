/* SPDX-License-Identifier: MIT */
/*
 * Reading what a frontend published under device/tmem/0 (man/tmem.7).
 * The guest owns that directory and may write anything there, so every
 * value is parsed strictly: decimal digits only, no sign, no spaces, no
 * leading zeros, in range.  A read that fails says why in *why.
 */
#ifndef TMEMD_XEN_FRONT_H
#define TMEMD_XEN_FRONT_H

#include <stdint.h>

#include "tmem_proto.h"
#include "xen/xs.h"

/* Most pages a valid geometry needs: the header and entries of the
 * largest ring, rounded up, plus the most slots. */
#define TMEMD_XEN_MAX_RING_PAGES                                        \
	((TMEM_RING_HDR_SIZE + TMEM_RING_MAX_ENTRIES * TMEM_RING_ENTRY_SIZE + \
	  TMEM_PAGE_SIZE - 1) / TMEM_PAGE_SIZE + TMEM_RING_MAX_SLOTS)

/* XenbusState (xen/include/public/io/xenbus.h). */
enum tmemd_xenbus_state {
	TMEMD_XB_UNKNOWN = 0,
	TMEMD_XB_INITIALISING = 1,
	TMEMD_XB_INITWAIT = 2,
	TMEMD_XB_INITIALISED = 3,
	TMEMD_XB_CONNECTED = 4,
	TMEMD_XB_CLOSING = 5,
	TMEMD_XB_CLOSED = 6,
	TMEMD_XB_RECONFIGURING = 7,
	TMEMD_XB_RECONFIGURED = 8,
};

struct tmemd_xen_front {
	uint32_t version;
	uint32_t nr_entries;
	uint32_t nr_slots;
	uint32_t nr_pages;
	uint32_t port;
	uint32_t refs[TMEMD_XEN_MAX_RING_PAGES];
	/* The backend session its pools were made in, from a tmemd here or
	 * on the host it came from (0: none; man/tmem.7). */
	uint64_t session;
};

/* Strict decimal: 0 and *out, or -EINVAL (garbage or above max). */
int tmemd_xen_parse_u32(const char *s, uint32_t max, uint32_t *out);

/* A session as the backend writes it: 16 lower-case hex digits, not
 * all zero.  0 and *out, or -EINVAL. */
int tmemd_xen_parse_session(const char *s, uint64_t *out);

/* The node dir/name as a strict decimal.  0, -ENOENT or -EINVAL. */
int tmemd_xen_read_u32(const struct tmemd_xs *xs, const char *dir,
		       const char *name, uint32_t max, uint32_t *out);

/* A state node: 0 and *state (0..8), -ENOENT, or -EINVAL. */
int tmemd_xen_read_state(const struct tmemd_xs *xs, const char *dir,
			 enum tmemd_xenbus_state *state);

/*
 * Everything the frontend at fe_path published for the handshake,
 * checked: protocol version, geometry (tmem_ring_geometry_check), that
 * ring-pages is exactly what the geometry takes, each ring-refN, and
 * the optional session.
 * 0, or -EINVAL/-ENOENT/-EPROTO with the reason in *why.
 */
int tmemd_xen_read_front(const struct tmemd_xs *xs, const char *fe_path,
			 struct tmemd_xen_front *out, const char **why);

#endif /* TMEMD_XEN_FRONT_H */
