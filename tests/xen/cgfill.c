/*
 * e2e-cgfill: the client of make e2e-xen's cgroup case (issue 28, point
 * 2), in dom0 on a second tmemd's local transport.  Puts EPH MiB of
 * ephemeral and PERS MiB of persistent pages, each unique and checkable,
 * says READY, waits until GOFILE exists (a memory hog came and went
 * meanwhile), then gets every persistent page back and checks it.
 *
 * usage: e2e-cgfill SOCKET EPH_MIB PERS_MIB GOFILE
 * Prints "E2E-CGFILL-READY ..." and "E2E-CGFILL pers=N missing=M wrong=W";
 * exit 0 only when every persistent page came back right.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmem.h"

static void fill(uint64_t *w, uint64_t n)
{
	for (unsigned i = 0; i < 512; i++)
		w[i] = (n + 1) * 0x9e3779b97f4a7c15ull ^ (i * 0xbf58476d1ce4e5b9ull);
}

static unsigned put_all(struct tmem_conn *c, int32_t pool, unsigned pages, uint64_t base)
{
	static uint64_t page[512];
	unsigned stored = 0;

	for (unsigned i = 0; i < pages; i++) {
		struct tmem_oid o = { .oid = { base + i / 1024, 28, 2 } };

		fill(page, base + i);
		stored += tmem_put(c, pool, &o, i % 1024, page) == 1;
	}
	return stored;
}

int main(int argc, char **argv)
{
	static uint64_t page[512], want[512];
	unsigned eph_pages, pers_pages, eph_ok, pers_ok, missing = 0, wrong = 0;
	struct tmem_conn *c = NULL;
	int32_t eph, pers;

	if (argc != 5) {
		fprintf(stderr, "usage: %s SOCKET EPH_MIB PERS_MIB GOFILE\n", argv[0]);
		return 2;
	}
	eph_pages = (unsigned)atoi(argv[2]) * 256;
	pers_pages = (unsigned)atoi(argv[3]) * 256;
	if (tmem_connect(argv[1], "cgfill", &c) < 0) {
		fprintf(stderr, "e2e-cgfill: cannot connect to %s\n", argv[1]);
		return 2;
	}
	eph = tmem_new_pool(c, tmem_pool_flags(0), NULL);
	pers = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	if (eph < 0 || pers < 0)
		return 2;
	pers_ok = put_all(c, pers, pers_pages, 0);
	eph_ok = put_all(c, eph, eph_pages, 1u << 20);
	printf("E2E-CGFILL-READY eph=%u/%u pers=%u/%u\n", eph_ok, eph_pages, pers_ok, pers_pages);
	fflush(stdout);
	while (access(argv[4], F_OK) != 0)
		usleep(200000);
	for (unsigned i = 0; i < pers_pages; i++) {
		struct tmem_oid o = { .oid = { i / 1024, 28, 2 } };
		int rc = tmem_get(c, pers, &o, i % 1024, page);

		fill(want, i);
		if (rc != 1)
			missing++;
		else if (memcmp(page, want, sizeof(page)))
			wrong++;
	}
	printf("E2E-CGFILL pers=%u missing=%u wrong=%u\n", pers_ok, missing, wrong);
	fflush(stdout);
	tmem_disconnect(c);
	return missing || wrong ? 1 : 0;
}
