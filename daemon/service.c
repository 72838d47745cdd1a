/* SPDX-License-Identifier: MIT */
/* Notification failures only matter to systemd, which restarts us if the
 * watchdog stops; they are logged at debug level and otherwise ignored. */
#include <string.h>

#include "log.h"
#include "service.h"

static void sent(const char *what, int rc)
{
	if (rc < 0)
		log_debug("sd_notify %s: %s", what, strerror(-rc));
}

static void send_status(struct tmemd_service *sv)
{
	struct tmem_store_info si;

	store_info(sv->store, &si);
	sent("STATUS", tmemd_sd_status_counts(si.nr_clients, si.arena.ephemeral,
					      si.arena.persistent));
}

static int watchdog_timeout(void *ctx)
{
	struct tmemd_service *sv = ctx;

	return tmemd_sd_watchdog_timeout_ms(&sv->wd, tmemd_sd_now_usec());
}

static void watchdog_tick(void *ctx)
{
	struct tmemd_service *sv = ctx;

	/* The counts ride along with each ping. */
	if (tmemd_sd_watchdog_tick(&sv->wd, tmemd_sd_now_usec()) > 0)
		send_status(sv);
}

void tmemd_service_init(struct tmemd_service *sv, struct tmem_store *store,
			struct tmemd_loop *loop)
{
	struct tmemd_loop_timer timer = {
		.timeout_ms = watchdog_timeout,
		.tick = watchdog_tick,
		.ctx = sv,
	};
	int rc;

	sv->store = store;
	rc = tmemd_sd_watchdog_init(&sv->wd, tmemd_sd_now_usec());
	if (rc < 0)
		log_warn("ignoring a bad WATCHDOG_USEC/WATCHDOG_PID: %s", strerror(-rc));
	if (rc > 0)
		tmemd_loop_set_timer(loop, &timer);
}

void tmemd_service_ready(struct tmemd_service *sv)
{
	sent("READY", tmemd_sd_ready());
	send_status(sv);
}

void tmemd_service_reloading(struct tmemd_service *sv)
{
	(void)sv;
	sent("RELOADING", tmemd_sd_reloading());
}

void tmemd_service_stopping(struct tmemd_service *sv)
{
	(void)sv;
	sent("STOPPING", tmemd_sd_stopping());
}
