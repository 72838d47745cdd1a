/* SPDX-License-Identifier: MIT */
/*
 * libtmem's request engine over one raw ring.
 *
 * tmemd answers requests in ring order, writing each response over its
 * request's entry, so response n belongs to request n: the pending
 * table is indexed like the ring, and the request id is its sequence
 * number (checked on the way back; a mismatch means a broken peer).
 * A request holds its ring entry and its data slot until its response
 * is reaped.
 *
 * Waiting: poll rsp_prod for an adaptive, bounded window first (a
 * cross-core eventfd wakeup costs ~30 µs on VMs, tmemd usually answers
 * in one or two), then arm rsp_event and sleep until tmemd's doorbell
 * message arrives on the socket.
 *
 * Locking: c->lock is held for a whole call, including its waits.
 *
 * When tmemd goes away (the socket hangs up), the next wait reconnects
 * (reconnect.c) and settles what was in flight; c->epoch then changes,
 * which tells a waiting call that its answer is already in.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conn_internal.h"
#include "tmem_barrier.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct tmem_ring_hdr *hdr(struct tmem_conn *c)
{
	return c->raw.region;
}

static void *slot_ptr(struct tmem_conn *c, uint32_t slot)
{
	return tmem_slot_ptr(c->raw.region, c->raw.nr_entries, slot);
}

/*
 * Slots are handed out oldest-freed first, so with more slots than
 * requests in flight a slot is rewritten long after tmemd last read it,
 * when its lines have left tmemd's core cache: the copy into it then
 * needs no cross-core invalidation.
 */
static uint32_t take_slot(struct tmem_conn *c)
{
	uint32_t slot = c->free_slots[c->free_head];

	c->free_head = (c->free_head + 1) % c->raw.nr_slots;
	c->nr_free--;
	return slot;
}

static void free_slot(struct tmem_conn *c, uint32_t slot)
{
	c->free_slots[(c->free_head + c->nr_free) % c->raw.nr_slots] = slot;
	c->nr_free++;
}

/* Consumes the responses tmemd has published.  Returns how many. */
static unsigned do_reap(struct tmem_conn *c)
{
	union tmem_ring_entry *ents = tmem_ring_entries(c->raw.region);
	uint32_t prod = tmem_load_acquire(&hdr(c)->rsp_prod);
	unsigned n = 0;

	if ((uint32_t)(prod - c->rsp_cons) > (uint32_t)(c->req_prod_pvt - c->rsp_cons)) {
		c->dead = -EPROTO;
		return 0;
	}
	while (c->rsp_cons != prod) {
		struct pending *p = &c->pend[c->rsp_cons & c->mask];
		struct tmem_rsp rsp;

		memcpy(&rsp, &ents[c->rsp_cons & c->mask].rsp, sizeof(rsp));
		if (rsp.id != c->rsp_cons || rsp.op != p->op) {
			c->dead = -EPROTO;
			return n;
		}
		if (p->op == TMEM_OP_GET_PAGE && rsp.ret == 1 && p->dst)
			memcpy(p->dst, slot_ptr(c, p->slot), TMEM_PAGE_SIZE);
		if (p->op == TMEM_OP_NEW_POOL && rsp.ret >= 0 && rsp.ret < 32)
			c->known_pools |= 1u << rsp.ret;
		if (p->op == TMEM_OP_DESTROY_POOL && rsp.ret == 1 &&
		    p->req.pool_id >= 0 && p->req.pool_id < 32)
			c->known_pools &= ~(1u << p->req.pool_id);
		if (p->slot != TMEM_NO_SLOT)
			free_slot(c, p->slot);
		if (p->result)
			*p->result = rsp.ret;
		c->rsp_cons++;
		n++;
	}
	return n;
}

static bool response_waiting(struct tmem_conn *c)
{
	return tmem_load_acquire(&hdr(c)->rsp_prod) != c->rsp_cons;
}

/* Spins, then sleeps, until at least one response can be reaped. */
static void do_wait_progress(struct tmem_conn *c)
{
	uint64_t start = now_ns(), t;
	int rc;

	do {
		if (response_waiting(c)) {
			t = now_ns() - start;
			if (2 * t > c->spin_ns)
				c->spin_ns = 2 * t > SPIN_MAX_NS ? SPIN_MAX_NS : 2 * t;
			return;
		}
		/* After a few µs, yield between polls: if threads outnumber
		 * CPUs, tmemd's worker may be waiting for this one. */
		if (now_ns() - start > SPIN_YIELD_NS)
			sched_yield();
		else
			tmem_cpu_relax();
	} while (now_ns() - start < c->spin_ns);
	c->spin_ns = c->spin_ns / 2 < SPIN_MIN_NS ? SPIN_MIN_NS : c->spin_ns / 2;
	for (;;) {
		tmem_store_once(&hdr(c)->rsp_event, c->rsp_cons + 1);
		/* rsp_event store before the rsp_prod load (tmem_barrier.h). */
		tmem_full_barrier();
		if (response_waiting(c))
			return;
		rc = tmem_raw_wait(&c->raw, SLEEP_MS);
		if (rc < 0) {
			c->dead = rc;
			return;
		}
	}
}

/* Reaps, waiting if nothing is there.  0 or the connection's error; a
 * lost tmemd is reconnected to first (then c->epoch has moved on). */
static int do_make_progress(struct tmem_conn *c)
{
	if (!c->dead && !do_reap(c) && !c->dead)
		do_wait_progress(c);
	if (!c->dead)
		do_reap(c);
	if (c->dead == -EPIPE && c->reconnect_ms && !c->recovering)
		return conn_recover(c);
	return c->dead;
}

static void do_push(struct tmem_conn *c)
{
	uint32_t old = c->req_prod_pvt - 1;

	tmem_store_release(&hdr(c)->req_prod, c->req_prod_pvt);
	/* req_prod store before the req_event load. */
	tmem_full_barrier();
	if (tmem_ring_need_notify(old, c->req_prod_pvt,
				  tmem_load_once(&hdr(c)->req_event)))
		tmem_raw_kick(&c->raw);
}

/*
 * Queues one request; src is copied into its slot (PUT), dst receives
 * the page (GET).  Returns the request's sequence number via *seq.
 */
static int do_submit(struct tmem_conn *c, struct tmem_req *req,
		     const void *src, void *dst, int *result, uint32_t *seq)
{
	bool needs_slot = req->op == TMEM_OP_PUT_PAGE || req->op == TMEM_OP_GET_PAGE;
	struct pending *p;
	int rc;

	if (c->dead)
		return c->dead;
	while (c->req_prod_pvt - c->rsp_cons >= c->raw.nr_entries ||
	       (needs_slot && c->nr_free == 0)) {
		rc = do_make_progress(c);
		if (rc)
			return rc;
	}
	*seq = c->req_prod_pvt;
	p = &c->pend[*seq & c->mask];
	p->result = result;
	p->dst = dst;
	p->op = req->op;
	p->slot = needs_slot ? take_slot(c) : TMEM_NO_SLOT;
	if (src)
		memcpy(slot_ptr(c, p->slot), src, TMEM_PAGE_SIZE);
	req->id = *seq;
	req->slot = p->slot;
	p->req = *req;
	memcpy(&tmem_ring_entries(c->raw.region)[*seq & c->mask].req, req,
	       sizeof(*req));
	c->req_prod_pvt++;
	do_push(c);
	return 0;
}

/* Submit, then reap until its response is in (or a reconnect settled it). */
int conn_call_locked(struct tmem_conn *c, struct tmem_req *req, const void *src,
		     void *dst)
{
	uint32_t seq, epoch;
	int ret = 0, rc;

	rc = do_submit(c, req, src, dst, &ret, &seq);
	epoch = c->epoch;
	while (!rc && c->epoch == epoch && (int32_t)(c->rsp_cons - seq) <= 0)
		rc = do_make_progress(c);
	return rc ? rc : ret;
}

static int call(struct tmem_conn *c, struct tmem_req *req, const void *src,
		void *dst)
{
	int ret;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	ret = conn_call_locked(c, req, src, dst);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

void conn_reset_ring(struct tmem_conn *c)
{
	c->req_prod_pvt = c->rsp_cons = 0;
	for (uint32_t i = 0; i < c->raw.nr_slots; i++)
		c->free_slots[i] = i;
	c->free_head = 0;
	c->nr_free = c->raw.nr_slots;
	c->dead = 0;
}

static int submit_async(struct tmem_conn *c, struct tmem_req *req,
			const void *src, void *dst, int *result)
{
	uint32_t seq;
	int rc;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	rc = do_submit(c, req, src, dst, result, &seq);
	/* Collect what is ready without waiting, to free slots early. */
	if (!rc)
		do_reap(c);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int tmem_new_pool(struct tmem_conn *c, uint32_t flags,
		  const struct tmem_uuid *uuid)
{
	struct tmem_req r;

	tmem_req_init(&r, TMEM_OP_NEW_POOL, 0, NULL, 0);
	r.flags = flags;
	if (uuid) {
		r.oid[0] = uuid->lo;
		r.oid[1] = uuid->hi;
	}
	return call(c, &r, NULL, NULL);
}

int tmem_destroy_pool(struct tmem_conn *c, int32_t pool_id)
{
	struct tmem_req r;

	tmem_req_init(&r, TMEM_OP_DESTROY_POOL, pool_id, NULL, 0);
	return call(c, &r, NULL, NULL);
}

int tmem_put(struct tmem_conn *c, int32_t pool_id, const struct tmem_oid *oid,
	     uint32_t index, const void *page)
{
	struct tmem_req r;

	if (!oid || !page)
		return -EINVAL;
	tmem_req_init(&r, TMEM_OP_PUT_PAGE, pool_id, oid, index);
	return call(c, &r, page, NULL);
}

int tmem_get(struct tmem_conn *c, int32_t pool_id, const struct tmem_oid *oid,
	     uint32_t index, void *page)
{
	struct tmem_req r;

	if (!oid || !page)
		return -EINVAL;
	tmem_req_init(&r, TMEM_OP_GET_PAGE, pool_id, oid, index);
	return call(c, &r, NULL, page);
}

int tmem_flush_page(struct tmem_conn *c, int32_t pool_id,
		    const struct tmem_oid *oid, uint32_t index)
{
	struct tmem_req r;

	if (!oid)
		return -EINVAL;
	tmem_req_init(&r, TMEM_OP_FLUSH_PAGE, pool_id, oid, index);
	return call(c, &r, NULL, NULL);
}

int tmem_flush_object(struct tmem_conn *c, int32_t pool_id,
		      const struct tmem_oid *oid)
{
	struct tmem_req r;

	if (!oid)
		return -EINVAL;
	tmem_req_init(&r, TMEM_OP_FLUSH_OBJECT, pool_id, oid, 0);
	return call(c, &r, NULL, NULL);
}

int tmem_put_async(struct tmem_conn *c, int32_t pool_id,
		   const struct tmem_oid *oid, uint32_t index,
		   const void *page, int *result)
{
	struct tmem_req r;

	if (!oid || !page)
		return -EINVAL;
	tmem_req_init(&r, TMEM_OP_PUT_PAGE, pool_id, oid, index);
	return submit_async(c, &r, page, NULL, result);
}

int tmem_get_async(struct tmem_conn *c, int32_t pool_id,
		   const struct tmem_oid *oid, uint32_t index, void *page,
		   int *result)
{
	struct tmem_req r;

	if (!oid || !page)
		return -EINVAL;
	tmem_req_init(&r, TMEM_OP_GET_PAGE, pool_id, oid, index);
	return submit_async(c, &r, NULL, page, result);
}

int tmem_wait_all(struct tmem_conn *c)
{
	int rc = 0;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	while (!rc && c->rsp_cons != c->req_prod_pvt)
		rc = do_make_progress(c);
	if (!rc)
		rc = c->dead;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* $TMEM_RECONNECT_MS: how long to keep trying after tmemd went away. */
unsigned conn_reconnect_window_ms(void)
{
	const char *env = getenv("TMEM_RECONNECT_MS");
	char *end;
	unsigned long v;

	if (!env || !*env)
		return TMEM_DEFAULT_RECONNECT_MS;
	v = strtoul(env, &end, 10);
	return *end || v > 3600000ul ? TMEM_DEFAULT_RECONNECT_MS : (unsigned)v;
}

static const char *default_path(char *buf, size_t len)
{
	const char *env = getenv("TMEM_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (env && env[0])
		return env;
	if (geteuid() != 0 && xdg && xdg[0] == '/') {
		snprintf(buf, len, "%s/tmemd/guest.sock", xdg);
		return buf;
	}
	return "/run/tmemd/guest.sock";
}

int tmem_connect_geometry(const char *path, const char *name,
			  uint32_t nr_entries, uint32_t nr_slots,
			  struct tmem_conn **out)
{
	struct tmem_conn *c;
	int32_t refusal = 0;
	char buf[256];
	int rc;

	if (!name || !out || tmem_ring_geometry_check(nr_entries, nr_slots))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->raw.kick_fd = c->raw.sock_fd = -1;
	c->pend = calloc(nr_entries, sizeof(*c->pend));
	c->free_slots = calloc(nr_slots, sizeof(*c->free_slots));
	if (!c->pend || !c->free_slots) {
		rc = -ENOMEM;
		goto fail;
	}
	if (!path)
		path = default_path(buf, sizeof(buf));
	if (strlen(path) >= sizeof(c->path) || strlen(name) >= sizeof(c->name)) {
		rc = strlen(path) >= sizeof(c->path) ? -ENAMETOOLONG : -EINVAL;
		goto fail;
	}
	rc = tmem_raw_connect_session(path, name, nr_entries, nr_slots, &c->sess,
				      &c->raw, &refusal);
	if (rc == -EPROTO && refusal)
		rc = refusal;
	if (rc)
		goto fail;
	pthread_mutex_init(&c->lock, NULL);
	c->mask = nr_entries - 1;
	conn_reset_ring(c);
	c->spin_ns = SPIN_MAX_NS;
	strcpy(c->path, path);
	strcpy(c->name, name);
	c->reconnect_ms = conn_reconnect_window_ms();
	*out = c;
	return 0;
fail:
	free(c->pend);
	free(c->free_slots);
	free(c);
	return rc;
}

int tmem_connect(const char *path, const char *name, struct tmem_conn **out)
{
	return tmem_connect_geometry(path, name, TMEM_DEFAULT_ENTRIES,
				     TMEM_DEFAULT_SLOTS, out);
}

uint32_t tmem_conn_client_id(const struct tmem_conn *c)
{
	return c->raw.client_id;
}

uint64_t tmem_conn_reconnects(struct tmem_conn *c)
{
	uint64_t n;

	pthread_mutex_lock(&c->lock);
	n = c->reconnects;
	pthread_mutex_unlock(&c->lock);
	return n;
}

void tmem_disconnect(struct tmem_conn *c)
{
	if (!c)
		return;
	tmem_wait_all(c);
	tmem_raw_disconnect(&c->raw);
	pthread_mutex_destroy(&c->lock);
	free(c->pend);
	free(c->free_slots);
	free(c);
}
