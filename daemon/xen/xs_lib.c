/* SPDX-License-Identifier: MIT */
/*
 * struct tmemd_xs_ops over libxenstore.  xs_open(0) gives a handle whose
 * watch events arrive on xs_fileno() and are drained with
 * xs_check_watch(), so the main loop never blocks on the xenstore.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xenstore.h>

#include "xen/xs.h"
#include "xen/lib_errno.h"

static int lib_read(void *h, tmemd_xs_tx tx, const char *path, char **value)
{
	unsigned len = 0;
	char *v;

	errno = 0;
	v = xs_read(h, tx, path, &len);
	if (!v)
		return err_or(EIO);
	/* The peer wrote it: an embedded NUL is garbage, not a shorter value. */
	if (memchr(v, '\0', len)) {
		free(v);
		return -EINVAL;
	}
	*value = v;
	return 0;
}

static int lib_write(void *h, tmemd_xs_tx tx, const char *path, const char *value)
{
	errno = 0;
	return xs_write(h, tx, path, value, (unsigned)strlen(value)) ? 0 : err_or(EIO);
}

static int lib_mkdir_perms(void *h, tmemd_xs_tx tx, const char *path,
			   const struct tmemd_xs_perm *perms, unsigned nr)
{
	struct xs_permissions p[4];

	if (nr == 0 || nr > sizeof(p) / sizeof(p[0]))
		return -EINVAL;
	for (unsigned i = 0; i < nr; i++)
		p[i] = (struct xs_permissions){ .id = perms[i].domid,
						.perms = perms[i].perms };
	errno = 0;
	if (!xs_mkdir(h, tx, path))
		return err_or(EIO);
	errno = 0;
	return xs_set_permissions(h, tx, path, p, nr) ? 0 : err_or(EIO);
}

static int lib_rm(void *h, tmemd_xs_tx tx, const char *path)
{
	errno = 0;
	if (xs_rm(h, tx, path) || errno == ENOENT)
		return 0;
	return err_or(EIO);
}

static int lib_watch(void *h, const char *path, const char *token)
{
	errno = 0;
	return xs_watch(h, path, token) ? 0 : err_or(EIO);
}

static int lib_unwatch(void *h, const char *path, const char *token)
{
	errno = 0;
	return xs_unwatch(h, path, token) ? 0 : err_or(EIO);
}

static int lib_fd(void *h)
{
	return xs_fileno(h);
}

static int lib_read_watch(void *h, char path[TMEMD_XS_PATH_MAX],
			  char token[TMEMD_XS_TOKEN_MAX])
{
	char **vec;

	errno = 0;
	vec = xs_check_watch(h);
	if (!vec)
		return errno == EAGAIN ? 0 : err_or(EIO);
	snprintf(path, TMEMD_XS_PATH_MAX, "%s", vec[XS_WATCH_PATH]);
	snprintf(token, TMEMD_XS_TOKEN_MAX, "%s", vec[XS_WATCH_TOKEN]);
	free(vec);
	return 1;
}

static int lib_tx_start(void *h, tmemd_xs_tx *tx)
{
	errno = 0;
	*tx = xs_transaction_start(h);
	return *tx != XBT_NULL ? 0 : err_or(EIO);
}

static int lib_tx_end(void *h, tmemd_xs_tx tx, bool abort)
{
	errno = 0;
	return xs_transaction_end(h, tx, abort) ? 0 : err_or(EIO);
}

static void xs_lib_close(void *h)
{
	if (h)
		xs_close(h);
}

static const struct tmemd_xs_ops xs_lib_ops = {
	.read = lib_read,
	.write = lib_write,
	.mkdir_perms = lib_mkdir_perms,
	.rm = lib_rm,
	.watch = lib_watch,
	.unwatch = lib_unwatch,
	.fd = lib_fd,
	.read_watch = lib_read_watch,
	.tx_start = lib_tx_start,
	.tx_end = lib_tx_end,
	.close = xs_lib_close,
};

int tmemd_xs_open_lib(struct tmemd_xs *out)
{
	struct xs_handle *h;

	errno = 0;
	h = xs_open(0);
	if (!h)
		return err_or(ENOENT);
	*out = (struct tmemd_xs){ .ops = &xs_lib_ops, .h = h };
	return 0;
}
