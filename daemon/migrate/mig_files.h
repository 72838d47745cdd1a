/* SPDX-License-Identifier: MIT */
/*
 * mig_files.c: the few lines each side writes down so that a kill -9
 * finds out what it was in the middle of (man/tmem.7's crash cases).
 * One small file per client name in a directory, replaced whole with a
 * rename, so a reader sees the old text or the new, never a mix.
 *
 *   <runtime>/migrate/parked/NAME    source: "AT LABEL" parked since AT;
 *                                    "AT LABEL lent XFER PEER": offered
 *                                    to PEER as XFER, not claimable here;
 *                                    "AT LABEL released": PEER has it, the
 *                                    copy here is being freed
 *   <runtime>/migrate/incoming/NAME  destination: "staged XFER PEER" or
 *                                    "committed XFER PEER"
 */
#ifndef TMEMD_MIG_FILES_H
#define TMEMD_MIG_FILES_H

#include <stddef.h>

int mig_dir_make(const char *dir);
int mig_file_write(const char *dir, const char *name, const char *text);
/* 0 and the text (NUL-terminated, newline dropped), or -errno. */
int mig_file_read(const char *dir, const char *name, char *buf, size_t len);
void mig_file_remove(const char *dir, const char *name);
/* fn for each file with a client name as its name; stops at non-zero. */
int mig_dir_each(const char *dir, int (*fn)(const char *name, const char *text, void *ctx),
		 void *ctx);

#endif /* TMEMD_MIG_FILES_H */
