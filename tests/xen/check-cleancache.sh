#!/bin/bash
# check_cleancache: the pv-cleancache guest (tests/xen/cleancache.sh),
# sourced by check-results.sh, whose helpers (check, console, rc, ratio,
# fileset, max_pages, summary) and loop variables (name, domid, quota,
# type, mode, con, lines) it uses.  cleancache_ops registered on the test
# kernel; the file set right in every pass; pass2's tmem hits at least
# 70% of the blocks that no longer fit in the guest's RAM; no stale block
# after overwrite/truncate/unlink; the kernel's hooks invalidating; the
# ephemeral pages in tmemctl while it ran; the ephemeral cap case; and a
# remount's new pool cold.

# Shared with check_readcache: every step's file set right; tmemd's stats showed the guest's ephemeral
# pages while it ran and just before xl destroy; dom0's tmemctl set of the
# ephemeral cap succeeded.
check_fileset_errors() {   # STEP...: e2e-fileset's line for each says errors=0
	local st
	for st; do
		check "file set $st: 0 errors ($(console "$name" | grep -a "^E2E-FILESET tag=$name-$st " | tail -1 | cut -d' ' -f3-))" \
			test "$(fileset "$name" $st errors)" = 0
	done
}
check_ephemeral_shown() {
	local maxe held
	maxe=$(max_pages ephemeral run hold)
	check "tmemctl stats shows the client with ephemeral pages (max ${maxe:-0})" gt0 "${maxe:-0}"
	held=$(max_pages ephemeral hold)
	check "client holds ephemeral pages just before xl destroy (${held:-0})" gt0 "${held:-0}"
}
check_ephemeral_cap_set() {
	local q
	q=$(grep -a "^E2E-DOM0 QUOTA $name " <<<"$lines" | tail -1)
	check "tmemctl set $domid --ephemeral-max 16M succeeded (${q#E2E-DOM0 QUOTA })" grep -q ' rc=0 ' <<<"$q "
}

# cc_notfit: pass2's blocks minus the guest's RAM in 4 KiB pages.
cc_notfit() {
	local kb blocks
	kb=$(grep -a "^E2E-GUEST $name MEM " <<<"$con" | tail -1 | awk '{print $4}')
	blocks=$(fileset "$name" pass2 blocks)
	echo $(( ${blocks:-0} - ${kb:-0} / 4 ))
}

check_cleancache() {
	local st steps="create pass1 pass2 mutate pass3 pass5" r2 r3 r4 r5 h2 nf
	check "cleancache_ops registered (test kernel)" grep -q "^E2E-GUEST $name CLEANCACHE-REGISTERED" <<<"$con"
	check "ext4 mounted on /dev/xvdb" grep -q "^E2E-GUEST $name MOUNTED /dev/xvdb" <<<"$con"
	[[ $quota == eph ]] && steps+=" pass4"
	check_fileset_errors $steps
	check "pass1: reclaim put pages to tmem (puts $(rc "$name" remounted puts) -> $(rc "$name" pass1 puts))" \
		test "$(rc "$name" pass1 puts)" -gt "$(rc "$name" remounted puts)"
	r2=$(ratio "$name" pass1 pass2)
	h2=$(( $(rc "$name" pass2 hits) - $(rc "$name" pass1 hits) )) nf=$(cc_notfit)
	check "pass2: ${r2}% of its cleancache gets hit (>= 70%)" test "$r2" -ge 70
	check "pass2: $h2 tmem hits >= 70% of the $nf blocks that do not fit in RAM" \
		test $((100 * h2)) -ge $((70 * nf)) -a "$nf" -gt 0
	r3=$(ratio "$name" mutate pass3)
	check "pass3 after overwrite/truncate/unlink, ${r3}% hits: 0 stale blocks ($(fileset "$name" pass3 stale))" \
		test "$(fileset "$name" pass3 stale)" = 0
	check "the kernel's hooks invalidated (cc_invalidates $(rc "$name" pass3 cc_invalidates))" \
		gt0 "$(rc "$name" pass3 cc_invalidates)"
	check_ephemeral_shown
	if [[ $quota == eph ]]; then
		check_ephemeral_cap_set
		# Against pass2, the other read straight after a full read (pass3
		# follows mutate, whose write burst may have emptied the pool).
		r4=$(ratio "$name" quota pass4)
		check "under the cap the hit ratio fell (pass2 ${r2}% -> pass4 ${r4}%), data still right" \
			test "$r4" -lt "$r2"
	fi
	r5=$(ratio "$name" remounted2 pass5)
	check "umount and mount: a new pool, pass5 cold (${r5}% hits < 1%) and 0 errors" \
		test "$(fileset "$name" pass5 errors)" = 0 -a "$r5" -lt 1
	summary+=("$(printf '  %-14s %-4s %-9s hits=%-8s misses=%-8s pass2=%s%% stale=%s dropped=%s' "$name" "$type" "$mode" \
		"$(rc "$name" pass3 hits)" "$(rc "$name" pass3 misses)" "$r2" "$(fileset "$name" pass3 stale)" \
		"$(rc "$name" pass5 puts_dropped)")")
}
