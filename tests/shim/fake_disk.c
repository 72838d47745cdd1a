// SPDX-License-Identifier: MIT
/* The read cache's tests' disk; see fake_disk.h. */
#include <stdlib.h>
#include <string.h>

#include "fake_disk.h"
#include "shim_test_util.h"

#define BLOCK 4096u
#define HDR 16u

static uint32_t seed_of(uint64_t blk, uint64_t ver)
{
	return (uint32_t)(blk * 2654435761u) ^ (uint32_t)(ver * 40503u + 7);
}

void fake_disk_fill(uint8_t *page, uint64_t blk, uint64_t ver)
{
	shim_test_fill(page, seed_of(blk, ver));
	memcpy(page, &blk, 8);
	memcpy(page + 8, &ver, 8);
}

int fake_disk_check(const uint8_t *page, uint64_t blk, uint64_t *ver)
{
	uint8_t want[BLOCK];
	uint64_t b, v;

	memcpy(&b, page, 8);
	memcpy(&v, page + 8, 8);
	if (b != blk)
		return -EILSEQ;
	fake_disk_fill(want, b, v);
	if (memcmp(want + HDR, page + HDR, BLOCK - HDR))
		return -EILSEQ;
	*ver = v;
	return 0;
}

int fake_disk_init(struct fake_disk *d, uint64_t nr_blocks)
{
	uint64_t b;

	memset(d, 0, sizeof(*d));
	d->data = malloc(nr_blocks * BLOCK);
	if (!d->data)
		return -ENOMEM;
	d->nr_blocks = nr_blocks;
	pthread_mutex_init(&d->mu, NULL);
	for (b = 0; b < nr_blocks; b++)
		fake_disk_fill(d->data + b * BLOCK, b, 0);
	return 0;
}

void fake_disk_fini(struct fake_disk *d)
{
	pthread_mutex_destroy(&d->mu);
	free(d->data);
	d->data = NULL;
}

void fake_disk_write(struct fake_disk *d, uint64_t blk, uint64_t ver)
{
	uint8_t page[BLOCK];

	fake_disk_fill(page, blk, ver);
	pthread_mutex_lock(&d->mu);
	memcpy(d->data + blk * BLOCK, page, BLOCK);
	pthread_mutex_unlock(&d->mu);
}

uint64_t fake_disk_reads(struct fake_disk *d)
{
	uint64_t n;

	pthread_mutex_lock(&d->mu);
	n = d->blocks_read;
	pthread_mutex_unlock(&d->mu);
	return n;
}

static int disk_read(void *ctx, uint64_t blk, uint32_t n, void *const *pages)
{
	struct fake_disk *d = ctx;
	uint32_t i;

	if (__atomic_load_n(&d->fail, __ATOMIC_RELAXED))
		return -EIO;
	if (blk >= d->nr_blocks || n > d->nr_blocks - blk)
		return -EINVAL;
	pthread_mutex_lock(&d->mu);
	for (i = 0; i < n; i++)
		memcpy(pages[i], d->data + (blk + i) * BLOCK, BLOCK);
	d->blocks_read += n;
	pthread_mutex_unlock(&d->mu);
	if (d->hook)
		d->hook(d->hook_arg, blk, n);
	return 0;
}

struct shim_rc_disk fake_disk_ops(struct fake_disk *d)
{
	return (struct shim_rc_disk){ .read = disk_read, .ctx = d };
}
