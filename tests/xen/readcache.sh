#!/bin/sh
# The pv-readcache guest's part of /init (sourced by guest-init.sh, which
# has loaded tmem_shim.ko and defines say, fail, NAME, QUOTA, FILESMB).
# ext4 on the tmemcache target over /dev/xvdb: a checksummed file set of
# FILESMB MiB (e2e-fileset) written, caches dropped, read twice (pass1
# fills tmem on its misses, pass2's reads of what the guest's 256 MiB could
# not keep should hit), overwritten/truncated/deleted/rewritten, caches
# dropped, read again (pass3: no stale block).  With e2e.quota=eph dom0
# lowers the ephemeral cap, and pass4 must still be right with fewer hits.
# Then dmsetup remove, the disk read directly (pass5), and a new table
# over it read once more (pass6).
# After each step: "E2E-RCACHE NAME STEP hits=.. misses=.." (debugfs).

rc_counters() {   # STEP
	line=""
	for f in /sys/kernel/debug/tmem_shim/tmemcache0/*; do
		[ -f "$f" ] && line="$line ${f##*/}=$(cat $f)"
	done
	echo "E2E-RCACHE $NAME $1$line"
}

# rc_step STEP e2e-fileset-command: run it, print its line and the counters.
rc_step() {
	/bin/e2e-fileset -d /mnt -t $NAME-$1 -m $FILESMB $2 >/tmp/fs-$1.out 2>&1 ||
		say "FILESET-FAILED $1 rc=$?"
	cat /tmp/fs-$1.out
	rc_counters $1
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

readcache_run() {
	ln -sf /proc/mounts /etc/mtab   # mke2fs looks for it
	say READY
	sectors=$(cat /sys/block/xvdb/size)
	# The host's dmsetup and mke2fs, by path: busybox's shell prefers its
	# own applets (it has a mke2fs) whatever PATH says.
	if ! /usr/sbin/dmsetup create data --noudevsync --table "0 $sectors tmemcache /dev/xvdb" \
		>/tmp/dmsetup.out 2>&1; then
		dmesg | tail -n 8 | sed "s/^/E2E-DMESG $NAME /"
		fail "dmsetup create data tmemcache /dev/xvdb: $(tr '\n' ' ' </tmp/dmsetup.out)"
	fi
	dm=$(ls -d /sys/block/dm-* 2>/dev/null | head -n 1)
	dev=/dev/${dm##*/}
	[ -b "$dev" ] || fail "no dm block device ($dm)"
	say "DM-CREATED $dev table=[$(/usr/sbin/dmsetup table data)] status=[$(/usr/sbin/dmsetup status data)]"
	if ! /usr/sbin/mke2fs -q -F -t ext4 -O ^metadata_csum -E lazy_itable_init=0,lazy_journal_init=0 $dev \
		>/tmp/mkfs.out 2>&1; then
		dmesg | tail -n 8 | sed "s/^/E2E-DMESG $NAME /"
		fail "mke2fs on $dev: $(tr '\n' ' ' </tmp/mkfs.out) status=[$(/usr/sbin/dmsetup status data)]"
	fi
	mkdir -p /mnt
	mount -t ext4 $dev /mnt || fail "mount $dev"
	say "MOUNTED $dev $(df -m /mnt | tail -n 1 | tr -s ' ')"
	rc_step create create
	drop_caches
	rc_counters dropped
	rc_step pass1 verify
	rc_step pass2 verify
	rc_step mutate mutate
	drop_caches
	rc_counters dropped2
	rc_step pass3 verify
	if [ "$QUOTA" = eph ] || [ "$QUOTA" = fallow ]; then
		say WAIT-QUOTA
		read -t 300 go </dev/hvc0 || fail "no go from dom0"
		say "GO $go"
		drop_caches
		rc_counters dropped3
		rc_step pass4 verify
	fi
	say "DM-STATUS $(/usr/sbin/dmsetup status data)"
	# Teardown: dmsetup remove destroys the pool; the disk read directly
	# (pass5) is the same file set.  A new table starts with an empty pool
	# (pass6: no hit can come from the old one) and is left for dom0's look.
	umount /mnt || fail "umount"
	/usr/sbin/dmsetup remove data || fail "dmsetup remove data"
	say "DM-REMOVED"
	mount -t ext4 /dev/xvdb /mnt || fail "mount /dev/xvdb"
	drop_caches
	/bin/e2e-fileset -d /mnt -t $NAME-pass5 verify || say "FILESET-FAILED pass5 rc=$?"
	umount /mnt || fail "umount /dev/xvdb"
	/usr/sbin/dmsetup create data --noudevsync --table "0 $sectors tmemcache /dev/xvdb" ||
		fail "dmsetup create again"
	dm=$(ls -d /sys/block/dm-* 2>/dev/null | head -n 1)
	mount -t ext4 /dev/${dm##*/} /mnt || fail "mount /dev/${dm##*/} again"
	drop_caches
	rc_counters recreated
	rc_step pass6 verify
}
