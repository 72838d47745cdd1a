/* SPDX-License-Identifier: MIT */
/*
 * Rate limits for the log lines a client, a guest or a control peer can
 * cause at will (a refused handshake, a faulty ring, a refused control
 * request): without them one unprivileged process looping on a refused
 * handshake writes thousands of lines a second.  As printk_ratelimited:
 * each message site (its format string) may log TMEMD_RL_BURST lines per
 * TMEMD_RL_INTERVAL_NS, and each source of it, where the source is known
 * (a local client's name, a domid, a peer's uid), TMEMD_RL_SOURCE_BURST
 * of those, so that one noisy source does not use up the site's burst
 * for the others.  When a line
 * is let through after lines were held back, it is preceded by one "N
 * similar messages suppressed" line with the count.  The counters that
 * stats and Prometheus show (refused handshakes, bad requests) are kept
 * elsewhere and stay exact; only the log is thinned.
 *
 * Not thread-safe: the caller (log.c) serialises with one mutex, taken
 * only on the way to a log line, so never on the request path of a
 * request that is served.  Sites live in a small open-addressed table
 * (a message site is a string literal, so they are few); sources in a
 * direct-mapped one, where a collision evicts the older source (its
 * burst starts again, which the site's own limit still bounds).
 */
#ifndef TMEMD_RATELIMIT_H
#define TMEMD_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#define TMEMD_RL_INTERVAL_NS 5000000000ull /* 5 s */
#define TMEMD_RL_BURST 20u        /* per site */
#define TMEMD_RL_SOURCE_BURST 5u  /* per site and source: one source leaves room */
#define TMEMD_RL_SITES 256u     /* power of two */
#define TMEMD_RL_SOURCES 1024u  /* power of two */

/* Source keys: 0 is none; the top two bits say the kind. */
#define TMEMD_RL_NO_SOURCE 0ull
#define TMEMD_RL_UID(uid) ((1ull << 62) | (uint32_t)(uid))
#define TMEMD_RL_DOMID(domid) ((2ull << 62) | (uint32_t)(domid))
/* A local client's name (FNV-1a, kind 3). */
uint64_t tmemd_rl_name(const char *name);

/* One window of one site or source. */
struct tmemd_rl_window {
	uint64_t begin_ns;   /* start of the current interval; 0: none yet */
	uint32_t printed;    /* lines let through in it */
	uint32_t missed;     /* lines held back since the last report */
};

struct tmemd_rl_site {
	const void *site;    /* the format string; NULL: free slot */
	struct tmemd_rl_window w;
};

struct tmemd_rl_source {
	const void *site;    /* with source, the key; NULL: free slot */
	uint64_t source;
	struct tmemd_rl_window w;
};

struct tmemd_ratelimit {
	struct tmemd_rl_site sites[TMEMD_RL_SITES];
	struct tmemd_rl_source sources[TMEMD_RL_SOURCES];
	struct tmemd_rl_window overflow; /* every site once sites[] is full */
};

/*
 * Whether a line of site (from source, or TMEMD_RL_NO_SOURCE) may be
 * logged at now_ns (CLOCK_MONOTONIC).  When true, *suppressed is the
 * number of this site's (and source's) lines held back before it that
 * were not reported yet: the caller logs "N similar messages suppressed"
 * first when it is not 0.  A zeroed struct is ready.
 */
bool tmemd_ratelimit(struct tmemd_ratelimit *rl, const void *site, uint64_t source,
		     uint64_t now_ns, uint32_t *suppressed);

#endif /* TMEMD_RATELIMIT_H */
