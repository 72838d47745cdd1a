#!/bin/bash
# Judge an e2e-xen run from its serial log: every assertion of issue #8
# (and issue #17's pv-readcache guest, issue #15's kill -9 runs), each
# printed PASS/FAIL, then a summary.  Exit 0 only if all passed.
#
# usage: check-results.sh SERIAL_LOG   with GUESTS (as mkinitramfs.sh) in
# the environment and WALL (seconds) for the summary.
set -uo pipefail
log=${1:?usage: check-results.sh SERIAL_LOG}
: "${GUESTS:?}"
fails=0
pass() { echo "  PASS  $*"; }
fail() { echo "  FAIL  $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }

# Serial lines come with CRs and may carry (XEN) noise; keep ours.
lines=$(tr -d '\r' <"$log" | grep -aoE 'E2E-[A-Z0-9-]+ .*')
# The console of guest NAME, as dom0 dumped it.
console() { grep -a "^E2E-CON $1 " <<<"$lines" | sed "s/^E2E-CON $1 //"; }
# Snapshots "E2E-STATS LABEL NAME DOMID uptime=T {json}" -> json, one a line.
snapshots() { grep -a "^E2E-STATS $1 $2 " <<<"$lines" | sed -E 's/^E2E-STATS [^ ]+ [^ ]+ [^ ]+ uptime=[^ ]+ //' |
	grep -a '^{' || true; }
# jq filter: the client of domain DOMID / guest NAME in one snapshot.
client_sel='[.clients[]? | select(((.domid? // -1) == $d) or .name == $n or .name == "dom\($d)" or .name == "domid:\($d)" or .name == "\($d)")]'
failed_sum='(.ops.failed_puts | if type == "object" then ([.[]] | add // 0) else (. // 0) end)'
# counter NAME PHASE KEY: a guest debugfs counter from its E2E-COUNTERS line.
counter() { console "$1" | grep -a "^E2E-COUNTERS $1 $2 " | tail -1 | grep -oE "(^| )$3=[0-9]+" | cut -d= -f2; }
gt0() { local v=${1:-0}; [[ $v =~ ^[0-9]+$ ]] && (( v > 0 )); }

# max_pages KIND LABEL...: the most KIND pages the guest's client had in
# those snapshots (uses name, domid).
max_pages() {
	local kind=$1 l
	shift
	for l; do snapshots "$l" "$name"; done | jq -s --argjson d "$domid" --arg n "$name" \
		"[.[] | $client_sel | .[].pages.$kind // 0] | max // 0" 2>/dev/null
}

# check_gone KIND (persistent|ephemeral): after xl destroy the guest's
# client and its KIND pages are gone (uses name, domid).
check_gone() {
	local gone left pp others
	gone=$(snapshots destroyed "$name" | tail -1)
	check "after xl destroy: stats readable" test -n "$gone"
	[[ -n $gone ]] || return 0
	left=$(jq --argjson d "$domid" --arg n "$name" "$client_sel | length" <<<"$gone")
	# Other guests may still run: the pool holds exactly their pages.
	pp=$(jq ".pool.$1_pages" <<<"$gone")
	others=$(jq "[.clients[]?.pages.$1 // 0] | add // 0" <<<"$gone")
	check "after xl destroy: client gone ($left left)" test "$left" = 0
	check "after xl destroy: its $1 pages gone (pool $pp = other clients' $others)" test "$pp" = "$others"
}

# rc NAME STEP KEY: a tmemcache counter from the guest's E2E-RCACHE line.
rc() { console "$1" | grep -a "^E2E-RCACHE $1 $2 " | tail -1 | grep -oE "(^| )$3=[0-9]+" | cut -d= -f2; }
# fileset NAME STEP KEY: a field of the guest's E2E-FILESET line for STEP.
fileset() { console "$1" | grep -a "^E2E-FILESET tag=$1-$2 " | tail -1 | grep -oE "(^| )$3=[0-9]+" | cut -d= -f2; }
# ratio NAME FROM TO: the tmem hit ratio (percent) of the reads between two steps.
ratio() {
	local h0 h1 m0 m1
	h0=$(rc "$1" "$2" hits) h1=$(rc "$1" "$3" hits) m0=$(rc "$1" "$2" misses) m1=$(rc "$1" "$3" misses)
	local h=$(( ${h1:-0} - ${h0:-0} )) m=$(( ${m1:-0} - ${m0:-0} ))
	if (( h + m > 0 )); then echo $(( 100 * h / (h + m) )); else echo 0; fi
}

# check_readcache: the pv-readcache guest (tests/xen/readcache.sh): the
# file set right in every pass, pass2's reads from the disk device mostly
# tmem hits, no stale block after overwrite/truncate/unlink, tmemd showing
# the ephemeral pages while it ran, and the ephemeral cap case.
check_readcache() {
	local st steps="create pass1 pass2 mutate pass3" r2 r4 r6 maxe held q
	check "tmemcache device created" grep -q "^E2E-GUEST $name DM-CREATED /dev/dm-" <<<"$con"
	check "ext4 mounted on it" grep -q "^E2E-GUEST $name MOUNTED" <<<"$con"
	[[ $quota == eph || $quota == fallow ]] && steps+=" pass4"
	check_fileset_errors $steps
	check "pass1 filled tmem (puts $(rc "$name" pass1 puts))" gt0 "$(rc "$name" pass1 puts)"
	r2=$(ratio "$name" pass1 pass2)
	check "pass2: ${r2}% of the blocks read from the disk device were tmem hits (>= 70%)" test "$r2" -ge 70
	check "pass3 after overwrite/truncate/unlink: 0 stale blocks ($(fileset "$name" pass3 stale))" \
		test "$(fileset "$name" pass3 stale)" = 0
	check "target counted invalidations ($(rc "$name" pass3 invalidations))" gt0 "$(rc "$name" pass3 invalidations)"
	check "target read errors = 0 ($(rc "$name" pass3 errors))" test "$(rc "$name" pass3 errors)" = 0
	check_ephemeral_shown
	[[ $quota == fallow ]] && check_fallow
	if [[ $quota == eph || $quota == fallow ]]; then
		check_ephemeral_cap_set
		r4=$(ratio "$name" dropped3 pass4)
		check "under the cap the hit ratio fell (pass3 $(ratio "$name" dropped2 pass3)% -> pass4 ${r4}%), data still right" \
			test "$r4" -lt "$(ratio "$name" dropped2 pass3)"
	fi
	check "dmsetup remove, then the disk itself: 0 errors ($(fileset "$name" pass5 blocks) blocks)" \
		test "$(fileset "$name" pass5 errors)" = 0
	# A new table's pool starts empty: pass6 is cold (its few hits are
	# blocks it read twice itself, metadata mostly) and right.
	r6=$(ratio "$name" recreated pass6)
	check "a new table over the same disk: pass6 0 errors, cold (${r6}% hits < 1%)" \
		test "$(fileset "$name" pass6 errors)" = 0 -a "$r6" -lt 1
	summary+=("$(printf '  %-14s %-4s %-9s hits=%-8s misses=%-8s pass2=%s%% stale=%s' "$name" "$type" "$mode" \
		"$(rc "$name" pass3 hits)" "$(rc "$name" pass3 misses)" "$r2" "$(fileset "$name" pass3 stale)")")
}

# mem_at LABEL JQPATH: a figure of the memory object in snapshot LABEL.
mem_at() { snapshots "$1" "$name" | tail -1 | jq -r ".memory$2 // \"none\"" 2>/dev/null; }

# check_fallow: issue 28's Xen case (dom0-init.sh, fallow_actor): tmemd
# with memory = auto, the pool full of the guest's ephemeral pages and
# some persistent ones, Xen's free memory taken down to 48 MiB by a paused
# ballast domain; xl create of a 256 MiB domain succeeds (autoballoon
# lowers dom0's target, tmemd gives ephemeral pages back), and the held
# persistent pages all come back right.
check_fallow() {
	local f r rv hold ev pages t0 t1 sw
	check "tmemd restarted with memory = auto" grep -aq '^E2E-DOM0 TMEMD-AUTO restarted=yes' <<<"$lines"
	hold=$(grep -a "^E2E-WORKLOAD tag=$name-hold " <<<"$con" | tail -1)
	check "held workload verified before (${hold#E2E-WORKLOAD })" grep -q ' errors=0 ' <<<"$hold "
	r=$(grep -a "^E2E-DOM0 FALLOW-RELEASE $name " <<<"$lines" | tail -1)
	check "without autoballoon: refused, then tmemctl release, then created (${r#E2E-DOM0 FALLOW-RELEASE })" \
		grep -q 'refused_first=\[rc=[1-9].* release_rc=0 .* create=\[rc=0 ' <<<"$r"
	f=$(grep -a "^E2E-DOM0 FALLOW $name " <<<"$lines" | tail -1)
	check "with autoballoon: xl create of a 256 MiB domain with Xen's free memory taken (${f#E2E-DOM0 FALLOW })" \
		grep -q ' create=\[rc=0 ' <<<"$f"
	ev=$(mem_at fallow-auto .reclaim.toolstack.events) pages=$(mem_at fallow-auto .reclaim.toolstack.pages)
	t0=$(mem_at fallow-full .target_bytes) t1=$(mem_at fallow-auto .target_bytes)
	# It drops pages only when dom0 has too little free memory for xl's cut
	# (tests/daemon/test_fallow_unit shows that case with a fake Xen).
	check "tmemd followed xl's cut of dom0's target (toolstack reclaims ${ev}, ${pages} pages evicted; target ${t0} -> ${t1})" \
		gt0 "$ev"
	rv=$(grep -a "^E2E-WORKLOAD-REVERIFY tag=$name-hold " <<<"$con" | tail -1)
	check "held persistent pages all came back right (${rv#E2E-WORKLOAD-REVERIFY })" grep -q ' errors=0 ' <<<"$rv "
	sw=$(grep -a "^E2E-GUEST $name SWAP-ERRORS " <<<"$con" | tail -1 | awk '{print $4}')
	check "tmemswap_errors = 0 (${sw:-none})" test "${sw:-x}" = 0
	fallow+=("$name autoballoon: ${f#E2E-DOM0 FALLOW $name } target=${t0}->${t1} toolstack_pages=${pages} ballooned=$(mem_at fallow-full .xen.ballooned_bytes); release: ${r#E2E-DOM0 FALLOW-RELEASE $name }")
}

# pages_in LABEL N: the guest's client's persistent pages in snapshot LABEL-N.
pages_in() {
	snapshots "$1-$2" "$name" | tail -1 | jq --argjson d "$domid" --arg n "$name" \
		"$client_sel | .[0].pages.persistent // -1" 2>/dev/null
}

# check_kills: at each of the guest's kill points dom0 killed tmemd with
# SIGKILL and started it again on its arena (issue 15): it came back, the
# guest reconnected with its pages, its persistent pages went on from
# where they were, and the guest saw no I/O error (its workload's own
# checksums are checked above).
check_kills() {
	local plan k line before after rec pr
	plan=$(grep -a "^E2E-DOM0 KILL-PLAN $name " <<<"$lines" | tail -1 | awk '{print $4}')
	[[ ${plan:-0} =~ ^[0-9]+$ ]] && (( plan > 0 )) || return 0
	for ((k = 1; k <= plan; k++)); do
		line=$(grep -a "^E2E-DOM0 KILL $name n=$k " <<<"$lines" | tail -1)
		check "kill -9 #$k of tmemd mid-workload (${line#E2E-DOM0 KILL $name })" test -n "$line"
		check "  tmemd started again on its arena" grep -q ' restarted=yes ' <<<"$line"
		check "  the domain reconnected with its pages" grep -q ' reconnected=yes ' <<<"$line"
		before=$(pages_in pre-kill $k) after=$(pages_in post-kill $k)
		rec=$(snapshots "post-kill-$k" "$name" | tail -1 | jq '.restart.persistent_pages_recovered // -1' 2>/dev/null)
		check "  persistent pages went on: ${before:-?} before, ${after:-?} after (>= 90%), ${rec:-?} recovered (>= 90%)" \
			test "${before:--1}" -gt 0 -a "$(( ${after:--1} * 10 ))" -ge "$(( ${before:-0} * 9 ))" -a "$(( ${rec:--1} * 10 ))" -ge "$(( ${before:-0} * 9 ))"
	done
	pr=$(counter "$name" "${phases##* }" pools_resumed)
	check "the guest took its pools back after every kill (pools_resumed ${pr:-none} >= $plan)" test "${pr:-0}" -ge "$plan"
	if (( plan == 1 )); then
		line=$(grep -a "^E2E-DOM0 DESTROYED-WHILE-DOWN $name " <<<"$lines" | tail -1)
		check "xl destroy while tmemd was down, then a restart freed its pages (${line#E2E-DOM0 DESTROYED-WHILE-DOWN $name })" \
			grep -q 'restarted=yes .*freed the pages of 1 domain gone since the last run' <<<"$line"
	fi
	check "no I/O errors in the guest's kernel log" \
		bash -c '! grep -qiE "I/O error|Read-error on swap|Write-error on swap|Bad swap" <<<"$1"' _ "$con"
	kills+=("$name:$plan")
}

# check_moves: at each of the guest's move points dom0 saved and restored
# it, or migrated it to this host (issue 25): both xl steps succeeded, the
# guest came back as a new domain, tmemd parked exactly as many persistent
# pages as the new domain claimed, and (save-kill) a kill -9 of tmemd
# while they were parked lost none.  The workload's checksums are checked
# above.
check_moves() {
	local plan k line op parked claimed
	plan=$(grep -a "^E2E-DOM0 MOVE-PLAN $name " <<<"$lines" | tail -1 | awk '{print $4}')
	[[ ${plan:-0} =~ ^[0-9]+$ ]] && (( plan > 0 )) || return 0
	for ((k = 1; k <= plan; k++)); do
		line=$(grep -a "^E2E-DOM0 MOVE $name n=$k " <<<"$lines" | tail -1)
		check "move #$k (${line#E2E-DOM0 MOVE $name })" test -n "$line"
		op=$(grep -oE ' op=[a-z-]+' <<<"$line" | cut -d= -f2)
		parked=$(grep -oE ' parked=[0-9a-z]+' <<<"$line" | cut -d= -f2)
		claimed=$(grep -oE ' claimed=[0-9a-z]+' <<<"$line" | cut -d= -f2)
		check "  xl ${op:-?} succeeded" grep -q ' rc=0/0 ' <<<"$line"
		check "  a new domain went on with the guest" \
			bash -c '[[ $1 =~ old=([0-9]+)\ new=([0-9]+) ]] && [[ ${BASH_REMATCH[1]} != "${BASH_REMATCH[2]}" ]]' _ "$line"
		check "  tmemd parked ${parked:-?} persistent pages and the new domain claimed ${claimed:-?}: all" \
			test "${parked:-x}" -gt 0 -a "${parked:-x}" = "${claimed:-y}"
		[[ $op == save-kill ]] && check "  tmemd killed with SIGKILL while they were parked, and back" \
			grep -q "^E2E-DOM0 KILLED-WHILE-PARKED $name " <<<"$lines"
		moves+=("$name#$k:$op:took=$(grep -oE 'took=[0-9.]+' <<<"$line" | cut -d= -f2)s,waited=$(grep -oE 'waited=[0-9.]+' <<<"$line" | cut -d= -f2)s,pages=${claimed:-?}")
	done
	check "the guest took its pools back after every kill and move (pools_resumed ${res:-none} >= $(( plan + ${kplan:-0} )))" \
		test "$(counter "$name" "${phases##* }" pools_resumed)" -ge "$(( plan + ${kplan:-0} ))"
}

# check_compression: what tmemd's stats said of the guest's pages while it
# held them (issue 16): its compress setting (the default, lz4) and the
# compression ratio, which must reach 1.5 when its workload wrote
# half-compressible pages (-z); sets cz and zratio for the summary.
check_compression() {
	local snap zip
	snap=$(snapshots hold "$name" | tail -1)
	cz=$(jq -r --argjson d "$domid" --arg n "$name" "$client_sel | .[0].compress // \"none\"" <<<"$snap" 2>/dev/null)
	zratio=$(jq -r --argjson d "$domid" --arg n "$name" \
		"$client_sel | .[0].compression.compression_ratio // 0 | . * 100 | floor / 100" <<<"$snap" 2>/dev/null)
	zip=$(grep -a "^E2E-WORKLOAD-START tag=$name-p1 " <<<"$con" | tail -1 | grep -oE 'zip=[01]' | cut -d= -f2)
	check "tmemd stored its pages with compress=${cz:-?} (lz4, the default), ratio ${zratio:-?}" test "${cz:-}" = lz4
	[[ $zip == 1 ]] || return 0
	check "half-compressible pages: tmemd's compression ratio ${zratio:-?} >= 1.5" \
		awk -v r="${zratio:-0}" 'BEGIN { exit !(r + 0 >= 1.5) }'
}

# tier_max KEY: the most .pool.tier.KEY over the guest's snapshots (its
# counters start again at a kill -9; uses name).
tier_max() {
	local l
	for l in run hold; do snapshots "$l" "$name"; done |
		jq -s "[.[] | .pool.tier.$1 // 0] | max // 0" 2>/dev/null
}

# check_tier: issue 29's e2e case (dom0-init.sh, restart_tier): a 48 MiB
# pool under the guest's 512 MiB of swap, a host tier on dom0's spare
# disk; its pages were spilled there and read back, none failed (the
# workload's own check is that every page came back right).
check_tier() {
	local t sp rb pg rerr werr hold p50 p99
	t=$(grep -a "^E2E-DOM0 TMEMD-TIER " <<<"$lines" | tail -1)
	check "tmemd restarted with a 48 MiB pool and a host tier (${t#E2E-DOM0 TMEMD-TIER })" \
		grep -q 'restarted=yes' <<<"$t"
	sp=$(tier_max spilled_pages) rb=$(tier_max readbacks) pg=$(tier_max pages)
	rerr=$(tier_max read_errors) werr=$(tier_max write_errors)
	check "the host tier took the guest's pages: ${sp:-?} spilled, at most ${pg:-?} there at once" gt0 "${sp:-0}"
	check "gets read pages back from the tier: ${rb:-?}" gt0 "${rb:-0}"
	check "no read or write error in the tier (${rerr:-?}, ${werr:-?})" test "${rerr:-x}${werr:-x}" = 00
	hold=$(snapshots hold "$name" | tail -1)
	p50=$(jq '.pool.tier.readback_p50_ns // 0 | . / 1000 | floor' <<<"$hold" 2>/dev/null)
	p99=$(jq '.pool.tier.readback_p99_ns // 0 | . / 1000 | floor' <<<"$hold" 2>/dev/null)
	tiered+=("$name pool=48M spilled=${sp:-?} readbacks=${rb:-?} max_in_tier=${pg:-?} readback_p50_us=${p50:-?} p99_us=${p99:-?}")
}

# check_cleancache, for the pv-cleancache guest, and the ephemeral checks
# it shares with check_readcache.
. "$(dirname "$0")/check-cleancache.sh"

sum_stores=0 sum_loads=0 sum_errors=0 nguests=0 summary=() kills=() moves=() fallow=() tiered=()
while read -r name type kernel mode quota disk; do
	[[ -n $name ]] || continue
	nguests=$((nguests + 1))
	q=; [[ $quota == 1 ]] && q=", quota"; [[ $quota == eph ]] && q=", ephemeral quota"
	[[ $quota == fallow ]] && q=", elastic pool and ephemeral quota"
	[[ $quota == tier ]] && q=", 48 MiB pool over a host tier"
	echo "guest $name ($type, $kernel kernel, $mode$q):"
	domid=$(grep -a "^E2E-DOM0 DOMID $name " <<<"$lines" | awk '{print $4}')
	check "created (domid ${domid:-none})" test -n "$domid"
	domid=${domid:--1}
	con=$(console "$name")
	check "console log came back" test -n "$con"
	check "tmem_shim.ko loaded" grep -q "^E2E-GUEST $name SHIM-LOADED" <<<"$con"
	check "shim connected to tmemd" grep -q "^E2E-GUEST $name CONNECTED" <<<"$con"
	# Not a pipe: fail must count in this shell.
	while read -r l; do fail "$l"; done < <(grep -a "^E2E-GUEST $name FAIL" <<<"$con")
	if [[ $mode == readcache ]]; then
		check_readcache
		check_gone ephemeral
		continue
	fi
	if [[ $mode == cleancache ]]; then
		check_cleancache
		check_gone ephemeral
		continue
	fi
	check "swap on" grep -q "^E2E-GUEST $name SWAP /dev/" <<<"$con"
	phases="p1"; [[ $quota == 1 ]] && phases="p1 p2"
	errs=0
	for p in $phases; do
		wl=$(grep -a "^E2E-WORKLOAD tag=$name-$p " <<<"$con" | tail -1)
		e=$(grep -oE 'errors=[0-9]+' <<<"$wl" | cut -d= -f2)
		check "workload $p completed, 0 checksum errors (${wl#E2E-WORKLOAD })" test "${e:-x}" = 0
		errs=$((errs + ${e:-0}))
	done
	if [[ $mode == tmemswap ]]; then skey=tmemswap_tmem_writes lkey=tmemswap_tmem_reads fkey=tmemswap_backing_writes
	else skey=succ_stores lkey=loads fkey=failed_stores; fi
	st=$(counter "$name" p1 $skey) ld=$(counter "$name" p1 $lkey)
	check "guest $skey > 0 (${st:-none})" gt0 "$st"
	check "guest $lkey > 0 (${ld:-none})" gt0 "$ld"
	gerr=$(counter "$name" p1 tmemswap_errors)
	[[ $mode == tmemswap ]] && check "guest tmemswap_errors = 0 (${gerr:-none})" test "${gerr:-x}" = 0

	# tmemd's view while the guest ran, and after xl destroy.
	maxp=$(max_pages persistent run hold)
	check "tmemctl stats shows the client with persistent pages (max ${maxp:-0})" gt0 "${maxp:-0}"
	held=$(max_pages persistent hold)
	check "client holds persistent pages just before xl destroy (${held:-0})" gt0 "${held:-0}"
	check_compression
	check_gone persistent
	[[ $quota == tier ]] && check_tier
	if [[ $quota == 1 ]]; then
		q=$(grep -a "^E2E-DOM0 QUOTA $name " <<<"$lines" | tail -1)
		check "tmemctl set $domid --persistent-max 4M succeeded (${q#E2E-DOM0 QUOTA })" grep -q ' rc=0 ' <<<"$q "
		f0=$(snapshots pre-quota "$name" | tail -1 | jq --argjson d "$domid" --arg n "$name" "$client_sel | .[0] | $failed_sum" 2>/dev/null)
		f1=$(snapshots hold "$name" | tail -1 | jq --argjson d "$domid" --arg n "$name" "$client_sel | .[0] | $failed_sum" 2>/dev/null)
		check "tmemd failed puts grew under the quota (${f0:-?} -> ${f1:-?})" \
			test "${f1:-0}" -gt "${f0:-0}" 2>/dev/null
		g1=$(counter "$name" p1 $fkey) g2=$(counter "$name" p2 $fkey)
		check "guest $fkey grew under the quota (${g1:-?} -> ${g2:-?})" test "${g2:-0}" -gt "${g1:-0}" 2>/dev/null
	fi
	check_kills
	kplan=$(grep -a "^E2E-DOM0 KILL-PLAN $name " <<<"$lines" | tail -1 | awk '{print $4}')
	res=$(counter "$name" "${phases##* }" pools_resumed)
	check_moves
	st2=$(counter "$name" "${phases##* }" $skey) ld2=$(counter "$name" "${phases##* }" $lkey)
	# Doorbells per request: what each ring op costs in VM exits.
	kicks=$(counter "$name" "${phases##* }" ring_kicks) posted=$(counter "$name" "${phases##* }" ring_posted)
	sum_stores=$((sum_stores + ${st2:-0})); sum_loads=$((sum_loads + ${ld2:-0})); sum_errors=$((sum_errors + errs))
	summary+=("$(printf '  %-14s %-4s %-9s stores=%-8s loads=%-8s errors=%s kicks=%s/%s %s=%s' "$name" "$type" "$mode" \
		"${st2:-?}" "${ld2:-?}" "$errs" "${kicks:-?}" "${posted:-?}" "${cz:-?}" "${zratio:-?}")")
done <<<"$GUESTS"

# Issue 28, point 2: tmemd in a memory-limited cgroup, a hog beside it.
cgl=$(grep -a '^E2E-DOM0 CGROUP ' <<<"$lines" | tail -1)
if grep -q 'e2e.cgroup=0' <<<"${E2E_DOM0_EXTRA:-}"; then
	echo "cgroup case: not run (e2e.cgroup=0)"
else
	echo "cgroup case (dom0, memory.max 512M): ${cgl#E2E-DOM0 CGROUP }"
	cgv() { grep -oE "(^| )$1=[^ ]+" <<<"$cgl" | head -1 | cut -d= -f2; }
	check "cgroup: the hog ran to the end, nothing OOM-killed (hog_rc=$(cgv hog_rc), oom_kills=$(cgv oom_kills), tmemd alive=$(cgv tmemd_alive))" \
		test "$(cgv hog_rc)" = 0 -a "$(cgv oom_kills)" = 0 -a "$(cgv tmemd_alive)" = yes
	check "cgroup: tmemd's target fell within 5 s of the hog ($(cgv fell_s) s; $(cgv target_before) -> $(cgv target_low))" \
		awk -v s="$(cgv fell_s)" 'BEGIN { exit !(s != "none" && s + 0 <= 5) }'
	check "cgroup: the target grew back after the hog ($(cgv grew_s) s, to $(cgv target_after))" \
		test "$(cgv grew_s)" != none
	check "cgroup: dom0's own tmemd, outside the cgroup, grew back too ($(cgv main_grew_s) s after the hog, $(cgv main_before) -> $(cgv main_after))" \
		test "$(cgv main_grew_s)" != none
	check "cgroup: every persistent page came back right (pers=$(cgv pers) missing=$(cgv missing) wrong=$(cgv wrong))" \
		test "$(cgv fill_rc)" = 0 -a "$(cgv missing)" = 0 -a "$(cgv wrong)" = 0
fi

grep -aq '^E2E-DOM0 ALL-DONE' <<<"$lines" && pass "dom0 finished" || fail "dom0 did not finish (see $log)"
grep -aq '^E2E-DOM0 TMEMD-UP' <<<"$lines" && pass "tmemd --transport xen started in dom0" || fail "tmemd --transport xen did not start in dom0"
grep -aq '^E2E-DOM0 TMEMD-ALIVE yes' <<<"$lines" && pass "tmemd still alive at the end" || fail "tmemd not alive at the end"
# dom0's own programs (tmemd, tmemctl, xl, busybox) must not crash: with the
# default QEMU CPU model none does, so a crash is news (tmemctl's most of all).
crashed=$(grep -aE '^E2E-DOM0-DMESG .*(segfault|traps:)' <<<"$lines" || true)
check "no program crashed in dom0 ($(grep -c . <<<"$crashed"))" test -z "$crashed"
[[ -z $crashed ]] || head -5 <<<"$crashed" | sed 's/^/        /'

echo "summary:"
printf '%s\n' "${summary[@]}"
echo "  moves: ${moves[*]:-none}"
echo "  fallow: ${fallow[*]:-none}"
echo "  tier: ${tiered[*]:-none}"
echo "  guests=$nguests stores=$sum_stores loads=$sum_loads errors=$sum_errors kills=${kills[*]:-none} failed_checks=$fails wall=${WALL:-?}s"
((fails == 0))
