#!/bin/sh
# The pv-cleancache guest's part of /init (sourced by guest-init.sh, which
# has loaded tmem_shim.ko with cleancache=1 on the test kernel, whose
# cleancache.patch gives ext4 the 5.16 hooks).  The pv-readcache workload
# (readcache.sh's steps and counters line, its E2E-RCACHE format) on ext4
# straight on /dev/xvdb, cleancache_ops carrying the page cache's clean
# victims to tmemd:
#   create   the file set (FILESMB MiB), then umount and mount: the pool
#            is destroyed (invalidate_fs) and a new one made (init_fs),
#            and the page cache is empty, so pass1 starts cold
#   pass1    reads it all; reclaim puts what 256 MiB cannot keep
#   pass2    reads it again: what is not in RAM should be a tmem hit
#   mutate   overwrite, truncate, delete, rewrite (e2e-fileset mutate)
#   pass3    reads at once, no cache drop: every block not in RAM comes
#            from tmem or the disk, and none may be an old version
#   pass4    (e2e.quota=eph) after dom0 lowered --ephemeral-max: fewer hits
#   pass5    after umount and mount: a new, empty pool (cold) and right
# No drop_caches here: it removes the whole page cache in one burst with
# interrupts off, faster than one ring's slots drain, and the shim then
# drops puts and poisons the pool (correct, but the next pass is cold).
# For the same reason guest-init.sh loads the shim with a 256-entry ring
# and 128 slots: reclaim puts 32 pages at a time back to back, and with
# the default 64/32 the replacing flushes of dropped puts found no entry
# either, so the pool was poisoned and emptied again and again (pass2:
# 0 hits of 153601 gets, 2026-12-04).
# Counters after each step: "E2E-RCACHE NAME STEP hits=.. misses=.." from
# the shim's debugfs (its cleancache get/put counts and the ring's) and
# cc_* from the kernel's /sys/kernel/debug/cleancache.

. /bin/readcache.sh

# Overrides readcache.sh's (rc_step prints this one after each step).
rc_counters() {   # STEP
	d=/sys/kernel/debug/tmem_shim
	line=" hits=$(cat $d/succ_gets) misses=$(cat $d/failed_gets)"
	for f in puts puts_dropped flushes_owed flushes ring_no_slot ring_timeouts; do
		line="$line $f=$(cat $d/$f)"
	done
	for f in /sys/kernel/debug/cleancache/*; do
		[ -f "$f" ] && line="$line cc_${f##*/}=$(cat $f)"
	done
	echo "E2E-RCACHE $NAME $1$line"
}

cc_remount() {   # STEP: umount and mount /dev/xvdb (a new cleancache pool)
	umount /mnt || fail "umount /mnt ($1)"
	mount -t ext4 /dev/xvdb /mnt || fail "mount /dev/xvdb ($1)"
	rc_counters $1
}

cleancache_run() {
	ln -sf /proc/mounts /etc/mtab   # mke2fs looks for it
	say READY
	dmesg | grep -q 'cleancache: registered' || fail "tmem_shim did not register cleancache_ops"
	say CLEANCACHE-REGISTERED
	say "MEM $(sed -n 's/MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo) kB"
	# By path: busybox's shell prefers its own mke2fs applet.  4 KiB
	# blocks, as the hooks want one block per page.
	/usr/sbin/mke2fs -q -F -t ext4 -b 4096 -O ^metadata_csum \
		-E lazy_itable_init=0,lazy_journal_init=0 /dev/xvdb >/tmp/mkfs.out 2>&1 ||
		fail "mke2fs on /dev/xvdb: $(tr '\n' ' ' </tmp/mkfs.out)"
	mkdir -p /mnt
	mount -t ext4 /dev/xvdb /mnt || fail "mount /dev/xvdb"
	say "MOUNTED /dev/xvdb $(df -m /mnt | tail -n 1 | tr -s ' ')"
	rc_step create create
	cc_remount remounted
	rc_step pass1 verify
	rc_step pass2 verify
	rc_step mutate mutate
	rc_step pass3 verify
	if [ "$QUOTA" = eph ]; then
		say WAIT-QUOTA
		read -t 300 go </dev/hvc0 || fail "no go from dom0"
		say "GO $go"
		rc_counters quota
		rc_step pass4 verify
	fi
	cc_remount remounted2
	rc_step pass5 verify
}
