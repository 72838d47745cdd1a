#!/bin/sh
# /init of an e2e-xen domU.  Kernel command line (xl cfg "extra"):
#   e2e.name=NAME  e2e.mode=tmemswap|frontswap|readcache|cleancache|plain|noshim
#   e2e.quota=0|1|eph|fallow|mig  e2e.swapmb=MiB  e2e.filesmb=MiB
#   e2e.disk=0 (no /dev/xvdb: tmemswap without a backing disk)
#   e2e.pwait=MS (tmem_shim's persist_wait_ms)  e2e.wlmb=MiB e2e.step=MiB
#     e2e.ioerr=N (quota mig: the workload's size, its progress step, the
#     I/O errors its re-read stops after)
# (quota mig, make e2e-xen-migrate: the workload holds its pages after
# its verify pass, waits for "go" on hvc0, then reads them all again,
# counting failed swap-ins as I/O errors)
# (readcache with e2e.quota=fallow: the elastic-pool case and the
# ephemeral cap's; it also swaps a held workload through /dev/tmemswap0,
# verified again at the end)
# tmemswap:  swapon /dev/tmemswap0, its refused pages going to backing=/dev/xvdb
# frontswap: swapon /dev/xvdb, frontswap carrying the pages to tmemd
# readcache: ext4 on a tmemcache target over /dev/xvdb, the file set of
#            e2e-fileset read twice, mutated, read again (readcache.sh)
# cleancache: (the test kernel) the same on ext4 over /dev/xvdb itself,
#            cleancache_ops carrying clean pages to tmemd (cleancache.sh)
# plain:     (diagnostics) the shim connected but idle, swapon /dev/xvdb
# noshim:    (diagnostics) no tmem_shim.ko at all, swapon /dev/xvdb
# Prints E2E-* marker lines on hvc0, which dom0's xenconsoled logs.  After
# "E2E-GUEST DONE" it idles until dom0 destroys the domain.
export PATH=/bin:/sbin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug
echo 4 >/proc/sys/kernel/printk

arg() { sed -n "s/.*\\<e2e\\.$1=\\([^ ]*\\).*/\\1/p" /proc/cmdline; }
NAME=$(arg name); MODE=$(arg mode); QUOTA=$(arg quota); SWAPMB=$(arg swapmb)
FILESMB=$(arg filesmb) DISK=$(arg disk) PWAIT=$(arg pwait) IOERR=$(arg ioerr)
say() { echo "E2E-GUEST $NAME $*"; }
fail() { say "FAIL $*"; say DONE; exec sleep 100000; }

say "BOOTED kernel=$(uname -r) mode=$MODE quota=$QUOTA uptime=$(cut -d' ' -f1 /proc/uptime)"
say "HYPERVISOR $(cat /sys/hypervisor/type 2>/dev/null) $(dmesg | grep -oE 'Hypervisor detected: .*|Booting kernel on [^.]*' | tr '\n' ' ')"

# Drivers the stock kernel has as modules (the test kernel builds them in).
if [ -f /mods/load-order ]; then
	for m in $(cat /mods/load-order); do insmod /mods/$m || say "insmod $m failed"; done
fi
if [ "$DISK" != 0 ]; then
	i=0; while [ ! -b /dev/xvdb ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
	[ -b /dev/xvdb ] || fail "no swap disk /dev/xvdb"
	say "DISK /dev/xvdb $(( $(cat /sys/block/xvdb/size) / 2048 )) MiB"
fi

case "$MODE" in
tmemswap)
	params="cleancache=0 frontswap=0 tmemswap_mb=$SWAPMB"
	# No disk (a guest that migrates between hosts has none): every swap
	# page is in tmem, and a refused one is an I/O error.
	[ "$DISK" != 0 ] && params="$params backing=/dev/xvdb" ;;
frontswap) params="cleancache=0 frontswap=1 tmemswap_mb=0" ;;
readcache)
	params="cleancache=0 frontswap=0 tmemswap_mb=0"
	# The elastic-pool case (it includes the ephemeral cap's): persistent
	# pages too, held through the whole run.
	[ "$QUOTA" = fallow ] && params="cleancache=0 frontswap=0 tmemswap_mb=384" ;;
cleancache) params="cleancache=1 frontswap=0 tmemswap_mb=0 ring_entries=256 nr_slots=128" ;;
plain) params="cleancache=0 frontswap=0 tmemswap_mb=0" ;;
noshim) params="" ;;
*) fail "bad e2e.mode=$MODE" ;;
esac
[ -n "$PWAIT" ] && params="$params persist_wait_ms=$PWAIT"
if [ "$MODE" = noshim ]; then
	say "NO-SHIM"
else
	insmod /mods/tmem_shim.ko $params || fail "insmod tmem_shim.ko $params"
	say "SHIM-LOADED $params"
	i=0; while ! dmesg | grep -q 'connected to tmem backend' && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
fi
dmesg | grep -E 'tmem_shim|tmemswap0|frontswap:|cleancache:' | grep -v 'command line' | sed "s/^/E2E-DMESG $NAME /"
if dmesg | grep -q 'connected to tmem backend'; then say CONNECTED; else say NOT-CONNECTED; fi

# fallow_hold: persistent pages in tmem for the whole readcache run: a
# workload of 176 MiB in 256 MiB of RAM swaps to /dev/tmemswap0 (no
# backing disk: a refused page would be an I/O error), verifies, holds.
# 176 MiB: the page cache of the file set pushes part of it out to tmem
# (320 MiB starved the page cache: the file set took 25 minutes under TCG).
fallow_hold() {
	mkswap /dev/tmemswap0 >/dev/null && swapon /dev/tmemswap0 || fail "swapon /dev/tmemswap0"
	/bin/e2e-workload -s 7 -m 176 -z -H -r /tmp/reverify -t $NAME-hold >/tmp/wl-hold.out 2>&1 &
	i=0; while ! grep -q '^E2E-WORKLOAD tag=' /tmp/wl-hold.out && [ $i -lt 1800 ]; do sleep 1; i=$((i+1)); done
	i=0; while ! grep -q '^E2E-WORKLOAD-HOLD' /tmp/wl-hold.out && [ $i -lt 5 ]; do sleep 1; i=$((i+1)); done
	cat /tmp/wl-hold.out
	grep -q '^E2E-WORKLOAD-HOLD' /tmp/wl-hold.out || fail "the held workload did not hold"
}
fallow_reverify() {
	touch /tmp/reverify
	i=0; while ! grep -q '^E2E-WORKLOAD-REVERIFY' /tmp/wl-hold.out && [ $i -lt 1800 ]; do sleep 1; i=$((i+1)); done
	grep '^E2E-WORKLOAD-REVERIFY' /tmp/wl-hold.out || say "REVERIFY-MISSING"
	say "SWAP-ERRORS $(cat /sys/kernel/debug/tmem_shim/tmemswap_errors 2>/dev/null)"
}

if [ "$MODE" = readcache ]; then
	[ "$QUOTA" = fallow ] && fallow_hold
	. /bin/readcache.sh
	readcache_run
	[ "$QUOTA" = fallow ] && fallow_reverify
	say DONE
	exec sleep 100000
fi
if [ "$MODE" = cleancache ]; then
	. /bin/cleancache.sh
	cleancache_run
	say DONE
	exec sleep 100000
fi

if [ "$MODE" = tmemswap ]; then dev=/dev/tmemswap0; else dev=/dev/xvdb; fi
[ -b $dev ] || fail "no $dev"
mkswap $dev >/dev/null || fail "mkswap $dev"
swapon $dev || fail "swapon $dev"
say "SWAP $(tail -n +2 /proc/swaps | tr -s ' ' | tr '\n' ';')"

counters() {
	line=""
	for f in /sys/kernel/debug/tmem_shim/*; do
		[ -f "$f" ] && line="$line ${f##*/}=$(cat $f)"
	done
	echo "E2E-COUNTERS $NAME $1$line"
}

# run_workload PHASE SEED [workload options]: the workload, its counters afterwards.  With
# -H it keeps its memory (and so pages in tmem) once verified; the counters
# are printed when it says so, and it runs on until dom0 destroys the guest.
run_workload() {
	phase=$1 seed=$2; shift 2
	/bin/e2e-workload -s $seed -t $NAME-$phase "$@" >/tmp/wl-$phase.out 2>&1 &
	wl=$!
	shown=0 ticks=0
	while :; do
		# HOLD is the workload's last line: seen before the count, every
		# line up to it is printed before the loop ends.
		held=0; grep -q '^E2E-WORKLOAD-HOLD' /tmp/wl-$phase.out && held=1
		n=$(wc -l </tmp/wl-$phase.out)
		[ $n -gt $shown ] && { tail -n +$((shown + 1)) /tmp/wl-$phase.out | head -n $((n - shown)); shown=$n; }
		[ $held = 1 ] && break
		kill -0 $wl 2>/dev/null || { wait $wl || say "WORKLOAD-FAILED $phase rc=$?"; tail -n +$((shown + 1)) /tmp/wl-$phase.out; break; }
		ticks=$((ticks + 1)); [ $((ticks % 20)) = 0 ] && say "LIVE $(counters $phase | cut -d' ' -f3-)"
		sleep 1
	done
	counters $phase
}

# The tmemswap guests write half-compressible pages, so tmemd's default
# lz4 has something to do and check-results.sh can judge the compression
# ratio tmemd reports for them; frontswap's pages stay random (stored raw).
zip=; [ "$MODE" = tmemswap ] && zip=-z
say READY
if [ "$QUOTA" = 1 ]; then
	run_workload p1 1 $zip
	say WAIT-QUOTA
	read -t 300 go </dev/hvc0 || fail "no go from dom0"
	say "GO $go"
	# Under the 4M cap nearly every page goes to the disk, which is slow
	# under TCG: 1.25 x RAM still swaps about 100 MiB through it.
	run_workload p2 2 $zip -H -m $(( $(sed -n 's/MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo) * 5 / 4 / 1024 ))
elif [ "$QUOTA" = mig ]; then
	# make e2e-xen-migrate: dom0 moves the guest between hosts during the
	# verify pass; held, it re-reads every page once dom0 says "go" (after
	# the move to a host without tmemd: the pages stayed behind, so the
	# reads must fail, never return wrong data).
	run_workload p1 1 $zip -H -m $(arg wlmb) -P $(arg step) -r /tmp/reverify -E ${IOERR:-1}
	# What this shell does after "go", once, now: its pages that the
	# workload pushed out to swap come back while the pages can still
	# follow the guest (after the last move a page still in swap cannot be
	# read, and a SIGBUS here would kill init).
	{ counters p1; cat /sys/kernel/debug/tmem_shim/tmemswap_errors; tail -n 1 /tmp/wl-p1.out
	  dmesg | grep -iE 'I/O error|Read-error|tmem' | tail -n 40; } >/dev/null 2>&1
	while :; do
		say WAIT-GO
		read -t 10 go </dev/hvc0 && [ "$go" = go ] && break
	done
	say "GO $go"
	touch /tmp/reverify
	i=0; while ! grep -q '^E2E-WORKLOAD-REVERIFY' /tmp/wl-p1.out && [ $i -lt 1800 ] &&
		kill -0 $wl 2>/dev/null; do sleep 1; i=$((i+1)); done
	tail -n +$((shown + 1)) /tmp/wl-p1.out
	counters p1
	say "SWAP-ERRORS $(cat /sys/kernel/debug/tmem_shim/tmemswap_errors 2>/dev/null)"
	dmesg | grep -iE 'I/O error|Read-error|tmem' | tail -n 40 | sed "s/^/E2E-DMESG $NAME /"
else
	run_workload p1 1 $zip -H
fi
say DONE
exec sleep 100000
