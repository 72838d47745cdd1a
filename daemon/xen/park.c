/* SPDX-License-Identifier: MIT */
/*
 * Save, restore and migration (man/tmemd.8).  xl save and xl migrate end
 * a domain after it shut down for a suspend, and the guest goes on in a
 * new domain (a new domid, the same handle) here or elsewhere.  When such
 * a domain is let go, or its successor with the same handle connects
 * first (a migration to this host), its client is parked: the persistent
 * pools stay in the store, detached under the key uuid:U, and the next
 * domain with that handle claims them, ids, pages and session, so its
 * frontend takes them back as after a tmemd restart.  A domain that ends
 * for any other reason is freed at once.
 *
 * A parked client must survive a tmemd restart, and a restart must still
 * free the client of a domain that ended for good while tmemd was down,
 * so which detached clients are parked is written down outside the
 * process, before the client is detached: a marker node per handle under
 * XEN_PARKED_DIR in the xenstore (dom0's, kept across tmemd restarts,
 * readable by tools), "<parked-at seconds> <label>".  A marker without a
 * detached client behind it means nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "tmem_names.h"
#include "xen/backend_internal.h"

static uint64_t wall_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec;
}

/* The marker's path for key (uuid:U only): 0, or -EINVAL. */
static int marker_path(const char *key, char path[TMEMD_XS_PATH_MAX])
{
	if (strncmp(key, TMEM_UUID_PREFIX, TMEM_UUID_PREFIX_LEN))
		return -EINVAL;
	snprintf(path, TMEMD_XS_PATH_MAX, XEN_PARKED_DIR "/%s", key + TMEM_UUID_PREFIX_LEN);
	return 0;
}

static int marker_write(struct tmemd_xen_backend *be, const char *key, uint64_t at,
			const char *label)
{
	char path[TMEMD_XS_PATH_MAX], value[TMEM_CLIENT_NAME_MAX + 24];

	if (marker_path(key, path))
		return -EINVAL;
	snprintf(value, sizeof(value), "%" PRIu64 " %s", at, label);
	return be->xs.ops->write(be->xs.h, TMEMD_XS_NO_TX, path, value);
}

static void marker_remove(struct tmemd_xen_backend *be, const char *key)
{
	char path[TMEMD_XS_PATH_MAX];

	if (!marker_path(key, path))
		be->xs.ops->rm(be->xs.h, TMEMD_XS_NO_TX, path);
}

static unsigned max_age(const struct tmemd_xen_backend *be)
{
	return be->env.cfg ? be->env.cfg->parked_max_age_sec : TMEMD_DEFAULT_PARKED_MAX_AGE;
}

void xen_park(struct xen_dom *d)
{
	struct tmemd_xen_backend *be = d->be;
	struct tmemd_client *cl = d->conn->client;
	char key[TMEM_CLIENT_NAME_MAX];
	uint64_t now = wall_sec();
	struct tmemd_parked p;
	int rc;

	d->conn->client = NULL;
	if (!xen_handle_known(d->handle) ||
	    strncmp(cl->name, TMEM_UUID_PREFIX, TMEM_UUID_PREFIX_LEN)) {
		log_warn("domain %u (%s) suspended, but has no UUID to be known by "
			 "when restored: its pages are freed", d->domid, cl->label);
		tmemd_client_remove(cl);
		return;
	}
	snprintf(key, sizeof(key), "%s", cl->name);
	/* The marker first: a kill between the two leaves a detached
	 * client with a marker, which the next start keeps parked. */
	rc = marker_write(be, key, now, cl->label);
	if (rc)
		log_warn("domain %u (%s): cannot mark its pages parked in the xenstore "
			 "(%s): a tmemd restart before its restore would free them",
			 d->domid, cl->label, strerror(-rc));
	rc = tmemd_client_park(cl, now, &p); /* takes cl */
	if (rc) {
		if (rc == -ENOENT)
			log_info("domain %u suspended with no persistent pool: nothing parked",
				 d->domid);
		else
			log_err("domain %u: cannot park its pages: %s; they are freed",
				d->domid, strerror(-rc));
		marker_remove(be, key);
		return;
	}
	log_info("domain %u (%s) suspended: %" PRIu64 " persistent pages in %u pools "
		 "parked as %s for its restore (kept up to %u s)", d->domid, p.label,
		 p.pages, p.pools, p.key, max_age(be));
	xen_arm_park_timer(be);
}

void xen_park_pulled(struct tmemd_xen_backend *be, const char *key, const char *label,
		     const struct tmem_ident *ident)
{
	uint64_t now = wall_sec();
	int rc = marker_write(be, key, now, label);

	if (rc)
		log_warn("xen: cannot mark %s parked in the xenstore (%s): a tmemd restart "
			 "before its restore would free it", key, strerror(-rc));
	rc = tmemd_clients_note_parked(be->env.clients, key, label, ident, now);
	if (rc) {
		log_err("xen: the pages taken for %s cannot be parked (%s): freed", key,
			strerror(-rc));
		store_drop_detached(tmemd_clients_store(be->env.clients), key);
		marker_remove(be, key);
		return;
	}
	log_info("xen: the domain %s was taken for went away: its pages are parked here",
		 key);
	xen_arm_park_timer(be);
}

static unsigned popcount32(uint32_t v)
{
	return (unsigned)__builtin_popcount(v);
}

int xen_claim_parked(struct xen_dom *d)
{
	struct tmemd_xen_backend *be = d->be;
	struct tmemd_clients *reg = be->env.clients;
	struct xen_conn *c = d->conn;
	char key[TMEM_CLIENT_NAME_MAX];
	struct tmemd_domain_id id;
	struct tmem_page_counts pc;
	struct tmemd_parked p;
	int rc;

	if (!xen_handle_known(d->handle))
		return -ENOENT;
	xen_dom_id(d, &id);
	tmemd_domain_key(&id, key);
	if (tmemd_clients_unpark(reg, key, &p)) {
		/* Left by pages a peer took (daemon/migrate/): nothing is
		 * parked under it now. */
		marker_remove(be, key);
		return -ENOENT;
	}
	rc = tmemd_client_attach_domain(reg, &id, &p.ident, &c->client, &c->resumed);
	if (rc) {
		/* Ours to retry: the frontend connects again, and finds it. */
		tmemd_clients_note_parked(reg, p.key, p.label, &p.ident, p.parked_at);
		log_err("domain %u: cannot claim the pages parked as %s: %s",
			d->domid, key, strerror(-rc));
		return rc;
	}
	c->ident = p.ident;
	marker_remove(be, key);
	tmemd_clients_claimed(reg, key); /* parked again after a pull gave up */
	xen_arm_park_timer(be);
	if (!c->resumed) {
		log_warn("domain %u (%s): the pages parked as %s are gone; it starts afresh",
			 d->domid, c->client->label, key);
		return 0;
	}
	store_client_page_counts(c->client->sc, &pc);
	tmemd_clients_count_claimed(reg, popcount32(c->client->owned_pools), pc.persistent);
	log_info("domain %u (%s): claimed %llu persistent pages in %u pools parked as %s "
		 "%llu s ago by domain %s", d->domid, c->client->label,
		 (unsigned long long)pc.persistent, popcount32(c->client->owned_pools), key,
		 (unsigned long long)(wall_sec() - p.parked_at), p.label);
	return 0;
}

/* The shutdown state of domid now: its reason, -1 running, -2 gone. */
static int shutdown_now(struct tmemd_xen_backend *be, uint32_t domid)
{
	struct tmemd_xen_dominfo *info = calloc(TMEMD_XEN_MAX_DOMAINS, sizeof(*info));
	int n = info ? be->hyp.ops->list_domains(be->hyp.h, info, TMEMD_XEN_MAX_DOMAINS)
		     : -ENOMEM;
	int rc = -2;

	for (int i = 0; i < n; i++)
		if (info[i].domid == domid)
			rc = info[i].shutdown ? (int)info[i].shutdown_reason : -1;
	if (n < 0)
		rc = -1; /* unknown: take it as running, share nothing */
	free(info);
	return rc;
}

void xen_park_twin(struct xen_dom *d)
{
	if (!xen_handle_known(d->handle))
		return;
	for (struct xen_dom *e = d->be->doms; e; e = e->next) {
		int why;

		if (e == d || !e->conn || !e->conn->client ||
		    memcmp(e->handle, d->handle, TMEMD_XEN_HANDLE_LEN))
			continue;
		why = shutdown_now(d->be, e->domid);
		if (why >= 0)
			e->shutdown_reason = why;
		if (why == TMEMD_XEN_SHUTDOWN_SUSPEND || why == -2) {
			log_info("domain %u (%s) connects with the UUID of domain %u, which "
				 "suspended: a migration here", d->domid,
				 d->name[0] ? d->name : "?", e->domid);
			xen_conn_close_park(e);
		} else {
			log_warn("domain %u has the UUID of running domain %u: "
				 "it cannot have that domain's pages", d->domid, e->domid);
		}
	}
}

int xen_note_parked_at_start(struct tmemd_xen_backend *be, const char *key,
			     const struct tmem_ident *ident)
{
	char path[TMEMD_XS_PATH_MAX], label[TMEM_CLIENT_NAME_MAX], *v = NULL;
	unsigned long long at;
	int rc;

	/* Lent to a peer, or parked again after one gave up: the migrate
	 * module recovered it before any transport started. */
	if (tmemd_clients_held(be->env.clients, key) ||
	    tmemd_clients_is_parked(be->env.clients, key))
		return 1;
	if (marker_path(key, path) || be->xs.ops->read(be->xs.h, TMEMD_XS_NO_TX, path, &v))
		return 0;
	label[0] = '\0';
	rc = sscanf(v, "%llu %63[A-Za-z0-9._:-]", &at, label) >= 1;
	free(v);
	if (!rc) {
		log_warn("xen: %s: not a parked marker; freeing %s", path, key);
		return 0;
	}
	if (tmemd_clients_note_parked(be->env.clients, key, label, ident, at))
		return 0;
	xen_arm_park_timer(be);
	return 1;
}

static void gone(void *ctx, const struct tmemd_parked *p)
{
	struct tmemd_xen_backend *be = ctx;

	marker_remove(be, p->key);
	log_warn("xen: the pages parked as %s (%s) %llu s ago were not claimed: "
		 "%llu persistent pages freed", p->key, p->label,
		 (unsigned long long)(wall_sec() - p->parked_at),
		 (unsigned long long)p->pages);
}

void xen_expire_parked(struct tmemd_xen_backend *be)
{
	uint64_t expirations;

	if (read(be->park_fd, &expirations, sizeof(expirations)) < 0) {
		/* EAGAIN: not fired */
	}
	tmemd_clients_expire_parked(be->env.clients, wall_sec(), max_age(be), gone, be);
	xen_arm_park_timer(be);
}

void xen_arm_park_timer(struct tmemd_xen_backend *be)
{
	uint64_t oldest = tmemd_clients_oldest_parked(be->env.clients);
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (be->park_fd < 0)
		return;
	if (oldest)
		its.it_value.tv_sec = (time_t)(oldest + max_age(be) + 1);
	if (timerfd_settime(be->park_fd, TFD_TIMER_ABSTIME, &its, NULL))
		log_err("xen: parked-max-age timer: %m");
}
