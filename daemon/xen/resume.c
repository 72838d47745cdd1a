/* SPDX-License-Identifier: MIT */
/*
 * Xen domains across a tmemd restart.  A domain's client is stored under
 * its key, uuid:U (client_registry.h), with an identity: 'X', the domid
 * it had when the client was made, its domain handle (the toolstack's
 * UUID) and a nonce drawn then.  At start, before any domain connects,
 * each client the last run left detached is kept for its domain if a
 * domain with that handle lives (whatever its domid now: it may have
 * been restored meanwhile), kept as parked if it was parked (park.c),
 * and freed otherwise: its domain ended while tmemd was down.  A kept
 * client is claimed, pools and pages, when its domain connects again.
 * The nonce is the backend's "session" node: a frontend takes its pools
 * back only from the store that made them (man/tmem.7).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <sys/random.h>

#include "log.h"
#include "xen/backend_internal.h"

#define ID_DOMID TMEMD_XEN_IDENT_DOMID     /* 4 bytes, host order */
#define ID_HANDLE (ID_DOMID + 4)         /* TMEMD_XEN_HANDLE_LEN bytes */
#define ID_NONCE (ID_HANDLE + TMEMD_XEN_HANDLE_LEN) /* 8 bytes */
_Static_assert(ID_NONCE + 8 <= TMEM_IDENT_LEN, "a Xen identity fits");

static void ident_fill(uint32_t domid, const uint8_t *handle, uint64_t nonce,
		       struct tmem_ident *out)
{
	memset(out, 0, sizeof(*out));
	out->b[0] = XEN_IDENT_MARK;
	memcpy(out->b + ID_DOMID, &domid, sizeof(domid));
	memcpy(out->b + ID_HANDLE, handle, TMEMD_XEN_HANDLE_LEN);
	memcpy(out->b + ID_NONCE, &nonce, sizeof(nonce));
}

int xen_ident_new(const struct xen_dom *d, struct tmem_ident *out)
{
	uint64_t nonce = 0;

	/* Never 0: the frontend reads 0 as "no session". */
	while (!nonce)
		if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
			return errno ? -errno : -EIO;
	ident_fill(d->domid, d->handle, nonce, out);
	return 0;
}

void xen_ident_with_nonce(const struct xen_dom *d, uint64_t nonce, struct tmem_ident *out)
{
	ident_fill(d->domid, d->handle, nonce, out);
}

uint64_t xen_ident_nonce(const struct tmem_ident *id)
{
	uint64_t nonce;

	memcpy(&nonce, id->b + ID_NONCE, sizeof(nonce));
	return nonce;
}

struct sort {
	const struct tmemd_xen_dominfo *live;
	int nr_live;
	struct xen_kept *kept;
	unsigned nr_kept, cap;
	struct xen_kept *gone;       /* no live domain: parked, or freed */
	unsigned nr_gone, cap_gone;
};

static bool still_there(const struct sort *st, const struct tmem_ident *id)
{
	if (st->nr_live < 0)    /* unknown: the claim still checks */
		return true;
	for (int i = 0; i < st->nr_live; i++)
		if (!st->live[i].dying &&
		    !memcmp(st->live[i].handle, id->b + ID_HANDLE, TMEMD_XEN_HANDLE_LEN))
			return true;
	return false;
}

static int grow(void **arr, unsigned *cap, unsigned n, size_t size)
{
	void *bigger;

	if (n < *cap)
		return 0;
	bigger = realloc(*arr, (*cap * 2 + 8) * size);
	if (!bigger)
		return -ENOMEM;
	*arr = bigger;
	*cap = *cap * 2 + 8;
	return 0;
}

/* Runs under the store lock: only notes what to do. */
static int note(const char *name, const struct tmem_ident *id, void *ctx)
{
	struct sort *st = ctx;
	struct xen_kept *k;

	if (id->b[0] != XEN_IDENT_MARK)
		return 0;
	if (!still_there(st, id)) {
		if (grow((void **)&st->gone, &st->cap_gone, st->nr_gone, sizeof(*st->gone)))
			return -ENOMEM;
		k = &st->gone[st->nr_gone++];
	} else {
		if (grow((void **)&st->kept, &st->cap, st->nr_kept, sizeof(*st->kept)))
			return -ENOMEM;
		k = &st->kept[st->nr_kept++];
	}
	memcpy(&k->domid, id->b + ID_DOMID, sizeof(k->domid));
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->ident = *id;
	return 0;
}

void xen_sort_previous_domains(struct tmemd_xen_backend *be)
{
	struct tmem_store *store = tmemd_clients_store(be->env.clients);
	struct tmemd_xen_dominfo *live = calloc(TMEMD_XEN_MAX_DOMAINS, sizeof(*live));
	struct sort st = { .live = live };
	unsigned freed = 0, parked = 0;
	int rc = live ? be->hyp.ops->list_domains(be->hyp.h, live,
						   TMEMD_XEN_MAX_DOMAINS) : -ENOMEM;

	/* Without the list nothing can be told apart: keep all, and let
	 * reattach-grace free what does not come back. */
	if (rc < 0)
		log_warn("xen: cannot list domains: %s; the last run's wait for "
			 "reattach-grace", strerror(-rc));
	st.nr_live = rc;
	rc = store_for_each_detached(store, note, &st);
	for (unsigned i = 0; rc >= 0 && i < st.nr_gone; i++) {
		if (xen_note_parked_at_start(be, st.gone[i].name, &st.gone[i].ident))
			parked++;
		else
			freed += store_drop_detached(store, st.gone[i].name) > 0;
	}
	if (rc < 0)
		log_warn("xen: cannot sort the domains of the last run: %s",
			 strerror(-rc));
	if (freed)
		log_info("xen: freed the pages of %u domain%s gone since the last run",
			 freed, freed == 1 ? "" : "s");
	if (st.nr_kept)
		log_info("xen: kept the pages of %u domain%s for them to reconnect",
			 st.nr_kept, st.nr_kept == 1 ? "" : "s");
	if (parked)
		log_info("xen: %u parked domain%s still wait%s to be restored",
			 parked, parked == 1 ? "" : "s", parked == 1 ? "s" : "");
	free(be->kept);
	be->kept = st.kept;
	be->nr_kept = st.nr_kept;
	free(st.gone);
	free(live);
}

bool xen_handle_known(const uint8_t *handle)
{
	for (unsigned i = 0; i < TMEMD_XEN_HANDLE_LEN; i++)
		if (handle[i])
			return true;
	return false;
}

int xen_take_kept_by_handle(struct tmemd_xen_backend *be, const struct xen_dom *d,
			    struct xen_kept *out)
{
	bool known = xen_handle_known(d->handle);

	for (unsigned i = 0; i < be->nr_kept; i++) {
		if (memcmp(be->kept[i].ident.b + ID_HANDLE, d->handle, TMEMD_XEN_HANDLE_LEN) ||
		    (!known && be->kept[i].domid != d->domid))
			continue;
		*out = be->kept[i];
		be->kept[i] = be->kept[--be->nr_kept];
		return 0;
	}
	return -ENOENT;
}

void xen_dom_id(const struct xen_dom *d, struct tmemd_domain_id *out)
{
	memset(out, 0, sizeof(*out));
	out->domid = d->domid;
	memcpy(&out->uuid.lo, d->handle, 8);
	memcpy(&out->uuid.hi, d->handle + 8, 8);
	out->uuid.lo = le64toh(out->uuid.lo);
	out->uuid.hi = le64toh(out->uuid.hi);
	out->name = d->name;
}
