/* SPDX-License-Identifier: MIT */
/*
 * tmem-demo-guest: one simulated guest for `make demo`, through libtmem.
 *
 *   tmem-demo-guest SOCKET NAME cleancache PAGES
 *       ephemeral pool: puts PAGES file pages, gets every other one back
 *       (a hit removes it: private ephemeral gets are exclusive), flushes
 *       one file (object);
 *   tmem-demo-guest SOCKET NAME frontswap PAGES
 *       persistent pool: stores PAGES swap pages until refused (quota),
 *       loads and checks every accepted one, invalidates a few;
 *   tmem-demo-guest SOCKET NAME shared-put|shared-get PAGES UUID
 *       joins the shared pool UUID and puts or gets PAGES pages.
 *
 * Prints one line of results, creates READY_FILE ($TMEM_DEMO_READY) and
 * stays connected until SIGTERM, so the demo can read tmemd's stats
 * while every guest is still attached.  Exit 0 when the results match
 * the semantics.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmem.h"
#include "tmem_names.h"

static char page[4096], back[4096];

static void fill(uint64_t n)
{
	for (unsigned i = 0; i < 4096; i += 8)
		memcpy(page + i, &(uint64_t){ n * 2654435761u + i }, 8);
}

static int cleancache(struct tmem_conn *c, unsigned n)
{
	int32_t pool = tmem_new_pool(c, tmem_pool_flags(0), NULL);
	unsigned stored = 0, hits = 0, misses = 0;

	if (pool < 0)
		return pool;
	for (unsigned i = 0; i < n; i++) {
		struct tmem_oid o = { .oid = { 100 + i / 32 } }; /* a file per 32 pages */

		fill(i);
		stored += tmem_put_async(c, pool, &o, i % 32, page, NULL) == 0;
	}
	tmem_wait_all(c);
	for (unsigned i = 0; i < n; i += 2) {
		struct tmem_oid o = { .oid = { 100 + i / 32 } };
		int rc = tmem_get(c, pool, &o, i % 32, back);

		fill(i);
		if (rc == 1 && memcmp(page, back, 4096))
			return -EIO;
		hits += rc == 1;
		misses += rc == 0;
	}
	tmem_flush_object(c, pool, &(struct tmem_oid){ .oid = { 100 } });
	printf("cleancache: %u puts sent, %u gets: %u hits, %u misses (ephemeral: tmemd may drop pages)\n",
	       stored, hits + misses, hits, misses);
	return 0;
}

static int frontswap(struct tmem_conn *c, unsigned n)
{
	int32_t pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	unsigned stored = 0, refused = 0, loaded = 0;
	unsigned char *ok = calloc(n, 1);

	if (pool < 0 || !ok)
		return pool < 0 ? pool : -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		/* Linux's swizzle: oid[0] = type << 4 | (offset & 15), index = offset >> 4 */
		struct tmem_oid o = { .oid = { i & 15 } };
		int rc;

		fill(i);
		rc = tmem_put(c, pool, &o, i >> 4, page);
		if (rc < 0)
			return rc;
		ok[i] = (unsigned char)rc;
		stored += rc == 1;
		refused += rc == 0;
	}
	for (unsigned i = 0; i < n; i++) {
		struct tmem_oid o = { .oid = { i & 15 } };
		int rc = tmem_get(c, pool, &o, i >> 4, back);

		fill(i);
		if (rc != ok[i] || (rc == 1 && memcmp(page, back, 4096)))
			return -EIO; /* a persistent page must come back exactly */
		loaded += rc == 1;
	}
	for (unsigned i = 0; i < n / 4; i++)
		tmem_flush_page(c, pool, &(struct tmem_oid){ .oid = { i & 15 } }, i >> 4);
	printf("frontswap: %u stores accepted, %u refused (quota), %u loads verified, %u invalidated\n",
	       stored, refused, loaded, n / 4);
	free(ok);
	return 0;
}

static int shared(struct tmem_conn *c, unsigned n, const char *uuid_s, int writer)
{
	struct tmem_uuid uuid;
	int32_t pool;
	unsigned hits = 0;

	if (tmem_uuid_parse(uuid_s, &uuid))
		return -EINVAL;
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_SHARED), &uuid);
	if (pool < 0)
		return pool;
	for (unsigned i = 0; i < n; i++) {
		struct tmem_oid o = { .oid = { 7, i / 64 } };
		int rc;

		fill(1000000 + i);
		if (writer) {
			rc = tmem_put(c, pool, &o, i % 64, page);
		} else {
			rc = tmem_get(c, pool, &o, i % 64, back);
			if (rc == 1 && memcmp(page, back, 4096))
				return -EIO;
		}
		hits += rc == 1;
	}
	printf("shared pool %s: %u %s\n", uuid_s, hits,
	       writer ? "pages put" : "pages read back from the other guest's puts");
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: tmem-demo-guest SOCKET NAME KIND PAGES [UUID]\n"
		"One simulated guest for make demo, through libtmem.  KIND is one of:\n"
		"  cleancache   an ephemeral pool: puts PAGES file pages, gets every other\n"
		"               one back (a hit removes it), flushes one file\n"
		"  frontswap    a persistent pool: stores PAGES swap pages until refused,\n"
		"               loads and checks every accepted one, invalidates a few\n"
		"  shared-put   joins the shared pool UUID and puts PAGES pages\n"
		"  shared-get   joins the shared pool UUID and gets PAGES pages\n"
		"Prints one line of results, creates $TMEM_DEMO_READY, stays connected\n"
		"until SIGTERM.  Exit 0 when the results match tmem's semantics, 1 when\n"
		"not, 2 on a bad command line.\n");
}

static bool kind_ok(const char *kind, int argc)
{
	if (!strcmp(kind, "cleancache") || !strcmp(kind, "frontswap"))
		return argc == 5;
	return (!strcmp(kind, "shared-put") || !strcmp(kind, "shared-get")) && argc == 6;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	const char *ready = getenv("TMEM_DEMO_READY");
	struct tmem_conn *c;
	unsigned n;
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 5 || !kind_ok(argv[3], argc)) {
		usage(stderr);
		return 2;
	}
	signal(SIGTERM, on_term);
	n = (unsigned)strtoul(argv[4], NULL, 10);
	rc = tmem_connect(argv[1], argv[2], &c);
	if (rc) {
		fprintf(stderr, "%s: connect: %s\n", argv[2], strerror(-rc));
		return 1;
	}
	printf("[%s] ", argv[2]);
	if (!strcmp(argv[3], "cleancache"))
		rc = cleancache(c, n);
	else if (!strcmp(argv[3], "frontswap"))
		rc = frontswap(c, n);
	else if (!strncmp(argv[3], "shared-", 7) && argc > 5)
		rc = shared(c, n, argv[5], !strcmp(argv[3], "shared-put"));
	else
		rc = -EINVAL;
	if (rc) {
		printf("failed: %s\n", strerror(-rc));
		return 1;
	}
	fflush(stdout);
	if (ready)
		close(open(ready, O_WRONLY | O_CREAT, 0644));
	while (!stop)
		pause();
	tmem_disconnect(c);
	return 0;
}
