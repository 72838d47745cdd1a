#!/bin/sh
# /init of the e2e-xen dom0 (busybox + the host's Xen toolstack + tmemd).
# Brings up xenstored/xenconsoled and tmemd --transport xen, then runs the
# guests listed in /guest/guests ("NAME QUOTA" lines, QUOTA 0, 1 for a
# persistent cap or eph for an ephemeral one), one at a time:
# xl create, watch the guest's console log for its markers, snapshot
# `tmemctl stats --json` while it runs, apply the quota case, xl destroy,
# check that its client is gone.  At the guest's kill points (kill_points)
# tmemd is killed with SIGKILL and started again on its arena, the guest
# working on.  At the guest's move points (move_points) the guest is saved
# and restored (xl save, xl restore: a new domid, the same UUID) or
# migrated to this host (xl migrate to "xl migrate-receive"), its workload
# working on; tmemd must park its pages and hand them to the new domain.
# Everything the host checks is printed on the serial console as E2E-*
# lines; the host (run-e2e.sh) judges.
. /dom0-boot.sh
# The arena's tmpfs: sized for dom0's maximum (2560M, run-e2e.sh), not its
# boot size, or the tmpfs would bound the pool below what tmemd may balloon
# dom0 up to (tmemd's target keeps the pool within dom0's memory).
dom0_boot 2400m
# The guests' swap disks: QEMU virtio disks, one per guest.
disks=$(sed -n 's/.*target=\([^" ]*\)".*/\1/p' /guest/*.cfg)
i=0; for d in $disks; do while [ ! -b $d ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; done
for d in $disks; do
	[ -b $d ] || { say "NO-DISK $d"; ls /sys/bus/pci/devices; dmesg | grep -iE 'virtio|pci|blk' | tail -20; }
done
say "DISKS $(echo $disks)"
# The disks no guest uses (run-e2e.sh): xl save's image goes to the
# first, the host tier (QUOTA tier) to the second.
SAVE_DEV= TIER_DEV=
for d in /dev/vd?; do
	grep -q "target=$d\"" /guest/*.cfg && continue
	if [ -z "$SAVE_DEV" ]; then SAVE_DEV=$d; else TIER_DEV=$d; fi
done
say "SAVE-DEV ${SAVE_DEV:-none} TIER-DEV ${TIER_DEV:-none}"
dom0_toolstack

# e2e.tmemd=0 on the dom0 command line (E2E_DOM0_EXTRA): no tmemd, so the
# guests swap to their disks alone; for telling a tmem fault from a platform one.
if grep -q 'e2e.tmemd=0' /proc/cmdline; then TMEMD_BIN=/bin/false; else TMEMD_BIN=tmemd; fi
# tmemd keeps its store in an arena on tmpfs, so a kill -9 loses nothing.
TMEMD_ARGS="--transport xen --runtime-dir /run/tmemd --state-dir /run/tmemd \
	--memory ${TMEMD_MEMORY:-640M} --arena /dev/shm/tmemd.arena --verbose"
# start_tmemd: dom0-boot.sh.
if start_tmemd; then
	say "TMEMD-UP pid=$(cat /run/e2e/tmemd.pid)"
else
	say "TMEMD-FAILED (tmemd --transport xen did not come up)"
	sed 's/^/E2E-TMEMD-LOG /' /run/tmemd.log
fi
tmemd_pid=$(cat /run/e2e/tmemd.pid)

# tmemd_alive: false (once said so, with its log) when tmemd has died
# other than at a kill point (/run/e2e/restarting is there meanwhile).
tmemd_alive() {
	[ -f /run/e2e/restarting ] && return 0
	kill -0 $(cat /run/e2e/tmemd.pid) 2>/dev/null && return 0
	[ -f /run/e2e/restarting ] && return 0
	[ -f /run/e2e/tmemd-died ] && return 1
	touch /run/e2e/tmemd-died
	rc=?; [ "$(cat /run/e2e/tmemd.pid)" = $tmemd_pid ] && { wait $tmemd_pid; rc=$?; }
	say "TMEMD-DIED rc=$rc uptime=$(up)"
	tail -n 30 /run/tmemd.log | sed 's/^/E2E-TMEMD-LOG /'
	return 1
}
# live_stats GUEST: the pool's pages and the first client's op counts, from
# the last snapshot, as one console line (progress while a guest runs).
live_stats() {
	# The last snapshot, a "key:value" a line.
	kv=$(tail -n 1 /run/e2e/stats-$1.log | tr -d ' "' | tr ',{}' '\n\n\n')
	v=$(echo "$kv" | grep -E '^(persistent_pages|puts|gets|failed_gets):' | head -4 | tr '\n' ' ')
	# The elastic pool's view, so a run that stalls shows why in CI's log.
	m=$(echo "$kv" |
		grep -E '^(target_bytes|used_bytes|available_bytes|stall_percent|pressure|refusing_persistent|dom0_bytes|dom0_target_bytes):.' |
		sed 's/_bytes:\([0-9]*\)$/:\1/' | awk -F: '{ if ($2 ~ /^[0-9]+$/ && $2 > 65536) printf "%s:%dM ", $1, $2 / 1048576; else printf "%s:%s ", $1, $2 }')
	# The host tier's (the pool's figures come before the clients').
	t=$(echo "$kv" | grep -E '^(spilled_pages|readbacks):' | head -2 | tr '\n' ' ')
	say "LIVE-STATS $1 uptime=$(up) $v $m $t"
	grep 'pool target\|balloon' /run/tmemd.log | tail -n +$((logged + 1)) | sed 's/^/E2E-DOM0 TMEMD-LOG /'
	logged=$(grep -c 'pool target\|balloon' /run/tmemd.log)
}
# snapshot, conlog: dom0-boot.sh.
# relay GUEST: its new E2E lines, live on the serial console (uses $shown).
relay() {
	n=$(conlog $1 | wc -l)
	[ "$n" -gt "$shown" ] || return 0
	conlog $1 | sed -n "$((shown + 1)),${n}p" | tr -d '\r' |
		grep -E '^E2E-(GUEST|WORKLOAD)' | sed "s/^/E2E-LIVE $1 /"
	shown=$n
}
# wait_marker GUEST PATTERN SECONDS: until the guest's console log has it.
wait_marker() {
	j=0 miss=0
	while [ $j -lt $(($3 * 2)) ]; do
		relay $1
		conlog $1 | grep -q "$2" && return 0
		# A guest that said DONE (a FAIL says it too) prints nothing more.
		# (it may have come between the two reads)
		conlog $1 | grep -q "E2E-GUEST $1 DONE" && { conlog $1 | grep -q "$2"; return; }
		tmemd_alive || return 1
		if xl domid $1 >/dev/null 2>&1 || [ -f /run/e2e/moving-$1 ]; then miss=0
		else miss=$((miss + 1)); fi
		if [ $miss -ge 3 ]; then   # gone for good, not one failed xl call
			relay $1; say "GUEST-GONE $1"
			xl dmesg | grep -E "d[0-9]+v[0-9]+ (Triple|.*crash)" | tail -3 | sed "s/^/E2E-DOM0 XEN /"
			return 1
		fi
		sleep 0.5; j=$((j+1))
	done
	return 1
}

# kill_points GUEST: the workload progress at which tmemd is killed with
# SIGKILL and started again, one a line (e2e.kills=0 on the dom0 command
# line: none).
kill_points() {
	grep -q 'e2e.kills=0' /proc/cmdline && return 0
	case $1 in
	pv-frontswap) printf '%s\n' "p1 verify 64 MiB" "p1 verify 256 MiB" ;;
	pv-stock) echo "p1 verify 128 MiB" ;;
	esac
}
# kill_tmemd GUEST DOMID N: kill -9 now, start again on the arena, wait for
# the guest to be back; prints what it saw.  DOMID is the guest's now (a
# restore or a migration gives it a new one).
kill_tmemd() {
	snapshot pre-kill-$3 $1 $2
	back_re="domain $2: client .* reconnected with its pages"
	seen=$(grep -c "$back_re" /run/tmemd.log)
	touch /run/e2e/restarting
	pid=$(cat /run/e2e/tmemd.pid) t0=$(up)
	kill -9 $pid
	while kill -0 $pid 2>/dev/null; do sleep 0.05; done
	ok=yes; start_tmemd || ok=no
	rm -f /run/e2e/restarting
	j=0; while [ $j -lt 600 ] && [ "$(grep -c "$back_re" /run/tmemd.log)" -le "$seen" ]; do
		sleep 0.1; j=$((j+1)); done
	back=no; [ "$(grep -c "$back_re" /run/tmemd.log)" -gt "$seen" ] && back=yes
	snapshot post-kill-$3 $1 $2
	say "KILL $1 n=$3 at=$t0 back_at=$(up) restarted=$ok reconnected=$back $($TMEMCTL status 2>&1 | grep -i 'restart' | tr -s ' \n' ' ')"
}
# killer GUEST DOMID: kill_tmemd at each of the guest's kill points.
killer() {
	n=0
	kill_points $1 | while read -r point; do
		j=0; while [ $j -lt 1800 ] && ! conlog $1 | grep -q "tag=$1-$point"; do
			sleep 0.2; j=$((j+1)); done
		n=$((n + 1))
		if conlog $1 | grep -q "tag=$1-$point"; then
			kill_tmemd $1 $(xl domid $1) $n
		else
			say "KILL-MISSED $1 n=$n point=$point"
		fi
	done
}

# move_points GUEST: "POINT OP" lines: at the workload's progress POINT
# the guest is saved and restored (save; save-kill: with tmemd killed
# with SIGKILL and started again while the pages are parked) or live
# migrated to this host (migrate).  e2e.moves=0 on the dom0 command line:
# none.  Only the PVH guest is live migrated: a PV guest's live migration
# needs log-dirty shadow paging, which Debian builds Xen 4.17 without
# (CONFIG_SHADOW_PAGING unset: "Failed to enable logdirty: 95"); PVH's
# uses HAP.  xl save needs no log-dirty mode.
move_points() {
	grep -q 'e2e.moves=0' /proc/cmdline && return 0
	case $1 in
	pv-frontswap) echo "p1 verify 128 MiB|save-kill" ;;
	pv-stock) echo "p1 verify 256 MiB|save" ;;
	pvh-stock) echo "p1 verify 256 MiB|migrate" ;;
	esac
}
# logged_pages PATTERN: the page count of tmemd's last log line matching
# "PATTERN N persistent pages" (its park and claim lines), or "none".
logged_pages() {
	v=$(sed -n "s/.*$1 \([0-9]*\) persistent pages.*/\1/p" /run/tmemd.log | tail -1)
	echo "${v:-none}"
}
# move_guest GUEST N OP: one move; prints what it saw, the times in
# seconds: took (save and restore, or the migration), waited (from the
# new domain running to tmemd handing it the parked pages).
move_guest() {
	old=$(xl domid $1) t0=$(up) rc2=0
	snapshot pre-move-$2 $1 $old
	touch /run/e2e/moving-$1
	case $3 in
	save|save-kill)
		xl save $1 $SAVE_DEV >/tmp/move-$1.log 2>&1; rc1=$?
		if [ $3 = save-kill ]; then   # kill -9 while the pages are parked
			touch /run/e2e/restarting
			pid=$(cat /run/e2e/tmemd.pid); kill -9 $pid
			while kill -0 $pid 2>/dev/null; do sleep 0.05; done
			start_tmemd && say "KILLED-WHILE-PARKED $1 $($TMEMCTL status 2>&1 | grep -i parked | tr -s ' \n' ' ')"
			rm -f /run/e2e/restarting
		fi
		xl restore $SAVE_DEV >>/tmp/move-$1.log 2>&1; rc2=$?
		;;
	migrate)
		xl migrate -s "" $1 "xl migrate-receive" >/tmp/move-$1.log 2>&1; rc1=$?
		;;
	esac
	t1=$(up)
	new=$(xl domid $1 2>/dev/null || echo none)
	rm -f /run/e2e/moving-$1
	j=0; while [ $j -lt 1200 ] && [ "$(logged_pages "domain $new ([^)]*): claimed")" = none ]; do
		sleep 0.1; j=$((j+1)); done
	t2=$(up)
	snapshot post-move-$2 $1 $new
	say "NEWDOMID $1 $new"
	say "MOVE $1 n=$2 op=$3 old=$old new=$new rc=$rc1/$rc2 took=$(echo "$t1 $t0" | awk '{printf "%.1f", $1 - $2}') waited=$(echo "$t2 $t1" | awk '{printf "%.1f", $1 - $2}') parked=$(logged_pages "domain $old ([^)]*) suspended:") claimed=$(logged_pages "domain $new ([^)]*): claimed")"
	[ "$rc1/$rc2" = 0/0 ] || sed "s/^/E2E-XL /" /tmp/move-$1.log
}
# mover GUEST: move_guest at each of the guest's move points.
mover() {
	n=0
	move_points $1 | while IFS='|' read -r point op; do
		j=0; while [ $j -lt 1800 ] && ! conlog $1 | grep -q "tag=$1-$point"; do
			sleep 0.2; j=$((j+1)); done
		n=$((n + 1))
		if conlog $1 | grep -q "tag=$1-$point"; then
			move_guest $1 $n $op
		else
			say "MOVE-MISSED $1 n=$n point=$point"
		fi
	done
}

# ---- the elastic pool (issue 28): quota "fallow" ----
# restart_auto: tmemd again with memory = auto on a fresh arena (no guest
# is attached between guests), so the pool follows dom0 and Xen's free
# memory; dom0 boots with dom0_mem=1024M,max:2560M (run-e2e.sh).
restart_auto() {
	restart_fresh "$(echo "$TMEMD_ARGS" | sed "s/--memory [^ ]*/--memory auto/")"
	say "TMEMD-AUTO restarted=$ok $($TMEMCTL status 2>&1 | grep '^memory' | tr -s ' ')"
}
# restart_fresh ARGS: tmemd stopped, and started again with ARGS on a fresh
# arena (between guests); ok=yes|no.
restart_fresh() {
	pid=$(cat /run/e2e/tmemd.pid)
	touch /run/e2e/restarting
	kill $pid; while kill -0 $pid 2>/dev/null; do sleep 0.1; done
	rm -f /dev/shm/tmemd.arena
	TMEMD_ARGS=$1
	ok=yes; start_tmemd || ok=no
	rm -f /run/e2e/restarting
	tmemd_pid=$(cat /run/e2e/tmemd.pid)
}

# ---- the host tier (issue 29): quota "tier" ----
# restart_tier: tmemd with a 48 MiB pool, far below the guest's 512 MiB of
# swap, and a host tier on dom0's spare disk (a block device): most of the
# guest's pages are spilled there and read back, through its kill -9 and its
# save and restore as well.  restart_untiered puts the usual tmemd back.
restart_tier() {
	printf '[tmemd]\nspill = %s\nspill-size = 1000M\n' "$TIER_DEV" >/run/e2e/tier.conf
	UNTIERED_ARGS=$TMEMD_ARGS
	restart_fresh "-c /run/e2e/tier.conf $(echo "$TMEMD_ARGS" | sed "s/--memory [^ ]*/--memory 48M/")"
	say "TMEMD-TIER restarted=$ok dev=$TIER_DEV $($TMEMCTL status 2>&1 | grep -iE '^memory|^tier' | tr -s ' \n' ' ')"
}
restart_untiered() {
	restart_fresh "$UNTIERED_ARGS"
	say "TMEMD-UNTIERED restarted=$ok"
}
# xen_free: Xen's free memory, MiB.
xen_free() { xl info free_memory 2>/dev/null || echo 0; }
# ballast CFG NAME: a paused domain taking Xen's free memory down to about
# 96 MiB (a domain also needs Xen memory beyond its own); "none" when Xen
# has less than 160 MiB free already (tmemd's pool ballooned dom0 up).
ballast() {
	mb=$(( $(xen_free) - 96 ))
	[ $mb -ge 64 ] || { echo "none"; return 0; }
	sed -e "s/^name = .*/name = \"$2\"/" -e "s/^memory = .*/memory = $mb/" \
		-e "s/^maxmem = .*/maxmem = $mb/" -e '/^disk/d' -e '/^extra/d' $1 >/tmp/$2.cfg
	xl create -p /tmp/$2.cfg >/tmp/xl-$2.log 2>&1 && echo "${mb}M" || echo "failed"
}
# newcomer CFG NAME: xl create -p of a 256 MiB domain; prints rc and seconds.
newcomer() {
	sed -e "s/^name = .*/name = \"$2\"/" -e '/^disk/d' -e '/^extra/d' $1 >/tmp/$2.cfg
	t0=$(up); xl create -p /tmp/$2.cfg >/tmp/xl-$2.log 2>&1; rc=$?
	echo "rc=$rc s=$(echo "$(up) $t0" | awk '{printf "%.1f", $1 - $2}')"
}
# fallow_actor GUEST: with the guest's pages in the pool (its readcache
# passes done, its held workload swapped out) and dom0 ballooned up by
# tmemd, Xen's free memory is taken down (by tmemd, or by a paused ballast
# domain) below what a 256 MiB domain needs, which is then created twice:
#   1. with xl's autoballoon on: xl lowers dom0's balloon target, tmemd's
#      watch drops ephemeral pages in time for xl's wait (cause toolstack);
#   2. as without autoballoon (the e2e's xl.conf): refused first; then
#      tmemctl release gives pool memory back and lowers dom0's target,
#      and the create succeeds.
# The guest then reads its file set and its held pages again.
fallow_actor() {
	domid=$(xl domid $1) cfg=/guest/$1.cfg
	snapshot fallow-before $1 $domid
	free0=$(xen_free) target0=$(xenstore-read /local/domain/0/memory/target)
	b1=$(ballast $cfg ballast1) free1=$(xen_free)
	snapshot fallow-full $1 $domid
	echo 'autoballoon="on"' >/etc/xen/xl.conf
	auto=$(newcomer $cfg newcomer1)
	echo 'autoballoon="off"' >/etc/xen/xl.conf
	sleep 2
	snapshot fallow-auto $1 $domid
	say "FALLOW $1 ballast=$b1 xen_free_mib=$free0/$free1/$(xen_free) dom0_target_kib=$target0/$(xenstore-read /local/domain/0/memory/target) create=[$auto] freeable_kib=$(xenstore-read /local/domain/0/memory/tmem-freeable 2>/dev/null || echo none)"
	xl destroy newcomer1 2>/dev/null; xl destroy ballast1 2>/dev/null
	free2=$(xen_free)
	b2=$(ballast $cfg ballast2) free3=$(xen_free)
	refused=$(newcomer $cfg newcomer0)
	xl destroy newcomer0 2>/dev/null
	$TMEMCTL release 320M >/tmp/release.log 2>&1; relrc=$?
	j=0; while [ $(xen_free) -lt 300 ] && [ $j -lt 100 ]; do sleep 0.1; j=$((j+1)); done
	free4=$(xen_free)
	by_hand=$(newcomer $cfg newcomer2)
	snapshot fallow-after $1 $domid
	say "FALLOW-RELEASE $1 ballast=$b2 xen_free_mib=$free2/$free3/$free4 refused_first=[$refused] release_rc=$relrc [$(tr '\n' ' ' </tmp/release.log)] create=[$by_hand]"
	for d in newcomer1 newcomer0 newcomer2 ballast1 ballast2; do
		[ -s /tmp/xl-$d.log ] && tail -n 5 /tmp/xl-$d.log | sed "s/^/E2E-XL $d /"
		xl destroy $d 2>/dev/null
	done
	grep -E 'pool target|balloon|ceiling' /run/tmemd.log | tail -n 16 | sed 's/^/E2E-TMEMD-LOG /'
	return 0
}

# ---- issue 28, point 2: host pressure in a memory-limited cgroup ----
# A second tmemd (local transport, memory = auto) in a cgroup v2 with
# memory.max 512M (memory.high 448M: the kernel throttles, and PSI shows
# it, before it would OOM-kill), filled by e2e-cgfill with 160 MiB of
# ephemeral and 96 MiB of persistent pages; then a hog in the same cgroup
# needs 60% of the limit (e2e-workload -m 307).  Neither may be
# OOM-killed, tmemd's target must fall within 5 s of the hog's start and
# grow back once it exits, and every persistent page must come back.
CG=/sys/fs/cgroup/tmemd-e2e CGRUN=/run/tmemd-cg
# pool_target SOCKET: that tmemd's elastic target, bytes.
pool_target() {
	tmemctl --socket $1 stats --json 2>/dev/null | tr -d ' \n' |
		sed -n 's/.*"target_bytes":\([0-9]*\).*/\1/p'
}
cg_target() { pool_target $CGRUN/control.sock; }
# main_target: dom0's own tmemd's target (it sees the whole host's pressure).
main_target() { pool_target /run/tmemd/control.sock; }
# grown_back GETTER BEFORE T1 SECONDS: the seconds from T1 until GETTER's
# target is back to 90% of BEFORE; "none" if not within SECONDS.
grown_back() {
	i=0; while [ $i -lt $(($4 * 4)) ]; do
		t=$($1)
		[ -n "$t" ] && [ "$t" -ge $(($2 / 10 * 9)) ] && {
			echo "$(up) $3" | awk '{printf "%.1f", $1 - $2}'; return; }
		sleep 0.25; i=$((i+1))
	done
	echo none
}
# dom0's memory now, MiB (xl list's Mem column).
dom0_mib() { xl list 0 2>/dev/null | awk 'NR == 2 { print $3 }'; }

cgroup_case() {
	grep -q 'e2e.cgroup=0' /proc/cmdline && return 0
	mkdir -p /sys/fs/cgroup; mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	mkdir -p $CG $CGRUN
	if ! echo 512M >$CG/memory.max || ! echo 448M >$CG/memory.high; then
		say "CGROUP-FAILED no cgroup v2 memory controller"; return 0
	fi
	# The elastic-pool case ballooned dom0 down for new domains (to 700M
	# in a full run); whether it grew back depended on what the guests
	# after it stored.  This case is about a cgroup's limit, not dom0's
	# size: dom0 gets its boot size back first, so the 512M cgroup fits
	# and a shortage is the cgroup's, never a global OOM in dom0.
	xl mem-set 0 1024m 2>/dev/null
	i=0; while [ "$(dom0_mib)" -lt 1000 ] && [ $i -lt 150 ]; do sleep 0.2; i=$((i+1)); done
	printf '[tmemd]\nmemory-grow-delay = 5s\n[defaults]\ncompress = off\n' >$CGRUN/tmemd.conf
	sh -c "echo \$\$ >$CG/cgroup.procs; echo -900 >/proc/self/oom_score_adj; exec tmemd -c $CGRUN/tmemd.conf --transport local --runtime-dir $CGRUN --state-dir $CGRUN --memory auto" >$CGRUN/log 2>&1 &
	cgpid=$!
	i=0; while [ -z "$(cg_target)" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
	rm -f /run/e2e/cg-go
	e2e-cgfill $CGRUN/guest.sock 160 96 /run/e2e/cg-go >$CGRUN/fill.out 2>&1 &
	fillpid=$!
	i=0; while ! grep -q READY $CGRUN/fill.out && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
	before=$(cg_target) low=$before fell=none t0=$(up) main_before=$(main_target)
	sh -c "echo \$\$ >$CG/cgroup.procs; exec e2e-workload -m 307 -s 5 -t cghog" >$CGRUN/hog.out 2>&1 &
	hog=$!
	while kill -0 $hog 2>/dev/null; do
		t=$(cg_target); [ -n "$t" ] && [ "$t" -lt "$low" ] && low=$t
		[ $fell = none ] && [ -n "$t" ] && [ "$t" -lt "$before" ] &&
			fell=$(echo "$(up) $t0" | awk '{printf "%.1f", $1 - $2}')
		sleep 0.25
	done
	wait $hog; hogrc=$? t1=$(up)
	grew=$(grown_back cg_target "$before" $t1 60)
	# dom0's own tmemd saw the hog as host pressure too: its target must
	# come back after its memory-grow-delay (30 s) once the host is calm.
	main_grew=$(grown_back main_target "$main_before" $t1 90)
	touch /run/e2e/cg-go; wait $fillpid; fillrc=$?
	alive=no; kill -0 $cgpid 2>/dev/null && alive=yes
	say "CGROUP dom0_mib=$(dom0_mib) main_before=$main_before main_grew_s=$main_grew main_after=$(main_target) limit=512M target_before=$before target_low=$low fell_s=$fell hog_rc=$hogrc grew_s=$grew target_after=$(cg_target) tmemd_alive=$alive oom_kills=$(sed -n 's/^oom_kill //p' $CG/memory.events) fill_rc=$fillrc $(tail -n 1 $CGRUN/fill.out) $(head -n 1 $CGRUN/fill.out) hog=[$(grep '^E2E-WORKLOAD tag=' $CGRUN/hog.out)]"
	tmemctl --socket $CGRUN/control.sock stats --json 2>/dev/null | tr -d '\n\t' | sed 's/^/E2E-STATS cgroup tmemd-cg 0 uptime=0 /'
	grep -E 'pool target' $CGRUN/log | tail -n 8 | sed 's/^/E2E-TMEMD-CG-LOG /'
	kill $cgpid; wait $cgpid
	rmdir $CG 2>/dev/null
}

# create_guest NAME: xl create, one at a time (concurrent creates fail).
create_guest() {
	say "CREATE $1 uptime=$(up)"
	xl create /guest/$1.cfg >/tmp/xl-$1.log 2>&1 && return 0
	say "CREATE-FAILED $1"; sed 's/^/E2E-XL /' /tmp/xl-$1.log
	return 1
}
# run_guest NAME QUOTA: one created guest, from its boot to xl destroy.
run_guest() {
	name=$1 quota=$2 shown=0
	domid=$(xl domid $name)
	say "DOMID $name $domid"
	if grep -q 'e2e.diag=1' /proc/cmdline; then   # E2E_DOM0_EXTRA: the guest's first seconds
		sleep 8; { xl list; xl vcpu-list; } 2>&1 | sed "s/^/E2E-DIAG /"
		xl debug-keys q; xl debug-keys v; xl dmesg | tail -n 120 | sed 's/^/E2E-DIAG /'
		/usr/lib/xen-4.17/bin/xenctx -a -C -t -n 2 -l MAX $domid 2>&1 | sed 's/^/E2E-DIAG /'
	fi
	# stats every 2 s while the guest runs
	( n=0 logged=$(grep -c 'pool target\|balloon' /run/tmemd.log); while :; do
		snapshot run $name $domid >>/run/e2e/stats-$name.log 2>&1
		n=$((n + 1)); [ $((n % 10)) = 0 ] && live_stats $name
		sleep 2
	done ) &
	poller=$!
	wait_marker $name "E2E-GUEST $name READY" 600 || say "TIMEOUT $name READY"
	say "KILL-PLAN $name $(kill_points $name | grep -c .)"
	killer $name $domid &
	killer_pid=$!
	say "MOVE-PLAN $name $(move_points $name | grep -c .)"
	mover $name &
	mover_pid=$!
	# 1: persistent cap, eph: ephemeral cap, fallow: above (tier: none)
	if [ "$quota" = 1 ] || [ "$quota" = eph ] || [ "$quota" = fallow ]; then
		cap="--persistent-max 4M"
		[ "$quota" = eph ] || [ "$quota" = fallow ] && cap="--ephemeral-max 16M"
		wait_marker $name "E2E-GUEST $name WAIT-QUOTA" 1500 || say "TIMEOUT $name WAIT-QUOTA"
		domid=$(xl domid $name)   # a move gave it a new one
		snapshot pre-quota $name $domid
		# fallow: the elastic pool's case first, then the ephemeral cap's.
		[ "$quota" = fallow ] && fallow_actor $name
		$TMEMCTL set $domid $cap >/tmp/set-$name.log 2>&1
		say "QUOTA $name domid=$domid rc=$? $(tr '\n' ' ' </tmp/set-$name.log)"
		tty=$(xenstore-read /local/domain/$domid/console/tty)
		echo go >$tty
		say "GO-SENT $name tty=$tty"
	fi
	wait_marker $name "E2E-GUEST $name DONE" 1800 || say "TIMEOUT $name DONE"
	kill $killer_pid 2>/dev/null; wait $killer_pid 2>/dev/null
	while [ -f /run/e2e/moving-$name ]; do sleep 1; done
	kill $mover_pid 2>/dev/null; wait $mover_pid 2>/dev/null
	kill $poller; wait $poller 2>/dev/null
	domid=$(xl domid $name)
	cat /run/e2e/stats-$name.log || say "NO-STATS-LOG $name"
	snapshot hold $name $domid
	if [ "$(kill_points $name | grep -c .)" = 1 ]; then
		# Destroyed while tmemd is down: the restart must free its pages.
		touch /run/e2e/restarting
		pid=$(cat /run/e2e/tmemd.pid); kill -9 $pid
		while kill -0 $pid 2>/dev/null; do sleep 0.05; done
		xl destroy $name; rc=$?
		ok=yes; start_tmemd || ok=no
		rm -f /run/e2e/restarting
		say "DESTROYED-WHILE-DOWN $name rc=$rc restarted=$ok $(grep 'gone since the last run' /run/tmemd.log | tail -1)"
	else
		xl destroy $name; say "DESTROYED $name rc=$? uptime=$(up)"
	fi
	j=0; while [ $j -lt 20 ] && $TMEMCTL list 2>/dev/null | grep -qw "$name"; do sleep 0.5; j=$((j+1)); done
	snapshot destroyed $name $domid
	echo "E2E-CONSOLE-BEGIN $name"
	conlog $name | sed "s/^/E2E-CON $name /"
	echo "E2E-CONSOLE-END $name"
}

# One guest at a time; e2e.parallel=1 on the dom0 command line
# (E2E_PARALLEL=1) runs them all at once.
pids=""
while read -r name quota; do
	[ -n "$name" ] || continue
	tmemd_alive || { say "SKIP $name (tmemd died)"; continue; }
	[ "$quota" = fallow ] && restart_auto
	[ "$quota" = tier ] && restart_tier
	if grep -q 'e2e.parallel=1' /proc/cmdline; then
		create_guest $name || continue
		run_guest $name $quota &
		pids="$pids $!"
	else
		create_guest $name && run_guest $name $quota
		[ "$quota" = tier ] && tmemd_alive && restart_untiered
	fi
done </guest/guests
for p in $pids; do wait $p; done
# Last, with no guest left: a hog's pressure reaches dom0's own tmemd too,
# and a guest must never start while its pool is squeezed by it.
tmemd_alive && cgroup_case

say "TMEMD-ALIVE $(kill -0 $(cat /run/e2e/tmemd.pid) 2>/dev/null && echo yes || echo no)"
sed 's/^/E2E-TMEMD-LOG /' /run/tmemd.log | tail -n 200
dmesg | grep -E 'segfault|traps:|Out of memory|Killed process|BUG|Oops' | sed 's/^/E2E-DOM0-DMESG /'
free | sed 's/^/E2E-DOM0-FREE /'
say "XL-DMESG-ERRORS $(xl dmesg | grep -ciE 'error|crash|fatal')"
say "ALL-DONE uptime=$(up)"
poweroff -f
