/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tmem_shim.ko: one xenbus frontend (device/tmem/0) whose ring carries
 * cleancache_ops, frontswap_ops, the /dev/tmemswap0 block device and the
 * tmemcache device-mapper target to tmemd in dom0.  The translation itself is the kernel-independent core
 * in core/; these files are the kernel glue.  man/tmem_shim.4 is the
 * user's view, man/tmem.7 the protocol.
 */
#ifndef TMEM_SHIM_H
#define TMEM_SHIM_H

#include <linux/spinlock.h>
#include <linux/wait.h>
#include <xen/interface/xen.h>

#include "tmem_shim_compat.h"

/*
 * Linux's xen/interface/xen.h still carries Xen's old tmem hypercall
 * numbers, TMEM_SPEC_VERSION among them (as 1, ours is 1u: the same
 * value).  Including it first, once, and dropping its definition lets
 * proto/tmem_proto.h define ours without a redefinition warning.
 */
#undef TMEM_SPEC_VERSION

#include "shim_blk.h"
#include "shim_ops.h"
#include "shim_rcache.h"
#include "shim_ring.h"

/* The one frontend's state, shared by the files of the module. */
struct tmem_shim {
	spinlock_t lock;		/* the core's env lock */
	wait_queue_head_t wq;		/* sleepers in shim_ring_call */
	int irq;			/* event channel irq, 0 if none */
	struct shim_env env;
	struct shim_ring ring;
	struct shim_ops ops;
	struct dentry *debugfs;
};

extern struct tmem_shim tmem_shim;

/* Module parameters (tmem_shim_main.c). */
extern int tmem_param_backend_domid;
extern unsigned int tmem_param_ring_entries;
extern unsigned int tmem_param_nr_slots;

/* tmem_shim_env.c */
void tmem_shim_env_init(struct tmem_shim *s);

/* tmem_shim_xenbus.c */
int tmem_xenbus_init(void);
void tmem_xenbus_exit(void);

/* tmem_shim_hooks.c: cleancache and frontswap registration */
void tmem_hooks_init(bool want_cleancache, bool want_frontswap);

/* tmem_shim_blk.c */
int tmem_blk_init(unsigned long size_mb, const char *backing);
void tmem_blk_exit(void);
void tmem_blk_debugfs(struct dentry *dir);

/* tmem_shim_rcache.c: the tmemcache device-mapper target */
void tmem_dm_init(void);
void tmem_dm_exit(void);

#endif /* TMEM_SHIM_H */
