/* SPDX-License-Identifier: MIT */
/*
 * What an admin asks of migration through tmemctl (migrate.h): a
 * pre-flight check of a destination, and a push of a parked client to
 * one.  Both run on the control server's thread and wait for the peer
 * (bounded by MIG_TIMEOUT_MS per message).
 *
 * A push is a pull the source asks for: PUSH name ident makes the
 * destination pull the client from its peers (the source among them),
 * as an attach would, and park it there for its guest to claim; DONE
 * answers when it has.  So the transfer and its crash cases are the
 * pull's (man/tmem.7).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "migrate/mig_files.h"
#include "migrate/mig_internal.h"
#include "migrate/mig_wire.h"

static int connect_peer(struct tmemd_migrate *m, const char *peer, struct mig_link **link,
			char *why, size_t len)
{
	int rc = mig_connect(m->tls, peer, MIG_TIMEOUT_MS, link);

	if (rc == -EACCES)
		snprintf(why, len, "%s: reachable, but did not authenticate (not the same key "
			 "file, or not a tmemd with migration)", peer);
	else if (rc)
		snprintf(why, len, "%s: not reachable: %s", peer, strerror(-rc));
	return rc;
}

static uint64_t frames_of(uint64_t bytes)
{
	return (bytes + TMEM_PAGE_SIZE - 1) / TMEM_PAGE_SIZE;
}

static int add_pool_size(const struct tmem_pool_info *pi, void *ctx)
{
	struct tmemd_migrate_check *out = ctx;

	if (pi->persistent && !pi->shared) {
		out->pages += pi->pages;
		out->stored_pages += frames_of(pi->z.compr_data_size + pi->tier_bytes);
	}
	return 0;
}

/* What client holds here, parked or attached (the pages that would
 * move, and the frames they take as stored: what a peer needs room
 * for): 0, or -ENOENT.  On the control server's thread, which is the
 * one that adds and removes clients. */
static int local_size(struct tmemd_migrate *m, const char *client,
		      struct tmemd_migrate_check *out)
{
	struct tmemd_parked p;
	struct tmemd_client *c;

	if (!tmemd_clients_parked(m->reg, client, &p)) {
		out->pages = p.pages;
		/* Noted at a start: its size as stored is not known. */
		out->stored_pages = p.stored_bytes ? frames_of(p.stored_bytes) : p.pages;
		return 0;
	}
	c = tmemd_clients_find(m->reg, client);
	if (!c)
		return -ENOENT;
	store_client_for_each_pool(c->sc, add_pool_size, out);
	return 0;
}

int tmemd_migrate_check(struct tmemd_migrate *m, const char *client, const char *peer,
			struct tmemd_migrate_check *out, char *why, size_t len)
{
	struct tmem_mig_who who = { 0 };
	struct tmem_mig_check_reply r;
	struct mig_link *link;
	uint16_t type;
	uint32_t got;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!m)
		return snprintf(why, len, "no migration configured (migrate-key)"), -EOPNOTSUPP;
	if (local_size(m, client, out)) {
		snprintf(why, len, "%s: no such client here, attached or parked", client);
		return -ENOENT;
	}
	rc = connect_peer(m, peer, &link, why, len);
	out->reachable = rc != -ECONNREFUSED && rc != -ETIMEDOUT && rc != -EHOSTUNREACH &&
			 rc != -EINVAL;
	if (rc)
		return rc;
	out->authenticated = true;
	mig_name_put(who.name, client);
	rc = mig_send(link, TMEM_MIG_CHECK, &who, sizeof(who));
	if (!rc)
		rc = mig_recv(link, &type, &r, sizeof(r), &got);
	if (!rc && type != TMEM_MIG_CHECK_REPLY)
		rc = -EPROTO;
	mig_link_close(link);
	if (rc) {
		snprintf(why, len, "%s: no answer to the check: %s", peer, strerror(-rc));
		return rc;
	}
	out->peer_free_pages = r.free_pages;
	out->room = r.free_pages >= out->stored_pages;
	return 0;
}

int tmemd_migrate_push(struct tmemd_migrate *m, const char *client, const char *peer,
		       uint64_t *pages, char *why, size_t len)
{
	struct tmem_mig_who who = { 0 };
	struct tmem_mig_done d;
	struct mig_link *link;
	struct tmemd_parked p;
	uint16_t type;
	uint32_t got;
	int rc;

	if (!m)
		return snprintf(why, len, "no migration configured (migrate-key)"), -EOPNOTSUPP;
	if (tmemd_clients_parked(m->reg, client, &p)) {
		snprintf(why, len, "%s: not parked here (only a parked client can be pushed)",
			 client);
		return -ENOENT;
	}
	*pages = p.pages;
	rc = connect_peer(m, peer, &link, why, len);
	if (rc)
		return rc;
	mig_name_put(who.name, client);
	memcpy(who.ident, p.ident.b, TMEM_IDENT_LEN);
	rc = mig_send(link, TMEM_MIG_PUSH, &who, sizeof(who));
	if (!rc)
		rc = mig_recv(link, &type, &d, sizeof(d), &got);
	if (!rc && type != TMEM_MIG_DONE)
		rc = -EPROTO;
	mig_link_close(link);
	if (!rc && d.status)
		rc = d.status;
	if (rc == -ETIMEDOUT)
		/* The peer answers once every page is in, which for a large
		 * client outlasts a read's timeout: it may be taking them. */
		snprintf(why, len, "%s did not answer within %u s; it may still be taking %s: "
			 "tmemctl list -a, here and there, says where it is", peer,
			 MIG_TIMEOUT_MS / 1000, client);
	else if (rc)
		snprintf(why, len, "%s did not take %s: %s", peer, client, strerror(-rc));
	return rc;
}

/* The destination of a push: pull name from the peers and park it here. */
int mig_serve_push(struct tmemd_migrate *m, struct mig_link *link, const struct tmem_mig_who *who)
{
	struct tmem_mig_done d = { 0 };
	char name[TMEM_MIG_NAME_MAX];
	struct tmem_ident ident;

	mig_name_get(who->name, name);
	memcpy(ident.b, who->ident, TMEM_IDENT_LEN);
	if (tmemd_clients_find(m->reg, name))
		d.status = -EEXIST;
	else
		d.status = tmemd_migrate_pull(m, name, &ident);
	if (!d.status)
		d.status = mig_park_detached(m, name, &ident);
	log_info("migrate: %s pushed by %s: %s", name, mig_link_peer(link),
		 d.status ? strerror(-d.status) : "taken and parked here");
	return mig_send(link, TMEM_MIG_DONE, &d, sizeof(d));
}
