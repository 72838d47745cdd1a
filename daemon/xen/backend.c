/* SPDX-License-Identifier: MIT */
/*
 * Domains and the XenbusState handshake (man/tmem.7).  Per domU:
 *
 *   introduced  -> write both directories, backend InitWait, watch the
 *                  frontend's state node
 *   fe Initialised (we InitWait) -> check, map, bind, register: Connected
 *   fe Closing   -> close the connection; Closing (the frontend then
 *                   goes Closed)
 *   fe Closed, or back to Initialising/InitWait while connected
 *                -> close the connection; InitWait (it may reconnect)
 *   garbage in its nodes or ring -> close; Closed; ignored until it dies
 *   connecting more often than xen/rate.h allows -> the connect waits
 *                (retry_fd) and happens then if still asked for
 *   released or dying -> close, unwatch, remove both directories
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "xen/backend_internal.h"

#define TOKEN_INTRO "tmemd:introduce"
#define TOKEN_RELEASE "tmemd:release"
#define TOKEN_FE "tmemd:fe:"
#define TOKEN_NAME "tmemd:name:"
#define TX_RETRIES 16
#define MAX_FAILURES 3

/* ---- xenstore helpers ---- */

static int xs_printf(struct tmemd_xen_backend *be, tmemd_xs_tx tx,
		     const char *dir, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int xs_printf(struct tmemd_xen_backend *be, tmemd_xs_tx tx,
		     const char *dir, const char *name, const char *fmt, ...)
{
	char path[TMEMD_XS_PATH_MAX], value[TMEMD_XS_PATH_MAX];
	va_list ap;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	return be->xs.ops->write(be->xs.h, tx, path, value);
}

static void set_state(struct xen_dom *d, enum tmemd_xenbus_state s)
{
	int rc = xs_printf(d->be, TMEMD_XS_NO_TX, d->be_path, "state", "%d", (int)s);

	if (rc)
		log_dom(TMEMD_LOG_WARNING, d->domid, "domain %u: cannot write backend state %d: %s",
			 d->domid, (int)s, strerror(-rc));
	d->be_state = (int)s;
}

/* The nodes of both directories, in one transaction (man/tmem.7): the
 * frontend must never see a device whose backend is not there yet. */
static int write_nodes(struct xen_dom *d, tmemd_xs_tx tx)
{
	struct tmemd_xen_backend *be = d->be;
	/* Backend dir: ours, the domU may read it.  Frontend dir: the
	 * domU's, we may read it (xenstore perms[0] = owner + others). */
	const struct tmemd_xs_perm be_perms[] = {
		{ .domid = be->self, .perms = TMEMD_XS_PERM_NONE },
		{ .domid = d->domid, .perms = TMEMD_XS_PERM_READ },
	};
	const struct tmemd_xs_perm fe_perms[] = {
		{ .domid = d->domid, .perms = TMEMD_XS_PERM_NONE },
		{ .domid = be->self, .perms = TMEMD_XS_PERM_READ },
	};
	char *old = NULL;
	int rc;

	rc = be->xs.ops->mkdir_perms(be->xs.h, tx, d->be_path, be_perms, 2);
	rc = rc ?: xs_printf(be, tx, d->be_path, "frontend", "%s", d->fe_path);
	rc = rc ?: xs_printf(be, tx, d->be_path, "frontend-id", "%u", d->domid);
	rc = rc ?: xs_printf(be, tx, d->be_path, "state", "%d", TMEMD_XB_INITWAIT);
	rc = rc ?: be->xs.ops->mkdir_perms(be->xs.h, tx, d->fe_path, fe_perms, 2);
	rc = rc ?: xs_printf(be, tx, d->fe_path, "backend", "%s", d->be_path);
	rc = rc ?: xs_printf(be, tx, d->fe_path, "backend-id", "%u", be->self);
	if (rc)
		return rc;
	/* A frontend left from an earlier tmemd keeps its state: it
	 * restarts the handshake when it sees InitWait. */
	rc = be->xs.ops->read(be->xs.h, tx, d->state_path, &old);
	free(old);
	if (rc == -ENOENT)
		rc = xs_printf(be, tx, d->fe_path, "state", "%d", TMEMD_XB_INITIALISING);
	return rc;
}

static int offer_device(struct xen_dom *d)
{
	const struct tmemd_xs *xs = &d->be->xs;
	tmemd_xs_tx tx;
	int rc = -EAGAIN;

	for (int i = 0; i < TX_RETRIES && rc == -EAGAIN; i++) {
		rc = xs->ops->tx_start(xs->h, &tx);
		if (rc)
			return rc;
		rc = write_nodes(d, tx);
		if (rc) {
			xs->ops->tx_end(xs->h, tx, true);
			return rc;
		}
		rc = xs->ops->tx_end(xs->h, tx, false);
	}
	if (!rc)
		d->be_state = TMEMD_XB_INITWAIT;
	return rc;
}

static void scan_domains(struct tmemd_xen_backend *be);

/* ---- one domain ---- */

static void cut_off(struct xen_dom *d, const char *why)
{
	log_dom(TMEMD_LOG_WARNING, d->domid, "domain %u: %s; cutting it off", d->domid, why);
	xen_conn_close(d);
	d->cut = true;
	set_state(d, TMEMD_XB_CLOSED);
}

static void connect_dom(struct xen_dom *d)
{
	const char *why = "unknown";
	int rc = xen_conn_open(d, &why);

	if (rc == -EINPROGRESS)
		return; /* in InitWait until the pull ends (pull.c) */
	if (rc && d->be->env.clients)
		tmemd_clients_count_refusal(d->be->env.clients, TMEMD_REFUSED_HANDSHAKE,
					    rc == -EFAULT ? -TMEM_EINVAL : rc);
	if (rc == -EINVAL || rc == -EPROTO || rc == -EFAULT || rc == -ENOENT) {
		cut_off(d, why);
		return;
	}
	if (rc) {
		/* Our trouble, not the guest's: it may try again (after it
		 * saw Closed and went Closed itself), a few times. */
		log_dom(TMEMD_LOG_ERR, d->domid, "domain %u: cannot connect: %s: %s", d->domid,
			why, strerror(-rc));
		if (++d->failures >= MAX_FAILURES)
			d->cut = true;
		set_state(d, TMEMD_XB_CLOSED);
		return;
	}
	d->failures = 0;
	set_state(d, TMEMD_XB_CONNECTED);
}

/* Arms retry_fd for the earliest deferred connect, or disarms it. */
static void arm_retry(struct tmemd_xen_backend *be)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	uint64_t first = 0;

	for (struct xen_dom *d = be->doms; d; d = d->next)
		if (d->retry_at && (!first || d->retry_at < first))
			first = d->retry_at;
	its.it_value.tv_sec = (time_t)(first / 1000000000u);
	its.it_value.tv_nsec = (long)(first % 1000000000u);
	if (timerfd_settime(be->retry_fd, TFD_TIMER_ABSTIME, &its, NULL))
		log_err("xen: reconnect timer: %m; deferred connects wait for the next event");
}

/* A connect now would be within the rate; else it is deferred. */
static bool may_connect(struct xen_dom *d)
{
	uint64_t now = tmemd_now_ns(), wait = xen_rate_take(&d->rate, now);

	if (!wait)
		return true;
	log_dom(TMEMD_LOG_WARNING, d->domid, "domain %u: reconnecting more often than %u times a second; "
		 "next connect in %llu ms", d->domid,
		 (unsigned)(1000000000ull / XEN_RECONNECT_INTERVAL_NS),
		 (unsigned long long)(wait / 1000000u));
	d->retry_at = now + wait;
	arm_retry(d->be);
	return false;
}

static void frontend_changed(struct xen_dom *d);

/* Deferred connects whose time has come: looks at each frontend again.
 * One at a time from the head, as frontend_changed() may free domains. */
static void run_retries(struct tmemd_xen_backend *be)
{
	uint64_t expirations, now = tmemd_now_ns();
	struct xen_dom *d;

	if (read(be->retry_fd, &expirations, sizeof(expirations)) < 0) {
		/* EAGAIN: not fired; due ones are still looked at below. */
	}
	do {
		for (d = be->doms; d && !(d->retry_at && d->retry_at <= now); d = d->next)
			;
		if (d) {
			d->retry_at = 0;
			frontend_changed(d);
		}
	} while (d);
	arm_retry(be);
}

/* The frontend's state node changed (or the watch was just set). */
static void frontend_changed(struct xen_dom *d)
{
	enum tmemd_xenbus_state fe;
	int rc;

	if (d->cut)
		return;
	rc = tmemd_xen_read_state(&d->be->xs, d->fe_path, &fe);
	if (rc == -ENOENT) {
		/* Removed: by the toolstack destroying the domain (then
		 * @releaseDomain may come late, after our mapping kept it a
		 * zombie), or by the guest itself.  Ask the hypervisor. */
		scan_domains(d->be); /* may free d */
		return;
	}
	if (rc) {
		cut_off(d, "frontend state is not a XenbusState");
		return;
	}
	switch (fe) {
	case TMEMD_XB_INITIALISED:
		if (!d->conn && d->be_state == TMEMD_XB_INITWAIT && !d->retry_at &&
		    may_connect(d))
			connect_dom(d);
		break;
	case TMEMD_XB_CLOSING:
		xen_conn_close(d);
		if (d->be_state == TMEMD_XB_CONNECTED)
			set_state(d, TMEMD_XB_CLOSING);
		break;
	case TMEMD_XB_CLOSED:
	case TMEMD_XB_INITIALISING:
	case TMEMD_XB_UNKNOWN:
		xen_conn_close(d);
		if (d->be_state != TMEMD_XB_INITWAIT)
			set_state(d, TMEMD_XB_INITWAIT);
		break;
	default: /* InitWait, Connected, Reconfiguring: nothing to do */
		break;
	}
}

static void dom_free(struct xen_dom *d)
{
	struct tmemd_xen_backend *be = d->be;

	xen_conn_close(d);
	xen_pull_orphan(d);
	if (d->watching)
		be->xs.ops->unwatch(be->xs.h, d->state_path, d->token);
	if (d->watching_name)
		be->xs.ops->unwatch(be->xs.h, d->name_path, d->name_token);
	free(d);
}

/* The domain is gone: its directories go with it.  One that shut down
 * for a suspend goes on elsewhere (xl save, xl migrate): its pages are
 * parked for it (park.c); any other end frees them. */
static void dom_release(struct xen_dom *d)
{
	struct tmemd_xen_backend *be = d->be;
	char parent[TMEMD_XEN_DIR_MAX];

	log_dom(TMEMD_LOG_INFO, d->domid, "domain %u released", d->domid);
	d->released = true;
	if (d->shutdown_reason == TMEMD_XEN_SHUTDOWN_SUSPEND)
		xen_conn_close_park(d);
	else
		xen_conn_close(d);
	be->xs.ops->rm(be->xs.h, TMEMD_XS_NO_TX, d->fe_path);
	/* backend/tmem/<domid>, the directory above .../0 */
	snprintf(parent, sizeof(parent), "%s", d->be_path);
	*strrchr(parent, '/') = '\0';
	be->xs.ops->rm(be->xs.h, TMEMD_XS_NO_TX, parent);
	dom_free(d);
}

static struct xen_dom *dom_find(struct tmemd_xen_backend *be, uint32_t domid)
{
	for (struct xen_dom *d = be->doms; d; d = d->next)
		if (d->domid == domid)
			return d;
	return NULL;
}

static void dom_unlink(struct tmemd_xen_backend *be, struct xen_dom *d)
{
	for (struct xen_dom **pp = &be->doms; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			return;
		}
	}
}

/* /local/domain/N/name, when it is usable as a client name. */
static void read_name(struct tmemd_xen_backend *be, uint32_t domid,
		      char out[TMEM_CLIENT_NAME_MAX])
{
	char path[TMEMD_XS_PATH_MAX], *v = NULL;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	if (be->xs.ops->read(be->xs.h, TMEMD_XS_NO_TX, path, &v))
		return;
	if (!tmemd_check_client_name(v))
		snprintf(out, TMEM_CLIENT_NAME_MAX, "%s", v);
	free(v);
}

/* The toolstack renamed the domain (xl rename, or a migration's
 * "--incoming" name dropped): its client's label and settings follow. */
static void name_changed(struct xen_dom *d)
{
	char name[TMEM_CLIENT_NAME_MAX];

	read_name(d->be, d->domid, name);
	/* Gone (the toolstack tears the domain's directory down as it
	 * destroys it) or unusable: keep the name it had. */
	if (!name[0] || !strcmp(name, d->name))
		return;
	log_info("domain %u: renamed from %s to %s", d->domid, d->name[0] ? d->name : "?",
		 name[0] ? name : "?");
	memcpy(d->name, name, sizeof(name));
	if (d->conn && d->conn->client)
		tmemd_client_relabel(d->conn->client, name);
}

/* The allow-list in force: tmemd.conf's xen-domains, re-parsed when a
 * reload changed it; a bad new value keeps the old list. */
static const struct tmemd_xen_allow *allow_list(struct tmemd_xen_backend *be)
{
	const char *spec = be->env.cfg ? be->env.cfg->xen_domains : "";
	const char *why = NULL;
	struct tmemd_xen_allow next;

	if (!strcmp(spec, be->allow_spec))
		return &be->allow;
	snprintf(be->allow_spec, sizeof(be->allow_spec), "%s", spec);
	if (tmemd_xen_allow_parse(spec, &next, &why))
		log_err("xen-domains = %s: %s; keeping the previous list", spec, why);
	else
		be->allow = next;
	return &be->allow;
}

/* At start a bad list stops tmemd rather than admitting every domain. */
static int init_allow(struct tmemd_xen_backend *be)
{
	const char *spec = be->env.cfg ? be->env.cfg->xen_domains : "";
	const char *why = NULL;

	if (tmemd_xen_allow_parse(spec, &be->allow, &why)) {
		log_err("xen-domains = %s: %s", spec, why);
		return -EINVAL;
	}
	snprintf(be->allow_spec, sizeof(be->allow_spec), "%s", spec);
	return 0;
}

static int dom_add(struct tmemd_xen_backend *be, const struct tmemd_xen_dominfo *info)
{
	uint32_t domid = info->domid;
	struct xen_dom *d;
	char name[TMEM_CLIENT_NAME_MAX];
	int rc;

	read_name(be, domid, name);
	if (!tmemd_xen_allow_match(allow_list(be), domid, name))
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->be = be;
	d->domid = domid;
	memcpy(d->handle, info->handle, sizeof(d->handle));
	d->be_state = -1;
	memcpy(d->name, name, sizeof(name));
	snprintf(d->fe_path, sizeof(d->fe_path), "/local/domain/%u/device/tmem/0", domid);
	snprintf(d->be_path, sizeof(d->be_path), "/local/domain/%u/backend/tmem/%u/0",
		 be->self, domid);
	snprintf(d->state_path, sizeof(d->state_path), "%s/state", d->fe_path);
	snprintf(d->token, sizeof(d->token), TOKEN_FE "%u", domid);
	snprintf(d->name_path, sizeof(d->name_path), "/local/domain/%u/name", domid);
	snprintf(d->name_token, sizeof(d->name_token), TOKEN_NAME "%u", domid);
	d->shutdown_reason = info->shutdown ? (int)info->shutdown_reason : -1;
	d->next = be->doms;
	be->doms = d;
	rc = offer_device(d);
	if (!rc) {
		rc = be->xs.ops->watch(be->xs.h, d->state_path, d->token);
		d->watching = !rc;
	}
	if (!rc) {
		rc = be->xs.ops->watch(be->xs.h, d->name_path, d->name_token);
		d->watching_name = !rc;
	}
	if (rc) {
		log_dom(TMEMD_LOG_ERR, domid, "domain %u: cannot offer it a tmem device: %s", domid,
			strerror(-rc));
		dom_unlink(be, d);
		dom_free(d);
		return rc;
	}
	log_dom(TMEMD_LOG_INFO, domid, "domain %u (%s): tmem device offered", domid, name[0] ? name : "?");
	return 0;
}

static const struct tmemd_xen_dominfo *find_info(const struct tmemd_xen_dominfo *info,
						 int n, uint32_t domid)
{
	for (int i = 0; i < n; i++)
		if (info[i].domid == domid)
			return &info[i];
	return NULL;
}

/* Both domain watches land here: drop the dead, offer the new. */
static void scan_domains(struct tmemd_xen_backend *be)
{
	struct tmemd_xen_dominfo *info = calloc(TMEMD_XEN_MAX_DOMAINS, sizeof(*info));
	int n = info ? be->hyp.ops->list_domains(be->hyp.h, info, TMEMD_XEN_MAX_DOMAINS)
		     : -ENOMEM;

	if (n < 0) {
		log_err("cannot list domains: %s", strerror(-n));
		free(info);
		return;
	}
	for (struct xen_dom *d = be->doms, *next; d; d = next) {
		const struct tmemd_xen_dominfo *di = find_info(info, n, d->domid);

		next = d->next;
		/* Gone without a trace keeps the reason last seen. */
		if (di)
			d->shutdown_reason = di->shutdown ? (int)di->shutdown_reason : -1;
		if (!di || di->dying) {
			dom_unlink(be, d);
			dom_release(d);
		}
	}
	for (int i = 0; i < n; i++) {
		if (info[i].domid == be->self || info[i].dying ||
		    info[i].domid > TMEMD_XEN_DOMID_MAX ||
		    dom_find(be, info[i].domid))
			continue;
		dom_add(be, &info[i]); /* logs its own failure */
	}
	free(info);
}

/* ---- events ---- */

static void on_watch(struct tmemd_xen_backend *be, const char *path,
		     const char *token)
{
	uint32_t domid;
	struct xen_dom *d;

	if (!strcmp(token, TOKEN_INTRO) || !strcmp(token, TOKEN_RELEASE)) {
		scan_domains(be);
		return;
	}
	if (!strcmp(token, XEN_TOKEN_BALLOON)) {
		xen_balloon_target_changed(be);
		return;
	}
	if (!strncmp(token, TOKEN_NAME, strlen(TOKEN_NAME))) {
		if (!tmemd_xen_parse_u32(token + strlen(TOKEN_NAME), UINT32_MAX, &domid) &&
		    (d = dom_find(be, domid)))
			name_changed(d);
		return;
	}
	if (strncmp(token, TOKEN_FE, strlen(TOKEN_FE)) ||
	    tmemd_xen_parse_u32(token + strlen(TOKEN_FE), UINT32_MAX, &domid))
		return;
	d = dom_find(be, domid);
	if (d && !strcmp(path, d->state_path))
		frontend_changed(d);
}

/* Pulls that ended (pull.c): their domains connect again and claim
 * what came.  One at a time from the head: frontend_changed() may free
 * a domain. */
static void end_pulls(struct tmemd_xen_backend *be)
{
	struct xen_dom *d;

	do {
		for (d = be->doms; d && !xen_pull_done(d); d = d->next)
			;
		if (d && d->be_state == TMEMD_XB_INITWAIT && !d->cut) {
			frontend_changed(d);
			if (xen_pull_done(d)) /* not connected again: drop it */
				xen_pull_orphan(d);
		} else if (d) {
			xen_pull_orphan(d);
		}
	} while (d);
	xen_pull_reap(be, false);
}

static void handle_faults(struct tmemd_xen_backend *be)
{
	uint64_t v;

	if (read(be->fault_fd, &v, sizeof(v)) < 0)
		return; /* EAGAIN: nothing new */
	for (struct xen_dom *d = be->doms; d; d = d->next)
		if (d->conn && __atomic_load_n(&d->faulted, __ATOMIC_ACQUIRE))
			cut_off(d, d->conn->fault_why);
	end_pulls(be);
}

void tmemd_xen_backend_poll(struct tmemd_xen_backend *be)
{
	char path[TMEMD_XS_PATH_MAX], token[TMEMD_XS_TOKEN_MAX];
	int rc;

	while ((rc = be->xs.ops->read_watch(be->xs.h, path, token)) > 0)
		on_watch(be, path, token);
	if (rc < 0)
		log_err("reading xenstore watches: %s", strerror(-rc));
	handle_faults(be);
	run_retries(be);
	xen_expire_parked(be);
}

static void on_fd(struct tmemd_watch *w, uint32_t events)
{
	(void)events;
	tmemd_xen_backend_poll(w->data);
}

int tmemd_xen_backend_state(struct tmemd_xen_backend *be, uint32_t domid)
{
	struct xen_dom *d = dom_find(be, domid);

	return d ? d->be_state : -ENOENT;
}

/* ---- life ---- */

static int watch_domains(struct tmemd_xen_backend *be)
{
	int rc = be->xs.ops->watch(be->xs.h, "@introduceDomain", TOKEN_INTRO);

	if (rc)
		return rc;
	rc = be->xs.ops->watch(be->xs.h, "@releaseDomain", TOKEN_RELEASE);
	if (rc) {
		be->xs.ops->unwatch(be->xs.h, "@introduceDomain", TOKEN_INTRO);
		return rc;
	}
	be->watching = true;
	return 0;
}

static int add_to_loop(struct tmemd_xen_backend *be)
{
	int rc;

	be->xs_w = (struct tmemd_watch){ .fd = be->xs.ops->fd(be->xs.h),
					 .fn = on_fd, .data = be };
	be->fault_w = (struct tmemd_watch){ .fd = be->fault_fd, .fn = on_fd,
					    .data = be };
	be->retry_w = (struct tmemd_watch){ .fd = be->retry_fd, .fn = on_fd,
					    .data = be };
	be->park_w = (struct tmemd_watch){ .fd = be->park_fd, .fn = on_fd, .data = be };
	rc = tmemd_loop_add(be->env.loop, &be->xs_w, EPOLLIN);
	if (rc)
		return rc;
	rc = tmemd_loop_add(be->env.loop, &be->fault_w, EPOLLIN);
	rc = rc ?: tmemd_loop_add(be->env.loop, &be->retry_w, EPOLLIN);
	if (!rc && (rc = tmemd_loop_add(be->env.loop, &be->park_w, EPOLLIN)))
		tmemd_loop_del(be->env.loop, &be->retry_w);
	if (rc) {
		tmemd_loop_del(be->env.loop, &be->fault_w);
		tmemd_loop_del(be->env.loop, &be->xs_w);
		return rc;
	}
	be->in_loop = true;
	return 0;
}

int tmemd_xen_backend_create(const struct tmemd_env *env, struct tmemd_xs xs,
			     struct tmemd_hyp hyp, uint32_t self_domid,
			     struct tmemd_xen_backend **out)
{
	struct tmemd_xen_backend *be = calloc(1, sizeof(*be));
	int rc;

	if (!be) {
		xs.ops->close(xs.h);
		hyp.ops->close(hyp.h);
		log_err("xen backend: out of memory");
		return -ENOMEM;
	}
	be->env = *env;
	be->xs = xs;
	be->hyp = hyp;
	be->self = self_domid;
	be->fault_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	be->retry_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	be->park_fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	rc = init_allow(be); /* logs */
	if (!rc) {
		rc = be->fault_fd < 0 || be->retry_fd < 0 || be->park_fd < 0 ? -errno : 0;
		rc = rc ?: watch_domains(be);
		if (!rc && env->loop)
			rc = add_to_loop(be);
		if (rc)
			log_err("xen backend: cannot watch the xenstore: %s",
				strerror(-rc));
	}
	if (rc) {
		tmemd_xen_backend_destroy(be);
		return rc;
	}
	xen_sort_previous_domains(be);
	scan_domains(be);
	(void)xen_balloon_start(be); /* logs; the pool then follows dom0 alone */
	*out = be;
	return 0;
}

void tmemd_xen_backend_destroy(struct tmemd_xen_backend *be)
{
	if (!be)
		return;
	be->stopping = true;
	xen_balloon_stop(be);
	while (be->doms) {
		struct xen_dom *d = be->doms;

		be->doms = d->next;
		xen_conn_close(d);
		/* The frontend stops using its ring and waits for us. */
		if (!d->cut)
			set_state(d, TMEMD_XB_CLOSED);
		dom_free(d);
	}
	xen_pull_reap(be, true);
	if (be->in_loop) {
		tmemd_loop_del(be->env.loop, &be->xs_w);
		tmemd_loop_del(be->env.loop, &be->fault_w);
		tmemd_loop_del(be->env.loop, &be->retry_w);
		tmemd_loop_del(be->env.loop, &be->park_w);
	}
	if (be->watching) {
		be->xs.ops->unwatch(be->xs.h, "@introduceDomain", TOKEN_INTRO);
		be->xs.ops->unwatch(be->xs.h, "@releaseDomain", TOKEN_RELEASE);
	}
	if (be->fault_fd >= 0)
		close(be->fault_fd);
	if (be->retry_fd >= 0)
		close(be->retry_fd);
	if (be->park_fd >= 0)
		close(be->park_fd);
	be->xs.ops->close(be->xs.h);
	be->hyp.ops->close(be->hyp.h);
	free(be->kept);
	free(be);
}
