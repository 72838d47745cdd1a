/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version test of the module, in one place.  An out-of-tree
 * module has to follow API changes it cannot merge away, so this file is
 * the one that names LINUX_VERSION_CODE; the rest of the module tests
 * the feature macros below.  (checkpatch runs on this file with
 * LINUX_VERSION_CODE and CONSTANT_COMPARISON ignored, for that reason
 * only; see guest-shim/kernel/module.mk.)
 */
#ifndef TMEM_SHIM_COMPAT_H
#define TMEM_SHIM_COMPAT_H

#include <linux/highmem.h>
#include <linux/version.h>

#define TMEM_KV_GE(a, b, c) (LINUX_VERSION_CODE >= KERNEL_VERSION(a, b, c))

/* xenbus_driver.remove returns void. */
#define TMEM_XENBUS_REMOVE_VOID TMEM_KV_GE(6, 1, 0)

/* gnttab_end_foreign_access(ref, page): readonly argument gone. */
#define TMEM_GNTTAB_END_PAGE TMEM_KV_GE(5, 18, 0)

/* cleancache: invalidate_* names (3.3), int register (4.3), uuid_t (4.13) */
#define TMEM_CC_INVALIDATE_NAMES TMEM_KV_GE(3, 3, 0)
#define TMEM_CC_REGISTER_INT TMEM_KV_GE(4, 3, 0)
#define TMEM_CC_UUID_T TMEM_KV_GE(4, 13, 0)

/* frontswap_register_ops returns int and is no longer exported (5.18). */
#define TMEM_FS_REGISTER_UNEXPORTED TMEM_KV_GE(5, 18, 0)

/* The two block-layer generations tmem_shim_blk.c is written for. */
#define TMEM_BLK_OLD_API (TMEM_KV_GE(6, 0, 0) && !TMEM_KV_GE(6, 5, 0))
#define TMEM_BLK_NEW_API TMEM_KV_GE(6, 11, 0)

/* The tmemcache dm target: device-mapper, and bio_alloc_clone (5.18). */
#define TMEM_DM_TARGET (IS_ENABLED(CONFIG_BLK_DEV_DM) && TMEM_KV_GE(5, 18, 0))

/*
 * kmap_local_page appeared in 5.11.  Before it, on a kernel without
 * highmem (every 64-bit one) a page's linear address is its mapping.
 */
#if !TMEM_KV_GE(5, 11, 0)
#ifdef CONFIG_HIGHMEM
#error "tmem_shim needs Linux 5.11 or later on a highmem kernel"
#endif
#define kmap_local_page(page) page_address(page)
#define kunmap_local(addr) ((void)(addr))
#endif

#endif /* TMEM_SHIM_COMPAT_H */
