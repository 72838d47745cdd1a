/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer over what a migration peer sends (daemon/migrate/mig_wire.c)
 * and what the destination does with it (pools/transfer.c): the input
 * is a stream of messages, each a header and its payload, read as
 * mig_recv() reads them; a message that passes the checks is acted on as
 * the destination would: an OFFER makes its pools in a store, a BATCH's
 * pages are imported (a page that does not decode must be refused, never
 * stored), END is compared.  Every page a get returns afterwards must
 * decode to a whole page.  A peer is authenticated but not trusted:
 * ASan and UBSan do the checking.  make fuzz-migrate; make check replays
 * tests/fuzz/corpus/fuzz-migrate.
 */
#include <stdlib.h>
#include <string.h>

#include "migrate/mig_wire.h"
#include "tmem_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tmem_client *fresh(struct tmem_store *s, const struct tmem_mig_offer *o)
{
	struct tmem_client *c = NULL;

	if (store_client_create(s, "fuzz", &c))
		return NULL;
	for (uint32_t i = 0; i < o->nr_pools; i++)
		(void)store_new_pool(c, o->pools[i].flags, NULL);
	return c;
}

static void act(struct tmem_store *s, struct tmem_client **c, uint16_t type,
		const uint8_t *p, uint32_t len)
{
	struct tmem_mig_offer o;
	struct tmem_stored_page sp;
	struct mig_batch_iter it;
	uint8_t page[TMEM_PAGE_SIZE];

	if (type == TMEM_MIG_OFFER) {
		memcpy(&o, p, sizeof(o));
		if (!o.status && !*c)
			*c = fresh(s, &o);
		return;
	}
	if (type != TMEM_MIG_BATCH || !*c)
		return;
	mig_batch_begin(&it, p, len);
	while (mig_batch_next(&it, &sp) > 0) {
		int rc = store_import_page(*c, it.pool_id, &sp, TMEM_PUT_CAP(TMEM_NO_CAP));

		if (rc == 1 && store_get_page(*c, it.pool_id, &sp.oid, sp.index, page) != 1)
			abort(); /* imported but not gettable whole */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tmem_store_config cfg = { .arena_bytes = 256 * TMEM_PAGE_SIZE };
	struct tmem_store *s = NULL;
	struct tmem_client *c = NULL;
	size_t off = 0;

	if (store_create(&cfg, &s))
		return 0;
	while (size - off >= sizeof(struct tmem_mig_hdr)) {
		struct tmem_mig_hdr h;
		uint8_t *p;

		memcpy(&h, data + off, sizeof(h));
		off += sizeof(h);
		if (mig_hdr_check(&h) || h.len > size - off)
			break;
		/* A copy of exactly len bytes, so ASan sees any overread. */
		p = malloc(h.len ? h.len : 1);
		if (!p)
			break;
		memcpy(p, data + off, h.len);
		off += h.len;
		if (!mig_payload_check(h.type, p, h.len))
			act(s, &c, h.type, p, h.len);
		free(p);
	}
	store_destroy(s);
	return 0;
}
