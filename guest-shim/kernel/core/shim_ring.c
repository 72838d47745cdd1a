// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Ring frontend for the tmem shim; see shim_ring.h for the contract.
 *
 * Waiting: a synchronous request first polls the ring itself
 * (spin_loops times), because tmemd usually answers within a few
 * microseconds and an interrupt costs more than that; then it sleeps
 * until the doorbell's interrupt handler reaps its response.  Every
 * wait is bounded by timeout_ms, so a backend that vanishes without a
 * xenbus state change cannot hang a guest task.
 */
#include "shim_ring.h"

#define SHIM_DEFAULT_SPINS 200u
#define SHIM_DEFAULT_TIMEOUT_MS 5000u

static unsigned long ring_lock(struct shim_ring *r)
{
	return r->env.ops->lock(r->env.priv);
}

static void ring_unlock(struct shim_ring *r, unsigned long flags)
{
	r->env.ops->unlock(r->env.priv, flags);
}

void shim_ring_init(struct shim_ring *r, const struct shim_env *env)
{
	memset(r, 0, sizeof(*r));
	r->env = *env;
	r->spin_loops = SHIM_DEFAULT_SPINS;
	r->timeout_ms = SHIM_DEFAULT_TIMEOUT_MS;
}

/* Lowest clear bit among the first n of map, set it; -1 if none. */
static int map_take(uint64_t *map, uint32_t n)
{
	uint32_t w;

	for (w = 0; w < SHIM_MAP_WORDS(n); w++) {
		uint64_t avail = ~map[w];
		uint32_t bit;

		if (w == n / 64u && n % 64u)
			avail &= (1ull << (n % 64u)) - 1;
		if (!avail)
			continue;
		bit = (uint32_t)__builtin_ctzll(avail);
		map[w] |= 1ull << bit;
		return (int)(w * 64u + bit);
	}
	return -1;
}

static void map_give(uint64_t *map, uint32_t i)
{
	map[i / 64u] &= ~(1ull << (i % 64u));
}

/*
 * Frees every tag and starts a new generation.  Tag states and gen are
 * read without the lock by sleepers (wait_done), hence the _once stores.
 */
static void do_reset(struct shim_ring *r)
{
	uint32_t i, gen = r->gen + 1;

	memset(r->tag_map, 0, sizeof(r->tag_map));
	memset(r->slot_map, 0, sizeof(r->slot_map));
	for (i = 0; i < SHIM_MAX_ENTRIES; i++)
		tmem_store_once(&r->tags[i].state, SHIM_TAG_FREE);
	r->req_prod_pvt = 0;
	r->rsp_cons = 0;
	tmem_store_once(&r->gen, gen ? gen : 1); /* 0 means "not connected" */
}

void shim_ring_write_header(void *region, uint32_t nr_entries,
			    uint32_t nr_slots)
{
	struct tmem_ring_hdr *hdr = region;

	/* Line 0 and line 1 are ours; line 2 belongs to the backend. */
	tmem_store_once(&hdr->magic, TMEM_RING_MAGIC);
	tmem_store_once(&hdr->version, TMEM_RING_VERSION);
	tmem_store_once(&hdr->nr_entries, nr_entries);
	tmem_store_once(&hdr->nr_slots, nr_slots);
	tmem_store_once(&hdr->slot_offset, tmem_slot_offset(nr_entries));
	tmem_store_once(&hdr->rsp_event, 1);
	tmem_store_release(&hdr->req_prod, 0);
}

int shim_ring_attach(struct shim_ring *r, void *region, uint32_t nr_entries,
		     uint32_t nr_slots)
{
	unsigned long flags;

	if (!region || tmem_ring_geometry_check(nr_entries, nr_slots) ||
	    nr_entries > SHIM_MAX_ENTRIES || nr_slots > SHIM_MAX_SLOTS)
		return -EINVAL;
	flags = ring_lock(r);
	do_reset(r);
	r->region = region;
	r->hdr = region;
	r->nr_entries = nr_entries;
	r->nr_slots = nr_slots;
	shim_ring_write_header(region, nr_entries, nr_slots);
	r->connected = 1;
	ring_unlock(r, flags);
	return 0;
}

static void do_detach(struct shim_ring *r)
{
	do_reset(r);
	r->connected = 0;
	r->region = NULL;
	r->hdr = NULL;
}

void shim_ring_detach(struct shim_ring *r)
{
	unsigned long flags = ring_lock(r);

	do_detach(r);
	ring_unlock(r, flags);
	r->env.ops->wake(r->env.priv);
}

uint32_t shim_ring_gen(struct shim_ring *r)
{
	unsigned long flags = ring_lock(r);
	uint32_t gen = r->connected ? r->gen : 0;

	ring_unlock(r, flags);
	return gen;
}

static void do_free_tag(struct shim_ring *r, uint32_t tag)
{
	struct shim_tag *t = &r->tags[tag];

	if (t->slot != TMEM_NO_SLOT)
		map_give(r->slot_map, t->slot);
	tmem_store_once(&t->state, SHIM_TAG_FREE);
	map_give(r->tag_map, tag);
	tmem_store_once(&r->frees, r->frees + 1);
}

/* One response, copied out of shared memory by the caller. */
static void do_complete(struct shim_ring *r, const struct tmem_rsp *rsp)
{
	uint32_t tag = (uint32_t)rsp->id;
	struct shim_tag *t;

	if ((uint32_t)(rsp->id >> 32) != r->gen || tag >= r->nr_entries ||
	    (r->tags[tag].state != SHIM_TAG_PENDING &&
	     r->tags[tag].state != SHIM_TAG_ABANDONED)) {
		r->stats.bad_responses++;
		return;
	}
	t = &r->tags[tag];
	r->stats.completed++;
	if (t->async || t->state == SHIM_TAG_ABANDONED) {
		do_free_tag(r, tag);
		return;
	}
	t->ret = rsp->ret;
	tmem_store_release(&t->state, SHIM_TAG_DONE);
}

/* Reaps every published response.  Returns non-zero if it did any work. */
static int do_poll(struct shim_ring *r)
{
	union tmem_ring_entry *ents;
	uint32_t prod;
	int work = 0;

	if (!r->connected)
		return 0;
	ents = tmem_ring_entries(r->region);
	do {
		prod = tmem_load_acquire(&r->hdr->rsp_prod);
		if ((uint32_t)(prod - r->rsp_cons) >
		    (uint32_t)(r->req_prod_pvt - r->rsp_cons)) {
			/* Answers to requests never made: stop trusting it. */
			r->stats.corrupt++;
			do_detach(r);
			return 1;
		}
		while (r->rsp_cons != prod) {
			struct tmem_rsp rsp;

			memcpy(&rsp, &ents[r->rsp_cons & (r->nr_entries - 1)],
			       sizeof(rsp));
			r->rsp_cons++;
			do_complete(r, &rsp);
			work = 1;
		}
		/* Ask for a doorbell on the next response, then re-check. */
		tmem_store_once(&r->hdr->rsp_event, r->rsp_cons + 1);
		tmem_full_barrier();
	} while (tmem_load_acquire(&r->hdr->rsp_prod) != r->rsp_cons);
	return work;
}

void shim_ring_poll(struct shim_ring *r)
{
	unsigned long flags = ring_lock(r);
	int work = do_poll(r);

	ring_unlock(r, flags);
	if (work)
		r->env.ops->wake(r->env.priv);
}

/* Allocates a tag (and a slot if want_slot); -1 if none is free. */
static int do_get_tag(struct shim_ring *r, int want_slot)
{
	int tag, slot = -1;

	if (want_slot) {
		slot = map_take(r->slot_map, r->nr_slots);
		if (slot < 0)
			return -1;
	}
	tag = map_take(r->tag_map, r->nr_entries);
	if (tag < 0) {
		if (slot >= 0)
			map_give(r->slot_map, (uint32_t)slot);
		return -1;
	}
	tmem_store_once(&r->tags[tag].state, SHIM_TAG_PENDING);
	r->tags[tag].async = 0;
	r->tags[tag].ret = 0;
	r->tags[tag].slot = slot < 0 ? TMEM_NO_SLOT : (uint32_t)slot;
	return tag;
}

static void *do_slot(struct shim_ring *r, uint32_t slot)
{
	return tmem_slot_ptr(r->region, r->nr_entries, slot);
}

/* Writes req for tag into the ring, not yet visible to the backend. */
static void do_write_req(struct shim_ring *r, const struct tmem_req *req,
			 uint32_t tag)
{
	union tmem_ring_entry *e;

	e = &tmem_ring_entries(r->region)[r->req_prod_pvt &
					  (r->nr_entries - 1)];
	memcpy(&e->req, req, sizeof(*req));
	e->req.id = (uint64_t)r->gen << 32 | tag;
	e->req.slot = r->tags[tag].slot;
	r->req_prod_pvt++;
	r->stats.posted++;
}

/* Publishes requests written since old; returns non-zero if a kick is due. */
static int do_publish(struct shim_ring *r, uint32_t old)
{
	tmem_store_release(&r->hdr->req_prod, r->req_prod_pvt);
	tmem_full_barrier();	/* publish req_prod before reading req_event */
	return tmem_ring_need_notify(old, r->req_prod_pvt,
				     tmem_load_once(&r->hdr->req_event));
}

static int do_post(struct shim_ring *r, const struct tmem_req *req,
		   uint32_t tag)
{
	uint32_t old = r->req_prod_pvt;

	do_write_req(r, req, tag);
	return do_publish(r, old);
}

/* Called without the lock, from several threads at once: an atomic add. */
static void kick(struct shim_ring *r)
{
	shim_stat_inc(&r->stats.kicks);
	r->env.ops->kick(r->env.priv);
}

static int gen_ok(struct shim_ring *r, uint32_t gen)
{
	return r->connected && r->gen == gen;
}

struct shim_wait {
	struct shim_ring *r;
	uint32_t gen;
	const struct shim_call *calls;	/* NULL: waiting for a free tag/slot */
	uint32_t n;
	uint32_t frees;	/* r->frees when the room wait began */
};

/* Sleep condition: read without the lock, re-checked under it. */
static int wait_done(void *arg)
{
	struct shim_wait *w = arg;
	struct shim_ring *r = w->r;
	uint32_t i;

	if (tmem_load_once(&r->gen) != w->gen)
		return 1;
	if (!w->calls)	/* room: retry once anything was freed */
		return tmem_load_once(&r->frees) != w->frees;
	for (i = 0; i < w->n; i++)
		if (tmem_load_acquire(&r->tags[w->calls[i].tag].state) !=
		    SHIM_TAG_DONE)
			return 0;
	return 1;
}

/* Spins, then sleeps, until w is done or the deadline passes. */
static int wait_for(struct shim_ring *r, struct shim_wait *w, uint64_t end,
		    unsigned int max_sleep_ms)
{
	const struct shim_env_ops *ops = r->env.ops;
	uint32_t i;
	uint64_t now;

	for (i = 0; i < r->spin_loops; i++) {
		shim_ring_poll(r);
		if (wait_done(w))
			return 1;
		ops->relax(r->env.priv);
	}
	now = ops->now_ms(r->env.priv);
	if (now >= end)
		return 0;
	if (end - now < max_sleep_ms)
		max_sleep_ms = (unsigned int)(end - now);
	return ops->sleep(r->env.priv, wait_done, w, max_sleep_ms);
}

static int wants_slot(const struct shim_call *c)
{
	return c->src || c->dst;
}

/* Takes a tag (and slot), waiting for room; returns with the lock held. */
static int get_tag_wait(struct shim_ring *r, uint32_t gen, int want_slot,
			uint64_t end, unsigned long *flags)
{
	struct shim_wait w = { .r = r, .gen = gen };
	int tag;

	for (;;) {
		*flags = ring_lock(r);
		if (!gen_ok(r, gen))
			return -ENOTCONN;
		tag = do_get_tag(r, want_slot);
		if (tag >= 0)
			return tag;
		w.frees = r->frees;
		ring_unlock(r, *flags);
		/* A completion frees room and wakes us; poll at 1 ms. */
		wait_for(r, &w, end, 1);
		if (r->env.ops->now_ms(r->env.priv) >= end) {
			*flags = ring_lock(r);
			return -ETIMEDOUT;
		}
	}
}

/*
 * Takes tags for calls[0..n): waits for the first, then takes what is
 * free.  Returns how many, with the lock held, or -errno.
 */
static int get_tags_wait(struct shim_ring *r, uint32_t gen,
			 struct shim_call *calls, uint32_t n, uint64_t end,
			 unsigned long *flags)
{
	int tag = get_tag_wait(r, gen, wants_slot(&calls[0]), end, flags);
	uint32_t got;

	if (tag < 0)
		return tag;
	calls[0].tag = (uint32_t)tag;
	for (got = 1; got < n; got++) {
		tag = do_get_tag(r, wants_slot(&calls[got]));
		if (tag < 0)
			break;
		calls[got].tag = (uint32_t)tag;
	}
	return (int)got;
}

/* Fills the slots and posts calls[0..n); returns non-zero if a kick is due. */
static int do_post_batch(struct shim_ring *r, const struct shim_call *calls,
			 uint32_t n)
{
	uint32_t old = r->req_prod_pvt, i;

	for (i = 0; i < n; i++) {
		const struct shim_call *c = &calls[i];

		if (c->src)
			r->env.ops->copy_to_slot(r->env.priv,
						 do_slot(r, r->tags[c->tag].slot),
						 c->src);
		do_write_req(r, &c->req, c->tag);
	}
	return do_publish(r, old);
}

/* Collects one waited-for call: its ret, its page, its tag back. */
static void do_collect(struct shim_ring *r, struct shim_call *c)
{
	struct shim_tag *t = &r->tags[c->tag];

	if (t->state != SHIM_TAG_DONE) {
		tmem_store_once(&t->state, SHIM_TAG_ABANDONED);
		r->stats.timeouts++;
		c->ret = -ETIMEDOUT;
		return;
	}
	c->ret = t->ret;
	if (c->dst && c->ret == 1)
		r->env.ops->copy_from_slot(r->env.priv, c->dst,
					   do_slot(r, t->slot));
	do_free_tag(r, c->tag);
}

int shim_ring_call_batch(struct shim_ring *r, uint32_t gen,
			 struct shim_call *calls, uint32_t n)
{
	uint64_t end = r->env.ops->now_ms(r->env.priv) + r->timeout_ms;
	struct shim_wait w = { .r = r, .gen = gen, .calls = calls };
	unsigned long flags;
	int got, need_kick;
	uint32_t i;

	if (!n)
		return -EINVAL;
	got = get_tags_wait(r, gen, calls, n, end, &flags);
	if (got < 0) {
		ring_unlock(r, flags);
		return got;
	}
	need_kick = do_post_batch(r, calls, (uint32_t)got);
	ring_unlock(r, flags);
	if (need_kick)
		kick(r);

	w.n = (uint32_t)got;
	while (!wait_done(&w) && r->env.ops->now_ms(r->env.priv) < end)
		wait_for(r, &w, end, r->timeout_ms);

	flags = ring_lock(r);
	for (i = 0; i < (uint32_t)got; i++) {
		if (!gen_ok(r, gen))
			calls[i].ret = -ENOTCONN; /* detach freed the tags */
		else
			do_collect(r, &calls[i]);
	}
	ring_unlock(r, flags);
	return got;
}

int shim_ring_call(struct shim_ring *r, uint32_t gen,
		   const struct tmem_req *req, const void *src, void *dst)
{
	struct shim_call c = { .req = *req, .src = src, .dst = dst };
	int got = shim_ring_call_batch(r, gen, &c, 1);

	return got < 0 ? got : c.ret;
}

int shim_ring_post_put(struct shim_ring *r, uint32_t gen,
		       const struct tmem_req *req, const void *src)
{
	unsigned long flags = ring_lock(r);
	int tag, need_kick;

	if (!gen_ok(r, gen)) {
		ring_unlock(r, flags);
		return -ENOTCONN;
	}
	tag = do_get_tag(r, 1);
	if (tag < 0) {
		r->stats.no_slot++;
		ring_unlock(r, flags);
		return -EBUSY;
	}
	r->tags[tag].async = 1;
	r->env.ops->copy_to_slot(r->env.priv, do_slot(r, r->tags[tag].slot),
				 src);
	need_kick = do_post(r, req, (uint32_t)tag);
	ring_unlock(r, flags);
	if (need_kick)
		kick(r);
	return 0;
}

int shim_ring_post_nodata(struct shim_ring *r, uint32_t gen,
			  const struct tmem_req *req, int may_spin)
{
	const struct shim_env_ops *ops = r->env.ops;
	uint64_t end = ops->now_ms(r->env.priv) + r->timeout_ms;
	unsigned long flags;
	int tag, need_kick;

	for (;;) {
		flags = ring_lock(r);
		if (!gen_ok(r, gen)) {
			ring_unlock(r, flags);
			return -ENOTCONN;
		}
		tag = do_get_tag(r, 0);
		if (tag >= 0)
			break;
		ring_unlock(r, flags);
		if (!may_spin)
			return -EBUSY;
		/* Busy-poll: this may run with interrupts off. */
		if (ops->now_ms(r->env.priv) >= end) {
			flags = ring_lock(r);
			r->stats.timeouts++;
			ring_unlock(r, flags);
			return -ETIMEDOUT;
		}
		shim_ring_poll(r);
		ops->relax(r->env.priv);
	}
	r->tags[tag].async = 1;
	need_kick = do_post(r, req, (uint32_t)tag);
	ring_unlock(r, flags);
	if (need_kick)
		kick(r);
	return 0;
}
