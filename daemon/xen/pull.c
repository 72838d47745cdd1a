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
 * The pull runs on a thread of its own, so the backend goes on serving
 * other domains' events meanwhile (and a pull of many pages cannot keep
 * the main loop from systemd's watchdog); the domain stays in InitWait.
 * When the thread ends it wakes the backend (fault_fd), which connects
 * the domain again, and this time claims what the pull brought.
 *
 * xl migrate unpauses the new domain before it destroys the suspended
 * one on the source, whose tmemd parks the pages only then: until it
 * does, the peer answers EAGAIN and the pull is tried again, for
 * XEN_PULL_WAIT_MS at most; so is a pull that could not reach a peer
 * (its tmemd restarting) and found the pages at no other.  A domain that dies while its pull runs
 * leaves the pages it brought parked here for its UUID.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "tmem_names.h"
#include "xen/backend_internal.h"

struct xen_pull {
	struct tmemd_clients *reg;
	int wake_fd;
	uint32_t domid;
	char key[TMEM_CLIENT_NAME_MAX];
	char label[TMEM_CLIENT_NAME_MAX];
	struct tmem_ident ident;
	pthread_t thread;
	int rc;
	uint64_t waited_ms;
	bool done;                   /* atomic: rc and waited_ms are set */
	bool stop;                   /* atomic: give up waiting */
	struct xen_pull *next;       /* be->orphan_pulls */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* How long before asking again after rc, or 0: not again. */
static long retry_pause_ns(int rc)
{
	if (rc == -EAGAIN)	/* the old domain is still there */
		return 100 * 1000 * 1000;
	if (rc == -EHOSTDOWN)	/* a peer down: its tmemd may be restarting */
		return 500 * 1000 * 1000;
	return 0;
}

static void *pull_thread(void *arg)
{
	struct xen_pull *p = arg;
	uint64_t one = 1, t0 = now_ms();
	struct timespec pause = { 0, 0 };
	int rc;

	for (;;) {
		rc = tmemd_clients_pull(p->reg, p->key, &p->ident);
		pause.tv_nsec = retry_pause_ns(rc);
		if (!pause.tv_nsec || now_ms() - t0 >= XEN_PULL_WAIT_MS ||
		    __atomic_load_n(&p->stop, __ATOMIC_RELAXED))
			break;
		nanosleep(&pause, NULL);
	}
	p->rc = rc;
	p->waited_ms = now_ms() - t0;
	__atomic_store_n(&p->done, true, __ATOMIC_RELEASE);
	if (write(p->wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is full: the backend is awake anyway. */
	}
	return NULL;
}

static int pull_start(struct xen_dom *d, uint64_t session)
{
	struct xen_pull *p = calloc(1, sizeof(*p));
	struct tmemd_domain_id id;
	int rc;

	if (!p)
		return -ENOMEM;
	p->reg = d->be->env.clients;
	p->wake_fd = d->be->fault_fd;
	p->domid = d->domid;
	xen_dom_id(d, &id);
	tmemd_domain_key(&id, p->key);
	snprintf(p->label, sizeof(p->label), "%s", d->name);
	xen_ident_with_nonce(d, session, &p->ident);
	rc = -pthread_create(&p->thread, NULL, pull_thread, p);
	if (rc) {
		free(p);
		return rc;
	}
	d->pull = p;
	log_dom(TMEMD_LOG_INFO, d->domid, "domain %u (%s) moved here with session %016" PRIx64
		": taking its pages parked as %s from a peer", d->domid, d->name, session, p->key);
	return 0;
}

bool xen_pull_done(const struct xen_dom *d)
{
	return d->pull && __atomic_load_n(&d->pull->done, __ATOMIC_ACQUIRE);
}

/* The ended pull's result into d->conn: 0, or -ENOENT (start afresh). */
static int pull_claim(struct xen_dom *d)
{
	struct tmemd_clients *reg = d->be->env.clients;
	struct xen_pull *p = d->pull;
	struct xen_conn *c = d->conn;
	struct tmemd_domain_id id;
	struct tmem_page_counts pc;
	int rc = p->rc;

	pthread_join(p->thread, NULL);
	d->pull = NULL;
	if (rc) {
		if (rc != -ENOENT)
			log_dom(TMEMD_LOG_ERR, d->domid, "domain %u: its pages parked as %s on a peer "
				"cannot be taken (%s after %" PRIu64 " ms); they stay there, and it "
				"starts afresh", d->domid, p->key, strerror(-rc), p->waited_ms);
		free(p);
		return -ENOENT;
	}
	xen_dom_id(d, &id);
	rc = tmemd_client_attach_domain(reg, &id, &p->ident, &c->client, &c->resumed);
	if (!rc) {
		c->ident = p->ident;
		store_client_page_counts(c->client->sc, &pc);
		log_dom(TMEMD_LOG_INFO, d->domid, "domain %u (%s): took %llu persistent pages "
			"parked as %s from a peer in %" PRIu64 " ms", d->domid, c->client->label,
			(unsigned long long)pc.persistent, p->key, p->waited_ms);
	}
	free(p);
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
	pthread_join(p->thread, NULL);
	if (!p->rc)
		xen_park_pulled(be, p->key, p->label, &p->ident);
	free(p);
}

void xen_pull_orphan(struct xen_dom *d)
{
	struct xen_pull *p = d->pull;

	if (!p)
		return;
	d->pull = NULL;
	__atomic_store_n(&p->stop, true, __ATOMIC_RELAXED);
	p->next = d->be->orphan_pulls;
	d->be->orphan_pulls = p;
}

void xen_pull_reap(struct tmemd_xen_backend *be, bool wait)
{
	struct xen_pull **pp = &be->orphan_pulls;

	while (*pp) {
		struct xen_pull *p = *pp;

		if (!wait && !__atomic_load_n(&p->done, __ATOMIC_ACQUIRE)) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		orphan_end(be, p);
	}
}
