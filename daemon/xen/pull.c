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
 * The pull runs on a thread of its own (pull_job.h), so the backend goes
 * on serving other domains' events meanwhile; the domain stays in
 * InitWait.  When the thread ends it wakes the backend (fault_fd), which
 * connects the domain again, and this time claims what the pull brought.
 *
 * xl migrate unpauses the new domain before it destroys the suspended
 * one on the source, whose tmemd parks the pages only then: until it
 * does, the peer answers EAGAIN and the pull is tried again, for
 * XEN_PULL_WAIT_MS at most; so is a pull that could not reach a peer
 * (its tmemd restarting) and found the pages at no other.  A domain that
 * dies while its pull runs leaves the pages it brought parked here for
 * its UUID.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "pull_job.h"
#include "tmem_names.h"
#include "xen/backend_internal.h"

struct xen_pull {
	struct tmemd_pull_job *job;
	char label[TMEM_CLIENT_NAME_MAX];
	struct xen_pull *next;       /* be->orphan_pulls */
};

static int pull_start(struct xen_dom *d, uint64_t session)
{
	struct xen_pull *p = calloc(1, sizeof(*p));
	struct tmemd_domain_id id;
	struct tmem_ident ident;
	char key[TMEM_CLIENT_NAME_MAX];
	int rc;

	if (!p)
		return -ENOMEM;
	xen_dom_id(d, &id);
	tmemd_domain_key(&id, key);
	snprintf(p->label, sizeof(p->label), "%s", d->name);
	xen_ident_with_nonce(d, session, &ident);
	rc = tmemd_pull_job_start(d->be->env.clients, key, &ident, XEN_PULL_WAIT_MS,
				  d->be->fault_fd, &p->job);
	if (rc) {
		free(p);
		return rc;
	}
	d->pull = p;
	log_dom(TMEMD_LOG_INFO, d->domid, "domain %u (%s) moved here with session %016" PRIx64
		": taking its pages parked as %s from a peer", d->domid, d->name, session, key);
	return 0;
}

bool xen_pull_done(const struct xen_dom *d)
{
	return d->pull && tmemd_pull_job_done(d->pull->job);
}

/* The ended pull's result into d->conn: 0, or -ENOENT (start afresh). */
static int pull_claim(struct xen_dom *d)
{
	struct tmemd_clients *reg = d->be->env.clients;
	struct xen_pull *p = d->pull;
	struct xen_conn *c = d->conn;
	char key[TMEM_CLIENT_NAME_MAX];
	struct tmemd_domain_id id;
	struct tmem_page_counts pc;
	struct tmem_ident ident = *tmemd_pull_job_ident(p->job);
	uint64_t waited_ms;
	int rc;

	snprintf(key, sizeof(key), "%s", tmemd_pull_job_name(p->job));
	rc = tmemd_pull_job_end(p->job, &waited_ms);
	d->pull = NULL;
	free(p);
	if (rc) {
		if (rc != -ENOENT)
			log_dom(TMEMD_LOG_ERR, d->domid, "domain %u: its pages parked as %s on a peer "
				"cannot be taken (%s after %" PRIu64 " ms); they stay there, and it "
				"starts afresh", d->domid, key, strerror(-rc), waited_ms);
		return -ENOENT;
	}
	xen_dom_id(d, &id);
	rc = tmemd_client_attach_domain(reg, &id, &ident, &c->client, &c->resumed);
	if (!rc) {
		c->ident = ident;
		store_client_page_counts(c->client->sc, &pc);
		log_dom(TMEMD_LOG_INFO, d->domid, "domain %u (%s): took %llu persistent pages "
			"parked as %s from a peer in %" PRIu64 " ms", d->domid, c->client->label,
			(unsigned long long)pc.persistent, key, waited_ms);
	}
	return rc;
}

int xen_claim_pulled(struct xen_dom *d, uint64_t session)
{
	int rc;

	if (d->pull)
		return xen_pull_done(d) ? pull_claim(d) : -EINPROGRESS;
	if (!session || !xen_handle_known(d->handle) ||
	    !tmemd_clients_may_pull(d->be->env.clients))
		return -ENOENT;
	rc = pull_start(d, session);
	if (rc) {
		log_dom(TMEMD_LOG_ERR, d->domid, "domain %u: cannot start taking its pages from a "
			"peer: %s; it starts afresh", d->domid, strerror(-rc));
		return -ENOENT;
	}
	return -EINPROGRESS;
}

/* An orphan's pages: parked here for the next domain with its UUID. */
static void orphan_end(struct tmemd_xen_backend *be, struct xen_pull *p)
{
	char key[TMEM_CLIENT_NAME_MAX];
	struct tmem_ident ident = *tmemd_pull_job_ident(p->job);

	snprintf(key, sizeof(key), "%s", tmemd_pull_job_name(p->job));
	if (!tmemd_pull_job_end(p->job, NULL))
		xen_park_pulled(be, key, p->label, &ident);
	free(p);
}

void xen_pull_orphan(struct xen_dom *d)
{
	struct xen_pull *p = d->pull;

	if (!p)
		return;
	d->pull = NULL;
	tmemd_pull_job_stop(p->job);
	p->next = d->be->orphan_pulls;
	d->be->orphan_pulls = p;
}

void xen_pull_reap(struct tmemd_xen_backend *be, bool wait)
{
	struct xen_pull **pp = &be->orphan_pulls;

	while (*pp) {
		struct xen_pull *p = *pp;

		if (!wait && !tmemd_pull_job_done(p->job)) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		orphan_end(be, p);
	}
}
