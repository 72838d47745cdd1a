/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "log.h"
#include "restart.h"

static void log_recovery(const struct tmemd_restart *r)
{
	struct tmem_recovery_info ri;

	store_recovery_info(r->store, &ri);
	if (!ri.adopted) {
		if (r->arena.fd < 0)
			log_warn("pages live in process memory: nothing survives a restart "
				 "(run under systemd with FileDescriptorStoreMax=, or use --arena)");
		else
			log_info("new arena, %s: pages survive a restart", r->arena.where);
		return;
	}
	log_info("recovered %llu pages (%llu persistent, %llu ephemeral) of %u clients "
		 "in %u pools from %s in %.1f ms; %llu unpublished or invalid pages dropped",
		 (unsigned long long)ri.pages, (unsigned long long)ri.persistent_pages,
		 (unsigned long long)ri.ephemeral_pages, ri.clients, ri.pools,
		 r->arena.where, ri.duration_nsec / 1e6,
		 (unsigned long long)ri.pages_dropped);
}

int tmemd_restart_open_store(struct tmemd_restart *r, const struct tmem_store_config *sc,
			     const char *arena_path, bool discard)
{
	char why[300];
	int rc;

	r->grace.fd = -1;
	rc = tmemd_arena_open(arena_path, discard, &r->arena, why, sizeof(why));
	if (rc) {
		log_err("arena: %s", why);
		return rc;
	}
	if (discard && r->arena.fd >= 0)
		log_warn("--discard-arena: the pages in the %s are thrown away", r->arena.where);
	if (r->arena.fd < 0)
		rc = store_create(sc, &r->store);
	else
		rc = store_open(sc, r->arena.fd, &r->store, why, sizeof(why));
	if (rc == -ECANCELED)
		return rc; /* stopping: main() says so */
	if (rc < 0 && strncmp(why, "host tier: ", 11) == 0) {
		/* The tier does not go with this arena: neither is touched. */
		log_err("%s; refusing it and leaving it and the arena in the %s as they are "
			"(a tier of another arena must be removed by hand; --discard-arena "
			"throws away both)", why, r->arena.where);
		return rc;
	}
	if (rc == -EPROTO || rc == -EBADMSG) {
		log_err("arena in the %s: %s; refusing it and leaving it as it is "
			"(start once with --discard-arena to throw it away)", r->arena.where, why);
		return rc;
	}
	if (rc) {
		log_err("cannot create a %llu-byte pool in the %s: %s",
			(unsigned long long)sc->arena_bytes, r->arena.where, strerror(-rc));
		return rc;
	}
	log_recovery(r);
	return 0;
}

struct doomed {
	const struct tmemd_restart *r;
	char (*names)[TMEM_CLIENT_NAME_MAX];
	unsigned n, cap;
};

/* Under the store lock: only notes who is detached (the spare check
 * takes the registry's lock, which goes before the store's). */
static int note_doomed(const char *name, const struct tmem_ident *ident, void *ctx)
{
	struct doomed *dm = ctx;

	(void)ident;
	if (dm->n == dm->cap) {
		unsigned cap = dm->cap * 2 + 8;
		void *bigger = realloc(dm->names, cap * sizeof(*dm->names));

		if (!bigger)
			return -ENOMEM;
		dm->names = bigger;
		dm->cap = cap;
	}
	snprintf(dm->names[dm->n++], TMEM_CLIENT_NAME_MAX, "%s", name);
	return 0;
}

/* The recovered clients that did not come back, less the spared ones. */
static int drop_unclaimed(struct tmemd_restart *r)
{
	struct doomed dm = { .r = r };
	int n = 0, rc;

	if (!r->spare)
		return store_drop_detached(r->store, NULL);
	rc = store_for_each_detached(r->store, note_doomed, &dm);
	for (unsigned i = 0; rc >= 0 && i < dm.n; i++)
		if (!r->spare(r->spare_ctx, dm.names[i]))
			n += store_drop_detached(r->store, dm.names[i]) > 0;
	free(dm.names);
	return rc < 0 ? rc : n;
}

static void on_grace(struct tmemd_watch *w, uint32_t events)
{
	struct tmemd_restart *r = w->data;
	uint64_t ticks;
	int n;

	(void)events;
	if (read(w->fd, &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return;
	n = drop_unclaimed(r);
	if (n > 0)
		log_info("%d recovered client%s did not come back within %u s: their pages "
			 "are freed", n, n == 1 ? "" : "s", r->grace_sec);
}

int tmemd_restart_arm_grace(struct tmemd_restart *r, struct tmemd_loop *loop,
			    unsigned grace_sec)
{
	struct itimerspec its = { .it_value = { .tv_sec = grace_sec, .tv_nsec = 1 } };
	struct tmem_store_info si;
	int rc;

	store_info(r->store, &si);
	if (si.nr_detached == 0)
		return 0;
	r->grace_sec = grace_sec;
	r->grace.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (r->grace.fd < 0)
		return -errno;
	r->grace.fn = on_grace;
	r->grace.data = r;
	if (timerfd_settime(r->grace.fd, 0, &its, NULL) < 0) {
		rc = -errno;
		goto fail;
	}
	rc = tmemd_loop_add(loop, &r->grace, EPOLLIN);
	if (rc)
		goto fail;
	log_info("%u recovered client%s may reattach within %u s", si.nr_detached,
		 si.nr_detached == 1 ? "" : "s", grace_sec);
	return 0;
fail:
	close(r->grace.fd);
	r->grace.fd = -1;
	return rc;
}

void tmemd_restart_close(struct tmemd_restart *r, struct tmemd_loop *loop)
{
	if (r->grace.fd >= 0) {
		tmemd_loop_del(loop, &r->grace);
		close(r->grace.fd);
		r->grace.fd = -1;
	}
	store_destroy(r->store);
	r->store = NULL;
	tmemd_arena_close(&r->arena);
}
