/* SPDX-License-Identifier: MIT */
/*
 * A pool's pages in the form they are stored in, out and back in: what
 * moves a parked client between two tmemds (man/tmem.7, "Migration
 * between hosts") without decompressing on one side and compressing
 * again on the other.
 *
 * Export walks the pool's object hash (bucket, object in its chain,
 * page in its list) under the pool lock and hands each page's stored
 * bytes to a callback that copies them out; the cursor lets the caller
 * stop when its buffer is full and go on later.  The walk is only
 * stable while nobody changes the pool, which holds for the client it
 * is meant for: a parked client, which no guest can reach.
 *
 * Import is a put of a page already encoded, from a peer that is
 * authenticated but still not trusted with the arena: the bytes are
 * decoded once into a scratch page before anything is stored, so a
 * page that does not decode to exactly 4 KiB is refused (-EBADMSG) and
 * changes nothing.  The check can run apart from the put
 * (store_stored_page_check(), then store_import_checked()), on another
 * thread, so that a transfer decodes one batch while it stores another.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

/* Pool lock held: the stored form of page into *out (bounce: a page). */
static int do_page_stored(struct tmem_store *s, uint32_t page, void *bounce,
			  struct tmem_stored_page *out)
{
	uint32_t h = pd_handle(pd(s, page));
	const void *src;

	out->index = pd(s, page)->index;
	out->oid = od(s, pd_obj(pd(s, page)))->oid;
	if ((h & TMEM_H_ZS) && (h & TMEM_H_SUB)) {
		out->codec = TMEM_STORED_SAME;
		out->word = zs_word(s, h);
		out->len = 0;
		out->bytes = NULL;
		return 0;
	}
	src = do_data_map(s, page, h, bounce, &out->len, &out->codec);
	if (!src)
		return -EIO;
	if (out->codec == TMEM_CODEC_NONE)
		out->len = TMEM_PAGE_SIZE;
	out->word = 0;
	out->bytes = src;
	return 0;
}

/* Pool lock held: the walk from *cur on; see store_export_pages(). */
static int do_export(struct tmem_pool *pool, struct tmem_export_cursor *cur,
		     int (*fn)(void *ctx, const struct tmem_stored_page *p), void *ctx)
{
	struct tmem_store *s = pool->store;
	const struct tmem_htab *t = &pool->objs;
	uint8_t bounce[TMEM_PAGE_SIZE];
	struct tmem_stored_page sp;
	int rc;

	for (; t->b && cur->bucket <= t->mask; cur->bucket++, cur->obj = 0) {
		uint32_t head = t->b[cur->bucket];

		for (uint32_t o = 0; head != TMEM_NIL; o++, head = pd(s, head)->oprev) {
			uint32_t p = head;

			if (o < cur->obj)
				continue;
			cur->obj = o;
			for (uint32_t n = 0; p != TMEM_NIL; n++, p = pd(s, p)->onext) {
				if (n < cur->page)
					continue;
				rc = do_page_stored(s, p, bounce, &sp);
				if (rc)
					return rc;
				rc = fn(ctx, &sp);
				if (rc)
					return rc; /* this page again next time */
				cur->page = n + 1;
			}
			cur->page = 0;
		}
	}
	cur->done = 1;
	return 0;
}

int store_export_pages(struct tmem_client *c, int32_t pool_id,
		       struct tmem_export_cursor *cur,
		       int (*fn)(void *ctx, const struct tmem_stored_page *p), void *ctx)
{
	struct tmem_pool *pool;
	int rc;

	if (!c || !cur || !fn)
		return -EINVAL;
	if (cur->done)
		return 0;
	pool = slot_lock_pool(c, pool_id);
	if (!pool)
		return -ENOENT;
	rc = do_export(pool, cur, fn, ctx);
	pthread_mutex_unlock(&pool->lock);
	return rc < 0 ? rc : 0;
}

/* The encoding of a page a peer sent: checked by decoding it into
 * scratch, unless the caller did (decode false: only the fields). */
static int stored_to_enc(const struct tmem_stored_page *p, void *scratch,
			 struct tmem_enc *e, bool decode)
{
	memset(e, 0, offsetof(struct tmem_enc, buf));
	switch (p->codec) {
	case TMEM_STORED_SAME:
		e->kind = TMEM_ENC_SAME;
		e->word = p->word;
		return 0;
	case TMEM_CODEC_NONE:
		if (p->len != TMEM_PAGE_SIZE || !p->bytes)
			return -EBADMSG;
		e->kind = TMEM_ENC_RAW;
		e->codec = TMEM_CODEC_NONE;
		e->len = TMEM_PAGE_SIZE;
		e->bytes = e->page = p->bytes;
		return 0;
	case TMEM_CODEC_LZ4:
	case TMEM_CODEC_ZSTD:
		if (!p->bytes || !p->len || p->len >= TMEM_PAGE_SIZE ||
		    (decode && codec_decode(p->codec, p->bytes, p->len, scratch)))
			return -EBADMSG;
		e->kind = TMEM_ENC_Z;
		e->codec = p->codec;
		e->len = p->len;
		e->bytes = p->bytes;
		e->page = scratch;
		return 0;
	default:
		return -EBADMSG;
	}
}

int store_stored_page_check(const struct tmem_stored_page *p)
{
	uint8_t scratch[TMEM_PAGE_SIZE];
	struct tmem_enc e;

	return p ? stored_to_enc(p, scratch, &e, true) : -EINVAL;
}

static int import(struct tmem_client *c, int32_t pool_id, const struct tmem_stored_page *p,
		  const struct tmem_put_args *args, bool decode)
{
	uint8_t scratch[TMEM_PAGE_SIZE];
	struct tmem_enc e; /* its buf stays unused: the bytes are p's */
	int rc;

	if (!c || !p || !args)
		return -EINVAL;
	rc = stored_to_enc(p, scratch, &e, decode);
	if (!rc)
		rc = store_put_enc(c, pool_id, &p->oid, p->index, &e, args);
	return rc;
}

int store_import_page(struct tmem_client *c, int32_t pool_id,
		      const struct tmem_stored_page *p, const struct tmem_put_args *args)
{
	return import(c, pool_id, p, args, true);
}

int store_import_checked(struct tmem_client *c, int32_t pool_id,
			 const struct tmem_stored_page *p, const struct tmem_put_args *args)
{
	return import(c, pool_id, p, args, false);
}
