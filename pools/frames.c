/* SPDX-License-Identifier: MIT */
/*
 * frames.c: the free-frame allocator inside the arena, and the raw data
 * allocator: one 4 KiB frame per page.  (The arena is the file or memory
 * daemon/arena.c finds; durable.c maps and formats it.)  The frames are
 * a region of the store's mapping (durable.c),
 * reserved once for the whole growth range, so growing only moves
 * total_frames.  Free frames are
 * kept on a stack of frame numbers beside the arena (4 bytes a frame,
 * also NORESERVE, so only its high-water mark is resident), not linked
 * through their own first word: a freed frame is usually cold, and
 * writing a link into it cost the evicting put a cache miss.  The stack
 * is LIFO, so the next put reuses the frame freed last.  Frames never
 * handed out since the last shrink sit above a bump index, so a fresh
 * arena costs nothing until it is used.  All under alloc_lock (the size
 * fields are also read without it, see relaxed_set()).  total_frames and
 * the bump are mirrored in the durable header for recovery (COMMIT.md):
 * the bump before a frame above it is handed out, a shrink's new size
 * only after every page has moved below it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

static inline uint8_t *frame_ptr(const struct tmem_frames *a, uint32_t f)
{
	return a->base + ((size_t)f << TMEM_PAGE_SHIFT);
}

static inline size_t frames_bytes(uint32_t n)
{
	return (size_t)n << TMEM_PAGE_SHIFT;
}

static inline size_t free_stack_bytes(uint32_t max_frames)
{
	return (size_t)max_frames * sizeof(uint32_t);
}

/*
 * Fault frames [from, to) in now so the put path never takes a first
 * touch.  In a file they are allocated first: on a tmpfs or hugetlbfs
 * without room a touch is a SIGBUS, an allocation a clean -ENOSPC.
 */
static int frames_prefault_range(const struct tmem_frames *a, uint32_t from, uint32_t to)
{
	if (to <= from)
		return 0;
	if (a->file_backed &&
	    fallocate(a->fd, 0, (off_t)(a->fd_off + frames_bytes(from)),
		      (off_t)frames_bytes(to - from)) < 0 &&
	    errno != EOPNOTSUPP)
		return -errno;
	if (madvise(frame_ptr(a, from), frames_bytes(to - from),
		    MADV_POPULATE_WRITE) == 0)
		return 0;
	/* Kernels before 5.14: touch one byte per page. */
	for (uint32_t f = from; f < to; f++)
		*(volatile uint8_t *)frame_ptr(a, f) = 0;
	return 0;
}

/* In chunks of PREFAULT_CHUNK frames (64 MiB), asking should_stop
 * between them: prefaulting a large pool takes a while. */
#define PREFAULT_CHUNK 16384u
static int frames_prefault(struct tmem_frames *a, uint32_t from, uint32_t to)
{
	for (uint32_t f = from; f < to; f += PREFAULT_CHUNK) {
		uint32_t end = to - f > PREFAULT_CHUNK ? f + PREFAULT_CHUNK : to;
		int ret;

		if (a->should_stop && a->should_stop(a->stop_ctx))
			return -ECANCELED;
		ret = frames_prefault_range(a, f, end);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int frames_lock_range(struct tmem_frames *a, uint32_t from, uint32_t to)
{
	if (!a->locked || to <= from)
		return 0;
	if (mlock(frame_ptr(a, from), frames_bytes(to - from)) < 0)
		return -errno;
	return 0;
}

static uint32_t *stack_map(uint32_t max_frames)
{
	void *p = mmap(NULL, free_stack_bytes(max_frames), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int frames_init(struct tmem_frames *a, const struct tmem_store_config *cfg,
	       uint32_t frames)
{
	int ret;

	if (frames == 0 || frames > a->max_frames)
		return -EINVAL;
	a->free_stack = stack_map(a->max_frames);
	a->released_stack = stack_map(a->max_frames);
	if (!a->free_stack || !a->released_stack) {
		frames_fini(a);
		return -ENOMEM;
	}
	a->locked = cfg->lock_memory;
	a->prefault = cfg->prefault;
	a->should_stop = cfg->should_stop;
	a->stop_ctx = cfg->stop_ctx;
	ret = frames_grow(a, frames);
	if (ret < 0) {
		a->locked = false;
		frames_fini(a);
	}
	return ret;
}

void frames_fini(struct tmem_frames *a)
{
	if (a->free_stack)
		munmap(a->free_stack, free_stack_bytes(a->max_frames));
	if (a->released_stack)
		munmap(a->released_stack, free_stack_bytes(a->max_frames));
	a->free_stack = NULL;
	a->released_stack = NULL;
	if (a->locked && a->base && a->total_frames)
		munlock(a->base, frames_bytes(a->total_frames));
	a->locked = false;
}

int frames_grow(struct tmem_frames *a, uint32_t new_frames)
{
	int ret;

	if (new_frames > a->max_frames || new_frames < a->total_frames)
		return -EINVAL;
	ret = frames_lock_range(a, a->total_frames, new_frames);
	if (ret < 0)
		return ret;
	if (a->prefault)
		ret = frames_prefault(a, a->total_frames, new_frames);
	if (ret < 0) {
		if (a->locked)
			munlock(frame_ptr(a, a->total_frames),
				frames_bytes(new_frames - a->total_frames));
		return ret;
	}
	relaxed_set(&a->total_frames, new_frames);
	relaxed_set(&a->hdr->total_frames, new_frames);
	return 0;
}

void frames_trim_free(struct tmem_frames *a, uint32_t new_frames)
{
	uint32_t keep = 0;

	/* In place, keeping the order, so the most recent frees stay on top. */
	for (uint32_t i = 0; i < a->free_top; i++)
		if (a->free_stack[i] < new_frames)
			a->free_stack[keep++] = a->free_stack[i];
	a->free_top = keep;
	if (a->free_low > keep)
		a->free_low = keep;
	keep = 0;
	for (uint32_t i = 0; i < a->released_top; i++)
		if (a->released_stack[i] < new_frames)
			a->released_stack[keep++] = a->released_stack[i];
	a->released_top = keep;
	if (a->bump > new_frames)
		a->bump = new_frames;
	relaxed_set(&a->total_frames, new_frames);
}

void frames_release(struct tmem_frames *a, uint32_t new_frames,
		   uint32_t old_frames)
{
	if (old_frames <= new_frames)
		return;
	/* Every page has moved below new_frames: now recovery may stop there. */
	relaxed_set(&a->hdr->total_frames, new_frames);
	if (a->hdr->frame_bump > new_frames)
		relaxed_set(&a->hdr->frame_bump, new_frames);
	if (a->locked)
		munlock(frame_ptr(a, new_frames), frames_bytes(old_frames - new_frames));
	if (a->file_mark > new_frames)
		a->file_mark = new_frames;
	/* A file's pages stay in it unless the range is punched out. */
	(void)madvise(frame_ptr(a, new_frames), frames_bytes(old_frames - new_frames),
		      a->file_backed ? MADV_REMOVE : MADV_DONTNEED);
}

/* ---- giving free frames back (release.c drives it) ------------------------ */

/*
 * Up to max of the free frames that no alloc has reached since the last
 * call, keeping the keep nearest the top: the stack is LIFO, so the
 * entries below free_low's mark are the coldest.  They leave the stack
 * (in_transit) for the caller to punch out without alloc_lock.
 */
uint32_t frames_take_cold(struct tmem_frames *a, uint32_t *cold, uint32_t keep,
			  uint32_t *out, uint32_t max)
{
	uint32_t n;

	if (*cold > a->free_low)
		*cold = a->free_low;
	if (a->no_release || a->shrinking || *cold <= keep)
		return 0;
	n = *cold - keep < max ? *cold - keep : max;
	memcpy(out, a->free_stack, (size_t)n * sizeof(*out));
	memmove(a->free_stack, a->free_stack + n,
		(size_t)(a->free_top - n) * sizeof(*out));
	a->free_top -= n;
	a->free_low -= n;
	*cold -= n;
	a->in_transit += n;
	return n;
}

/* Starts the next interval of free_low's mark. */
uint32_t frames_cold_begin(struct tmem_frames *a)
{
	uint32_t cold = a->free_low < a->free_top ? a->free_low : a->free_top;

	a->free_low = a->free_top;
	return cold;
}

/* After the punch: punched frames are released, the others go back to
 * the free stack.  A frame a shrink cut off meanwhile is dropped. */
/* Frames in transit back on the free stack (resident) or the released
 * one; those past a shrink's new end are dropped. */
static void return_from_transit(struct tmem_frames *a, const uint32_t *f, uint32_t n,
				bool resident)
{
	a->in_transit -= n;
	for (uint32_t i = 0; i < n; i++) {
		if (f[i] >= a->total_frames)
			continue;
		if (resident)
			a->free_stack[a->free_top++] = f[i];
		else
			a->released_stack[a->released_top++] = f[i];
	}
}

void frames_put_released(struct tmem_frames *a, const uint32_t *f, uint32_t n,
			 bool punched)
{
	return_from_transit(a, f, n, !punched);
	if (punched)
		a->released_total += n;
	else
		a->no_release = true;
}

/* Punches frames [from, from + n) out of the memory or the file. */
int frames_punch(const struct tmem_frames *a, uint32_t from, uint32_t n)
{
	if (madvise(frame_ptr(a, from), frames_bytes(n),
		    a->file_backed ? MADV_REMOVE : MADV_DONTNEED) < 0)
		return -errno;
	return 0;
}

int frames_populate(const struct tmem_frames *a, uint32_t from, uint32_t n)
{
	return frames_prefault_range(a, from, from + n);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* One call a run, not one a frame: the stacks hand out runs mostly. */
int frames_each_run(const struct tmem_frames *a, uint32_t *f, uint32_t n,
		    int (*fn)(const struct tmem_frames *, uint32_t from, uint32_t n))
{
	qsort(f, n, sizeof(*f), cmp_u32);
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i + 1;
		int ret;

		while (j < n && f[j] == f[j - 1] + 1)
			j++;
		ret = fn(a, f[i], j - i);
		if (ret < 0)
			return ret;
		i = j;
	}
	return 0;
}

/* ---- warming free frames ahead of the puts (warm.c drives it) ------------- */

/* Below half the mark, with frames to warm and room under the limit. */
static bool frames_warm_wanted(const struct tmem_frames *a)
{
	return a->free_top < a->warm_high / 2 &&
	       (a->released_top || a->bump < a->total_frames) &&
	       a->used + a->free_top < frames_limit(a);
}

/*
 * Up to max frames that the free stack lacks under the mark (and the
 * limit), released ones first, then untouched ones above the bump.  They
 * leave every stack (in_transit) while the caller faults them in.
 */
uint32_t frames_take_warm(struct tmem_frames *a, uint32_t *out, uint32_t max)
{
	uint32_t limit = frames_limit(a), room, n = 0;

	a->warm_asked = false;
	if (a->shrinking || a->free_top >= a->warm_high || a->used + a->free_top >= limit)
		return 0;
	room = a->warm_high - a->free_top;
	if (room > limit - a->used - a->free_top)
		room = limit - a->used - a->free_top;
	if (room > max)
		room = max;
	while (n < room && a->released_top)
		out[n++] = a->released_stack[--a->released_top];
	while (n < room && a->bump < a->total_frames)
		out[n++] = a->bump++;
	/* Recovery must see the bump before a frame above it is handed out. */
	if (a->bump > a->hdr->frame_bump)
		relaxed_set(&a->hdr->frame_bump, a->bump);
	a->in_transit += n;
	return n;
}

/* After the fault-in: onto the free stack, or back to the released one
 * when it failed (no blocks left; a put then gets the -ENOSPC).  A frame
 * a shrink cut off meanwhile is dropped. */
void frames_put_warm(struct tmem_frames *a, const uint32_t *f, uint32_t n,
		     bool populated)
{
	return_from_transit(a, f, n, populated);
	if (!populated)
		return;
	a->warmed_total += n;
	if (a->free_top > a->free_high)
		a->free_high = a->free_top;
}

/* ---- frames, and the raw data allocator ----------------------------------- */

uint8_t *frame_at(const struct tmem_frames *a, uint32_t f)
{
	return frame_ptr(a, f);
}

/* In a file, frames [from, from + n) get blocks before their first touch
 * (a touch past a full tmpfs is a SIGBUS; this is -ENOSPC). */
static int frames_back(struct tmem_frames *a, uint32_t from, uint32_t n)
{
	if (!a->file_backed)
		return 0;
	if (fallocate(a->fd, 0, (off_t)(a->fd_off + frames_bytes(from)),
		      (off_t)frames_bytes(n)) < 0 && errno != EOPNOTSUPP)
		return -ENOSPC;
	return 0;
}

/* Frames allocated in the file ahead of the bump, per fallocate. */
#define BACK_CHUNK 512u

/* The bump's next frame has blocks in the file. */
static int frames_back_bump(struct tmem_frames *a)
{
	uint32_t n;

	if (!a->file_backed || a->bump < a->file_mark)
		return 0;
	n = a->total_frames - a->bump < BACK_CHUNK ? a->total_frames - a->bump : BACK_CHUNK;
	/* Near a full filesystem a chunk may not fit where a frame does. */
	if (frames_back(a, a->bump, n) < 0 && (n = 1, frames_back(a, a->bump, 1) < 0))
		return -ENOSPC;
	a->file_mark = a->bump + n;
	return 0;
}

/*
 * A free frame, ignoring the target: resident frames first (the one
 * freed last is likely still in cache), then frames given back, then
 * frames never touched.  The last two take their first touch in the put.
 */
static int frames_take(struct tmem_frames *a, uint32_t *handle)
{
	uint32_t f;

	if (a->free_top) {
		f = a->free_stack[--a->free_top];
		if (a->free_top < a->free_low)
			a->free_low = a->free_top;
	} else if (a->released_top) {
		f = a->released_stack[a->released_top - 1];
		if (frames_back(a, f, 1) < 0)
			return -ENOSPC;
		a->released_top--;
		a->cold_taken++;
	} else if (a->bump < a->total_frames) {
		if (frames_back_bump(a) < 0)
			return -ENOSPC;
		f = a->bump++;
		if (a->bump > a->hdr->frame_bump)
			relaxed_set(&a->hdr->frame_bump, a->bump);
		a->cold_taken++;
	} else {
		return -ENOSPC;
	}
	relaxed_set(&a->used, a->used + 1);
	if (a->used > a->used_max)
		relaxed_set(&a->used_max, a->used);
	*handle = f;
	return 0;
}

int frames_alloc(struct tmem_frames *a, uint32_t *handle)
{
	int ret;

	if (a->used >= frames_limit(a))
		return -ENOSPC;
	ret = frames_take(a, handle);
	if (a->warm_cond && !a->warm_asked && frames_warm_wanted(a)) {
		a->warm_asked = true;
		pthread_cond_signal(a->warm_cond);
	}
	return ret;
}

uint32_t frames_limit(const struct tmem_frames *a)
{
	uint32_t total = relaxed_get(&a->total_frames);
	uint32_t target = relaxed_get(&a->target);

	return target && target < total ? target : total;
}

void frames_set_target(struct tmem_frames *a, uint32_t target)
{
	relaxed_set(&a->target, target);
}

/* Touched frames, less those on the released stack or being punched. */
uint32_t frames_resident(const struct tmem_frames *a)
{
	uint32_t away = a->released_top + a->in_transit;

	return a->bump > away ? a->bump - away : 0;
}

void frames_free(struct tmem_frames *a, uint32_t f)
{
	/* Never overflows: a frame is freed once, and at most max_frames exist. */
	a->free_stack[a->free_top++] = f;
	if (a->free_top > a->free_high)
		a->free_high = a->free_top;
	relaxed_set(&a->used, a->used - 1);
}

/* A frame outside the new size, moved to one inside (shrink). */
uint32_t frames_relocate(struct tmem_frames *a, uint32_t f)
{
	uint32_t to;

	if (f < a->total_frames)
		return f;
	/* resize checked used <= new size, so a frame is always free here
	 * (the target does not apply: the page is stored already), but in a
	 * full tmpfs it may have no blocks: the shrink is then undone. */
	if (frames_take(a, &to) < 0) {
		a->relocate_failed = true;
		return f;
	}
	memcpy(frame_ptr(a, to), frame_ptr(a, f), TMEM_PAGE_SIZE);
	/* The old frame is outside the arena now; not freed to the stack. */
	relaxed_set(&a->used, a->used - 1);
	return to;
}

static int raw_alloc(struct tmem_store *s, const struct tmem_enc *e, uint32_t *handle)
{
	int ret = frames_alloc(&s->frames, handle);

	if (ret == 0 && e->kind == TMEM_ENC_HUGE)
		*handle |= TMEM_H_SUB;
	return ret;
}

static void raw_free(struct tmem_store *s, uint32_t h)
{
	frames_free(&s->frames, h & TMEM_H_IDX);
}

static void raw_write(struct tmem_store *s, uint32_t h, uint32_t page,
		      const struct tmem_enc *e)
{
	(void)page;
	memcpy(frame_ptr(&s->frames, h & TMEM_H_IDX), e->page, TMEM_PAGE_SIZE);
}

static const void *raw_map(const struct tmem_store *s, uint32_t h, void *bounce,
			   uint32_t *len, uint8_t *codec)
{
	(void)bounce;
	*len = TMEM_PAGE_SIZE;
	*codec = TMEM_CODEC_NONE;
	return frame_ptr(&s->frames, h & TMEM_H_IDX);
}

static uint32_t raw_relocate(struct tmem_store *s, uint32_t h)
{
	return frames_relocate(&s->frames, h & TMEM_H_IDX) | (h & ~TMEM_H_IDX);
}

const struct tmem_data_ops tmem_raw_data_ops = {
	.name = "raw",
	.alloc = raw_alloc,
	.free = raw_free,
	.write = raw_write,
	.map = raw_map,
	.relocate = raw_relocate,
};
