/* SPDX-License-Identifier: MIT */
/*
 * Where tmemd's store lives, so that it outlives the process:
 *
 *   --arena PATH   a file on tmpfs or hugetlbfs (survives any restart,
 *                  systemctl stop included, until the file is removed or
 *                  the host reboots);
 *   fd store       under systemd, a memfd handed to the service manager
 *                  (FDSTORE=1, FDNAME=tmemd-arena) and passed back on the
 *                  next start; it survives crashes, OOM kills and
 *                  systemctl restart, not systemctl stop;
 *   memory         neither: nothing survives a restart.
 *
 * The file is flock()ed, so two tmemd processes never share one.
 *
 * "Arena" means this file (or memory) and nothing else.  What is inside
 * it is pools/': its format is pools/durable.h, mapped by pools/durable.c;
 * the free-frame allocator inside is pools/frames.c; and the order of
 * the stores that lets a restart trust it is pools/COMMIT.md.
 */
#ifndef TMEMD_ARENA_H
#define TMEMD_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#define TMEMD_ARENA_FDNAME "tmemd-arena"

struct tmemd_arena {
	int fd;             /* -1: process memory */
	bool from_fdstore;  /* passed back by systemd */
	bool to_fdstore;    /* new, handed to systemd */
	char where[300];    /* for the log: "file PATH", "memfd (fd store)", ... */
};

/*
 * Finds or makes the arena: path (NULL or "" for none), else the fd
 * store, else process memory.  discard empties a found arena (the admin's
 * --discard-arena).  0, or -errno with a sentence in why.
 */
int tmemd_arena_open(const char *path, bool discard, struct tmemd_arena *out,
		     char *why, size_t why_len);
void tmemd_arena_close(struct tmemd_arena *a);

#endif /* TMEMD_ARENA_H */
