/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "local/local_uids.h"

void local_limits_get(const struct tmemd_config *cfg, struct local_limits *out)
{
	*out = (struct local_limits){
		.clients = TMEMD_LOCAL_CLIENTS_PER_UID,
		.pools = TMEMD_LOCAL_POOLS_PER_UID,
		.handshakes = TMEMD_LOCAL_HANDSHAKES_PER_UID,
	};
	if (!cfg)
		return;
	if (cfg->local_max_clients_per_uid)
		out->clients = cfg->local_max_clients_per_uid;
	if (cfg->local_max_pools_per_uid)
		out->pools = cfg->local_max_pools_per_uid;
	if (cfg->local_max_handshakes_per_uid)
		out->handshakes = cfg->local_max_handshakes_per_uid;
}

struct local_uid *local_uid_get(struct local_uid **list, uid_t uid)
{
	struct local_uid *u;

	for (u = *list; u; u = u->next)
		if (u->uid == uid)
			return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->uid = uid;
	u->next = *list;
	*list = u;
	return u;
}

void local_uid_put(struct local_uid **list, struct local_uid *u)
{
	if (!u || u->conns)
		return;
	for (struct local_uid **pp = list; *pp; pp = &(*pp)->next) {
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	}
	free(u);
}
