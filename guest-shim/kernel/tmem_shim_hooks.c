// SPDX-License-Identifier: GPL-2.0
/*
 * cleancache_ops and frontswap_ops: struct page and the filekey become
 * the core's opaque page and tmem_oid, nothing more; semantics live in
 * core/shim_hooks.c.
 *
 * The kernels these hooks exist in, and how they register:
 *   cleancache  3.0-5.16 (removed in 5.17).  flush_* became
 *               invalidate_* in 3.3; register returned the old ops by
 *               value until 3.10, a pointer until 4.2, and an int since
 *               4.3 (-EBUSY when taken).  init_shared_fs takes a
 *               uuid_t * since 4.13, a char * before.
 *   frontswap   3.5-6.5 (removed in 6.6).  Register returned the old
 *               ops until 4.1, void with chained backends from 4.2 to
 *               5.17, and an int from 5.18 (-EINVAL when taken), when
 *               frontswap_register_ops also stopped being exported.
 * Neither can be unregistered, so a module that registered pins itself.
 * Only the 6.1 paths are compiled in CI: against Debian's headers (no
 * cleancache), and in make e2e-xen against its test kernel, whose
 * tests/xen/kernel/cleancache.patch restores the 5.16 cleancache API,
 * so the cleancache path below builds and runs there as it is.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/module.h>

#include "tmem_shim.h"

#if IS_ENABLED(CONFIG_CLEANCACHE)
#include <linux/cleancache.h>

static struct tmem_oid cc_key(struct cleancache_filekey key)
{
	struct tmem_oid oid;

	BUILD_BUG_ON(sizeof(key) != sizeof(oid));
	memcpy(&oid, &key, sizeof(oid));
	return oid;
}

static int tmem_cc_init_fs(size_t pagesize)
{
	return shim_cc_init_fs(&tmem_shim.ops, pagesize);
}

#if TMEM_CC_UUID_T
static int tmem_cc_init_shared_fs(uuid_t *uuid, size_t pagesize)
{
	return shim_cc_init_shared_fs(&tmem_shim.ops, uuid->b, pagesize);
}
#else
static int tmem_cc_init_shared_fs(char *uuid, size_t pagesize)
{
	return shim_cc_init_shared_fs(&tmem_shim.ops, (const u8 *)uuid,
				      pagesize);
}
#endif

static int tmem_cc_get_page(int pool, struct cleancache_filekey key,
			    pgoff_t index, struct page *page)
{
	struct tmem_oid oid = cc_key(key);

	return shim_cc_get_page(&tmem_shim.ops, pool, &oid, index, page);
}

static void tmem_cc_put_page(int pool, struct cleancache_filekey key,
			     pgoff_t index, struct page *page)
{
	struct tmem_oid oid = cc_key(key);

	shim_cc_put_page(&tmem_shim.ops, pool, &oid, index, page);
}

static void tmem_cc_invalidate_page(int pool, struct cleancache_filekey key,
				    pgoff_t index)
{
	struct tmem_oid oid = cc_key(key);

	shim_cc_invalidate_page(&tmem_shim.ops, pool, &oid, index);
}

static void tmem_cc_invalidate_inode(int pool, struct cleancache_filekey key)
{
	struct tmem_oid oid = cc_key(key);

	shim_cc_invalidate_inode(&tmem_shim.ops, pool, &oid);
}

static void tmem_cc_invalidate_fs(int pool)
{
	shim_cc_invalidate_fs(&tmem_shim.ops, pool);
}

static struct cleancache_ops tmem_cleancache_ops = {
	.init_fs = tmem_cc_init_fs,
	.init_shared_fs = tmem_cc_init_shared_fs,
	.get_page = tmem_cc_get_page,
	.put_page = tmem_cc_put_page,
#if TMEM_CC_INVALIDATE_NAMES
	.invalidate_page = tmem_cc_invalidate_page,
	.invalidate_inode = tmem_cc_invalidate_inode,
	.invalidate_fs = tmem_cc_invalidate_fs,
#else
	.flush_page = tmem_cc_invalidate_page,
	.flush_inode = tmem_cc_invalidate_inode,
	.flush_fs = tmem_cc_invalidate_fs,
#endif
};

static int tmem_cleancache_register(void)
{
#if TMEM_CC_REGISTER_INT
	return cleancache_register_ops(&tmem_cleancache_ops);
#else
	cleancache_register_ops(&tmem_cleancache_ops);
	return 0;
#endif
}
#else
static int tmem_cleancache_register(void)
{
	return -EOPNOTSUPP;
}
#endif /* CONFIG_CLEANCACHE */

#if IS_ENABLED(CONFIG_FRONTSWAP)
#include <linux/frontswap.h>

static void tmem_fs_init(unsigned int type)
{
	shim_fs_init(&tmem_shim.ops, type);
}

static int tmem_fs_store(unsigned int type, pgoff_t offset, struct page *page)
{
	return shim_fs_store(&tmem_shim.ops, type, offset, page);
}

/*
 * frontswap skipped the disk write when the store succeeded, so a load
 * that fails (the page was lost with tmemd's pool, or tmemd stayed away
 * past persist_wait_ms) makes the kernel read a stale swap slot.
 * frontswap has no way to fail a load; say it loudly.
 */
static int tmem_fs_load(unsigned int type, pgoff_t offset, struct page *page)
{
	int ret = shim_fs_load(&tmem_shim.ops, type, offset, page);

	if (ret)
		pr_err_ratelimited("swap page %u:%lu stored in tmem could not be loaded back; the guest reads a stale swap slot instead (lost pages: %llu)\n",
				   type, (unsigned long)offset,
				   (unsigned long long)tmem_shim.ops.fs.failed_loads);
	return ret;
}

static void tmem_fs_invalidate_page(unsigned int type, pgoff_t offset)
{
	shim_fs_invalidate_page(&tmem_shim.ops, type, offset);
}

static void tmem_fs_invalidate_area(unsigned int type)
{
	shim_fs_invalidate_area(&tmem_shim.ops, type);
}

static struct frontswap_ops tmem_frontswap_ops = {
	.init = tmem_fs_init,
	.store = tmem_fs_store,
	.load = tmem_fs_load,
	.invalidate_page = tmem_fs_invalidate_page,
	.invalidate_area = tmem_fs_invalidate_area,
};

#if TMEM_FS_REGISTER_UNEXPORTED
/*
 * Since 5.18 frontswap_register_ops is not exported (its only user,
 * zswap, is built in), and since 5.7 neither is kallsyms_lookup_name.
 * A kprobe still resolves any symbol by name, so registering a kprobe
 * on kallsyms_lookup_name yields that function's address, which then
 * finds frontswap_register_ops.  The module needs no kernel patch that
 * way; measured to work on Debian's 6.1 (xen-nested/README.md).
 */
static unsigned long tmem_lookup_symbol(const char *name)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long (*lookup)(const char *name);
	unsigned long addr;

	if (register_kprobe(&kp) < 0)
		return 0;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
#ifdef CONFIG_X86_KERNEL_IBT
	/* With IBT the probe sits after the ENDBR64; call the real entry. */
	{
		u32 insn = 0;

		if (!get_kernel_nofault(insn, (u32 *)(addr - 4)) &&
		    insn == 0xfa1e0ff3)
			addr -= 4;
	}
#endif
	lookup = (void *)addr;
	return lookup(name);
}

static int tmem_frontswap_register(void)
{
	int (*reg)(const struct frontswap_ops *ops);

	reg = (void *)tmem_lookup_symbol("frontswap_register_ops");
	if (!reg)
		return -ENOENT;
	return reg(&tmem_frontswap_ops);
}
#else
/* Exported, and it returns nothing we need (void or the old ops). */
static int tmem_frontswap_register(void)
{
	frontswap_register_ops(&tmem_frontswap_ops);
	return 0;
}
#endif
#else
static int tmem_frontswap_register(void)
{
	return -EOPNOTSUPP;
}
#endif /* CONFIG_FRONTSWAP */

void tmem_hooks_init(bool want_cleancache, bool want_frontswap)
{
	int err;

	if (want_cleancache) {
		err = tmem_cleancache_register();
		if (!err) {
			__module_get(THIS_MODULE);
			pr_info("cleancache: registered\n");
		} else if (err == -EOPNOTSUPP) {
			pr_info("cleancache: this kernel has none (removed in 5.17)\n");
		} else {
			pr_warn("cleancache: already taken by another backend (%d); not used\n",
				err);
		}
	}
	if (want_frontswap) {
		err = tmem_frontswap_register();
		if (!err) {
			__module_get(THIS_MODULE);
			pr_info("frontswap: registered\n");
		} else if (err == -EOPNOTSUPP) {
			pr_info("frontswap: this kernel has none; use /dev/tmemswap0\n");
		} else if (err == -EINVAL || err == -EBUSY) {
			pr_warn("frontswap: already taken (zswap registers it at boot even when disabled): %d; use /dev/tmemswap0\n",
				err);
		} else {
			pr_warn("frontswap: frontswap_register_ops not found (%d); use /dev/tmemswap0\n",
				err);
		}
	}
}
