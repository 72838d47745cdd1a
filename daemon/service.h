/* SPDX-License-Identifier: MIT */
/*
 * tmemd under systemd (tmemd.service is Type=notify with a watchdog),
 * through daemon/systemd/: READY=1 once every socket is up, STATUS= with
 * the counts, WATCHDOG=1 from the main loop, RELOADING=1/READY=1 around
 * a SIGHUP reload, STOPPING=1 before teardown.  Without $NOTIFY_SOCKET
 * every call is a no-op.
 */
#ifndef TMEMD_SERVICE_H
#define TMEMD_SERVICE_H

#include "loop.h"
#include "systemd/sd.h"
#include "tmem_store.h"

struct tmemd_service {
	struct tmemd_sd_watchdog wd;
	struct tmem_store *store;
};

/* Reads the watchdog settings and hooks the pings into loop's timer. */
void tmemd_service_init(struct tmemd_service *sv, struct tmem_store *store,
			struct tmemd_loop *loop);
void tmemd_service_ready(struct tmemd_service *sv);
void tmemd_service_reloading(struct tmemd_service *sv);
void tmemd_service_stopping(struct tmemd_service *sv);

#endif /* TMEMD_SERVICE_H */
