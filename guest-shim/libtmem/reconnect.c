/* SPDX-License-Identifier: MIT */
/*
 * Reconnecting to a restarted tmemd (tmem.h, "Restarts").  The old ring
 * is dead: tmemd answers nothing on it, and may or may not have carried
 * out what was on it before it died.  So each request that was in flight
 * is settled on a new ring, in ring order, in a way that is right
 * whichever happened:
 *
 *   put           flush its handle, report "refused" (0): a put that was
 *                 never answered must not leave an older copy gettable;
 *   get, flushes  sent again: repeating them changes nothing (an
 *                 exclusive get done twice misses, which is allowed);
 *   new pool      sent again, after destroying any pool tmemd holds that
 *                 no answer told us of (the first try's);
 *   destroy pool  sent again if tmemd still has the pool, else done.
 *
 * If tmemd dies again meanwhile, the connection is made once more and the
 * settling goes on where it stopped, until c->reconnect_ms is spent.
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conn_internal.h"

#define BACKOFF_MIN_MS 10u
#define BACKOFF_MAX_MS 500u

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000u, (long)(ms % 1000u) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A new ring under the same name and session, tried until deadline. */
static int connect_again(struct tmem_conn *c, uint64_t deadline)
{
	unsigned wait = BACKOFF_MIN_MS;

	for (;;) {
		struct tmem_raw_session s = c->sess;
		struct tmem_raw_ring fresh;
		int32_t refusal = 0;
		int rc = tmem_raw_connect_session(c->path, c->name, c->raw.nr_entries,
						  c->raw.nr_slots, &s, &fresh, &refusal);

		if (rc == 0) {
			tmem_raw_disconnect(&c->raw);
			c->raw = fresh;
			c->sess = s;
			conn_reset_ring(c);
			return 0;
		}
		if (now_ms() + wait > deadline)
			return rc == -EPROTO && refusal ? refusal : rc;
		sleep_ms(wait);
		wait = wait * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : wait * 2;
	}
}

/* Pools tmemd gave back that no answer told the caller of go; pools the
 * caller knew that tmemd no longer has are forgotten. */
static int drop_orphans(struct tmem_conn *c)
{
	uint32_t orphans = c->sess.pools & ~c->known_pools;

	c->known_pools &= c->sess.pools;
	for (int32_t id = 0; id < 32; id++) {
		struct tmem_req r = { .op = TMEM_OP_DESTROY_POOL, .pool_id = id,
				      .slot = TMEM_NO_SLOT };

		if (!(orphans & (1u << id)))
			continue;
		(void)conn_call_locked(c, &r, NULL, NULL);
		if (c->dead)
			return c->dead;
	}
	return 0;
}

/* Settle one lost request on the new ring.  0, or the connection died. */
static int settle(struct tmem_conn *c, const struct pending *p)
{
	struct tmem_req r = p->req;
	int ret;

	r.slot = TMEM_NO_SLOT;
	if (p->op == TMEM_OP_PUT_PAGE) {
		r.op = TMEM_OP_FLUSH_PAGE;
		(void)conn_call_locked(c, &r, NULL, NULL);
		ret = 0;
	} else if (p->op == TMEM_OP_DESTROY_POOL && r.pool_id >= 0 && r.pool_id < 32 &&
		   !(c->sess.pools & (1u << r.pool_id))) {
		ret = 1; /* done before tmemd died */
	} else {
		ret = conn_call_locked(c, &r, NULL, p->dst);
	}
	if (c->dead)
		return c->dead;
	if (p->result)
		*p->result = ret;
	return 0;
}

/* Gave up: the connection stays lost (-EPIPE, whatever the last try
 * said), and so do the requests left. */
static int give_up(struct tmem_conn *c, const struct pending *lost, uint32_t from,
		   uint32_t n)
{
	for (uint32_t i = from; i < n; i++)
		if (lost[i].result)
			*lost[i].result = -EPIPE;
	c->dead = -EPIPE;
	c->reconnect_ms = 0;
	return c->dead;
}

static int settle_all(struct tmem_conn *c, const struct pending *lost, uint32_t n)
{
	uint64_t deadline = now_ms() + c->reconnect_ms;
	uint32_t done = 0;
	int rc;

	for (;;) {
		rc = connect_again(c, deadline);
		if (rc)
			return give_up(c, lost, done, n);
		if (!(c->sess.flags & TMEM_LOCAL_RESUMED))
			return give_up(c, lost, done, n); /* our pools are gone */
		rc = drop_orphans(c);
		while (!rc && done < n && (rc = settle(c, &lost[done])) == 0)
			done++;
		if (!rc)
			return 0;
	}
}

int conn_recover(struct tmem_conn *c)
{
	uint32_t n = c->req_prod_pvt - c->rsp_cons;
	struct pending *lost = calloc(n ? n : 1, sizeof(*lost));
	int rc;

	if (!lost)
		return give_up(c, NULL, 0, 0);
	for (uint32_t i = 0; i < n; i++)
		lost[i] = c->pend[(c->rsp_cons + i) & c->mask];
	c->recovering = true;
	rc = settle_all(c, lost, n);
	c->recovering = false;
	free(lost);
	if (rc == 0) {
		c->epoch++;
		c->reconnects++;
	}
	return rc;
}

/* Asks tmemd to park this client for a migration: 0 parked, tmemd's
 * -errno (nothing kept), or -EPIPE when the socket closed unanswered
 * (tmemd died: nothing parked, the pages are there after its restart). */
static int park_once(struct tmem_conn *c)
{
	struct tmem_local_op op = { .magic = TMEM_LOCAL_MAGIC, .op = TMEM_LOCAL_OP_PARK }, ans;
	struct pollfd p = { .fd = c->raw.sock_fd, .events = POLLIN };

	if (send(c->raw.sock_fd, &op, sizeof(op), MSG_NOSIGNAL) != (ssize_t)sizeof(op))
		return -EPIPE;
	for (;;) {
		int n = poll(&p, 1, 30000);
		ssize_t got;

		if (n <= 0)
			return n == 0 ? -ETIMEDOUT : -errno;
		/* One-byte doorbells may come first; the answer is the one
		 * message of its size. */
		got = recv(c->raw.sock_fd, &ans, sizeof(ans), MSG_DONTWAIT);
		if (got == (ssize_t)sizeof(ans) && ans.magic == TMEM_LOCAL_MAGIC &&
		    ans.op == TMEM_LOCAL_OP_PARK)
			return ans.status > -4096 && ans.status <= 0 ? ans.status : -EPROTO;
		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
			return -EPIPE;
	}
}

/* park_once() until deadline: a tmemd that died first is reconnected to
 * (conn_recover(), the pages resumed) and asked again. */
static int park_on(struct tmem_conn *c, uint64_t deadline)
{
	int rc;

	for (;;) {
		rc = park_once(c);
		if (rc != -EPIPE || now_ms() >= deadline)
			return rc;
		c->dead = -EPIPE;
		rc = conn_recover(c);
		if (rc)
			return rc;
	}
}

/*
 * Attaches at c->path with the pages resumed, trying again until
 * deadline: the tmemd there may be restarting, or its peer.  A welcome
 * without them is a fresh client under a new token: it is let go and
 * the old token kept, since the pages may still come.  -ENOENT: they
 * never did.
 */
static int attach_resumed(struct tmem_conn *c, uint64_t deadline)
{
	const struct tmem_raw_session old = c->sess;
	int rc;

	for (;;) {
		rc = connect_again(c, deadline);
		if (!rc && (c->sess.flags & TMEM_LOCAL_RESUMED))
			return 0;
		if (!rc)
			tmem_raw_disconnect(&c->raw); /* the fresh client goes */
		c->sess = old;
		if (!rc)
			rc = -ENOENT;
		if (now_ms() + BACKOFF_MAX_MS > deadline)
			return rc;
		sleep_ms(BACKOFF_MAX_MS);
	}
}

int tmem_migrate(struct tmem_conn *c, const char *path)
{
	uint64_t deadline;
	bool parked;
	int rc;

	if (!c || !path || strlen(path) >= sizeof(c->path))
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	parked = c->parked;
	rc = parked ? 0 : c->dead;
	pthread_mutex_unlock(&c->lock);
	if (!rc && !parked)
		rc = tmem_wait_all(c);
	if (rc)
		return rc;
	pthread_mutex_lock(&c->lock);
	deadline = now_ms() + conn_reconnect_window_ms();
	if (!parked)
		rc = park_on(c, deadline);
	if (rc == -EPIPE || rc == -ETIMEDOUT) {
		/* Not parked: the connection stays as it was (a lost tmemd
		 * is reconnected to by the next call, as ever). */
		pthread_mutex_unlock(&c->lock);
		return rc;
	}
	if (!rc) {
		c->parked = true;
		strcpy(c->path, path);
		rc = attach_resumed(c, deadline);
	}
	if (!rc) {
		c->parked = false;
		c->dead = 0;
		c->reconnect_ms = conn_reconnect_window_ms();
		rc = drop_orphans(c);
		if (!rc)
			c->epoch++; /* as after a reconnect: older seqs are void */
	}
	if (rc) {
		/* Calls fail at once; only tmem_migrate() tries again. */
		c->dead = -EPIPE;
		c->reconnect_ms = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}
