/* SPDX-License-Identifier: MIT */
/*
 * SIGHUP: re-read tmemd.conf and apply what can change while guests are
 * attached: the default settings, every attached client's settings and
 * the shared-pool authorisations.  [tmemd] keys (memory, workers,
 * runtime-dir, transport) keep their running values until a restart.
 */
#ifndef TMEMD_RELOAD_H
#define TMEMD_RELOAD_H

#include <stddef.h>

#include "clients.h"
#include "config.h"

/*
 * Re-reads path into cfg.  On a bad file nothing changes and err says
 * file:line: reason.  Returns 0 or -errno.
 */
int tmemd_reload(struct tmemd_config *cfg, const char *path,
		 struct tmemd_clients *reg, char *err, size_t errlen);

#endif /* TMEMD_RELOAD_H */
