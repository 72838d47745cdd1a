/* SPDX-License-Identifier: MIT */
/* The store: creation, teardown and resizing the arena. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "store_internal.h"

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

int tmem_store_create(const struct tmem_store_config *cfg,
		      struct tmem_store **out)
{
	struct tmem_store *s;
	int ret;

	if (!cfg || !out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->alloc_lock, NULL);
	s->cfg = *cfg;
	s->data = &tmem_raw_data_ops;
	s->hash_seed = random_seed(s);
	s->pool_free = TMEM_NIL;
	for (uint32_t i = 0; i < TMEM_MAX_SHARED_POOLS; i++)
		s->shared_gid[i] = TMEM_NIL;
	atomic_store_explicit(&s->struct_bytes, sizeof(*s), memory_order_relaxed);
	ret = arena_init(&s->arena, cfg);
	if (ret < 0)
		goto fail;
	ret = descs_init(&s->descs, s->arena.max_frames);
	if (ret < 0)
		goto fail;
	s->pool_tab = calloc(TMEM_MAX_POOLS_TOTAL, sizeof(*s->pool_tab));
	if (!s->pool_tab) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = client_alloc(s, "shared", &s->shared_client);
	if (ret < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	tmem_store_destroy(s);
	return ret;
}

void tmem_store_destroy(struct tmem_store *s)
{
	if (!s)
		return;
	while (s->clients)
		tmem_client_destroy(s->clients);
	/* Every shared pool went with its last sharer. */
	client_free(s->shared_client);
	for (uint32_t gid = 0; gid < s->pool_bump; gid++) {
		pthread_mutex_destroy(&s->pool_tab[gid]->lock);
		free(s->pool_tab[gid]);
	}
	free(s->pool_tab);
	descs_fini(&s->descs);
	arena_fini(&s->arena);
	pthread_mutex_destroy(&s->alloc_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Shrink with everything locked: move pages below new_frames, release the rest. */
static int do_arena_shrink(struct tmem_store *s, uint32_t new_frames)
{
	struct tmem_arena *a = &s->arena;
	uint32_t old_frames = a->total_frames;

	if (a->used > new_frames)
		return -EBUSY;
	arena_trim_free(a, new_frames);
	for (uint32_t i = 0; i < s->descs.page_bump; i++) {
		struct tmem_pagedesc *p = pd(s, i);

		if (pd_obj_raw(p) != TMEM_NIL)
			p->data = s->data->relocate(a, p->data);
	}
	arena_release(a, new_frames, old_frames);
	return 0;
}

int tmem_store_resize(struct tmem_store *s, uint64_t new_pages)
{
	int ret;

	if (!s || new_pages == 0 || new_pages > s->arena.max_frames)
		return -EINVAL;
	/* Stop every pool (ascending gid, the documented order) so that no
	 * op holds a data handle while pages move. */
	pthread_mutex_lock(&s->lock);
	for (uint32_t gid = 0; gid < s->pool_bump; gid++)
		pthread_mutex_lock(&s->pool_tab[gid]->lock);
	pthread_mutex_lock(&s->alloc_lock);
	if (new_pages >= s->arena.total_frames)
		ret = arena_grow(&s->arena, new_pages);
	else
		ret = do_arena_shrink(s, new_pages);
	pthread_mutex_unlock(&s->alloc_lock);
	for (uint32_t gid = s->pool_bump; gid-- > 0;)
		pthread_mutex_unlock(&s->pool_tab[gid]->lock);
	pthread_mutex_unlock(&s->lock);
	return ret;
}
