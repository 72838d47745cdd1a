#!/bin/bash
# Judge a make e2e-xen-migrate run (issue 27, point 2) from the serial logs
# of its two hosts: each assertion printed PASS/FAIL, then a summary.
# Exit 0 only if all passed.
#
# usage: check-migrate.sh SERIAL_A SERIAL_B   with UUID (the guest's) and
# PWAIT (its persist_wait_ms) in the environment; WALL and QEMU_S
# (seconds) for the summary.
set -uo pipefail
: "${UUID:?}" "${PWAIT:?}"
G=pvh-mig
fails=0
pass() { echo "  PASS  $*"; }
fail() { echo "  FAIL  $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
gt0() { local v=${1:-0}; [[ $v =~ ^[0-9]+$ ]] && (( v > 0 )); }

# Serial lines come with CRs and may carry (XEN) noise; keep ours.
declare -A lines
lines[a]=$(tr -d '\r' <"${1:?usage: check-migrate.sh SERIAL_A SERIAL_B}" | grep -aoE 'E2E-[A-Z0-9-]+ .*')
lines[b]=$(tr -d '\r' <"${2:?}" | grep -aoE 'E2E-[A-Z0-9-]+ .*')
# dom0 HOST PATTERN: host HOST's last E2E-DOM0 line starting with PATTERN.
dom0() { grep -aE "^E2E-DOM0 $2" <<<"${lines[$1]}" | tail -1; }
# field LINE KEY: KEY=VALUE's value in LINE.
field() { grep -oE "(^| )$2=[^ ]*" <<<"$1" | tail -1 | cut -d= -f2-; }
# The guest's console as both hosts relayed it, "N LINE" (N: its stay, 1
# and 3 on a, 2 and 4 on b), in order.
guest=$(for h in a b; do grep -a "^E2E-LIVE $G s[0-9] " <<<"${lines[$h]}"; done |
	sed -E "s/^E2E-LIVE $G s([0-9]) /\\1 /" | sort -s -n -k1,1)
# glast PATTERN [STAY]: the guest's last line matching PATTERN (in STAY).
glast() { grep -aE "^${2:-[0-9]} $1" <<<"$guest" | tail -1 | cut -d' ' -f2-; }
stay_of() { grep -aE "^[0-9] $1" <<<"$guest" | head -1 | cut -d' ' -f1; }
# snap HOST LABEL JQ: JQ over host HOST's last stats snapshot LABEL ($u: the guest's key).
snap() {
	grep -a "^E2E-STATS $2 $G " <<<"${lines[$1]}" | tail -1 | sed -E 's/^E2E-STATS [^ ]+ [^ ]+ [^ ]+ uptime=[^ ]+ //' |
		jq -r --arg u "uuid:$UUID" "$3" 2>/dev/null
}
cpages='[.clients[]? | select(.client == $u) | .pages.persistent] | add // 0'
ppages='[.parked.list[]? | select(.client == $u) | .pages] | add // 0'

echo "hosts:"
for h in a b; do
	check "host $h: tmemd --transport xen with migration started ($(dom0 $h 'TMEMD-(UP|FAILED)'))" \
		grep -q '^E2E-DOM0 TMEMD-UP' <<<"$(dom0 $h 'TMEMD-(UP|FAILED)')"
done
link=$(dom0 a 'LINK ')
check "the link between the hosts (${link#E2E-DOM0 LINK }; $(dom0 a LINK-RATE | cut -d' ' -f3-))" grep -q ' 0% packet loss' <<<"$link"

echo "guest $G (pvh, stock kernel, /dev/tmemswap0 without a disk, uuid $UUID):"
check "created on a ($(dom0 a DOMID))" grep -qE "DOMID $G [0-9]+" <<<"$(dom0 a DOMID)"
check "shim connected to a's tmemd" test -n "$(glast "E2E-GUEST $G CONNECTED" 1)"
check "swap on /dev/tmemswap0" test -n "$(glast "E2E-GUEST $G SWAP /dev/tmemswap0" 1)"
while read -r l; do [[ -n $l ]] && fail "$l"; done < <(grep -a " E2E-GUEST $G FAIL" <<<"$guest")
wl=$(glast "E2E-WORKLOAD tag=$G-p1 ")
check "workload completed, 0 checksum errors (${wl#E2E-WORKLOAD })" test "$(field "$wl" errors)" = 0
v0=$(stay_of "E2E-WORKLOAD-PROGRESS tag=$G-p1 verify ") vend=$(stay_of "E2E-WORKLOAD tag=$G-p1 ")
check "its verify pass began on a (stay ${v0:-none}) and ended after both moves (stay ${vend:-none}): both in its middle" \
	test "${v0:-0}" = 1 -a "${vend:-0}" -ge 3
# Its counters when it held its pages (before the move without tmemd).
c=$(grep -aE "^[0-9] E2E-COUNTERS $G p1 " <<<"$guest" | head -1 | cut -d' ' -f2-)
check "no swap I/O error through both moves (tmemswap_errors=$(field "$c" tmemswap_errors), reads=$(field "$c" tmemswap_tmem_reads))" \
	test "$(field "$c" tmemswap_errors)" = 0
pr=$(field "$c" pools_resumed)
check "the shim took its pools back after each move (pools_resumed ${pr:-none} >= 2)" test "${pr:-0}" -ge 2

# move_ok N SRC DST: a live migration with the pages following the guest.
moves=()
move_ok() {
	local n=$1 s=$2 d=$3 m arr dst src pre got out sent bytes secs stall took
	echo "move $n: $s -> $d"
	m=$(dom0 "$s" "MOVE n=$n ")
	check "xl migrate $s -> $d (${m#E2E-DOM0 })" test "$(field "$m" rc)" = 0
	arr=$(dom0 "$d" "ARRIVED n=$n ")
	check "the guest went on at $d (${arr#E2E-DOM0 })" test -n "$arr"
	dst=$(dom0 "$d" "DEST n=$n ")
	check "its client attached to $d's tmemd ($(cut -d' ' -f3-7 <<<"${dst#E2E-DOM0 }"))" \
		test "$(field "$dst" attached)" = yes
	pre=$(snap "$s" "pre-move-$n" "$cpages")
	got=$(snap "$d" "dst-after-move-$n" "$cpages")
	check "  $d's tmemd holds its persistent pages: ${got:-?} (it had ${pre:-?} on $s before the move)" gt0 "$got"
	out=$(snap "$d" "dst-after-move-$n" '.migrate.transfers.in')
	got=$(snap "$d" "dst-after-move-$n" '.migrate.received.pages')
	bytes=$(snap "$d" "dst-after-move-$n" '.migrate.received.bytes')
	secs=$(snap "$d" "dst-after-move-$n" '.migrate.received.transfer_seconds')
	check "  $d pulled them from $s: transfers_in=${out:-?} pages_received=${got:-?} bytes_received=${bytes:-?} transfer_s=${secs:-?}" \
		gt0 "$got"
	src=$(dom0 "$s" "SOURCE n=$n ")
	out=$(snap "$s" "src-after-move-$n" '.migrate.transfers.out')
	sent=$(snap "$s" "src-after-move-$n" '.migrate.sent.pages')
	check "  $s's tmemd holds none of its pages afterwards ($(cut -d' ' -f2-8 <<<"${src#E2E-DOM0 }"))" \
		test "$(field "$src" freed)" = yes -a "$(snap "$s" "src-after-move-$n" "$cpages")/$(snap "$s" "src-after-move-$n" "$ppages")/$(snap "$s" "src-after-move-$n" '.pool.persistent_pages')" = 0/0/0
	check "  $s sent them: transfers_out=${out:-?} pages_sent=${sent:-?}" gt0 "$sent"
	# The time the guest waited: its verify pass's gaps between two pages
	# (CLOCK_BOOTTIME: the suspend counts) at the first place it stalled in
	# its next stay: the stop-and-copy, then the wait for the pull.
	local at
	at=$(grep -aE "^$((n + 1)) E2E-WORKLOAD-STALL tag=$G-p1 " <<<"$guest" | head -1 | grep -oE 'at_mib=[0-9]+')
	stall=$([[ -n $at ]] && grep -aE "^$((n + 1)) E2E-WORKLOAD-STALL tag=$G-p1 $at " <<<"$guest" |
		grep -oE ' s=[0-9.]+' | cut -d= -f2 | paste -sd+ | sed 's/+/ + /g')
	[[ $stall == *+* ]] && stall="$stall = $(awk "BEGIN { printf \"%.1f\", $stall }")"
	took=$(field "$m" took)
	echo "        pages moved: ${got:-?} (${bytes:-?} bytes as stored, in ${secs:-?} s); xl migrate took ${took:-?} s; the guest waited ${stall:-?} s (${at:-no stall})"
	moves+=("#$n $s->$d: pages=${got:-?} bytes=${bytes:-?} pull_s=${secs:-?} xl_migrate_s=${took:-?} guest_waited_s=[${stall:-?}]")
}
move_ok 1 a b
move_ok 2 b a

echo "move 3: a -> b, b's tmemd stopped"
check "b's tmemd stopped before the move ($(dom0 b TMEMD-STOPPED))" test -n "$(dom0 b TMEMD-STOPPED)"
mc=$(dom0 a "MIGRATE-CHECK n=3 ")
check "tmemctl migrate-check on a said the pages cannot follow (${mc#E2E-DOM0 MIGRATE-CHECK n=3 })" \
	bash -c '[[ $1 =~ rc=[1-9] ]]' _ "$mc"
m=$(dom0 a "MOVE n=3 ")
check "xl migrate a -> b (${m#E2E-DOM0 })" test "$(field "$m" rc)" = 0
check "the guest went on at b ($(dom0 b "ARRIVED n=3 "))" test -n "$(dom0 b "ARRIVED n=3 ")"
rv=$(glast "E2E-WORKLOAD-REVERIFY tag=$G-p1 " 4)
check "its re-read at b failed with I/O errors (${rv#E2E-WORKLOAD-REVERIFY })" gt0 "$(field "$rv" io_errors)"
check "  and never returned wrong data: 0 checksum errors in the $(field "$rv" read) pages read" \
	test "$(field "$rv" errors)" = 0
io=$(grep -aE "^4 E2E-WORKLOAD-IOERR " <<<"$guest" | grep -oE 'after_s=[0-9.]+' | cut -d= -f2 | tr '\n' ' ')
check "  each failed after the shim's wait, persist_wait_ms=$PWAIT (waits: ${io:-none}s)" \
	awk -v w="${io:-0}" -v p="$PWAIT" 'BEGIN { exit !(split(w, a, " ") > 0 && a[1] * 1000 >= p * 0.9) }'
se=$(glast "E2E-GUEST $G SWAP-ERRORS" 4 | awk '{print $4}')
rd=$(grep -acE "^4 .*(Read-error on swap|I/O error)" <<<"$guest")
check "  the guest's kernel reported them (tmemswap_errors ${se:-?}, $(field "$c" tmemswap_errors) before the move; ${rd} I/O error lines)" \
	test "${se:-0}" -gt "$(field "$c" tmemswap_errors)"
pre=$(snap a pre-move-3 "$cpages")
pk=$(snap a src-end-3 "$ppages")
check "its pages stayed parked on a: ${pk:-?} parked at the end, it had ${pre:-?} there before the move" \
	test "${pk:-0}" -gt 0 -a "${pk:-x}" = "${pre:-y}"
grep -a "^E2E-LISTA end-3 " <<<"${lines[a]}" | sed 's/^E2E-LISTA end-3 /        a$ tmemctl list -a: /'

echo "teardown:"
for h in a b; do
	check "host $h: dom0 finished" grep -aq '^E2E-DOM0 ALL-DONE' <<<"${lines[$h]}"
	crashed=$(grep -aE '^E2E-DOM0-DMESG .*(segfault|traps:)' <<<"${lines[$h]}" || true)
	check "host $h: no program crashed in dom0 ($(grep -c . <<<"$crashed"))" test -z "$crashed"
done
check "a's tmemd alive at the end" grep -aq '^E2E-DOM0 TMEMD-ALIVE yes' <<<"${lines[a]}"

echo "summary:"
printf '  move %s\n' "${moves[@]}"
echo "  move #3 a->b without tmemd: ${rv#E2E-WORKLOAD-REVERIFY } parked_on_a=${pk:-?}"
echo "  workload: ${wl#E2E-WORKLOAD }"
echo "  failed_checks=$fails wall=${WALL:-?}s qemu=${QEMU_S:-?}s"
((fails == 0))
