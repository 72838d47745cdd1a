/* SPDX-License-Identifier: MIT */
/* The store: creation, teardown and resizing the arena. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

#include "short_lock.h"
#include "internal.h"

static uint64_t random_seed(const void *salt)
{
	uint64_t seed;
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed))
		return seed;
	/* No entropy yet (early boot): still unpredictable enough to a guest. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uintptr_t)salt;
}

static int store_alloc(const struct tmem_store_config *cfg, struct tmem_store **out)
{
	struct tmem_store *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	if (short_lock_init(&s->alloc_lock)) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return -ENOMEM;
	}
	pthread_cond_init(&s->transit_cond, NULL);
	s->cfg = *cfg;
	s->fd = -1;
	s->tier.fd = -1;
	pthread_mutex_init(&s->tier.lock, NULL);
	pthread_mutex_init(&s->tier.spill_lock, NULL);
	if (s->cfg.compress_threshold == 0)
		s->cfg.compress_threshold = TMEM_COMPRESS_THRESHOLD;
	if (s->cfg.compress_threshold > TMEM_PAGE_SIZE - TMEM_ZS_HDR)
		s->cfg.compress_threshold = TMEM_PAGE_SIZE - TMEM_ZS_HDR;
	if (!store_compress_valid(&s->cfg.compress))
		s->cfg.compress = (struct tmem_compress){ TMEM_COMPRESS_OFF, 0 };
	s->hash_seed = random_seed(s);
	s->pool_free = TMEM_NIL;
	s->crec_free = TMEM_NIL;
	s->descs.page_free = TMEM_NIL;
	s->descs.chunk_free = TMEM_NIL;
	for (uint32_t i = 0; i < TMEM_MAX_SHARED_POOLS; i++)
		s->shared_gid[i] = TMEM_NIL;
	atomic_store_explicit(&s->struct_bytes, sizeof(*s), memory_order_relaxed);
	s->pool_tab = calloc(TMEM_MAX_POOLS_TOTAL, sizeof(*s->pool_tab));
	if (!s->pool_tab) {
		store_destroy(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

/* After recovery: the size the caller asked for, when the pages fit. */
static void resize_to_config(struct tmem_store *s)
{
	uint64_t want = s->cfg.arena_bytes >> TMEM_PAGE_SHIFT;

	if (want == 0 || want == s->frames.total_frames)
		return;
	if (want > s->frames.max_frames)
		want = s->frames.max_frames;
	(void)store_resize(s, want); /* -EBUSY: keep the pages, and the size */
}

/* A byte per page descriptor, zero, paid for as touched; NULL: no memory. */
static uint8_t *page_bytes(const struct tmem_store *s)
{
	void *p = mmap(NULL, s->descs.page_cap + 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int store_setup(const struct tmem_store_config *cfg, int fd,
		       struct tmem_store **out, char *why, size_t why_len)
{
	struct tmem_store *s;
	bool adopted;
	int ret;

	if (!cfg || !out)
		return -EINVAL;
	if (why && why_len)
		why[0] = '\0';
	ret = store_alloc(cfg, &s);
	if (ret < 0)
		return ret;
	ret = durable_map(s, cfg, fd, &adopted, why, why_len);
	if (ret < 0)
		goto fail;
	ret = zs_init(s);
	if (ret < 0)
		goto fail;
	/* Before recovery, which claims the tier's units for the pages
	 * there; a tier that does not go with this arena stops us here,
	 * with the arena's records untouched. */
	ret = tier_open(s, cfg, adopted, why, why_len);
	if (ret < 0)
		goto fail;
	if (tier_on(&s->tier)) {
		s->pref = page_bytes(s);
		s->spill_mark = page_bytes(s);
		if (!s->pref || !s->spill_mark) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	ret = frames_init(&s->frames, cfg, adopted ? s->hdr->total_frames
						 : (uint32_t)(cfg->arena_bytes >> TMEM_PAGE_SHIFT));
	if (ret < 0)
		goto fail;
	ret = client_alloc(s, "shared", &s->shared_client);
	if (ret < 0)
		goto fail;
	if (adopted) {
		/* The last point to give up at with the records untouched;
		 * the rebuild itself takes some 20 ms per GiB. */
		if (cfg->should_stop && cfg->should_stop(cfg->stop_ctx)) {
			ret = -ECANCELED;
			goto fail;
		}
		ret = store_recover(s);
		if (ret < 0)
			goto fail;
		resize_to_config(s);
	}
	ret = warm_start(s);
	if (ret < 0)
		goto fail;
	s->recovery.file_backed = fd >= 0;
	s->frames.should_stop = NULL;
	*out = s;
	return 0;
fail:
	store_destroy(s);
	return ret;
}

int store_create(const struct tmem_store_config *cfg,
		 struct tmem_store **out)
{
	return store_setup(cfg, -1, out, NULL, 0);
}

int store_open(const struct tmem_store_config *cfg, int fd,
	       struct tmem_store **out, char *why, size_t why_len)
{
	if (fd < 0)
		return -EINVAL;
	return store_setup(cfg, fd, out, why, why_len);
}

void store_recovery_info(const struct tmem_store *s, struct tmem_recovery_info *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (s)
		*out = s->recovery;
}

/*
 * Frees the process's memory and nothing else: the records in the
 * mapping stay as they are, so a file-backed arena keeps every client,
 * pool and page for the next store_open() (a clean stop is just a
 * crash that happens to come between ops).
 */
void store_destroy(struct tmem_store *s)
{
	if (!s)
		return;
	warm_stop(s);
	while (s->clients) {
		struct tmem_client *c = s->clients;

		s->clients = c->next;
		client_free(c);
	}
	client_free(s->shared_client);
	for (uint32_t gid = 0; gid < s->pool_bump; gid++) {
		struct tmem_pool *pool = s->pool_tab[gid];

		htab_fini(s, &pool->pages);
		htab_fini(s, &pool->objs);
		pthread_mutex_destroy(&pool->lock);
		free(pool);
	}
	free(s->pool_tab);
	frames_fini(&s->frames);
	zs_fini(s);
	tier_close(s);
	if (s->pref)
		munmap(s->pref, s->descs.page_cap + 1);
	if (s->spill_mark)
		munmap(s->spill_mark, s->descs.page_cap + 1);
	durable_unmap(s);
	pthread_mutex_destroy(&s->tier.lock);
	pthread_mutex_destroy(&s->tier.spill_lock);
	pthread_cond_destroy(&s->transit_cond);
	pthread_mutex_destroy(&s->alloc_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/*
 * Shrink with everything locked: compact, so that the compressed pages
 * take the fewest frames, then move pages and spans below new_frames and
 * release the rest.  Refused when the frames in use (raw pages and spans)
 * do not fit.
 */
static int do_frames_shrink(struct tmem_store *s, uint32_t new_frames)
{
	struct tmem_frames *a = &s->frames;
	uint32_t old_frames = a->total_frames, old_bump = a->bump;

	if (a->used > new_frames)
		(void)do_zs_compact(s, NULL, true);
	if (a->used > new_frames)
		return -EBUSY;
	a->relocate_failed = false;
	frames_trim_free(a, new_frames);
	for (uint32_t i = 0; i < s->descs.page_bump; i++) {
		struct tmem_pagedesc *p = pd(s, i);
		uint32_t h = pd_handle(p);

		/* One store moves a page (COMMIT.md): the copy is made first. */
		if (pd_live(p))
			pd_publish(p, data_ops(h)->relocate(s, h));
	}
	do_zs_shrink(s);
	if (a->relocate_failed) {
		/* A page is still above new_frames (no blocks for its copy):
		 * keep the old size and bump, so nothing hands its frame out.
		 * The free frames trimmed above are lost until the next start
		 * (recovery finds them); the pages moved stay where they went. */
		a->bump = old_bump;
		relaxed_set(&a->total_frames, old_frames);
		return -ENOSPC;
	}
	frames_release(a, new_frames, old_frames);
	return 0;
}

uint64_t store_compact(struct tmem_store *s)
{
	uint64_t moved;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->alloc_lock);
	moved = do_zs_compact(s, NULL, false);
	pthread_mutex_unlock(&s->alloc_lock);
	return moved;
}

/*
 * alloc_lock held: frames being warmed or punched are on no stack, so a
 * shrink waits for them; else a page above the new size could find no
 * free frame to move to.  Neither needs more than alloc_lock to finish.
 */
static void drain_in_transit(struct tmem_store *s)
{
	s->frames.shrinking = true;
	while (s->frames.in_transit)
		pthread_cond_wait(&s->transit_cond, &s->alloc_lock);
}

int store_resize(struct tmem_store *s, uint64_t new_pages)
{
	int ret;

	if (!s || new_pages == 0 || new_pages > s->frames.max_frames)
		return -EINVAL;
	/* Stop every pool (ascending gid, the documented order) so that no
	 * op holds a data handle while pages move. */
	pthread_mutex_lock(&s->lock);
	for (uint32_t gid = 0; gid < s->pool_bump; gid++)
		pthread_mutex_lock(&s->pool_tab[gid]->lock);
	pthread_mutex_lock(&s->alloc_lock);
	if (new_pages >= s->frames.total_frames) {
		ret = frames_grow(&s->frames, new_pages);
	} else {
		drain_in_transit(s);
		ret = do_frames_shrink(s, new_pages);
		s->frames.shrinking = false;
	}
	pthread_mutex_unlock(&s->alloc_lock);
	for (uint32_t gid = s->pool_bump; gid-- > 0;)
		pthread_mutex_unlock(&s->pool_tab[gid]->lock);
	pthread_mutex_unlock(&s->lock);
	return ret;
}
