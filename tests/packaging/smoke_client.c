/* SPDX-License-Identifier: MIT */
/*
 * The libtmem-dev smoke test: built against the installed headers and
 * library (pkg-config libtmem), it stores a page in a running tmemd and
 * reads it back.  With --hold it prints "stored" after the put and waits
 * for a line on stdin before the get, so a reload (SIGHUP) can happen in
 * between: the page must survive it, and the connection too.
 * Usage: smoke_client GUEST_SOCKET [--hold]
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <tmem.h>

int main(int argc, char **argv)
{
	static unsigned char put[TMEM_PAGE_SIZE], got[TMEM_PAGE_SIZE];
	struct tmem_oid oid = { .oid = { 1, 2, 3 } };
	struct tmem_conn *c = NULL;
	char line[64];
	bool hold;
	int pool, rc;

	hold = argc == 3 && !strcmp(argv[2], "--hold");
	if (argc != 2 && !hold) {
		fprintf(stderr, "usage: smoke_client GUEST_SOCKET [--hold]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(put); i++)
		put[i] = (unsigned char)(i * 7 + 1);
	rc = tmem_connect(argv[1], "deb-smoke", &c);
	if (rc < 0) {
		fprintf(stderr, "smoke_client: connect %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	/* Persistent, so tmemd may not drop the page before the get. */
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	rc = pool < 0 ? pool : tmem_put(c, pool, &oid, 0, put);
	if (rc == 1 && hold) {
		printf("stored\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			rc = -1;
	}
	if (rc == 1)
		rc = tmem_get(c, pool, &oid, 0, got);
	tmem_disconnect(c);
	if (rc != 1 || memcmp(put, got, sizeof(put))) {
		fprintf(stderr, "smoke_client: put/get failed (pool %d, rc %d)\n", pool, rc);
		return 1;
	}
	printf("smoke_client: page stored and read back through libtmem\n");
	return 0;
}
