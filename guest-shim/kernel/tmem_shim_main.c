// SPDX-License-Identifier: GPL-2.0
/*
 * tmem_shim.ko: module parameters, debugfs counters, init and exit.
 *
 * Load order: the core and its ring exist first (disconnected: puts are
 * refused, gets miss), then the xenbus frontend, which connects when
 * tmemd's backend appears, then the hooks and /dev/tmemswap0, then the
 * tmemcache target.  Nothing
 * waits for the backend, so loading never hangs on a dom0 without
 * tmemd.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "tmem_shim.h"

struct tmem_shim tmem_shim;

static bool cleancache = true;
module_param(cleancache, bool, 0444);
MODULE_PARM_DESC(cleancache, "Register cleancache_ops if the kernel has them (default on)");

static bool frontswap = true;
module_param(frontswap, bool, 0444);
MODULE_PARM_DESC(frontswap, "Register frontswap_ops if the kernel has them and they are free (default on)");

int tmem_param_backend_domid;
module_param_named(backend_domid, tmem_param_backend_domid, int, 0444);
MODULE_PARM_DESC(backend_domid, "Domain running tmemd, granted the ring (default 0)");

unsigned int tmem_param_ring_entries = 64;
module_param_named(ring_entries, tmem_param_ring_entries, uint, 0444);
MODULE_PARM_DESC(ring_entries, "Ring entries, a power of two, 2..256 (default 64)");

unsigned int tmem_param_nr_slots = 32;
module_param_named(nr_slots, tmem_param_nr_slots, uint, 0444);
MODULE_PARM_DESC(nr_slots, "Data slots of one page each, 1..256 (default 32)");

static unsigned int timeout_ms = 5000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "Longest wait for one request (default 5000)");

static unsigned int persist_wait_ms = SHIM_PERSIST_WAIT_MS;
module_param(persist_wait_ms, uint, 0444);
MODULE_PARM_DESC(persist_wait_ms, "Longest wait of a swap request for a restarting backend, 0 to fail at once (default 120000)");

static unsigned long tmemswap_mb = 256;
module_param(tmemswap_mb, ulong, 0444);
MODULE_PARM_DESC(tmemswap_mb, "Size of /dev/tmemswap0 in MiB, 0 for none (default 256)");

static char *backing;
module_param(backing, charp, 0444);
MODULE_PARM_DESC(backing, "Block device that takes /dev/tmemswap0's refused writes (default none)");

static void tmem_shim_debugfs(void)
{
	struct dentry *d = debugfs_create_dir("tmem_shim", NULL);
	struct shim_cc_stats *cc = &tmem_shim.ops.cc;
	struct shim_fs_stats *fs = &tmem_shim.ops.fs;
	struct shim_ring_stats *rs = &tmem_shim.ring.stats;

	tmem_shim.debugfs = d;
	/* cleancache's and frontswap's own counter names. */
	debugfs_create_u64("succ_gets", 0444, d, &cc->succ_gets);
	debugfs_create_u64("failed_gets", 0444, d, &cc->failed_gets);
	debugfs_create_u64("puts", 0444, d, &cc->puts);
	debugfs_create_u64("flushes", 0444, d, &cc->flushes);
	debugfs_create_u64("puts_dropped", 0444, d, &cc->puts_dropped);
	debugfs_create_u64("flushes_owed", 0444, d, &cc->flushes_owed);
	debugfs_create_u64("succ_stores", 0444, d, &fs->succ_stores);
	debugfs_create_u64("failed_stores", 0444, d, &fs->failed_stores);
	debugfs_create_u64("loads", 0444, d, &fs->loads);
	debugfs_create_u64("failed_loads", 0444, d, &fs->failed_loads);
	debugfs_create_u64("invalidates", 0444, d, &fs->invalidates);
	debugfs_create_u64("persist_retries", 0444, d, &tmem_shim.ops.persist_retries);
	debugfs_create_u64("pools_resumed", 0444, d, &tmem_shim.ops.pools_resumed);
	debugfs_create_u64("lost_replayed", 0444, d, &tmem_shim.ops.lost_replayed);
	debugfs_create_u64("lost_dropped", 0444, d, &tmem_shim.ops.lost_dropped);
	/* The ring's. */
	debugfs_create_u64("ring_posted", 0444, d, &rs->posted);
	debugfs_create_u64("ring_completed", 0444, d, &rs->completed);
	debugfs_create_u64("ring_kicks", 0444, d, &rs->kicks);
	debugfs_create_u64("ring_timeouts", 0444, d, &rs->timeouts);
	debugfs_create_u64("ring_bad_responses", 0444, d, &rs->bad_responses);
	debugfs_create_u64("ring_no_slot", 0444, d, &rs->no_slot);
	debugfs_create_u64("ring_corrupt", 0444, d, &rs->corrupt);
	debugfs_create_u32("ring_generation", 0444, d, &tmem_shim.ring.gen);
	tmem_blk_debugfs(d);
}

static int __init tmem_shim_init(void)
{
	int err;

	if (tmem_ring_geometry_check(tmem_param_ring_entries,
				     tmem_param_nr_slots) ||
	    tmem_param_ring_entries > SHIM_MAX_ENTRIES ||
	    tmem_param_nr_slots > SHIM_MAX_SLOTS) {
		pr_err("bad geometry ring_entries=%u nr_slots=%u\n",
		       tmem_param_ring_entries, tmem_param_nr_slots);
		return -EINVAL;
	}
	tmem_shim_env_init(&tmem_shim);
	tmem_shim.ring.timeout_ms = timeout_ms;
	tmem_shim.ops.persist_wait_ms = persist_wait_ms;
	err = tmem_xenbus_init();
	if (err) {
		pr_err("no xenbus (not a Xen guest?): %d\n", err);
		return err;
	}
	err = tmem_blk_init(tmemswap_mb, backing);
	if (err) {
		tmem_xenbus_exit();
		return err;
	}
	tmem_hooks_init(cleancache, frontswap);
	tmem_shim_debugfs();
	/*
	 * Last: a table load may come at once and wants the debugfs dir.
	 * The hooks cannot be unregistered, so a failure here only costs
	 * the target (tmem_dm_init says why).
	 */
	tmem_dm_init();
	return 0;
}

static void __exit tmem_shim_exit(void)
{
	tmem_dm_exit();
	debugfs_remove_recursive(tmem_shim.debugfs);
	tmem_blk_exit();
	tmem_xenbus_exit();
}

module_init(tmem_shim_init);
module_exit(tmem_shim_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("tmemd project");
MODULE_DESCRIPTION("Transcendent memory frontend for tmemd over a xenbus ring");
MODULE_VERSION("0.1");
