// SPDX-License-Identifier: MIT
/* The tmemcache core's test fixture; see rcache_fixture.h. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rcache_fixture.h"

void rc_fix_up(struct rc_fixture *f, struct shim_ops *ops,
	       uint64_t nr_blocks, uint32_t nr_slots)
{
	uint32_t i;

	memset(f, 0, sizeof(*f));
	f->slots = calloc(nr_slots, sizeof(*f->slots));
	ck_assert_ptr_nonnull(f->slots);
	ck_assert_int_eq(fake_disk_init(&f->disk, nr_blocks), 0);
	ck_assert_int_eq(shim_rc_init(&f->rc, ops, nr_blocks, f->slots,
				      nr_slots), 0);
	for (i = 0; i < SHIM_RC_BATCH; i++)
		f->ptrs[i] = f->bufs[i];
}

void rc_fix_down(struct rc_fixture *f)
{
	shim_rc_fini(&f->rc);
	fake_disk_fini(&f->disk);
	free(f->slots);
	f->slots = NULL;
}

int rc_fix_read(struct rc_fixture *f, uint64_t blk, uint32_t n)
{
	struct shim_rc_disk d = fake_disk_ops(&f->disk);

	return shim_rc_read(&f->rc, blk, f->ptrs, n, f->calls, &d);
}

void rc_fix_write(struct rc_fixture *f, uint64_t blk, uint64_t ver)
{
	struct shim_call c[SHIM_RC_BATCH];

	fake_disk_write(&f->disk, blk, ver);
	shim_rc_invalidate(&f->rc, blk, 1, c);
}

void rc_fix_assert_ver(struct rc_fixture *f, uint32_t i, uint64_t blk,
		       uint64_t ver)
{
	uint64_t got = ~0ull;

	ck_assert_msg(fake_disk_check(f->bufs[i], blk, &got) == 0,
		      "block %llu torn", (unsigned long long)blk);
	ck_assert_msg(got == ver, "block %llu: version %llu, want %llu",
		      (unsigned long long)blk, (unsigned long long)got,
		      (unsigned long long)ver);
}
