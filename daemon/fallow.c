/* SPDX-License-Identifier: MIT */
/* The elastic pool's controller (fallow.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/statvfs.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "fallow.h"
#include "log.h"

#define TICK_MS 1000
#define SHORT_TICK_MS 250   /* while under pressure or a Xen change */
#define STALL_PCT 10.0      /* PSI "some" share of a tick that is pressure */
#define MIN_TARGET (64u * TMEM_PAGE_SIZE)
#define LOG_EVERY_NS (10ull * 1000000000ull)
#define MiB (1024.0 * 1024.0)
#define TIER_ROOM_BYTES (1u << 20) /* less free in the host tier: as good as full */

struct tmemd_fallow {
	struct tmemd_fallow_config cfg;
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmemd_loop *loop;
	struct tmemd_watch timer;
	struct tmemd_host_mem_paths paths;
	const struct tmemd_fallow_host_ops *host;
	void *host_ctx;
	uint64_t target;          /* bytes */
	uint64_t last_ns;         /* the last tick */
	uint64_t last_stall;      /* PSI total then */
	uint64_t pressure_ns;     /* the last pressure or release: growth waits grow_delay */
	uint64_t logged_ns;
	uint64_t held;            /* tmemctl release: bytes held back until grow_delay passes */
	bool short_tick;
	bool stall_seen;          /* the last tick stalled: a second one is pressure */
	bool started;             /* the first target (at start) is no reclaim */
	struct tmemd_fallow_stats st;
};

const char *tmemd_reclaim_cause_name(enum tmemd_reclaim_cause c)
{
	static const char *const names[TMEMD_NR_RECLAIM_CAUSES] = {
		[TMEMD_RECLAIM_PRESSURE] = "pressure",
		[TMEMD_RECLAIM_LOW_FREE] = "low_free",
		[TMEMD_RECLAIM_TOOLSTACK] = "toolstack",
		[TMEMD_RECLAIM_ADMIN] = "admin",
	};

	return c < TMEMD_NR_RECLAIM_CAUSES ? names[c] : "?";
}

static void arm(struct tmemd_fallow *f, unsigned ms)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 },
	};

	(void)timerfd_settime(f->timer.fd, 0, &its, NULL);
}

static uint64_t used_bytes(struct tmemd_fallow *f)
{
	struct tmem_arena_counts a;

	store_arena_counts(f->store, &a);
	return a.used_pages * TMEM_PAGE_SIZE;
}

/* A host tier that can take what is over the target (spiller.h). */
static bool tier_has_room(struct tmemd_fallow *f)
{
	struct tmem_tier_info ti;

	if (!f->st.spilling)
		return false;
	store_tier_info(f->store, &ti);
	return ti.free_bytes >= TIER_ROOM_BYTES;
}

/* Sets the target and counts what it took; logs at most every 10 s. */
static void apply_target(struct tmemd_fallow *f, uint64_t bytes,
			 enum tmemd_reclaim_cause cause, bool falling)
{
	uint64_t evicted = 0, now = tmemd_now_ns();
	int rc;

	if (bytes < MIN_TARGET)
		bytes = MIN_TARGET;
	if (bytes == f->target)
		return;
	rc = tmem_policy_set_target(f->policy, bytes / TMEM_PAGE_SIZE, &evicted);
	f->st.refusing_persistent = rc == -EBUSY && !tier_has_room(f);
	if (rc == -EBUSY && f->cfg.over_target)
		f->cfg.over_target(f->cfg.over_ctx);
	f->st.target_changes++;
	if (falling && f->started) {
		f->st.reclaim_events[cause]++;
		f->st.reclaim_pages[cause] += evicted;
	}
	if (now - f->logged_ns >= LOG_EVERY_NS || (rc == -EBUSY && !falling)) {
		f->logged_ns = now;
		log_info("pool target %.1f MiB -> %.1f MiB (%s; %llu pages evicted%s)",
			 f->target / MiB, bytes / MiB,
			 falling ? tmemd_reclaim_cause_name(cause) : "host has room",
			 (unsigned long long)evicted,
			 rc != -EBUSY ? "" : !f->st.refusing_persistent
			 ? "; persistent pages fill it: moving some to the host tier"
			 : "; persistent pages fill it: persistent puts refused");
	}
	f->target = bytes;
}

/* memory = auto under Xen: the ceiling is dom0's maximum, which it may
 * balloon up to; the arena grows to it (address space only). */
static void grow_ceiling(struct tmemd_fallow *f, uint64_t dom0_max)
{
	struct tmem_arena_counts a;

	if (!f->cfg.autosize || dom0_max <= f->cfg.ceiling)
		return;
	store_arena_counts(f->store, &a);
	if (tmem_policy_resize(f->policy, dom0_max / TMEM_PAGE_SIZE) == 0 ||
	    tmem_policy_resize(f->policy, f->cfg.arena_max / TMEM_PAGE_SIZE) == 0) {
		store_arena_counts(f->store, &a);
		log_info("pool ceiling %.1f MiB -> %.1f MiB: dom0 may balloon up to %.1f MiB",
			 f->cfg.ceiling / MiB, a.total_pages * TMEM_PAGE_SIZE / MiB, dom0_max / MiB);
		f->cfg.ceiling = a.total_pages * TMEM_PAGE_SIZE;
	}
}

/* Under Xen: what dom0 is about to lose to its balloon, and room to grow
 * into Xen's free memory by raising dom0's target. */
static void xen_sample(struct tmemd_fallow *f, uint64_t *pending_down, uint64_t *xen_room)
{
	struct tmemd_fallow_xen *x = &f->st.x;

	*pending_down = 0;
	*xen_room = 0;
	if (!f->host || f->host->sample(f->host_ctx, x) < 0)
		return;
	f->st.xen = true;
	grow_ceiling(f, x->dom0_max);
	if (x->dom0_now > x->dom0_target)
		*pending_down = x->dom0_now - x->dom0_target;
	if (x->xen_free > f->cfg.xen_reserve && x->dom0_max > x->dom0_target) {
		uint64_t free_room = x->xen_free - f->cfg.xen_reserve;
		uint64_t max_room = x->dom0_max - x->dom0_target;

		*xen_room = free_room < max_room ? free_room : max_room;
	}
}

/* Raise dom0's balloon target to let the pool grow into Xen's free
 * memory: only while the pool is nearly full, a step at a time. */
static void xen_grow(struct tmemd_fallow *f, uint64_t used, uint64_t want_more,
		     uint64_t xen_room)
{
	uint64_t step = f->cfg.ceiling / 16;

	/* Only once dom0 reached the last target: a balloon driver that cannot
	 * grow (no room above dom0's boot size) must not be asked for ever more. */
	if (!f->host || !xen_room || used + used / 8 < f->target ||
	    f->st.x.dom0_now + (8u << 20) < f->st.x.dom0_target)
		return;
	if (step > want_more)
		step = want_more;
	if (step > xen_room)
		step = xen_room;
	if (step < 4 * 1024 * 1024)
		return;
	if (f->host->set_dom0_target(f->host_ctx, f->st.x.dom0_target + step) == 0) {
		f->st.ballooned += step;
		log_info("dom0 balloon target +%.1f MiB for the tmem pool (Xen free %.1f MiB)",
			 step / MiB, f->st.x.xen_free / MiB);
	}
}

/*
 * A tmpfs that fills up under the arena file: frames get blocks before
 * their first touch (pools/frames.c: a put is refused), but descriptors
 * are touched where they lie, so the target keeps clear of the end by a
 * margin (a sixteenth of what is in use, and 32 MiB).
 */
static int64_t fs_headroom(const struct tmemd_fallow *f, uint64_t used)
{
	struct statvfs sv;

	if (!f->cfg.arena_path || statvfs(f->cfg.arena_path, &sv) < 0)
		return INT64_MAX;
	return (int64_t)((uint64_t)sv.f_bavail * sv.f_frsize) - (int64_t)(used / 16) -
	       (int64_t)(32u << 20);
}

/* One tick's view of the host. */
struct reading {
	uint64_t now, used, down, xen_room, want;
	int64_t headroom;
	bool fs_bound;
};

static bool grow_delay_passed(const struct tmemd_fallow *f, uint64_t now)
{
	return now - f->pressure_ns >= (uint64_t)f->cfg.grow_delay_sec * 1000000000ull;
}

/* Reads the host (meminfo, cgroup, PSI, Xen) into r and f->st; what the
 * pool could have: want = in use + headroom, at most the ceiling. */
static int sample(struct tmemd_fallow *f, struct reading *r)
{
	uint64_t dt, reserve = f->cfg.reserve;
	struct tmemd_host_mem h;

	r->now = tmemd_now_ns();
	dt = r->now - f->last_ns;
	r->used = used_bytes(f);
	f->last_ns = r->now;
	if (tmemd_host_mem_read(&f->paths, &h) < 0)
		return -EIO;
	xen_sample(f, &r->down, &r->xen_room);
	if (h.cgroup_limited && reserve > h.cgroup_limit / 16)
		reserve = h.cgroup_limit / 16;
	f->st.stall_pct = h.have_psi && f->st.have_psi && dt ?
		(double)(h.stall_usec - f->last_stall) * 100000.0 / (double)dt : 0;
	f->st.have_psi = h.have_psi;
	f->last_stall = h.stall_usec;
	f->st.host_available = h.available;
	f->st.cgroup_limited = h.cgroup_limited;
	r->headroom = (int64_t)h.available - (int64_t)reserve - (int64_t)r->down -
		      (int64_t)f->held;
	/* A full arena filesystem: more memory from Xen would not help. */
	r->fs_bound = fs_headroom(f, r->used) < r->headroom;
	if (r->fs_bound)
		r->headroom = fs_headroom(f, r->used);
	r->want = r->headroom > 0 || (uint64_t)-r->headroom < r->used ?
		r->used + (uint64_t)r->headroom : 0;
	if (r->want > f->cfg.ceiling)
		r->want = f->cfg.ceiling;
	return 0;
}

/* The target from one reading: falls at once, grows after grow_delay. */
static void steer(struct tmemd_fallow *f, const struct reading *r)
{
	uint64_t hyst = f->cfg.ceiling / 64 > 4u << 20 ? f->cfg.ceiling / 64 : 4u << 20;
	uint64_t used = r->used, want = r->want;
	bool stalled;

	/* One stalled tick may be one slow compaction or a descheduled vCPU
	 * (a nested dom0 shows both); stalls in two ticks running are
	 * pressure.  The first one shortens the tick, so the second comes
	 * within 250 ms. */
	stalled = f->st.stall_pct >= STALL_PCT && f->stall_seen;
	f->stall_seen = f->st.stall_pct >= STALL_PCT;
	f->st.pressure = stalled || r->headroom < 0;
	f->short_tick = f->st.pressure || r->down || f->stall_seen;
	if (f->held && grow_delay_passed(f, r->now))
		f->held = 0;
	if (stalled) {
		f->pressure_ns = r->now;
		/* Once only persistent pages are left, lowering the target
		 * further would free nothing. */
		if (!(f->st.refusing_persistent && f->target <= used))
			apply_target(f, used - used / 8 < want ? used - used / 8 : want,
				     TMEMD_RECLAIM_PRESSURE, true);
	} else if (want + hyst < f->target || (r->down && want < f->target)) {
		if (r->headroom < 0 || r->down)
			f->pressure_ns = r->now;
		apply_target(f, want, r->down ? TMEMD_RECLAIM_TOOLSTACK : TMEMD_RECLAIM_LOW_FREE,
			     true);
	} else if (want > f->target + hyst && grow_delay_passed(f, r->now)) {
		uint64_t step = f->cfg.ceiling / 8;

		apply_target(f, want - f->target > step ? f->target + step : want, 0, false);
	}
}

static void tick(struct tmemd_fallow *f)
{
	struct reading r;
	uint64_t xen_room;

	if (sample(f, &r) < 0)
		return;
	steer(f, &r);
	/* Growing into Xen waits like the target does: no balloon up under
	 * pressure, while dom0 shrinks, or within grow_delay of a release. */
	xen_room = r.xen_room;
	if (r.want >= f->cfg.ceiling || f->st.pressure || r.down || f->held || r.fs_bound ||
	    !grow_delay_passed(f, r.now))
		xen_room = 0;
	xen_grow(f, r.used, f->cfg.ceiling - r.want, xen_room);
	(void)store_release_cold(f->store, f->st.pressure || r.down ? 0 : TMEM_WARM_FRAMES);
	if (f->host && f->host->publish_freeable) {
		struct tmem_store_info si;

		store_info(f->store, &si);
		f->host->publish_freeable(f->host_ctx, si.arena.ephemeral * TMEM_PAGE_SIZE);
	}
}

static void on_timer(struct tmemd_watch *w, uint32_t events)
{
	struct tmemd_fallow *f = w->data;
	uint64_t n;

	(void)events;
	if (read(w->fd, &n, sizeof(n)) < 0 && errno == EAGAIN)
		return;
	tick(f);
	arm(f, f->short_tick ? SHORT_TICK_MS : TICK_MS);
}

int tmemd_fallow_start(const struct tmemd_fallow_config *cfg,
		       struct tmem_store *store, struct tmem_policy *policy,
		       struct tmemd_loop *loop, struct tmemd_fallow **out)
{
	struct tmemd_fallow *f = calloc(1, sizeof(*f));
	int rc;

	if (!f)
		return -ENOMEM;
	f->cfg = *cfg;
	f->st.spilling = cfg->over_target != NULL;
	f->store = store;
	f->policy = policy;
	f->loop = loop;
	f->target = cfg->ceiling;
	tmemd_host_mem_paths(&f->paths);
	f->last_ns = tmemd_now_ns();
	f->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	f->timer.fn = on_timer;
	f->timer.data = f;
	if (f->timer.fd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = tmemd_loop_add(loop, &f->timer, EPOLLIN);
	if (rc < 0)
		goto fail;
	tick(f); /* the first target now: the host may have less than the ceiling */
	f->started = true;
	arm(f, f->short_tick ? SHORT_TICK_MS : TICK_MS);
	*out = f;
	return 0;
fail:
	if (f->timer.fd >= 0)
		close(f->timer.fd);
	free(f);
	return rc;
}

void tmemd_fallow_set_host(struct tmemd_fallow *f, const struct tmemd_fallow_host_ops *ops,
			   void *ctx)
{
	if (!f)
		return;
	f->host = ops;
	f->host_ctx = ctx;
	f->st.xen = ops != NULL;
}

void tmemd_fallow_reconfigure(struct tmemd_fallow *f, const struct tmemd_fallow_config *cfg)
{
	if (!f)
		return;
	f->cfg.reserve = cfg->reserve;
	f->cfg.xen_reserve = cfg->xen_reserve;
	f->cfg.grow_delay_sec = cfg->grow_delay_sec;
	tmemd_fallow_kick(f);
}

void tmemd_fallow_tick(struct tmemd_fallow *f)
{
	if (f)
		tick(f);
}

void tmemd_fallow_kick(struct tmemd_fallow *f)
{
	if (f)
		arm(f, 1);
}

/* Under Xen, what went from the pool goes to Xen: dom0's target falls
 * by it, from where dom0 is (a target it never reached means nothing). */
static void lower_dom0(struct tmemd_fallow *f, uint64_t bytes)
{
	struct tmemd_fallow_xen *x = &f->st.x;
	uint64_t base;

	if (f->host->sample(f->host_ctx, x) < 0)
		return;
	base = x->dom0_now < x->dom0_target ? x->dom0_now : x->dom0_target;
	if (base <= bytes || f->host->set_dom0_target(f->host_ctx, base - bytes) < 0)
		return;
	f->st.ballooned = f->st.ballooned > bytes ? f->st.ballooned - bytes : 0;
	/* dom0's lower target now keeps that memory out of the pool: holding
	 * it back as well would count it twice (and evict as much again). */
	f->held = f->held > bytes ? f->held - bytes : 0;
}

int tmemd_fallow_release(struct tmemd_fallow *f, uint64_t bytes, uint64_t *released)
{
	uint64_t used, goal, before;

	if (!f || !bytes)
		return -EINVAL;
	used = used_bytes(f);
	before = f->target < used ? f->target : used;
	goal = before > bytes ? before - bytes : 0;
	f->held += bytes;
	f->pressure_ns = tmemd_now_ns();
	apply_target(f, goal, TMEMD_RECLAIM_ADMIN, true);
	(void)store_release_cold(f->store, 0);
	used = used_bytes(f);
	*released = before > used ? before - used : 0;
	if (f->host && *released)
		lower_dom0(f, *released);
	return 0;
}

void tmemd_fallow_stats(const struct tmemd_fallow *f, struct tmemd_fallow_stats *out)
{
	struct tmem_store_info si;

	memset(out, 0, sizeof(*out));
	if (!f)
		return;
	*out = f->st;
	store_info(f->store, &si);
	out->ceiling = f->cfg.ceiling;
	out->target = f->target;
	out->used = si.mem_used_total;
	out->peak = si.mem_used_max;
	out->resident = si.mem_resident;
	out->released_bytes = si.frames_released * TMEM_PAGE_SIZE;
	out->warmed_bytes = si.frames_warmed * TMEM_PAGE_SIZE;
	out->cold_take_bytes = si.frames_cold_taken * TMEM_PAGE_SIZE;
}

void tmemd_fallow_stop(struct tmemd_fallow *f)
{
	if (!f)
		return;
	tmemd_loop_del(f->loop, &f->timer);
	close(f->timer.fd);
	free(f);
}
