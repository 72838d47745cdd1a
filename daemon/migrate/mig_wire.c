/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "migrate/mig_wire.h"
#include "tmem_names.h"

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

int mig_hdr_check(const struct tmem_mig_hdr *h)
{
	if (h->magic != TMEM_MIG_MAGIC || h->version != TMEM_MIG_VERSION || h->rsvd ||
	    h->type < TMEM_MIG_PULL || h->type > TMEM_MIG_PUSH ||
	    h->len > TMEM_MIG_MAX_PAYLOAD)
		return -EPROTO;
	return 0;
}

int mig_name_get(const uint8_t field[TMEM_MIG_NAME_MAX], char out[TMEM_MIG_NAME_MAX])
{
	size_t n = strnlen((const char *)field, TMEM_MIG_NAME_MAX);

	if (n == TMEM_MIG_NAME_MAX || !all_zero(field + n, TMEM_MIG_NAME_MAX - n))
		return -EPROTO;
	memcpy(out, field, n + 1);
	return tmem_name_valid(out) ? 0 : -EPROTO;
}

void mig_name_put(uint8_t field[TMEM_MIG_NAME_MAX], const char *name)
{
	memset(field, 0, TMEM_MIG_NAME_MAX);
	strncpy((char *)field, name, TMEM_MIG_NAME_MAX - 1);
}

/* A status on the wire: 0 or a negative errno tmemd sends. */
static int status_ok(int32_t s)
{
	return s <= 0 && s > -4096;
}

static int offer_check(const struct tmem_mig_offer *o)
{
	uint32_t seen = 0;

	if (!status_ok(o->status) || o->nr_pools > TMEM_MIG_MAX_POOLS)
		return -EPROTO;
	if (o->status)
		return 0;
	if (!o->nr_pools || all_zero(o->xfer, sizeof(o->xfer)))
		return -EPROTO;
	for (uint32_t i = 0; i < o->nr_pools; i++) {
		const struct tmem_mig_pool *p = &o->pools[i];

		/* Persistent private pools of the current spec only: what
		 * parking keeps. */
		if (p->id < 0 || p->id >= (int32_t)TMEM_MIG_MAX_POOLS || (seen & (1u << p->id)) ||
		    p->flags != tmem_pool_flags(TMEM_POOL_PERSIST))
			return -EPROTO;
		seen |= 1u << p->id;
	}
	return all_zero(&o->pools[o->nr_pools],
			(TMEM_MIG_MAX_POOLS - o->nr_pools) * sizeof(o->pools[0])) ? 0 : -EPROTO;
}

static int batch_check(const void *p, uint32_t len)
{
	struct tmem_stored_page sp;
	struct mig_batch_iter it;
	int rc;

	if (len < sizeof(struct tmem_mig_batch))
		return -EPROTO;
	mig_batch_begin(&it, p, len);
	if (it.pool_id < 0 || it.pool_id >= (int32_t)TMEM_MIG_MAX_POOLS)
		return -EPROTO;
	while ((rc = mig_batch_next(&it, &sp)) > 0)
		;
	return rc;
}

int mig_payload_check(uint16_t type, const void *p, uint32_t len)
{
	char name[TMEM_MIG_NAME_MAX];

	switch (type) {
	case TMEM_MIG_PULL:
	case TMEM_MIG_PUSH:
	case TMEM_MIG_CHECK:
		if (len != sizeof(struct tmem_mig_who))
			return -EPROTO;
		if (type == TMEM_MIG_CHECK &&
		    !all_zero(((const struct tmem_mig_who *)p)->ident, TMEM_MIG_IDENT_LEN))
			return -EPROTO;
		return mig_name_get(((const struct tmem_mig_who *)p)->name, name);
	case TMEM_MIG_OFFER:
		if (len != sizeof(struct tmem_mig_offer))
			return -EPROTO;
		return offer_check(p);
	case TMEM_MIG_BATCH:
		return batch_check(p, len);
	case TMEM_MIG_END:
		return len == sizeof(struct tmem_mig_end) ? 0 : -EPROTO;
	case TMEM_MIG_RELEASE:
	case TMEM_MIG_ABORT:
		return len == sizeof(struct tmem_mig_xfer) ? 0 : -EPROTO;
	case TMEM_MIG_DONE:
		if (len != sizeof(struct tmem_mig_done) ||
		    ((const struct tmem_mig_done *)p)->rsvd)
			return -EPROTO;
		return status_ok(((const struct tmem_mig_done *)p)->status) ? 0 : -EPROTO;
	case TMEM_MIG_CHECK_REPLY:
		if (len != sizeof(struct tmem_mig_check_reply) ||
		    ((const struct tmem_mig_check_reply *)p)->rsvd)
			return -EPROTO;
		return status_ok(((const struct tmem_mig_check_reply *)p)->status) ? 0 : -EPROTO;
	default:
		return -EPROTO;
	}
}

void mig_batch_begin(struct mig_batch_iter *it, const void *payload, uint32_t len)
{
	struct tmem_mig_batch b;

	memset(it, 0, sizeof(*it));
	it->p = payload;
	it->len = len;
	if (len < sizeof(b)) {
		it->pool_id = -1;
		return;
	}
	memcpy(&b, payload, sizeof(b));
	it->pool_id = b.pool_id;
	it->left = b.count;
	it->off = sizeof(b);
}

static uint32_t pad8(uint32_t n)
{
	return (n + 7u) & ~7u;
}

/* Whether a record's codec, length and word agree. */
static int page_rec_ok(const struct tmem_mig_page *r)
{
	if (!all_zero(r->rsvd, sizeof(r->rsvd)))
		return 0;
	switch (r->codec) {
	case TMEM_STORED_SAME:
		return r->len == 0;
	case 0: /* TMEM_CODEC_NONE */
		return r->len == TMEM_PAGE_SIZE && r->word == 0;
	case 1: /* LZ4 */
	case 2: /* ZSTD */
		return r->len > 0 && r->len < TMEM_PAGE_SIZE && r->word == 0;
	default:
		return 0;
	}
}

int mig_batch_next(struct mig_batch_iter *it, struct tmem_stored_page *out)
{
	struct tmem_mig_page r;

	if (it->pool_id < 0)
		return -EPROTO;
	if (!it->left)
		return it->off == it->len ? 0 : -EPROTO;
	if (it->len - it->off < sizeof(r))
		return -EPROTO;
	memcpy(&r, it->p + it->off, sizeof(r));
	if (!page_rec_ok(&r) || it->len - it->off - sizeof(r) < pad8(r.len))
		return -EPROTO;
	memcpy(out->oid.oid, r.oid, sizeof(r.oid));
	out->index = r.index;
	out->len = r.len;
	out->codec = r.codec;
	out->word = r.word;
	out->bytes = r.len ? it->p + it->off + sizeof(r) : NULL;
	it->off += (uint32_t)sizeof(r) + pad8(r.len);
	it->left--;
	return 1;
}

void mig_batch_start(struct mig_batch_buf *b, int32_t pool_id)
{
	struct tmem_mig_batch h = { .pool_id = pool_id };

	memcpy(b->buf, &h, sizeof(h));
	b->used = sizeof(h);
	b->count = 0;
}

int mig_batch_add(struct mig_batch_buf *b, const struct tmem_stored_page *p)
{
	struct tmem_mig_page r = { .index = p->index, .len = p->len, .codec = p->codec,
				   .word = p->codec == TMEM_STORED_SAME ? p->word : 0 };
	uint32_t need = (uint32_t)sizeof(r) + pad8(p->len);

	if (b->used >= TMEM_MIG_BATCH_TARGET || b->cap - b->used < need)
		return 1;
	if (p->codec == TMEM_STORED_SAME)
		r.len = 0;
	memcpy(r.oid, p->oid.oid, sizeof(r.oid));
	memcpy(b->buf + b->used, &r, sizeof(r));
	if (r.len) {
		memcpy(b->buf + b->used + sizeof(r), p->bytes, r.len);
		memset(b->buf + b->used + sizeof(r) + r.len, 0, pad8(r.len) - r.len);
	}
	b->used += (uint32_t)sizeof(r) + pad8(r.len);
	b->count++;
	return 0;
}

uint32_t mig_batch_len(const struct mig_batch_buf *b)
{
	struct tmem_mig_batch h;

	memcpy(&h, b->buf, sizeof(h));
	h.count = b->count;
	memcpy(b->buf, &h, sizeof(h));
	return b->used;
}
