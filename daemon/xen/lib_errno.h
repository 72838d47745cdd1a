/* SPDX-License-Identifier: MIT */
/*
 * For hyp_lib.c and xs_lib.c: the Xen libraries report a failure by
 * their return value and do not always set errno.  The caller zeroes
 * errno before the call; err_or() then gives -errno, or -fallback when
 * the library left errno at 0.
 */
#ifndef TMEMD_XEN_LIB_ERRNO_H
#define TMEMD_XEN_LIB_ERRNO_H

#include <errno.h>

static inline int err_or(int fallback)
{
	return errno ? -errno : -fallback;
}

#endif /* TMEMD_XEN_LIB_ERRNO_H */
