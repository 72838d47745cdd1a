/* SPDX-License-Identifier: MIT */
/*
 * SIGHUP: re-read tmemd.conf and apply what can change while guests are
 * attached: the default settings, every attached client's settings,
 * the shared-pool authorisations, xen-domains, parked-max-age and the
 * local-max-* limits.  The other [tmemd] keys (memory, workers,
 * transport, runtime-dir, state-dir, arena, control-*, reattach-grace,
 * compress-threshold) keep their running values until a restart.
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
 * Re-reads path into cfg.  On a bad file (one a start would refuse
 * included: config_check.h) nothing changes and err says file:line:
 * reason.  Each restart-only key the file changed is logged as needing a
 * restart and named in pending ("arena, workers"; "" for none; pending
 * may be NULL); cfg keeps its running value.  keep may be NULL.
 * Returns 0 or -errno.
 */
int tmemd_reload(struct tmemd_config *cfg, const char *path,
		 struct tmemd_clients *reg, const struct tmemd_reload_keep *keep,
		 char *pending, size_t pendlen, char *err, size_t errlen);

#endif /* TMEMD_RELOAD_H */
