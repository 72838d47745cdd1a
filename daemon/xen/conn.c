/* SPDX-License-Identifier: MIT */
/*
 * One connected ring of a domU: the frontend's published values are
 * read and checked (front.c), its grants mapped once at one contiguous
 * address, its event channel bound, and the ring handed to a worker,
 * which serves it through the same ring.c/dispatch.c path as every
 * transport.  Closing is the same steps backwards; the worker is
 * detached first, so nothing touches the mapping while it goes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "xen/backend_internal.h"

/* ---- ring ops: called by the serving worker ---- */

static void xen_notify(struct tmemd_ring *ring)
{
	struct xen_dom *d = ring->priv;
	int rc = d->be->hyp.ops->notify(d->conn->ch);

	if (rc)
		log_dom(TMEMD_LOG_DEBUG, d->domid, "domain %u: notify: %s", d->domid, strerror(-rc));
}

static void xen_ack(struct tmemd_ring *ring)
{
	struct xen_dom *d = ring->priv;

	d->be->hyp.ops->ack(d->conn->ch);
}

/* The main thread cuts the domain off (backend.c, on fault_fd). */
static void xen_fault(struct tmemd_ring *ring, const char *reason)
{
	struct xen_dom *d = ring->priv;
	uint64_t one = 1;

	d->conn->fault_why = reason;
	__atomic_store_n(&d->faulted, 1, __ATOMIC_RELEASE);
	if (write(d->be->fault_fd, &one, sizeof(one)) < 0)
		log_dom(TMEMD_LOG_DEBUG, d->domid, "domain %u: fault doorbell: %m", d->domid);
}

static const struct tmemd_ring_ops xen_ring_ops = {
	.notify = xen_notify,
	.ack = xen_ack,
	.fault = xen_fault,
};

/* ---- connect ---- */

static int add_new_client(struct xen_dom *d)
{
	struct tmemd_domain_id id;
	int rc = xen_ident_new(d, &d->conn->ident);

	if (rc)
		return rc;
	xen_dom_id(d, &id);
	return tmemd_client_attach_domain(d->be->env.clients, &id, &d->conn->ident,
					  &d->conn->client, NULL);
}

/* The client the last run left for this domain's identity, if kept;
 * else what it parked when it suspended (park.c); else what it parked on
 * the host it came from, under session (pull.c); else a new one. */
static int add_client(struct xen_dom *d, uint64_t session)
{
	struct tmemd_clients *reg = d->be->env.clients;
	struct xen_conn *c = d->conn;
	struct tmemd_domain_id id;
	struct xen_kept k;
	int rc;

	xen_park_twin(d);
	if (xen_take_kept_by_handle(d->be, d, &k) == 0) {
		xen_dom_id(d, &id);
		id.key = k.name;
		rc = tmemd_client_attach_domain(reg, &id, &k.ident, &c->client, &c->resumed);
		if (rc == 0) {
			c->ident = k.ident;
			return 0;
		}
		log_dom(TMEMD_LOG_WARNING, d->domid, "domain %u: cannot take back client %s: %s; it starts afresh",
			 d->domid, k.name, strerror(-rc));
	}
	rc = xen_claim_parked(d);
	if (rc == -ENOENT)
		rc = xen_claim_pulled(d, session);
	return rc == -ENOENT ? add_new_client(d) : rc;
}

/* Before Connected (man/tmem.7): the frontend takes its pools back only
 * when "session" is the one its pools were made under. */
static int publish_session(struct xen_dom *d)
{
	const struct tmemd_xs *xs = &d->be->xs;
	struct xen_conn *c = d->conn;
	char path[TMEMD_XS_PATH_MAX], v[32];
	int rc;

	snprintf(path, sizeof(path), "%s/session", d->be_path);
	snprintf(v, sizeof(v), "%016" PRIx64, xen_ident_nonce(&c->ident));
	rc = xs->ops->write(xs->h, TMEMD_XS_NO_TX, path, v);
	snprintf(path, sizeof(path), "%s/resumed-pools", d->be_path);
	snprintf(v, sizeof(v), "%#x", c->resumed ? c->client->owned_pools : 0u);
	return rc ?: xs->ops->write(xs->h, TMEMD_XS_NO_TX, path, v);
}

static int map_and_bind(struct xen_dom *d, const struct tmemd_xen_front *f,
			const char **why)
{
	const struct tmemd_hyp *hyp = &d->be->hyp;
	struct xen_conn *c = d->conn;
	int rc;

	rc = hyp->ops->map(hyp->h, d->domid, f->refs, f->nr_pages, &c->region);
	if (rc) {
		/* Bad refs, almost always; the errno says if not. */
		log_dom(TMEMD_LOG_DEBUG, d->domid, "domain %u: mapping %u grants: %s", d->domid,
			  f->nr_pages, strerror(-rc));
		*why = "cannot map its ring-ref grants";
		return -EFAULT;
	}
	c->nr_pages = f->nr_pages;
	if (tmemd_ring_check_fresh(c->region, f->nr_entries, f->nr_slots)) {
		*why = "ring header does not match xenstore";
		return -EPROTO;
	}
	rc = hyp->ops->bind(hyp->h, d->domid, f->port, &c->ch);
	if (rc) {
		log_dom(TMEMD_LOG_DEBUG, d->domid, "domain %u: binding port %u: %s", d->domid, f->port,
			  strerror(-rc));
		*why = "cannot bind its event-channel";
		return -EFAULT;
	}
	return 0;
}

int xen_conn_open(struct xen_dom *d, const char **why)
{
	struct tmemd_xen_front *f = malloc(sizeof(*f));
	struct xen_conn *c = calloc(1, sizeof(*c));
	int rc;

	d->conn = c;
	if (!f || !c) {
		*why = "out of memory";
		rc = -ENOMEM;
		goto out;
	}
	rc = tmemd_xen_read_front(&d->be->xs, d->fe_path, f, why);
	rc = rc ?: map_and_bind(d, f, why);
	if (rc)
		goto out;
	rc = add_client(d, f->session);
	if (rc) {
		*why = rc == -EINPROGRESS ? "its pages are on their way from a peer"
					  : "cannot register the client";
		goto out;
	}
	rc = publish_session(d);
	if (rc) {
		*why = "cannot write its session nodes";
		goto out;
	}
	c->ring.geo = (struct tmemd_slots){ .region = c->region,
					    .nr_entries = f->nr_entries,
					    .nr_slots = f->nr_slots };
	c->ring.client = c->client;
	c->ring.ops = &xen_ring_ops;
	c->ring.priv = d;
	c->ring.kick_fd = d->be->hyp.ops->evtchn_fd(c->ch);
	tmemd_ring_init(&c->ring);
	rc = tmemd_workers_attach(d->be->env.workers, &c->ring);
	if (rc) {
		*why = "cannot start serving the ring";
		goto out;
	}
	c->attached = true;
	log_dom(TMEMD_LOG_INFO, d->domid, "domain %u: client %s %s: %u entries, %u slots, %u pages",
		 d->domid, c->client->label,
		 c->resumed ? "reconnected with its pages" : "connected",
		 f->nr_entries, f->nr_slots, f->nr_pages);
out:
	free(f);
	if (rc)
		xen_conn_close(d);
	return rc;
}

/* A domain that ends for good takes its pages with it: say so when it
 * held persistent ones, which its guest can no longer have back. */
static void warn_lost(const struct xen_dom *d, const struct tmemd_client *cl)
{
	static const char *const why[] = { "powered off", "rebooted", "suspended",
					   "crashed", "stopped by its watchdog" };
	struct tmem_page_counts pc;

	store_client_page_counts(cl->sc, &pc);
	if (!pc.persistent || d->be->stopping)
		return;
	log_dom(TMEMD_LOG_WARNING, d->domid, "domain %u (%s): %s holding %llu persistent pages: freed",
		 d->domid, cl->label,
		 d->shutdown_reason >= 0 && d->shutdown_reason < 5 ?
		 why[d->shutdown_reason] :
		 d->released ? "destroyed" : "closed its tmem device",
		 (unsigned long long)pc.persistent);
}

static void conn_close(struct xen_dom *d, bool park)
{
	const struct tmemd_hyp *hyp = &d->be->hyp;
	struct xen_conn *c = d->conn;

	if (!c)
		return;
	if (c->attached)
		tmemd_workers_detach(d->be->env.workers, &c->ring);
	if (c->client)
		log_dom(TMEMD_LOG_INFO, d->domid, "domain %u: client %s disconnected after %llu requests",
			 d->domid, c->client->label,
			 (unsigned long long)c->ring.requests);
	if (c->client && park) {
		xen_park(d); /* takes c->client */
	} else if (c->client) {
		warn_lost(d, c->client);
		/* Frees the client's private pools (client_registry.h). */
		tmemd_client_remove(c->client);
	}
	hyp->ops->unbind(hyp->h, c->ch);
	if (c->region)
		hyp->ops->unmap(hyp->h, c->region, c->nr_pages);
	free(c);
	d->conn = NULL;
	__atomic_store_n(&d->faulted, 0, __ATOMIC_RELAXED);
}

void xen_conn_close(struct xen_dom *d)
{
	conn_close(d, false);
}

void xen_conn_close_park(struct xen_dom *d)
{
	conn_close(d, true);
}
