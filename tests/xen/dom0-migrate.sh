#!/bin/sh
# /init of the two dom0s of make e2e-xen-migrate (run-migrate.sh): host a
# (10.99.0.1) and host b (10.99.0.2), e2e.host=a|b on the dom0 command
# line, linked by a second NIC (a UDP tunnel between the two QEMUs).  Each
# runs tmemd with migrate-key, -name, -listen and -peers set for the other
# host, `xl migrate-receive` behind socat on port 7720, and a one-line
# status of its progress on port 7721 (what the other host waits for).
#
# The guest (the one line of /guest/guests, a PVH guest swapping through
# /dev/tmemswap0 with no disk) moves:
#   1. a -> b, at its verify pass's move point (a's xl migrate);
#   2. b -> a, at the next verify progress b sees (b's xl migrate);
#   3. a -> b again once it holds its pages, after b stopped its tmemd:
#      b then tells the guest "go", and its re-read must fail (I/O
#      errors), never return wrong data, while a keeps the pages parked.
# After each move the source waits for its tmemd to free the guest's pages
# and the destination for the guest's client; both print their stats.
# The guest's console lines are relayed as "E2E-LIVE NAME sN ...", N the
# guest's stay (1 and 3 on a, 2 and 4 on b).  The host (check-migrate.sh)
# judges from both serial logs.
. /dom0-boot.sh
dom0_boot 1400m
HOST=$(sed -n 's/.*e2e\.host=\([ab]\).*/\1/p' /proc/cmdline)
MTU=$(sed -n 's/.*e2e\.mtu=\([0-9]*\).*/\1/p' /proc/cmdline)
if [ "$HOST" = a ]; then ME=10.99.0.1 PEER=10.99.0.2; else ME=10.99.0.2 PEER=10.99.0.1; fi
say "HOST $HOST me=$ME peer=$PEER"
ip link set lo up
# A large MTU: the tunnel has no offloads, so each frame costs the
# emulated CPUs a trip through both network stacks.
ip link set eth0 mtu ${MTU:-1500} && ip link set eth0 up && ip addr add $ME/24 dev eth0 ||
	say "NET-FAILED $(ip link 2>&1 | tr '\n' ' ')"
dom0_toolstack
read -r G _ </guest/guests
UUID=$(sed -n 's/^uuid = "\(.*\)"/\1/p' /guest/$G.cfg)
MOVE_AT=$(sed -n 's/.*e2e\.moveat=\([0-9]*\).*/\1/p' /proc/cmdline)
# How long a source waits for its tmemd to free the guest's pages.
FREE_WAIT=$(sed -n 's/.*e2e\.freewait=\([0-9]*\).*/\1/p' /proc/cmdline)
say "GUEST $G uuid=$UUID move_at=${MOVE_AT}MiB"

# tmemd.conf(5): the key file is the same on both hosts (run-migrate.sh
# writes it, mode 0600 as tmemd wants).
mkdir -p /etc/tmemd
chmod 600 /etc/tmemd/migrate.keys
cat >/etc/tmemd/tmemd.conf <<EOC
[tmemd]
migrate-key = /etc/tmemd/migrate.keys
migrate-name = host$HOST
migrate-listen = $ME:7719
migrate-peers = $PEER:7719
EOC
TMEMD_BIN=tmemd
TMEMD_ARGS="-c /etc/tmemd/tmemd.conf --transport xen --runtime-dir /run/tmemd --state-dir /run/tmemd \
	--memory 384M --arena /dev/shm/tmemd.arena --verbose"
if start_tmemd; then
	say "TMEMD-UP pid=$(cat /run/e2e/tmemd.pid)"
else
	say "TMEMD-FAILED (tmemd --transport xen did not come up)"
	sed 's/^/E2E-TMEMD-LOG /' /run/tmemd.log
fi

# The other host's progress: this host's in /run/e2e/state, served on 7721.
state() { echo "$1" >/run/e2e/state; say "STATE $1 uptime=$(up)"; }
state booting
socat TCP-LISTEN:7720,reuseaddr,fork EXEC:"xl migrate-receive" 2>>/run/e2e/receive.log &
socat TCP-LISTEN:7721,reuseaddr,fork SYSTEM:"cat /run/e2e/state" 2>/dev/null &
[ "$HOST" = b ] && socat -u TCP-LISTEN:7722,reuseaddr /dev/null &   # LINK-RATE below
peer_state() { socat -T 5 -u TCP:$PEER:7721,connect-timeout=3 STDOUT 2>/dev/null; }

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds; a heartbeat
# every minute (run-migrate.sh stops a QEMU whose serial log is silent for
# 5 minutes), and "abort" from the other host ends it.  1 on timeout.
wait_for() {
	secs=$1 what=$2; shift 2
	t0=$(up) beat=0
	while ! "$@"; do
		el=$(echo "$(up) $t0" | awk '{printf "%d", $1 - $2}')
		[ "$el" -ge "$secs" ] && { say "TIMEOUT $what after ${el}s"; return 1; }
		[ "$(peer_state)" = abort ] && { say "PEER-ABORTED while waiting for $what"; return 1; }
		[ $((el / 60)) -gt $beat ] && { beat=$((el / 60)); say "WAITING $what ${el}s"; }
		relay
		sleep 1
	done
	relay
}
peer_is() { [ "$(peer_state)" = "$1" ]; }

STINT=0 shown=0
# relay: the guest's new console lines, live on the serial console, tagged
# with its stay (a log that shrank was started again).
relay() {
	n=$(conlog $G | wc -l)
	[ "$n" -lt "$shown" ] && shown=0
	[ "$n" -gt "$shown" ] || return 0
	conlog $G | sed -n "$((shown + 1)),${n}p" | tr -d '\r' |
		grep -aE '^E2E-|^\[ *[0-9.]+\] ' | grep -av 'ACPI Error' | sed "s/^/E2E-LIVE $G s$STINT /"
	shown=$n
}
# seen PATTERN: the guest printed PATTERN during this stay here.
seen() { conlog $G | tail -n +$((STINT_FROM + 1)) | grep -aqE "$1"; }
here() { xl domid $G >/dev/null 2>&1; }
# jstats FILTER: jq FILTER over this tmemd's stats ($U: the guest's uuid).
jstats() { $TMEMCTL stats --json 2>/dev/null | jq -r --arg u "uuid:$UUID" "$1" 2>/dev/null; }
# Its pages here: as an attached client, and parked.
client_pages() { jstats '[.clients[]? | select(.client == $u) | .pages.persistent] | add // 0'; }
parked_pages() { jstats '[.parked.list[]? | select(.client == $u) | .pages] | add // 0'; }
attached() { [ -n "$(jstats '.clients[]? | select(.client == $u) | .client')" ]; }
parked() { [ -n "$(jstats '.parked.list[]? | select(.client == $u) | .client')" ]; }
# freed: this tmemd holds nothing of the guest (the source after a move):
# no client, nothing parked for its uuid, and no persistent page in its
# store at all (the guest is the only one here; pages lent to the other
# host are neither parked nor attached, but still stored until it says it
# has them).
store_pages() { jstats '.pool.persistent_pages // -1'; }
freed() { [ "$(client_pages)/$(parked_pages)/$(store_pages)" = 0/0/0 ] && ! attached && ! parked; }
lista() { $TMEMCTL list -a 2>&1 | sed "s/^/E2E-LISTA $1 /"; }

# move N PEER NEXT: xl migrate this host's guest to PEER; its console
# lines here from then on are of its stay NEXT (its return).
move() {
	relay
	snapshot pre-move-$1 $G "$(xl domid $G)"
	# tmemctl's pre-flight check, for the record (b's tmemd is stopped
	# before move 3: it must say no then).
	$TMEMCTL migrate-check uuid:$UUID $PEER:7719 >/tmp/check-$1.log 2>&1; rc=$?
	say "MIGRATE-CHECK n=$1 rc=$rc $(tr '\n' ' ' </tmp/check-$1.log)"
	t0=$(up)
	# In the background: the guest's lines go on being relayed while it
	# runs here, and the serial log is not silent for long (run-migrate.sh).
	xl migrate -s "" $G "socat - TCP:$PEER:7720" >/tmp/move-$1.log 2>&1 &
	xlpid=$! beat=0
	while kill -0 $xlpid 2>/dev/null; do
		relay; sleep 1; beat=$((beat + 1))
		[ $((beat % 60)) = 0 ] && say "MIGRATING n=$1 ${beat}s"
	done
	wait $xlpid; rc=$?
	t1=$(up)
	relay
	STINT=$3 STINT_FROM=$(conlog $G | wc -l)
	say "MOVE n=$1 from=$HOST rc=$rc took=$(echo "$t1 $t0" | awk '{printf "%.1f", $1 - $2}') at=$t0"
	# xl's account of the stream (its last lines on success).
	if [ $rc = 0 ]; then tail -n 4 /tmp/move-$1.log; else cat /tmp/move-$1.log; fi | sed "s/^/E2E-XL /"
	return $rc
}
# after_move_source N WAIT: until the guest's pages are freed here (at
# most WAIT seconds), then the stats and list -a.
after_move_source() {
	t0=$(up)
	wait_for $2 "source-freed-$1" freed
	say "SOURCE n=$1 host=$HOST freed=$(freed && echo yes || echo no) after=$(echo "$(up) $t0" | awk '{printf "%.1f", $1 - $2}') client_pages=$(client_pages) parked_pages=$(parked_pages) store_pages=$(store_pages) migrate=$(jstats '.migrate | tostring')"
	snapshot src-after-move-$1 $G none
	lista src-$1
}
# arrive N: the guest came here (xl migrate-receive renamed it); until
# its client is attached here, then the stats.
arrive() {
	wait_for 2400 "arrival-$1" here || return 1
	d=$(xl domid $G) t0=$(up)
	say "ARRIVED n=$1 host=$HOST domid=$d uptime=$t0"
	if [ -f /run/e2e/tmemd-stopped ]; then
		say "DEST n=$1 host=$HOST tmemd=stopped"
		return 0
	fi
	wait_for 600 "client-$1" attached
	say "DEST n=$1 host=$HOST attached=$(attached && echo yes || echo no) after=$(echo "$(up) $t0" | awk '{printf "%.1f", $1 - $2}') client_pages=$(client_pages) parked_pages=$(parked_pages) migrate=$(jstats '.migrate | tostring')"
	snapshot dst-after-move-$1 $G $d
	grep -E 'migrate|park|claim' /run/tmemd.log | tail -n 12 | sed "s/^/E2E-TMEMD-LOG $HOST /"
}

finish() {
	echo "E2E-CONSOLE-BEGIN $HOST"
	conlog $G | tr -d '\r' | grep -av 'ACPI Error' | sed "s/^/E2E-CON $HOST /"
	echo "E2E-CONSOLE-END $HOST"
	say "TMEMD-ALIVE $(kill -0 $(cat /run/e2e/tmemd.pid) 2>/dev/null && echo yes || echo no)"
	grep -E 'migrate|park|claim|error|warn' /run/tmemd.log | tail -n 60 | sed "s/^/E2E-TMEMD-LOG $HOST /"
	sed 's/^/E2E-RECEIVE-LOG /' /run/e2e/receive.log | tail -n 20
	dmesg | grep -E 'segfault|traps:|Out of memory|Killed process|BUG|Oops' | sed 's/^/E2E-DOM0-DMESG /'
	say "ALL-DONE uptime=$(up)"
	poweroff -f
}

state ready
wait_for 600 peer-ready eval 'peer_state | grep -qE "ready|run"' || { state abort; finish; }
say "LINK $(ping -c 3 -q $PEER 2>&1 | tail -n 2 | tr '\n' ' ')"
# What the link carries (xl's stream rides on it): 32 MiB a -> b, timed.
if [ "$HOST" = a ]; then
	t0=$(up)
	dd if=/dev/zero bs=1M count=32 2>/dev/null | socat -u - TCP:$PEER:7722,connect-timeout=10; rc=$?
	say "LINK-RATE rc=$rc 32MiB_s=$(echo "$(up) $t0" | awk '{printf "%.1f", $1 - $2}') mtu=$(cat /sys/class/net/eth0/mtu)"
fi

if [ "$HOST" = a ]; then
	state run
	say "CREATE $G uptime=$(up)"
	xl create /guest/$G.cfg >/tmp/xl-create.log 2>&1 || { say "CREATE-FAILED"; sed 's/^/E2E-XL /' /tmp/xl-create.log; }
	STINT=1 STINT_FROM=0
	say "DOMID $G $(xl domid $G)"
	# 1: a -> b during the verify pass.
	wait_for 2400 move-point-1 seen "tag=$G-p1 verify $MOVE_AT MiB" &&
		move 1 $PEER 3 || { state abort; finish; }
	after_move_source 1 $FREE_WAIT
	# 2 is b's; the guest comes back here.
	arrive 2 || { state abort; finish; }
	# 3: a -> b again once the guest holds its pages and b's tmemd is stopped.
	wait_for 1800 hold seen "E2E-GUEST $G WAIT-GO" && wait_for 600 peer-tmemd-stopped peer_is tmemd-stopped &&
		move 3 $PEER 5 || { state abort; finish; }
	sleep 10; relay
	say "PARKED n=3 host=$HOST parked_pages=$(parked_pages) client_pages=$(client_pages)"
	snapshot src-after-move-3 $G none
	lista src-3
	wait_for 1200 peer-done peer_is done
	say "PARKED n=3 host=$HOST at=end parked_pages=$(parked_pages) client_pages=$(client_pages)"
	snapshot src-end-3 $G none
	lista end-3
	state finished
	sleep 5
else
	# 1 arrives from a.
	STINT=2 STINT_FROM=0
	arrive 1 || finish
	# 2: b -> a at the next verify progress line here (or its end).
	wait_for 1800 move-point-2 seen "tag=$G-p1 verify [0-9]+ MiB|E2E-WORKLOAD-HOLD|WAIT-GO" &&
		move 2 $PEER 4 || { state abort; finish; }
	after_move_source 2 $FREE_WAIT
	# The third case: no tmemd here when the guest comes back.
	pid=$(cat /run/e2e/tmemd.pid); kill $pid
	while kill -0 $pid 2>/dev/null; do sleep 0.1; done
	touch /run/e2e/tmemd-stopped
	say "TMEMD-STOPPED pid=$pid"
	state tmemd-stopped
	arrive 3 || finish
	d=$(xl domid $G)
	tty=$(xenstore-read /local/domain/$d/console/tty)
	# "go" until the guest takes it: it reads hvc0 in 10 s turns.
	wait_for 300 guest-go eval 'echo go >$tty; seen "E2E-GUEST $G GO"'
	wait_for 1200 guest-done seen "E2E-GUEST $G DONE"
	relay
	state done
	wait_for 300 peer-finished peer_is finished
fi
finish
