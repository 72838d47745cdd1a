/* SPDX-License-Identifier: MIT */
/*
 * An in-memory xenstore behind struct tmemd_xs_ops, for driving the Xen
 * backend without Xen.  It keeps xenstored's rules that matter here:
 * writes create missing parents, new nodes inherit their parent's
 * permissions (a domU owns what it creates), watches fire on the node
 * and its children and once when set, and a domain other than dom0 may
 * only read or write what the permissions grant it (fake_xs_*_as).
 */
#ifndef FAKE_XS_H
#define FAKE_XS_H

#include "xen/xs.h"

struct fake_xs;

struct fake_xs *fake_xs_new(void);
void fake_xs_free(struct fake_xs *fx);

/* An ops handle for the backend; fake_xs_free() frees the store, the
 * handle's close() only marks it closed. */
struct tmemd_xs fake_xs_handle(struct fake_xs *fx);

/* As domain domid (0 is privileged).  0, -ENOENT or -EACCES. */
int fake_xs_write_as(struct fake_xs *fx, uint32_t domid, const char *path,
		     const char *value);
int fake_xs_read_as(struct fake_xs *fx, uint32_t domid, const char *path,
		    char **value);
int fake_xs_rm_as(struct fake_xs *fx, uint32_t domid, const char *path);

/* The node's permissions; returns how many (0: no such node). */
unsigned fake_xs_perms(struct fake_xs *fx, const char *path,
		       struct tmemd_xs_perm *out, unsigned max);
/* Whether the node exists. */
bool fake_xs_exists(struct fake_xs *fx, const char *path);

/* Fires the watches on a special path (@introduceDomain, ...). */
void fake_xs_fire(struct fake_xs *fx, const char *path);
/* The next tx_end(commit) calls fail with -EAGAIN this many times. */
void fake_xs_fail_commits(struct fake_xs *fx, unsigned n);
/* Watches currently set. */
unsigned fake_xs_nr_watches(struct fake_xs *fx);

#endif /* FAKE_XS_H */
