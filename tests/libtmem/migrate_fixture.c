/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "migrate_fixture.h"

static void start(struct mpair *p, unsigned flags, const char *memory)
{
	static const char *const names[2] = { "hostA", "hostB" };
	char conf[1024];
	int status;

	memset(p, 0, sizeof(*p));
	snprintf(p->keydir, sizeof(p->keydir), "/tmp/tmemd-mkeys.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(p->keydir));
	snprintf(p->keyfile, sizeof(p->keyfile), "%s/keys", p->keydir);
	mpair_write_keys(p->keyfile, MPAIR_KEY_A MPAIR_KEY_B);
	p->port[0] = mpair_free_port();
	p->port[1] = mpair_free_port();
	for (int i = 0; i < 2; i++) {
		int listen = !(i == 0 && (flags & MPAIR_SOURCE_UNREACHABLE));

		snprintf(conf, sizeof(conf),
			 "[tmemd]\nmigrate-key = %s\nmigrate-name = %s\n%s%u\n"
			 "migrate-peers = 127.0.0.1:%u\n",
			 p->keyfile, names[i], listen ? "migrate-listen = 127.0.0.1:" : "# ",
			 p->port[i], p->port[1 - i]);
		rdaemon_init(&p->d[i], KEEP_ARENA_FILE, conf);
		p->d[i].memory = memory;
		ck_assert_msg(rdaemon_start(&p->d[i], &status), "%s did not start", names[i]);
	}
}

void mpair_start(struct mpair *p, unsigned flags)
{
	start(p, flags, "64M");
}

void mpair_start_sized(struct mpair *p, const char *memory)
{
	start(p, 0, memory);
}

void mpair_fini(struct mpair *p)
{
	char path[200];

	for (int i = 0; i < 2; i++)
		rdaemon_fini(&p->d[i]);
	unlink(p->keyfile);
	snprintf(path, sizeof(path), "%s", p->keydir);
	rmdir(path);
}

bool mpair_has_file(struct mpair *p, int i, const char *sub, const char *name)
{
	char path[600];
	struct stat st;

	snprintf(path, sizeof(path), "%s/migrate/%s/%s", p->d[i].dir, sub, name);
	return stat(path, &st) == 0;
}

void mpair_wait_settled(struct mpair *p, const char *name)
{
	for (int tries = 0; tries < 150; tries++) {
		bool busy = false;

		for (int i = 0; i < 2; i++)
			busy |= mpair_has_file(p, i, "incoming", name);
		/* Parked on one side is where it lives now only if the client
		 * is attached elsewhere: the caller's client is attached. */
		for (int i = 0; i < 2; i++)
			busy |= mpair_has_file(p, i, "parked", name);
		if (!busy)
			return;
		usleep(100000);
	}
	for (int i = 0; i < 2; i++)
		rdaemon_dump_log(&p->d[i]);
	ck_abort_msg("%s: the move did not settle on both sides", name);
}
