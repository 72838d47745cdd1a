/* SPDX-License-Identifier: MIT */
/*
 * Migration between hosts (man/tmem.7, "Migration between hosts"): a
 * parked client's persistent pools move from the tmemd that parked them
 * (the source) to the tmemd its guest goes on at (the destination),
 * which pulls them when the guest attaches there with an identity it has
 * no pages for.  Exactly once: the destination stages them under an
 * identity no guest has, commits with one store (pools/COMMIT.md), and
 * only then tells the source, which frees its copy; each side writes
 * down what it is in the middle of (files under <runtime>/migrate), so a
 * kill -9 of either side at any point leaves the pages on one side or
 * the other, claimable on exactly one.
 *
 * Threads: the source side serves peers on its own thread
 * (mig_source.c); a pull runs on a thread of the transport's
 * (pull_job.h) while the client's attach waits for it (a post-copy
 * pull, where the guest runs while the pages stream, is not done yet:
 * man/tmem.7); tmemctl's migrate-check and migrate-push run on the
 * control server's, the main loop.
 */
#ifndef TMEMD_MIGRATE_H
#define TMEMD_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client_registry.h"
#include "config.h"

struct tmemd_migrate;

struct tmemd_migrate_stats {
	uint64_t transfers_out, transfers_in;
	uint64_t pages_sent, bytes_sent, pages_received, bytes_received;
	uint64_t send_ns;           /* time the offers from here took, in all */
	uint64_t transfer_ns;       /* time the pulls here took, in all */
	uint64_t refused;           /* peers or requests refused */
	uint64_t failed_pulls;      /* pulls that ended without the pages */
	uint64_t unreachable;       /* peers a pull could not ask (down, no key) */
};

/*
 * Reads migrate-key and starts listening on migrate-listen (if set).
 * Recovers what a kill left half done (mig_files.c).  No migrate-key
 * configured: *out NULL and 0 (no migration).
 */
int tmemd_migrate_start(const struct tmemd_config *cfg, struct tmemd_clients *reg,
			const char *runtime_dir, struct tmemd_migrate **out);
void tmemd_migrate_stop(struct tmemd_migrate *m);

/*
 * Parks a local client for a migration (its guest asked: libtmem's
 * tmem_migrate()), marking it parked first so a restart keeps it.
 * Takes c.  0, or -errno with c removed.
 */
int tmemd_migrate_park(struct tmemd_migrate *m, struct tmemd_client *c);
/* The registry's pull hook (struct tmemd_migrate_hooks): -EPERM
 * besides, the peer's client is another guest's. */
int tmemd_migrate_pull(void *m, const char *name, const struct tmem_ident *ident);
/* Whether the detached client name must outlive the restart grace. */
bool tmemd_migrate_spare(void *m, const char *name);
void tmemd_migrate_get_stats(struct tmemd_migrate *m, struct tmemd_migrate_stats *out);
/* Whether name is lent to a peer and in doubt: not claimable here. */
bool tmemd_migrate_held(void *m, const char *name);
/* A client attached here with its pages: it is no longer parked. */
void tmemd_migrate_claimed(void *m, const char *name);

/* tmemctl migrate-check CLIENT HOST:PORT: can CLIENT's pages go there? */
struct tmemd_migrate_check {
	bool reachable, authenticated, room;
	uint64_t pages;            /* CLIENT's persistent pages here */
	uint64_t stored_pages;     /* the 4 KiB frames they take as stored */
	uint64_t peer_free_pages;  /* the peer's free arena pages */
};
/* 0 (out says about room) or -errno with why: -EOPNOTSUPP no migration,
 * -ENOENT no such client, -EACCES not authenticated, -ECONNREFUSED... */
int tmemd_migrate_check(struct tmemd_migrate *m, const char *client, const char *peer,
			struct tmemd_migrate_check *out, char *why, size_t len);
/* tmemctl migrate-push CLIENT HOST:PORT: the parked CLIENT goes there
 * now (*pages: how many).  0 or -errno with why. */
int tmemd_migrate_push(struct tmemd_migrate *m, const char *client, const char *peer,
		       uint64_t *pages, char *why, size_t len);
/* The port it listens on (tests: migrate-listen = 127.0.0.1:0). */
uint16_t tmemd_migrate_port(const struct tmemd_migrate *m);

#endif /* TMEMD_MIGRATE_H */
