/* SPDX-License-Identifier: MIT */
/*
 * durable.c: the store's one mapping of the arena (its format is
 * durable.h): computing its geometry, formatting a new arena, checking an
 * old one before trusting a byte of it, and pointing the frames
 * (frames.c) and descriptors into it.  A file is read with
 * pread() and checked before it is mapped, so a refused file is never
 * written.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "clock.h"
#include "internal.h"

#define THP_BYTES (2u << 20)

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static uint64_t geom_sum(const struct tmem_durable_hdr *h)
{
	return XXH64(h, offsetof(struct tmem_durable_hdr, geom_sum), 0);
}

/* h is a raise of its layout (raise_layout) that a kill cut short: the
 * new layout, and the sum of the one before. */
static bool raise_cut_short(const struct tmem_durable_hdr *h)
{
	struct tmem_durable_hdr before = *h;

	if (h->layout <= TMEM_ARENA_LAYOUT_OLDEST)
		return false;
	before.layout = h->layout - 1;
	return geom_sum(&before) == h->geom_sum;
}

/*
 * An adopted arena of an older layout that a tier is opened on becomes
 * this layout first, so that no older tmemd misreads the tier's entries:
 * the layout, then the sum (a kill between the two leaves a header that
 * hdr_check knows as a raise cut short).  Such a header is set right
 * here too.
 */
static void raise_layout(struct tmem_store *s, bool tier)
{
	struct tmem_durable_hdr *h = s->hdr;
	uint64_t sum;

	if (tier && h->layout != TMEM_ARENA_LAYOUT) {
		__atomic_store_n(&h->layout, TMEM_ARENA_LAYOUT, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* program order is what a kill sees */
	}
	sum = geom_sum(h);
	if (sum != h->geom_sum)
		__atomic_store_n(&h->geom_sum, sum, __ATOMIC_RELAXED);
}

/* Fill the geometry half of h for max_frames frames aligned to block. */
static void layout_compute(struct tmem_durable_hdr *h, uint32_t max_frames,
			   uint32_t block)
{
	uint64_t off = TMEM_PAGE_SIZE;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, TMEM_ARENA_MAGIC, sizeof(h->magic));
	h->layout = TMEM_ARENA_LAYOUT;
	h->page_size = TMEM_PAGE_SIZE;
	h->max_frames = max_frames;
	descs_geometry(max_frames, &h->page_cap, &h->chunk_cap);
	h->max_clients = TMEM_MAX_CLIENTS;
	h->max_pools = TMEM_MAX_POOLS_TOTAL;
	h->block_bytes = block;
	h->off_clients = off;
	off = align_up(off + (uint64_t)TMEM_MAX_CLIENTS * sizeof(struct tmem_client_rec),
		       TMEM_PAGE_SIZE);
	h->off_pools = off;
	off = align_up(off + (uint64_t)TMEM_MAX_POOLS_TOTAL * sizeof(struct tmem_pool_rec),
		       TMEM_PAGE_SIZE);
	h->off_chunks = off;
	off = align_up(off + (uint64_t)h->chunk_cap * sizeof(struct tmem_chunk),
		       TMEM_PAGE_SIZE);
	h->off_objs = off;
	off = align_up(off + (uint64_t)h->chunk_cap * TMEM_OBJS_PER_CHUNK *
				     sizeof(struct tmem_objdesc),
		       TMEM_PAGE_SIZE);
	h->off_pages = off;
	off = align_up(off + (uint64_t)h->page_cap * sizeof(struct tmem_pagedesc),
		       TMEM_PAGE_SIZE);
	/* Every live span holds a frame, every compressed page one entry. */
	h->span_cap = max_frames;
	h->zobj_cap = h->page_cap < TMEM_ZOBJ_MAX ? h->page_cap : TMEM_ZOBJ_MAX;
	h->off_spans = off;
	off = align_up(off + (uint64_t)h->span_cap * sizeof(struct tmem_zspan_rec),
		       TMEM_PAGE_SIZE);
	h->off_zobjs = off;
	off = align_up(off + (uint64_t)h->zobj_cap * sizeof(uint64_t), block);
	h->off_frames = off;
	h->file_bytes = align_up(off + ((uint64_t)max_frames << TMEM_PAGE_SHIFT), block);
}

static int why_fail(char *why, size_t n, int err, const char *what)
{
	if (why && n)
		snprintf(why, n, "%s", what);
	return err;
}

/* The checks an adopted header passes; the file is st_size bytes. */
static int hdr_check(const struct tmem_durable_hdr *h, uint64_t st_size,
		     char *why, size_t n)
{
	struct tmem_durable_hdr want;

	if (memcmp(h->magic, TMEM_ARENA_MAGIC, sizeof(h->magic)) != 0)
		return why_fail(why, n, -EBADMSG, "not a tmemd arena (bad magic)");
	if (h->layout < TMEM_ARENA_LAYOUT_OLDEST || h->layout > TMEM_ARENA_LAYOUT) {
		if (why && n)
			snprintf(why, n, "arena layout version %u, this build reads %u to %u only",
				 h->layout, TMEM_ARENA_LAYOUT_OLDEST, TMEM_ARENA_LAYOUT);
		return -EPROTO;
	}
	if (geom_sum(h) != h->geom_sum && !raise_cut_short(h))
		return why_fail(why, n, -EBADMSG, "damaged header (checksum)");
	if (h->page_size != TMEM_PAGE_SIZE || h->max_frames == 0 ||
	    h->max_frames > TMEM_MAX_DESCS / TMEM_DESCS_PER_FRAME ||
	    h->block_bytes < TMEM_PAGE_SIZE || (h->block_bytes & (h->block_bytes - 1)))
		return why_fail(why, n, -EBADMSG, "damaged header (geometry)");
	layout_compute(&want, h->max_frames, h->block_bytes);
	want.layout = h->layout; /* the older ones have this geometry too */
	want.created_usec = h->created_usec;
	want.geom_sum = h->geom_sum;
	if (memcmp(&want, h, offsetof(struct tmem_durable_hdr, total_frames)) != 0)
		return why_fail(why, n, -EBADMSG, "damaged header (layout)");
	if (st_size < h->file_bytes)
		return why_fail(why, n, -EBADMSG, "arena file shorter than its header says");
	if (h->total_frames == 0 || h->total_frames > h->max_frames ||
	    h->frame_bump > h->max_frames || h->page_bump > h->page_cap ||
	    h->chunk_bump > h->chunk_cap || h->client_bump > h->max_clients ||
	    h->pool_bump > h->max_pools || h->span_bump > h->span_cap ||
	    h->zobj_bump > h->zobj_cap)
		return why_fail(why, n, -EBADMSG, "damaged header (counts)");
	return 0;
}

/*
 * The mapping starts on a 2 MiB boundary, so that the frames (at a
 * 2 MiB multiple into it) can be huge pages: an unaligned start would
 * rule THP out for the whole arena.  Reserve a little more address
 * space, then map over its aligned part.
 */
static int map_region(struct tmem_store *s, int fd, uint64_t bytes)
{
	int flags = MAP_NORESERVE | (fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS);
	uint8_t *hole = mmap(NULL, bytes + THP_BYTES, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *at, *m;

	if (hole == MAP_FAILED)
		return -errno;
	at = (uint8_t *)align_up((uintptr_t)hole, THP_BYTES);
	m = mmap(at, bytes, PROT_READ | PROT_WRITE, flags | MAP_FIXED, fd, 0);
	if (m == MAP_FAILED) {
		int rc = -errno;

		munmap(hole, bytes + THP_BYTES);
		return rc;
	}
	/* Give back the slack on both sides. */
	if (at > hole)
		munmap(hole, (size_t)(at - hole));
	munmap(at + bytes, (size_t)(hole + THP_BYTES - at));
	s->map = m;
	s->map_bytes = bytes;
	return 0;
}

/* Point everything at the mapped regions. */
static void wire_regions(struct tmem_store *s)
{
	struct tmem_durable_hdr *h = (struct tmem_durable_hdr *)s->map;

	s->hdr = h;
	s->crec = (struct tmem_client_rec *)(s->map + h->off_clients);
	s->prec = (struct tmem_pool_rec *)(s->map + h->off_pools);
	s->descs.chunks = (struct tmem_chunk *)(s->map + h->off_chunks);
	s->descs.objs = (struct tmem_objdesc *)(s->map + h->off_objs);
	s->descs.pages = (struct tmem_pagedesc *)(s->map + h->off_pages);
	s->descs.page_cap = h->page_cap;
	s->descs.chunk_cap = h->chunk_cap;
	s->descs.hdr = h;
	s->zs.spans = (struct tmem_zspan_rec *)(s->map + h->off_spans);
	s->zs.zobjs = (uint64_t *)(s->map + h->off_zobjs);
	s->zs.span_cap = h->span_cap;
	s->zs.zobj_cap = h->zobj_cap;
	s->frames.base = s->map + h->off_frames;
	s->frames.max_frames = h->max_frames;
	s->frames.hdr = h;
	s->frames.file_backed = s->fd >= 0;
	s->frames.fd = s->fd;
	s->frames.fd_off = h->off_frames;
	/* Descriptors are reached at random, frames copied whole: huge
	 * pages save TLB misses (best effort; shmem may not have them). */
	(void)madvise(s->map + h->off_chunks, h->file_bytes - h->off_chunks,
		      MADV_HUGEPAGE);
}

static int durable_format(struct tmem_store *s, const struct tmem_store_config *cfg,
			  uint32_t block)
{
	uint64_t frames = cfg->arena_bytes >> TMEM_PAGE_SHIFT;
	uint64_t max = cfg->max_arena_bytes ? cfg->max_arena_bytes >> TMEM_PAGE_SHIFT
					    : frames;
	struct tmem_durable_hdr h;
	int ret;

	if (frames == 0 || max < frames || max > TMEM_MAX_DESCS / TMEM_DESCS_PER_FRAME)
		return -EINVAL;
	layout_compute(&h, (uint32_t)max, block);
	h.created_usec = clock_nsec(CLOCK_REALTIME) / 1000u;
	h.geom_sum = geom_sum(&h);
	if (s->fd >= 0 && ftruncate(s->fd, (off_t)h.file_bytes) < 0)
		return -errno;
	ret = map_region(s, s->fd, h.file_bytes);
	if (ret < 0)
		return ret;
	/* The header goes in last, so a crash while formatting leaves a
	 * file with no magic, which the next start refuses to guess about. */
	memcpy((uint8_t *)s->map + offsetof(struct tmem_durable_hdr, total_frames),
	       (uint8_t *)&h + offsetof(struct tmem_durable_hdr, total_frames),
	       sizeof(h) - offsetof(struct tmem_durable_hdr, total_frames));
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* program order is what a kill sees */
	memcpy(s->map, &h, offsetof(struct tmem_durable_hdr, total_frames));
	wire_regions(s);
	return 0;
}

static int durable_adopt(struct tmem_store *s, uint64_t st_size, char *why,
			 size_t n)
{
	struct tmem_durable_hdr h;
	ssize_t got = pread(s->fd, &h, sizeof(h), 0);
	int ret;

	if (got < 0)
		return -errno;
	if ((size_t)got < sizeof(h))
		return why_fail(why, n, -EBADMSG, "arena file too short for a header");
	ret = hdr_check(&h, st_size, why, n);
	if (ret < 0)
		return ret;
	ret = map_region(s, s->fd, h.file_bytes);
	if (ret < 0)
		return ret;
	wire_regions(s);
	return 0;
}

int durable_map(struct tmem_store *s, const struct tmem_store_config *cfg,
		 int fd, bool *adopted, char *why, size_t n)
{
	struct stat st;
	uint32_t block = THP_BYTES;
	int ret;

	s->fd = fd;
	*adopted = false;
	if (fd < 0)
		return durable_format(s, cfg, block);
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return why_fail(why, n, -EINVAL, "the arena is not a regular file");
	if (st.st_blksize > (blksize_t)block && !(st.st_blksize & (st.st_blksize - 1)))
		block = (uint32_t)st.st_blksize; /* hugetlbfs: whole huge pages */
	if (st.st_size == 0)
		return durable_format(s, cfg, block);
	*adopted = true;
	ret = durable_adopt(s, (uint64_t)st.st_size, why, n);
	if (ret == 0)
		raise_layout(s, cfg->tier_bytes != 0);
	return ret;
}

void durable_unmap(struct tmem_store *s)
{
	if (s->map)
		munmap(s->map, s->map_bytes);
	s->map = NULL;
}
