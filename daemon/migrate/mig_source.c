/* SPDX-License-Identifier: MIT */
/*
 * The source side: serves authenticated peers on its own thread, one
 * link at a time (a migration is rare and each is bulk; a second peer
 * waits in the listen backlog).  A PULL for a parked client with the
 * right identity lends it: it leaves the parked list (no local claim,
 * no expiry), its marker says "lent XFER PEER", and it stays lent, in
 * doubt, until that peer says RELEASE XFER (free it) or ABORT XFER
 * (park it again), on this link or a later one (man/tmem.7).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "migrate/mig_files.h"
#include "migrate/mig_internal.h"
#include "migrate/mig_wire.h"
#include "tmem_names.h"

/* m->lock held. */
static struct mig_lent *do_lent_find(struct tmemd_migrate *m, const char *name,
				     const uint8_t *xfer)
{
	for (unsigned i = 0; i < m->nr_lent; i++)
		if ((name && !strcmp(m->lent[i].name, name)) ||
		    (xfer && !memcmp(m->lent[i].xfer, xfer, TMEM_MIG_XFER_LEN)))
			return &m->lent[i];
	return NULL;
}

static void do_lent_del(struct tmemd_migrate *m, struct mig_lent *l)
{
	*l = m->lent[--m->nr_lent];
}

static void marker_write(struct tmemd_migrate *m, const struct tmemd_parked *p,
			 const struct mig_lent *lent)
{
	char text[256], hex[2 * TMEM_MIG_XFER_LEN + 1];
	int rc;

	if (lent) {
		mig_hex(lent->xfer, TMEM_MIG_XFER_LEN, hex);
		snprintf(text, sizeof(text), "%" PRIu64 " %s lent %s %s\n", p->parked_at,
			 p->label[0] ? p->label : "-", hex, lent->peer);
	} else {
		snprintf(text, sizeof(text), "%" PRIu64 " %s\n", p->parked_at,
			 p->label[0] ? p->label : "-");
	}
	rc = mig_file_write(m->parked_dir, p->key, text);
	if (rc)
		log_err("migrate: cannot write %s/%s: %s; a restart would free %s",
			m->parked_dir, p->key, strerror(-rc), p->key);
}

static void released_write(struct tmemd_migrate *m, const struct tmemd_parked *p)
{
	char text[160];

	snprintf(text, sizeof(text), "%" PRIu64 " %s released\n", p->parked_at,
		 p->label[0] ? p->label : "-");
	if (mig_file_write(m->parked_dir, p->key, text))
		log_err("migrate: cannot write %s/%s", m->parked_dir, p->key);
}

static void count_refused(struct tmemd_migrate *m)
{
	pthread_mutex_lock(&m->lock);
	m->stats.refused++;
	pthread_mutex_unlock(&m->lock);
}

/*
 * Whether a domain is still connected here under name: xl migrate lets
 * the destination's domain run before it destroys the suspended one
 * here, which parks it (daemon/xen/park.c); the peer asks again.
 */
static bool still_here(struct tmemd_migrate *m, const char *name)
{
	return !strncmp(name, TMEM_UUID_PREFIX, TMEM_UUID_PREFIX_LEN) &&
	       tmemd_clients_find(m->reg, name) != NULL;
}

/*
 * Lends name to peer: the parked entry (or the one lent to this same
 * peer, which gave up on it by asking again) becomes lent under a new
 * xfer.  0 and *out, or -ENOENT, -EAGAIN (not parked yet), -EPERM
 * (another identity or guest), -EBUSY.
 */
static int lend(struct tmemd_migrate *m, const char *peer, const char *name,
		const struct tmem_ident *ident, struct mig_lent *out)
{
	struct mig_lent *l;
	struct tmemd_parked p;
	int rc = 0;

	pthread_mutex_lock(&m->lock);
	l = do_lent_find(m, name, NULL);
	if (l && strcmp(l->peer, peer))
		rc = -EBUSY;
	else if (l)
		p = l->parked;
	else if (tmemd_clients_parked(m->reg, name, &p))
		rc = still_here(m, name) ? -EAGAIN : -ENOENT;
	if (!rc && !tmemd_ident_same_guest(&p.ident, ident))
		rc = -EPERM;
	if (!rc && !l && (m->nr_lent == MIG_MAX_LENT || tmemd_clients_unpark(m->reg, name, &p)))
		rc = -EBUSY;
	if (!rc) {
		if (!l)
			l = &m->lent[m->nr_lent++];
		memset(l, 0, sizeof(*l));
		snprintf(l->name, sizeof(l->name), "%s", name);
		snprintf(l->peer, sizeof(l->peer), "%s", peer);
		l->parked = p;
		if (getrandom(l->xfer, sizeof(l->xfer), 0) != (ssize_t)sizeof(l->xfer))
			l->xfer[0] ^= 1; /* never: getrandom of 16 bytes does not fail */
		/* Durable before the offer: a restart keeps it lent. */
		marker_write(m, &p, l);
		*out = *l;
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

/* Takes the lend xfer off the list, if peer (NULL: any) holds it. */
static bool unlend(struct tmemd_migrate *m, const uint8_t *xfer, const char *peer,
		   struct mig_lent *out)
{
	struct mig_lent *l;

	pthread_mutex_lock(&m->lock);
	l = do_lent_find(m, NULL, xfer);
	if (l && (!peer || !strcmp(l->peer, peer))) {
		*out = *l;
		do_lent_del(m, l);
	} else {
		l = NULL;
	}
	pthread_mutex_unlock(&m->lock);
	return l != NULL;
}

/* A lend taken back: parked here again, as before it. */
static void repark(struct tmemd_migrate *m, const struct mig_lent *l)
{
	marker_write(m, &l->parked, NULL);
	tmemd_clients_note_parked(m->reg, l->name, l->parked.label, &l->parked.ident,
				  l->parked.parked_at);
}

struct offer_scan {
	struct tmem_mig_offer *o;
};

static int add_pool(const struct tmem_pool_info *pi, void *ctx)
{
	struct tmem_mig_offer *o = ((struct offer_scan *)ctx)->o;

	if (!pi->persistent || pi->shared || o->nr_pools == TMEM_MIG_MAX_POOLS)
		return 0;
	o->pools[o->nr_pools].id = pi->id;
	o->pools[o->nr_pools].flags = tmem_pool_flags(TMEM_POOL_PERSIST);
	o->nr_pools++;
	o->pages += pi->pages;
	return 0;
}

struct stream {
	struct mig_link *link;
	struct mig_batch_buf b;
	uint64_t pages, bytes;
};

static int add_page(void *ctx, const struct tmem_stored_page *p)
{
	struct stream *s = ctx;

	if (mig_batch_add(&s->b, p))
		return 1;
	s->pages++;
	s->bytes += p->codec == TMEM_STORED_SAME ? 0 : p->len;
	return 0;
}

/* Every page of pool id, in batches. */
static int stream_pool(struct tmem_client *sc, int32_t id, struct stream *s)
{
	struct tmem_export_cursor cur = { 0 };
	int rc;

	while (!cur.done) {
		mig_batch_start(&s->b, id);
		rc = store_export_pages(sc, id, &cur, add_page, s);
		if (rc)
			return rc;
		if (s->b.count)
			rc = mig_send(s->link, TMEM_MIG_BATCH, s->b.buf, mig_batch_len(&s->b));
		if (rc)
			return rc;
	}
	return 0;
}

static int stream_all(struct tmemd_migrate *m, struct mig_link *link, struct tmem_client *sc,
		      const struct tmem_mig_offer *o)
{
	struct stream s = { .link = link, .b = { .cap = TMEM_MIG_MAX_PAYLOAD } };
	struct tmem_mig_end end;
	int rc = 0;

	s.b.buf = malloc(s.b.cap);
	if (!s.b.buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < o->nr_pools && !rc; i++)
		rc = stream_pool(sc, o->pools[i].id, &s);
	free(s.b.buf);
	if (rc)
		return rc;
	end = (struct tmem_mig_end){ .pages = s.pages, .bytes = s.bytes };
	pthread_mutex_lock(&m->lock);
	m->stats.pages_sent += s.pages;
	m->stats.bytes_sent += s.bytes;
	pthread_mutex_unlock(&m->lock);
	return mig_send(link, TMEM_MIG_END, &end, sizeof(end));
}

static int refuse_offer(struct tmemd_migrate *m, struct mig_link *link, int rc)
{
	struct tmem_mig_offer o = { .status = rc };

	count_refused(m);
	return mig_send(link, TMEM_MIG_OFFER, &o, sizeof(o));
}

static int serve_pull(struct tmemd_migrate *m, struct mig_link *link,
		      const struct tmem_mig_who *who)
{
	struct tmem_mig_offer o = { 0 };
	struct offer_scan os = { &o };
	char name[TMEM_MIG_NAME_MAX];
	struct tmem_ident ident;
	struct tmem_client *sc;
	struct mig_lent l;
	uint64_t t0;
	int rc;

	mig_name_get(who->name, name); /* checked by mig_recv */
	memcpy(ident.b, who->ident, TMEM_IDENT_LEN);
	/* A domain known by its domid only cannot be known elsewhere. */
	if (!strncmp(name, "domid:", 6))
		return refuse_offer(m, link, -EOPNOTSUPP);
	rc = lend(m, mig_link_peer(link), name, &ident, &l);
	if (rc == -EAGAIN) {
		o.status = rc;
		log_info("migrate: peer %s asked for %s, still connected here: asked to wait",
			 mig_link_peer(link), name);
		return mig_send(link, TMEM_MIG_OFFER, &o, sizeof(o));
	}
	if (rc) {
		log_warn("migrate: peer %s asked for %s: refused (%s)", mig_link_peer(link),
			 name, strerror(-rc));
		return refuse_offer(m, link, rc);
	}
	/* Stored under the identity it had here (a domain's old domid). */
	rc = store_client_claim(m->store, name, &l.parked.ident, &sc);
	if (rc) {
		log_err("migrate: %s was parked but is not in the store (%s)", name, strerror(-rc));
		if (unlend(m, l.xfer, NULL, &l))
			repark(m, &l);
		return refuse_offer(m, link, -ENOENT);
	}
	store_client_for_each_pool(sc, add_pool, &os);
	memcpy(o.xfer, l.xfer, sizeof(o.xfer));
	t0 = mig_now_ns();
	rc = mig_send(link, TMEM_MIG_OFFER, &o, sizeof(o));
	if (!rc)
		rc = stream_all(m, link, sc, &o);
	pthread_mutex_lock(&m->lock);
	m->stats.send_ns += mig_now_ns() - t0;
	pthread_mutex_unlock(&m->lock);
	/* In doubt until the peer says: kept, detached, lent. */
	store_client_detach(sc);
	log_info("migrate: %s offered to %s: %" PRIu64 " pages in %u pools%s", name,
		 mig_link_peer(link), o.pages, o.nr_pools, rc ? " (link lost)" : "");
	return rc;
}

/* RELEASE (free) or ABORT (park again) of xfer, from the peer it was lent to. */
static int resolve(struct tmemd_migrate *m, struct mig_link *link, const uint8_t *xfer,
		   bool release)
{
	struct tmem_mig_done d = { .status = 0 };
	struct mig_lent lent;
	int rc;

	if (!unlend(m, xfer, mig_link_peer(link), &lent)) {
		count_refused(m); /* a replay, or not this peer's */
		d.status = -ENOENT;
		return mig_send(link, TMEM_MIG_DONE, &d, sizeof(d));
	}
	if (!release) {
		repark(m, &lent);
		log_info("migrate: %s: %s gave up its pull; parked here again", lent.name,
			 lent.peer);
		return mig_send(link, TMEM_MIG_DONE, &d, sizeof(d));
	}
	pthread_mutex_lock(&m->lock);
	m->stats.transfers_out++;
	pthread_mutex_unlock(&m->lock);
	/* Released is durable before DONE, so a kill before the pages are
	 * freed frees them at the next start, never parks them again;
	 * freeing them after DONE keeps it off the peer's wait. */
	released_write(m, &lent.parked);
	rc = mig_send(link, TMEM_MIG_DONE, &d, sizeof(d));
	store_drop_detached(m->store, lent.name);
	mig_file_remove(m->parked_dir, lent.name);
	log_info("migrate: %s now lives on %s: freed here", lent.name, lent.peer);
	return rc;
}

static int serve_check(struct tmemd_migrate *m, struct mig_link *link,
		       const struct tmem_mig_who *who)
{
	struct tmem_mig_check_reply r = { 0 };
	char name[TMEM_MIG_NAME_MAX];
	struct tmem_store_info si;
	struct tmemd_parked p;

	mig_name_get(who->name, name);
	store_info(m->store, &si);
	r.free_pages = si.arena.free_pages;
	if (!tmemd_clients_parked(m->reg, name, &p))
		r.parked_pages = p.pages;
	return mig_send(link, TMEM_MIG_CHECK_REPLY, &r, sizeof(r));
}

static void serve_link(struct tmemd_migrate *m, struct mig_link *link)
{
	union {
		struct tmem_mig_who who;
		struct tmem_mig_xfer x;
		uint8_t raw[512];
	} msg;
	uint16_t type;
	uint32_t len;
	int rc = 0;

	while (!rc) {
		rc = mig_recv(link, &type, &msg, sizeof(msg), &len);
		if (rc)
			break;
		if (type == TMEM_MIG_PULL)
			rc = serve_pull(m, link, &msg.who);
		else if (type == TMEM_MIG_RELEASE || type == TMEM_MIG_ABORT)
			rc = resolve(m, link, msg.x.xfer, type == TMEM_MIG_RELEASE);
		else if (type == TMEM_MIG_CHECK)
			rc = serve_check(m, link, &msg.who);
		else if (type == TMEM_MIG_PUSH)
			rc = mig_serve_push(m, link, &msg.who);
		else
			rc = -EPROTO; /* a message only this side sends */
	}
	if (rc == -EPROTO) {
		count_refused(m);
		log_warn("migrate: peer %s sent a malformed message: link closed",
			 mig_link_peer(link));
	}
}

void *mig_source_thread(void *arg)
{
	struct tmemd_migrate *m = arg;
	struct pollfd p[2] = { { .fd = m->listen_fd, .events = POLLIN },
			       { .fd = m->stop_pipe[0], .events = POLLIN } };

	for (;;) {
		struct mig_link *link;
		int fd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(m->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (mig_accept(m->tls, fd, MIG_TIMEOUT_MS, &link)) {
			count_refused(m);
			log_warn("migrate: a peer failed to authenticate: refused");
			continue;
		}
		serve_link(m, link);
		mig_link_close(link);
	}
	return NULL;
}

/* After a restart: name lent as hex to peer again, in doubt as before. */
static void lend_again(struct tmemd_migrate *m, const char *name, const char *label,
		       const char *hex, const char *peer, const struct tmem_ident *ident,
		       uint64_t at)
{
	struct mig_lent *l;

	pthread_mutex_lock(&m->lock);
	l = &m->lent[m->nr_lent];
	if (m->nr_lent < MIG_MAX_LENT && !mig_unhex(hex, l->xfer, TMEM_MIG_XFER_LEN)) {
		snprintf(l->name, sizeof(l->name), "%s", name);
		snprintf(l->peer, sizeof(l->peer), "%s", peer);
		memset(&l->parked, 0, sizeof(l->parked));
		snprintf(l->parked.key, sizeof(l->parked.key), "%s", name);
		snprintf(l->parked.label, sizeof(l->parked.label), "%s", label);
		l->parked.ident = *ident;
		l->parked.parked_at = at;
		m->nr_lent++;
	}
	pthread_mutex_unlock(&m->lock);
}

/* A marker after a restart: park or lend the detached client again. */
static int recover_marker(const char *name, const char *text, void *ctx)
{
	char label[TMEM_CLIENT_NAME_MAX], hex[64], peer[MIG_HOST_MAX];
	struct tmemd_migrate *m = ctx;
	struct tmem_ident ident;
	bool found = mig_detached_ident(m, name, &ident);
	unsigned long long at;
	int n = sscanf(text, "%llu %63s lent %40s %63s", &at, label, hex, peer);

	if (found && strstr(text, " released")) {
		/* Killed between the release and the free: free now. */
		store_drop_detached(m->store, name);
		found = false;
	}
	if (!found || n < 2) {
		mig_file_remove(m->parked_dir, name);
		return 0;
	}
	if (!strcmp(label, "-"))
		label[0] = '\0';
	if (n < 4)
		tmemd_clients_note_parked(m->reg, name, label, &ident, at);
	else
		lend_again(m, name, label, hex, peer, &ident, at);
	return 0;
}

int mig_source_recover(struct tmemd_migrate *m)
{
	return mig_dir_each(m->parked_dir, recover_marker, m);
}
