/* SPDX-License-Identifier: MIT */
/*
 * SIGHUP: re-read tmemd.conf and apply what can change while guests are
 * attached: the default settings, every attached client's settings and
 * the shared-pool authorisations.  [tmemd] keys (memory, workers,
 * runtime-dir, transport) keep their running values until a restart.
 */
#ifndef TMEMD_RELOAD_H
#define TMEMD_RELOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "client_registry.h"
#include "config.h"

/* What a reload must not take away: the shared-pool authorisations an
 * admin stored with tmemctl (the control server knows them). */
struct tmemd_reload_keep {
	bool (*auth_stored)(void *ctx, const struct tmem_uuid *uuid, const char *client);
	void *ctx;
};

/*
 * Re-reads path into cfg.  On a bad file nothing changes and err says
 * file:line: reason.  A [tmemd] key the file changed is logged as
 * needing a restart.  keep may be NULL.  Returns 0 or -errno.
 */
int tmemd_reload(struct tmemd_config *cfg, const char *path,
		 struct tmemd_clients *reg, const struct tmemd_reload_keep *keep,
		 char *err, size_t errlen);

#endif /* TMEMD_RELOAD_H */
