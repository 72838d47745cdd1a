/* SPDX-License-Identifier: MIT */
/* The "restart" object of stats and status: what the last start found in
 * the arena, and what became of the clients it recovered. */
#include <jansson.h>

#include "ctl_internal.h"

json_t *ctl_restart_json(struct tmemd_control *ctl)
{
	struct tmem_recovery_info ri;
	struct tmem_store_info si;

	store_recovery_info(ctl->hooks.store, &ri);
	store_info(ctl->hooks.store, &si);
	return json_pack("{s:b, s:b, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:i, s:i, s:I, s:I, s:i}",
			 "survives_restart", ri.file_backed,
			 "recovered", ri.adopted,
			 "starts", (json_int_t)ri.starts,
			 "recovered_at_usec", (json_int_t)ri.wall_usec,
			 "recovery_seconds", ri.duration_nsec / 1e9,
			 "pages_recovered", (json_int_t)ri.pages,
			 "persistent_pages_recovered", (json_int_t)ri.persistent_pages,
			 "ephemeral_pages_recovered", (json_int_t)ri.ephemeral_pages,
			 "pages_dropped", (json_int_t)ri.pages_dropped,
			 "clients_recovered", (int)ri.clients,
			 "pools_recovered", (int)ri.pools,
			 "clients_reattached", (json_int_t)si.clients_reattached,
			 "clients_expired", (json_int_t)si.clients_expired,
			 "clients_detached", (int)si.nr_detached);
}
