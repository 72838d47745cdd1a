/* SPDX-License-Identifier: MIT */
/*
 * frames.c: the arena's frames and their free-frame allocator, which is
 * also the raw data allocator (tmem_raw_data_ops).  The arena itself is
 * the file daemon/arena.c finds; durable.c maps it and points the frames
 * into it.  Used by zs.c (its spans' frames), store.c (resize), stats.c.
 */
#ifndef TMEM_POOLS_FRAMES_H
#define TMEM_POOLS_FRAMES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "durable.h"
#include "tmem_store.h"

/* The arena's frames and their free-frame allocator (frames.c).  Under
 * alloc_lock; total_frames and used are also read without it (the counts
 * every put asks for), so they are written with relaxed_set(). */
struct tmem_frames {
	uint8_t *base;         /* max_frames frames inside the store's mapping */
	uint32_t max_frames;   /* reservation size */
	uint32_t total_frames; /* current size: frames [0, total) may be used */
	uint32_t bump;         /* frames >= bump were never handed out */
	uint32_t *free_stack;  /* free frames below bump; max_frames entries, NORESERVE */
	uint32_t free_top;     /* entries on free_stack */
	uint32_t free_high;    /* free_stack's high-water mark (resident metadata) */
	uint32_t used;         /* frames handed out */
	uint32_t used_max;     /* used's high-water mark (zram's mem_used_max) */
	/* Frames handed out stop at the target (tmemd's elastic size), not
	 * only at total_frames; 0 = total_frames. */
	uint32_t target;
	/* Free frames given back to the host (punched out, or never touched
	 * since): taken only when free_stack is empty.  Same size as it. */
	uint32_t *released_stack;
	uint32_t released_top;
	uint32_t in_transit;   /* on no stack: being punched out or warmed */
	uint32_t free_low;     /* free_top's low-water mark since the last release */
	uint64_t released_total; /* frames punched out, ever */
	/* Warming (warm.c): the free frames kept resident ahead of the puts
	 * (0: none), whether the warming thread was asked since it last
	 * looked, where it waits, and the counts. */
	uint32_t warm_high;
	bool warm_asked;
	bool shrinking;          /* a shrink waits for in_transit: take none */
	pthread_cond_t *warm_cond;
	uint64_t warmed_total;   /* frames faulted in ahead, ever */
	uint64_t cold_taken;     /* frames a put took not resident: its first touch */
	bool no_release;       /* punching failed once (hugetlbfs): keep frames */
	/* In a file: frames below this were allocated in it (fallocate) in
	 * chunks as the bump passed; a frame from the released stack is
	 * allocated again alone.  So a full tmpfs gives -ENOSPC to a put,
	 * never SIGBUS to a touch. */
	uint32_t file_mark;
	bool relocate_failed;  /* a shrink found no frame for a page (-ENOSPC) */
	bool locked;           /* mlock'd (frames [0, total)) */
	bool prefault;         /* touch frames as they enter the arena */
	/* While the store is set up only (cfg->should_stop): asked between
	 * prefault chunks; NULL afterwards. */
	bool (*should_stop)(void *ctx);
	void *stop_ctx;
	bool file_backed;      /* frames live in a file: release by MADV_REMOVE */
	int fd;                /* that file (not owned), frames at fd_off */
	uint64_t fd_off;
	struct tmem_durable_hdr *hdr; /* total_frames and bump are mirrored there */
};

/* A tmem_frames (or durable header) size field: written under alloc_lock, read with or without it. */
static inline void relaxed_set(uint32_t *field, uint32_t v)
{
	__atomic_store_n(field, v, __ATOMIC_RELAXED);
}

static inline uint32_t relaxed_get(const uint32_t *field)
{
	return __atomic_load_n(field, __ATOMIC_RELAXED);
}

/* ---- frames.c: the free-frame allocator ---------------------------------- */
int frames_init(struct tmem_frames *a, const struct tmem_store_config *cfg,
	       uint32_t frames);
void frames_fini(struct tmem_frames *a);
int frames_grow(struct tmem_frames *a, uint32_t new_frames);
/* Shrink step 1: the frames end at new_frames for new allocations; free
 * frames above are dropped.  The caller then relocates every live handle. */
void frames_trim_free(struct tmem_frames *a, uint32_t new_frames);
/* Shrink step 2: give [new_frames, old_frames) back to the kernel. */
void frames_release(struct tmem_frames *a, uint32_t new_frames,
		   uint32_t old_frames);

/* Frames that hold memory now: touched, and not given back since. */
uint32_t frames_resident(const struct tmem_frames *a);
/* The elastic limit on frames handed out (0: none). */
void frames_set_target(struct tmem_frames *a, uint32_t target);
uint32_t frames_limit(const struct tmem_frames *a);

/* Giving cold free frames back (release.c), under alloc_lock but for
 * frames_punch(). */
uint32_t frames_cold_begin(struct tmem_frames *a);
uint32_t frames_take_cold(struct tmem_frames *a, uint32_t *cold, uint32_t keep,
			  uint32_t *out, uint32_t max);
void frames_put_released(struct tmem_frames *a, const uint32_t *f, uint32_t n,
			 bool punched);
int frames_punch(const struct tmem_frames *a, uint32_t from, uint32_t n);
/* Frames [from, from + n) get blocks (in a file) and memory now. */
int frames_populate(const struct tmem_frames *a, uint32_t from, uint32_t n);
/* Sorts f and calls fn once per contiguous run; stops at fn's first error. */
int frames_each_run(const struct tmem_frames *a, uint32_t *f, uint32_t n,
		    int (*fn)(const struct tmem_frames *, uint32_t from, uint32_t n));

/* Warming free frames ahead of the puts (warm.c), under alloc_lock but
 * for frames_populate(). */
uint32_t frames_take_warm(struct tmem_frames *a, uint32_t *out, uint32_t max);
void frames_put_warm(struct tmem_frames *a, const uint32_t *f, uint32_t n,
		     bool populated);

/* ---- raw frames (frames.c), for zs.c's spans; alloc_lock --------------- */
int frames_alloc(struct tmem_frames *a, uint32_t *f);
void frames_free(struct tmem_frames *a, uint32_t f);
uint8_t *frame_at(const struct tmem_frames *a, uint32_t f);
/* Shrink: f, or a copy of it below the new size. */
uint32_t frames_relocate(struct tmem_frames *a, uint32_t f);

#endif /* TMEM_POOLS_FRAMES_H */
