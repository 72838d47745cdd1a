/* SPDX-License-Identifier: MIT */
/*
 * A client's pages pulled from the migrate-peers (tmemd_clients_pull(),
 * daemon/migrate/) on a thread of its own, so the main loop goes on
 * serving everything else while they come: a transfer can outlast
 * systemd's watchdog, and a peer that does not answer holds a connect
 * for seconds.  The thread asks again while the answer says it is worth
 * it (client_registry.h: -EAGAIN, -EHOSTDOWN), for wait_ms at most, then
 * writes wake_fd (an eventfd the main loop watches).  The pages it
 * brings are in the store, detached, for the next attach to claim.
 */
#ifndef TMEMD_PULL_JOB_H
#define TMEMD_PULL_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "client_registry.h"

struct tmemd_pull_job;

/* Starts pulling name under ident.  0, or -errno (nothing started). */
int tmemd_pull_job_start(struct tmemd_clients *reg, const char *name,
			 const struct tmem_ident *ident, uint32_t wait_ms, int wake_fd,
			 struct tmemd_pull_job **out);
/* Whether the thread has ended (tmemd_pull_job_end() will not wait). */
bool tmemd_pull_job_done(const struct tmemd_pull_job *j);
/* Asks it to stop asking again (a transfer under way still ends). */
void tmemd_pull_job_stop(struct tmemd_pull_job *j);
/* Waits for the thread and frees j: the pull's result (0: the pages are
 * here), and in *waited_ms (if not NULL) how long it took. */
int tmemd_pull_job_end(struct tmemd_pull_job *j, uint64_t *waited_ms);
const char *tmemd_pull_job_name(const struct tmemd_pull_job *j);
const struct tmem_ident *tmemd_pull_job_ident(const struct tmemd_pull_job *j);

#endif /* TMEMD_PULL_JOB_H */
