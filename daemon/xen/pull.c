/* SPDX-License-Identifier: MIT */
/*
 * A guest that moved here from another host (xl migrate, or xl restore
 * of a save made there) presents the session its pools were made in
 * (its frontend's "session" node, man/tmem.7).  With no pages for it
 * here, they are parked where it came from: they are pulled from the
 * migrate-peers (daemon/migrate/) before the frontend is told it is
 * connected, so it never sees a page missing.  Only the same guest
 * (handle and session; the domid differs) can have them.
 *
 * xl migrate unpauses the new domain before it destroys the suspended
 * one on the source, whose tmemd parks the pages only then: until it
 * does, the peer answers EAGAIN and the pull is tried again, for
 * XEN_PULL_WAIT_MS at most.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "tmem_names.h"
#include "xen/backend_internal.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int pull_until_parked(struct tmemd_clients *reg, const char *key,
			     const struct tmem_ident *ident, uint64_t *waited_ms)
{
	const struct timespec pause = { 0, 100 * 1000 * 1000 };
	uint64_t t0 = now_ms();
	int rc;

	while ((rc = tmemd_clients_pull(reg, key, ident)) == -EAGAIN &&
	       now_ms() - t0 < XEN_PULL_WAIT_MS)
		nanosleep(&pause, NULL);
	*waited_ms = now_ms() - t0;
	return rc;
}

int xen_pull_parked(struct xen_dom *d, uint64_t session)
{
	struct tmemd_clients *reg = d->be->env.clients;
	struct xen_conn *c = d->conn;
	char key[TMEM_CLIENT_NAME_MAX];
	struct tmemd_domain_id id;
	struct tmem_page_counts pc;
	struct tmem_ident ident;
	uint64_t waited_ms;
	int rc;

	if (!session || !xen_handle_known(d->handle))
		return -ENOENT;
	xen_dom_id(d, &id);
	tmemd_domain_key(&id, key);
	xen_ident_with_nonce(d, session, &ident);
	rc = pull_until_parked(reg, key, &ident, &waited_ms);
	if (rc) {
		if (rc != -ENOENT)
			log_err("domain %u: its pages parked as %s on a peer cannot be taken "
				"(%s after %" PRIu64 " ms); they stay there, and it starts afresh",
				d->domid, key, strerror(-rc), waited_ms);
		return -ENOENT;
	}
	rc = tmemd_client_attach_domain(reg, &id, &ident, &c->client, &c->resumed);
	if (rc)
		return rc;
	c->ident = ident;
	store_client_page_counts(c->client->sc, &pc);
	log_info("domain %u (%s): took %llu persistent pages parked as %s from a peer "
		 "in %" PRIu64 " ms", d->domid, c->client->label,
		 (unsigned long long)pc.persistent, key, waited_ms);
	return 0;
}
