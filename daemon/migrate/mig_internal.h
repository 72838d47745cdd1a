/* SPDX-License-Identifier: MIT */
/* The migration module's state, shared by its files (migrate.h). */
#ifndef TMEMD_MIG_INTERNAL_H
#define TMEMD_MIG_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "migrate/mig_tls.h"
#include "migrate/migrate.h"

#define MIG_MAX_PEERS 8
#define MIG_MAX_LENT 64
#define MIG_TIMEOUT_MS 10000u   /* connect, and each read or write */

/* Source: a parked client offered to a peer and not yet resolved. */
struct mig_lent {
	char name[TMEM_CLIENT_NAME_MAX];
	char peer[MIG_HOST_MAX];
	uint8_t xfer[TMEM_MIG_XFER_LEN];
	struct tmemd_parked parked;   /* to park it again on an abort */
};

/*
 * Lock order: m->lock, then the registry's and the store's (taken in
 * their calls).  m->lock guards lent and stats; the source thread and
 * the main thread both use them.
 */
struct tmemd_migrate {
	struct tmemd_clients *reg;
	struct tmem_store *store;
	struct mig_tls *tls;
	char peers[MIG_MAX_PEERS][128];
	unsigned nr_peers;
	char parked_dir[300], incoming_dir[300];
	int listen_fd;
	uint16_t port;
	int stop_pipe[2];
	pthread_t thread;           /* the source side (mig_source.c) */
	bool thread_started;
	pthread_t settler;          /* settles pulls a kill or a lost link left */
	bool settler_started;
	pthread_mutex_t pull_lock;  /* one pull or settling at a time; before lock */
	pthread_mutex_t lock;
	struct mig_lent lent[MIG_MAX_LENT];
	unsigned nr_lent;
	struct tmemd_migrate_stats stats;
};

/* mig_source.c */
void *mig_source_thread(void *arg);
int mig_source_recover(struct tmemd_migrate *m);
/* mig_ctl.c: a PUSH from a peer. */
int mig_serve_push(struct tmemd_migrate *m, struct mig_link *link, const struct tmem_mig_who *who);
/* migrate.c: a client pulled here (detached) stays parked for its guest. */
int mig_park_detached(struct tmemd_migrate *m, const char *name, const struct tmem_ident *ident);
/* mig_dest.c */
int mig_dest_recover(struct tmemd_migrate *m);
void *mig_settler_thread(void *arg);
/* The staged identity of ident (byte 0 flipped): no guest presents it. */
void mig_staged_ident(const struct tmem_ident *ident, struct tmem_ident *out);
/* Whether the store has a detached client name, and its identity. */
bool mig_detached_ident(struct tmemd_migrate *m, const char *name, struct tmem_ident *out);
void mig_hex(const uint8_t *b, size_t n, char *out);
uint64_t mig_now_ns(void);
int mig_unhex(const char *s, uint8_t *b, size_t n);

#endif /* TMEMD_MIG_INTERNAL_H */
