/*
 * recovery-bench: how long a restarted tmemd takes to get its pages back.
 *
 * Fills a memfd-backed store of --mib MiB (default 1024) completely with
 * persistent pages (--clients clients, two pools each, 16 pages per
 * object), closes the store as a crash would leave it (nothing is
 * written at close), adopts the arena again and prints the time the
 * rebuild took and the pages it found.  Then it checks a sample of pages.
 * Goal (issue 15): a full 1 GiB arena in <= 1 s.
 *
 *   recovery-bench [--mib N] [--clients N] [--json]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tmem_store.h"

#define PG TMEM_PAGE_SIZE
#define PAGES_PER_OBJ 16

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fill(uint8_t *pg, uint64_t key)
{
	for (unsigned i = 0; i < PG / 8; i++)
		((uint64_t *)pg)[i] = key * 0x9e3779b97f4a7c15ull + i;
}

static struct tmem_ident ident_of(unsigned c)
{
	struct tmem_ident id = { { 'r', (uint8_t)c, (uint8_t)(c >> 8) } };

	return id;
}

static struct tmem_oid oid_of(uint64_t k)
{
	struct tmem_oid o = { { k / PAGES_PER_OBJ, 7, 0 } };

	return o;
}

/* Client c, pool p, key k: round robin over clients and pools until full. */
static int fill_store(struct tmem_store *s, unsigned nclients, uint64_t *stored)
{
	struct tmem_client *cl[256];
	uint8_t pg[PG];
	char name[32];
	uint64_t k;

	for (unsigned c = 0; c < nclients; c++) {
		struct tmem_ident id = ident_of(c);

		snprintf(name, sizeof(name), "client%u", c);
		if (store_client_create_ident(s, name, &id, &cl[c]) ||
		    store_new_pool(cl[c], tmem_pool_flags(TMEM_POOL_PERSIST), NULL) != 0 ||
		    store_new_pool(cl[c], tmem_pool_flags(TMEM_POOL_PERSIST), NULL) != 1)
			return -1;
	}
	for (k = 0;; k++) {
		struct tmem_oid o = oid_of(k / (2 * nclients));
		int ret;

		fill(pg, k);
		ret = store_put_page(cl[k % nclients], (int32_t)(k / nclients % 2), &o,
				     (uint32_t)(k / (2 * nclients)), pg, TMEM_PUT_CAP(TMEM_NO_CAP));
		if (ret == -ENOSPC)
			break;
		if (ret != 1)
			return -1;
	}
	*stored = k;
	return 0;
}

/* Every 97th key comes back with its bytes. */
static int check_sample(struct tmem_store *s, unsigned nclients, uint64_t stored)
{
	struct tmem_client *cl[256];
	uint8_t pg[PG], want[PG];
	char name[32];

	for (unsigned c = 0; c < nclients; c++) {
		struct tmem_ident id = ident_of(c);

		snprintf(name, sizeof(name), "client%u", c);
		if (store_client_claim(s, name, &id, &cl[c]))
			return -1;
	}
	for (uint64_t k = 0; k < stored; k += 97) {
		struct tmem_oid o = oid_of(k / (2 * nclients));

		fill(want, k);
		if (store_get_page(cl[k % nclients], (int32_t)(k / nclients % 2), &o,
				   (uint32_t)(k / (2 * nclients)), pg) != 1 ||
		    memcmp(pg, want, PG) != 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mib", required_argument, NULL, 'm' },
		{ "clients", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t mib = 1024, stored = 0;
	unsigned nclients = 4;
	int opt, json = 0, fd;
	struct tmem_store_config cfg;
	struct tmem_recovery_info ri;
	struct tmem_store *s;
	double t0, fill_s, open_s;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'm')
			mib = strtoull(optarg, NULL, 0);
		else if (opt == 'c')
			nclients = (unsigned)atoi(optarg);
		else if (opt == 'j')
			json = 1;
		else
			return 2;
	}
	if (mib < 1 || mib > 65536 || nclients < 1 || nclients > 256) {
		fprintf(stderr, "usage: recovery-bench [--mib 1..65536] [--clients 1..256] [--json]\n");
		return 2;
	}
	cfg = (struct tmem_store_config){ .arena_bytes = mib << 20, .prefault = true };
	fd = memfd_create("recovery-bench", MFD_CLOEXEC);
	if (fd < 0 || store_open(&cfg, fd, &s, NULL, 0)) {
		fprintf(stderr, "recovery-bench: cannot create the arena: %s\n", strerror(errno));
		return 1;
	}
	t0 = now();
	if (fill_store(s, nclients, &stored)) {
		fprintf(stderr, "recovery-bench: filling failed\n");
		return 1;
	}
	fill_s = now() - t0;
	store_destroy(s);
	t0 = now();
	if (store_open(&cfg, fd, &s, NULL, 0)) {
		fprintf(stderr, "recovery-bench: adopting the arena failed\n");
		return 1;
	}
	open_s = now() - t0;
	store_recovery_info(s, &ri);
	if (ri.pages != stored || check_sample(s, nclients, stored)) {
		fprintf(stderr, "recovery-bench: recovered %llu of %llu pages, or wrong bytes\n",
			(unsigned long long)ri.pages, (unsigned long long)stored);
		return 1;
	}
	if (json)
		printf("{\"mib\": %llu, \"pages\": %llu, \"clients\": %u, \"fill_s\": %.3f, "
		       "\"rebuild_s\": %.3f, \"open_s\": %.3f}\n",
		       (unsigned long long)mib, (unsigned long long)stored, nclients, fill_s,
		       ri.duration_nsec / 1e9, open_s);
	else
		printf("recovery-bench: %llu MiB arena, %llu persistent pages, %u clients\n"
		       "  fill                 %8.3f s\n"
		       "  rebuild (recover.c)  %8.3f s\n"
		       "  whole open           %8.3f s (goal <= 1 s for 1 GiB)\n",
		       (unsigned long long)mib, (unsigned long long)stored, nclients, fill_s,
		       ri.duration_nsec / 1e9, open_s);
	store_destroy(s);
	close(fd);
	return 0;
}
