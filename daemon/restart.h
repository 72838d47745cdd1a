/* SPDX-License-Identifier: MIT */
/*
 * Surviving a restart: open the store in its arena (daemon/arena.h),
 * adopting what a previous tmemd left, and after reattach-grace free the
 * recovered clients that did not come back.  What a restart can trust in
 * the file, and why, is pools/COMMIT.md (the commit protocol) with
 * pools/durable.h (the format) and pools/recover.c (the checks).
 */
#ifndef TMEMD_RESTART_H
#define TMEMD_RESTART_H

#include <stdbool.h>

#include "arena.h"
#include "loop.h"
#include "tmem_store.h"

struct tmemd_restart {
	struct tmemd_arena arena;
	struct tmem_store *store;
	struct tmemd_watch grace;  /* timerfd; fd -1 when none is armed */
	unsigned grace_sec;
	/* Optional: a recovered client the grace must spare (parked for a
	 * restore: client_registry.h), by its store name. */
	bool (*spare)(void *ctx, const char *name);
	void *spare_ctx;
};

/*
 * Opens the store: sc for a new one, arena_path/discard as for
 * tmemd_arena_open().  Logs where the pages live, and what was recovered.
 * An arena that cannot be used is refused untouched: -EPROTO/-EBADMSG.
 */
int tmemd_restart_open_store(struct tmemd_restart *r, const struct tmem_store_config *sc,
			     const char *arena_path, bool discard);
/* After the transports are up: arm the timer that drops the clients still
 * detached after grace_sec seconds (0: at once). */
int tmemd_restart_arm_grace(struct tmemd_restart *r, struct tmemd_loop *loop,
			    unsigned grace_sec);
/* Destroys the store (leaving a file-backed arena's pages in it). */
void tmemd_restart_close(struct tmemd_restart *r, struct tmemd_loop *loop);

#endif /* TMEMD_RESTART_H */
