/* SPDX-License-Identifier: MIT */
/*
 * The xenstore as the Xen backend uses it, behind an ops table so the
 * backend's state machine runs against libxenstore in tmemd and against
 * an in-memory store in tests (tests/xen-unit/fake_xs.c).
 *
 * Every call returns 0 or -errno; -ENOENT for a missing node, -EAGAIN
 * from tx_end when the transaction must be retried.  Paths and values
 * are NUL-terminated strings; a value read is malloc'd and the caller
 * frees it.
 */
#ifndef TMEMD_XEN_XS_H
#define TMEMD_XEN_XS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint32_t tmemd_xs_tx;
#define TMEMD_XS_NO_TX 0u

/* xenstore permission bits (xenstore_lib.h's XS_PERM_*). */
#define TMEMD_XS_PERM_NONE 0u
#define TMEMD_XS_PERM_READ 1u
#define TMEMD_XS_PERM_WRITE 2u

/* perms[0] names the owner and what everyone else may do; each further
 * entry grants one domain more (xs_set_permissions). */
struct tmemd_xs_perm {
	uint32_t domid;
	uint32_t perms;
};

#define TMEMD_XS_PATH_MAX 256
#define TMEMD_XS_TOKEN_MAX 64

struct tmemd_xs_ops {
	int (*read)(void *h, tmemd_xs_tx tx, const char *path, char **value);
	int (*write)(void *h, tmemd_xs_tx tx, const char *path, const char *value);
	/* Creates path (and missing parents) and sets its permissions. */
	int (*mkdir_perms)(void *h, tmemd_xs_tx tx, const char *path,
			   const struct tmemd_xs_perm *perms, unsigned nr);
	/* Removes path and everything below it; a missing path is fine. */
	int (*rm)(void *h, tmemd_xs_tx tx, const char *path);
	int (*watch)(void *h, const char *path, const char *token);
	int (*unwatch)(void *h, const char *path, const char *token);
	/* Readable when watch events may be pending. */
	int (*fd)(void *h);
	/* The next pending event: 1 (path and token filled, truncated to
	 * their buffers), 0 when none is pending, or -errno. */
	int (*read_watch)(void *h, char path[TMEMD_XS_PATH_MAX],
			  char token[TMEMD_XS_TOKEN_MAX]);
	int (*tx_start)(void *h, tmemd_xs_tx *tx);
	int (*tx_end)(void *h, tmemd_xs_tx tx, bool abort);
	void (*close)(void *h);
};

struct tmemd_xs {
	const struct tmemd_xs_ops *ops;
	void *h;
};

/* The libxenstore implementation (xs_lib.c): xs_open(0).  0 or -errno. */
int tmemd_xs_open_lib(struct tmemd_xs *out);

#endif /* TMEMD_XEN_XS_H */
