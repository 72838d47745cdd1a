/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "fake_ring.h"

static void fake_notify(struct tmemd_ring *r)
{
	((struct fake_ring *)r->priv)->notified++;
}

static void fake_ack(struct tmemd_ring *r)
{
	(void)r;
}

static void fake_fault(struct tmemd_ring *r, const char *why)
{
	(void)why;
	((struct fake_ring *)r->priv)->faulted++;
}

static const struct tmemd_ring_ops fake_ring_ops = {
	.notify = fake_notify,
	.ack = fake_ack,
	.fault = fake_fault,
};

void fake_ring_init(struct fake_ring *fr, void *region, uint32_t entries,
		    uint32_t slots, struct tmemd_client *c)
{
	struct tmem_ring_hdr *h = region;

	memset(fr, 0, sizeof(*fr));
	memset(region, 0, tmem_region_size(entries, slots));
	h->magic = TMEM_RING_MAGIC;
	h->version = TMEM_RING_VERSION;
	h->nr_entries = entries;
	h->nr_slots = slots;
	h->slot_offset = tmem_slot_offset(entries);
	fr->ring.geo = (struct tmemd_slots){ .region = region, .nr_entries = entries,
					     .nr_slots = slots };
	fr->ring.client = c;
	fr->ring.ops = &fake_ring_ops;
	fr->ring.priv = fr;
	tmemd_ring_init(&fr->ring);
}
