/* SPDX-License-Identifier: MIT */
/*
 * The destination side: a pull, run when a client attaches with an
 * identity this tmemd has no pages for (tmemd_migrate_pull()).
 *
 *   1. PULL name ident to each peer in turn, until one OFFERs.
 *   2. incoming/NAME = "staged XFER PEER"; a store client NAME under the
 *      staged identity (destroying any older one of that name), the
 *      offered pools at their ids, then every page as it comes.
 *   3. At END, with every page in the arena: incoming/NAME =
 *      "committed XFER PEER", then the commit: the identity's byte 0
 *      (store_client_set_ident), and the client is left detached for the
 *      attach to claim.
 *   4. RELEASE XFER; at DONE, incoming/NAME goes.
 *
 * Anything wrong before 3 drops the staged client and sends ABORT.  A
 * kill leaves incoming/NAME, which the next start settles
 * (mig_dest_recover()): staged: drop and ABORT; committed: commit again
 * (idempotent) and RELEASE.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "migrate/mig_files.h"
#include "migrate/mig_internal.h"
#include "migrate/mig_pipe.h"
#include "migrate/mig_wire.h"

static void journal(struct tmemd_migrate *m, const char *name, const char *state,
		    const uint8_t *xfer, const char *peer)
{
	char text[256], hex[2 * TMEM_MIG_XFER_LEN + 1];

	mig_hex(xfer, TMEM_MIG_XFER_LEN, hex);
	snprintf(text, sizeof(text), "%s %s %s\n", state, hex, peer);
	if (mig_file_write(m->incoming_dir, name, text))
		log_err("migrate: cannot write %s/%s", m->incoming_dir, name);
}

/* The offered pools at their ids in a fresh client. */
static int make_pools(struct tmem_client *sc, const struct tmem_mig_offer *o)
{
	uint32_t want = 0, filler = 0;
	int id;

	for (uint32_t i = 0; i < o->nr_pools; i++)
		want |= 1u << o->pools[i].id;
	while (want) {
		id = store_new_pool(sc, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
		if (id < 0)
			return id;
		if (want & (1u << id))
			want &= ~(1u << id);
		else
			filler |= 1u << id;
	}
	for (id = 0; filler; id++)
		if (filler & (1u << id)) {
			store_destroy_pool(sc, id);
			filler &= ~(1u << id);
		}
	return 0;
}

struct recv_state {
	uint64_t pages, bytes;
};

static int import_batch(struct tmem_client *sc, const struct tmem_mig_offer *o,
			const void *payload, uint32_t len, struct recv_state *st)
{
	struct tmem_stored_page p;
	struct mig_batch_iter it;
	bool offered = false;
	int rc;

	mig_batch_begin(&it, payload, len);
	for (uint32_t i = 0; i < o->nr_pools; i++)
		offered |= o->pools[i].id == it.pool_id;
	if (!offered)
		return -EPROTO;
	while ((rc = mig_batch_next(&it, &p)) > 0) {
		rc = store_import_checked(sc, it.pool_id, &p, TMEM_PUT_CAP(TMEM_NO_CAP));
		if (rc != 1)
			return rc == -EBADMSG ? -EPROTO : (rc < 0 ? rc : -ENOSPC);
		st->pages++;
		st->bytes += p.len;
	}
	return rc;
}

/* On the pipe's reader: every page of a batch decodes (store_import_checked()). */
static int check_batch(const uint8_t *buf, uint32_t len)
{
	struct tmem_stored_page p;
	struct mig_batch_iter it;
	int rc;

	mig_batch_begin(&it, buf, len);
	while ((rc = mig_batch_next(&it, &p)) > 0)
		if (store_stored_page_check(&p))
			return -EPROTO;
	return rc;
}

/* Steps 2 and 3's pages: batches until END, read ahead (mig_pipe.h). */
static int receive_pages(struct mig_link *link, struct tmem_client *sc,
			 const struct tmem_mig_offer *o, struct recv_state *st)
{
	struct tmem_mig_end end;
	struct mig_pipe pipe;
	const uint8_t *buf;
	uint16_t type;
	uint32_t len;
	int rc = mig_pipe_start(&pipe, link, check_batch);

	if (rc)
		return rc;
	while (!rc) {
		rc = mig_pipe_next(&pipe, &type, &buf, &len);
		if (rc)
			break;
		if (type == TMEM_MIG_END) {
			memcpy(&end, buf, sizeof(end));
			rc = end.pages == st->pages && end.pages == o->pages ? 1 : -EPROTO;
		} else if (type == TMEM_MIG_BATCH) {
			rc = import_batch(sc, o, buf, len, st);
		} else {
			rc = -EPROTO;
		}
		mig_pipe_done(&pipe);
	}
	mig_pipe_finish(&pipe);
	return rc == 1 ? 0 : rc;
}

/* RELEASE or ABORT xfer over link: 0 once the peer answered DONE. */
static int settle(struct mig_link *link, const uint8_t *xfer, bool release)
{
	struct tmem_mig_xfer x;
	struct tmem_mig_done d;
	uint16_t type;
	uint32_t len;
	int rc;

	memcpy(x.xfer, xfer, sizeof(x.xfer));
	rc = mig_send(link, release ? TMEM_MIG_RELEASE : TMEM_MIG_ABORT, &x, sizeof(x));
	if (!rc)
		rc = mig_recv(link, &type, &d, sizeof(d), &len);
	if (!rc && type != TMEM_MIG_DONE)
		rc = -EPROTO;
	/* -ENOENT: settled already (our earlier message got there). */
	return rc ? rc : (d.status == -ENOENT ? 0 : d.status);
}

/* Steps 2 to 4 with peer, which offered o. */
static int take(struct tmemd_migrate *m, struct mig_link *link, const char *name,
		const struct tmem_ident *ident, const struct tmem_mig_offer *o)
{
	const char *peer = mig_link_peer(link);
	struct recv_state st = { 0 };
	struct tmem_ident staged;
	struct tmem_client *sc;
	int rc;

	journal(m, name, "staged", o->xfer, peer);
	mig_staged_ident(ident, &staged);
	rc = store_client_create_ident(m->store, name, &staged, &sc);
	if (rc)
		goto abort;
	rc = make_pools(sc, o);
	if (!rc)
		rc = receive_pages(link, sc, o, &st);
	if (rc) {
		store_client_destroy(sc);
		goto abort;
	}
	journal(m, name, "committed", o->xfer, peer);
	store_client_set_ident(sc, ident); /* the commit */
	store_client_detach(sc);
	pthread_mutex_lock(&m->lock);
	m->stats.transfers_in++;
	m->stats.pages_received += st.pages;
	m->stats.bytes_received += st.bytes;
	pthread_mutex_unlock(&m->lock);
	if (!settle(link, o->xfer, true))
		mig_file_remove(m->incoming_dir, name);
	else
		log_warn("migrate: %s: %s did not confirm the release; retried at the next pull",
			 name, peer);
	log_info("migrate: %s: %" PRIu64 " pages (%" PRIu64 " bytes as stored) taken from %s",
		 name, st.pages, st.bytes, peer);
	return 0;
abort:
	if (!settle(link, o->xfer, false))
		mig_file_remove(m->incoming_dir, name);
	return rc;
}

/* Steps 1 to 4 with one peer: 0 taken, -ENOENT it has none, -errno;
 * *answered: the peer answered the PULL (an OFFER, taken or refused). */
static int pull_from(struct tmemd_migrate *m, const char *hostport, const char *name,
		     const struct tmem_ident *ident, bool *answered)
{
	struct tmem_mig_who who = { 0 };
	struct tmem_mig_offer o;
	struct mig_link *link;
	uint16_t type;
	uint32_t len;
	int rc = mig_connect(m->tls, hostport, MIG_TIMEOUT_MS, &link);

	if (rc)
		return rc;
	mig_name_put(who.name, name);
	memcpy(who.ident, ident->b, TMEM_IDENT_LEN);
	rc = mig_send(link, TMEM_MIG_PULL, &who, sizeof(who));
	if (!rc)
		rc = mig_recv(link, &type, &o, sizeof(o), &len);
	if (!rc && type != TMEM_MIG_OFFER)
		rc = -EPROTO;
	*answered = !rc;
	if (!rc)
		rc = o.status ? o.status : take(m, link, name, ident, &o);
	mig_link_close(link);
	return rc;
}

/*
 * Steps 1 to 4 with each peer in turn, until one has name.  A peer that
 * cannot be asked (down, restarting, unauthenticated) does not stop the
 * others; nor does one with no such client, or with one of another
 * identity (EPERM: a guest can leave pages parked on two hosts under one
 * UUID, one session each).  0 taken; -EAGAIN a peer has it and will
 * let it go; -EHOSTDOWN some could not be asked and none had it (it may
 * be there: worth asking again); -EPERM; -ENOENT.
 */
static int pull_from_peers(struct tmemd_migrate *m, const char *name,
			   const struct tmem_ident *ident)
{
	bool unreached = false, refused = false;

	for (unsigned i = 0; i < m->nr_peers; i++) {
		bool answered = false;
		int rc = pull_from(m, m->peers[i], name, ident, &answered);

		if (!answered) {
			log_debug("migrate: %s: peer %s not asked: %s", name, m->peers[i],
				  strerror(-rc));
			pthread_mutex_lock(&m->lock);
			m->stats.unreachable++;
			pthread_mutex_unlock(&m->lock);
			unreached = true;
		} else if (rc == -EPERM) {
			refused = true;
		} else if (rc != -ENOENT) {
			return rc;
		}
	}
	return unreached ? -EHOSTDOWN : refused ? -EPERM : -ENOENT;
}

static int resolve_pending(struct tmemd_migrate *m);

/* Not a failure yet: the caller may ask again (client_registry.h). */
static bool worth_asking_again(int rc)
{
	return rc == -EAGAIN || rc == -EHOSTDOWN;
}

int tmemd_migrate_pull(void *ctx, const char *name, const struct tmem_ident *ident)
{
	struct tmemd_migrate *m = ctx;
	uint64_t t0 = mig_now_ns();
	char text[8];
	int rc = -ENOENT;

	if (!m || !m->nr_peers)
		return -ENOENT;
	pthread_mutex_lock(&m->pull_lock);
	resolve_pending(m);
	/* An earlier transfer of this name not settled yet: not again. */
	if (!mig_file_read(m->incoming_dir, name, text, sizeof(text)))
		rc = -EBUSY;
	else
		rc = pull_from_peers(m, name, ident);
	pthread_mutex_unlock(&m->pull_lock);
	pthread_mutex_lock(&m->lock);
	m->stats.transfer_ns += mig_now_ns() - t0;
	/* -EAGAIN: the source has not parked it yet; a peer not reached may
	 * be restarting: the caller may ask again (tmemd_migrate_pull_again()). */
	if (rc && rc != -ENOENT && !worth_asking_again(rc))
		m->stats.failed_pulls++;
	pthread_mutex_unlock(&m->lock);
	/* A guest's attach can ask for this (any name, any identity): the
	 * line is limited per name. */
	if (rc && rc != -ENOENT && !worth_asking_again(rc))
		tmemd_log_limited(TMEMD_LOG_ERR, tmemd_rl_name(name), "migrate: cannot take %s's "
				  "pages from a peer: %s; they stay there", name, strerror(-rc));
	return rc;
}

/* Finishes step 3 for a committed transfer a kill interrupted. */
static void recommit(struct tmemd_migrate *m, const char *name)
{
	struct tmem_ident staged, real;
	struct tmem_client *sc;

	if (!mig_detached_ident(m, name, &staged))
		return;
	mig_staged_ident(&staged, &real); /* flipping is its own inverse */
	if (staged.b[0] != 'L' && store_client_claim(m->store, name, &staged, &sc) == 0) {
		store_client_set_ident(sc, &real);
		store_client_detach(sc);
	}
}

/* Drops a staged client a kill left (never a committed one). */
static void unstage(struct tmemd_migrate *m, const char *name)
{
	struct tmem_ident id;

	if (mig_detached_ident(m, name, &id) && id.b[0] != 'L')
		store_drop_detached(m->store, name);
}

static int resolve_one(const char *name, const char *text, void *ctx)
{
	struct tmemd_migrate *m = ctx;
	char state[16], hex[64], peer[MIG_HOST_MAX];
	uint8_t xfer[TMEM_MIG_XFER_LEN];
	struct mig_link *link = NULL;
	bool release;

	if (sscanf(text, "%15s %40s %63s", state, hex, peer) != 3 ||
	    mig_unhex(hex, xfer, sizeof(xfer))) {
		mig_file_remove(m->incoming_dir, name);
		return 0;
	}
	release = !strcmp(state, "committed");
	if (release)
		recommit(m, name);
	else
		unstage(m, name);
	for (unsigned i = 0; i < m->nr_peers && !link; i++)
		if (!strcmp(m->peers[i], peer) && mig_connect(m->tls, peer, 2000, &link))
			link = NULL;
	if (link && !settle(link, xfer, release))
		mig_file_remove(m->incoming_dir, name);
	mig_link_close(link);
	return 0;
}

static int resolve_pending(struct tmemd_migrate *m)
{
	return mig_dir_each(m->incoming_dir, resolve_one, m);
}

int mig_dest_recover(struct tmemd_migrate *m)
{
	return resolve_pending(m);
}

void *mig_settler_thread(void *arg)
{
	struct tmemd_migrate *m = arg;
	struct pollfd p = { .fd = m->stop_pipe[0], .events = POLLIN };

	while (poll(&p, 1, 1000) == 0) {
		pthread_mutex_lock(&m->pull_lock);
		resolve_pending(m);
		pthread_mutex_unlock(&m->pull_lock);
	}
	return NULL;
}
