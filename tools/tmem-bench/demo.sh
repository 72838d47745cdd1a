#!/bin/bash
# make demo: tmemd with the local transport and a small pool in a temp
# runtime dir, four simulated guests with different quotas, tmemd's
# stats as JSON, then a clean stop (SIGTERM, exit status 0).
set -euo pipefail
BUILD=${BUILD:-build}
GUEST=$BUILD/tmem-demo-guest
UUID=3f1c2a5e-8d4b-4e61-9a7f-0c2d5e6f7a81
guests=()
. "$(dirname "$0")/tmemd-run.sh"
stop_guests() { for p in "${guests[@]}"; do kill "$p" 2>/dev/null || true; done; }
extra_cleanup=stop_guests

cat >"$run/tmemd.conf" <<CONF
# The demo's quotas and shared-pool authorisations come from the config:
# defaults plus one [client NAME] section per guest (tmemctl set and
# tmemctl shared-auth can change them at run time).
[tmemd]
memory = 64M
transport = local
workers = 2

[defaults]
ephemeral-max = 16M
persistent-max = 16M

[client cleancache-vm1]
ephemeral-max = 2M
weight = 100

[client frontswap-vm2]
persistent-max = 4M
weight = 200

[client shared-vm3a]
shared-auth = $UUID

[client shared-vm3b]
shared-auth = $UUID
CONF

echo "== tmemd.conf"
cat "$run/tmemd.conf"
echo "== starting tmemd (runtime dir $run)"
start_tmemd -c "$run/tmemd.conf" --foreground

guest() { # name kind pages [uuid]
	TMEM_DEMO_READY="$run/ready.$1" "$GUEST" "$run/guest.sock" "$@" &
	guests+=($!)
}
wait_ready() {
	for _ in $(seq 200); do [[ -e "$run/ready.$1" ]] && return 0; sleep 0.05; done
	echo "guest $1 did not finish"; exit 1
}

echo "== guests"
guest cleancache-vm1 cleancache 2048       # 8 MiB of page cache into a 2 MiB quota
guest frontswap-vm2 frontswap 2048         # 8 MiB of swap into a 4 MiB quota
guest shared-vm3a shared-put 256 "$UUID"
wait_ready cleancache-vm1; wait_ready frontswap-vm2; wait_ready shared-vm3a
guest shared-vm3b shared-get 256 "$UUID"
wait_ready shared-vm3b
sleep 0.2

echo "== tmemd stats (SIGUSR1 -> $run/stats.json)"
rm -f "$run/stats.json"
kill -USR1 "$tmemd_pid"
for _ in $(seq 100); do [[ -e "$run/stats.json" ]] && break; sleep 0.05; done
cat "$run/stats.json"

echo "== stopping guests"
status=0
for p in "${guests[@]}"; do kill -TERM "$p"; wait "$p" || status=1; done
guests=()
[[ $status == 0 ]] || { echo "a guest failed"; exit 1; }

echo "== stopping tmemd (SIGTERM)"
stop_tmemd
echo "== tmemd log"
cat "$run/tmemd.log"
echo "== tmemd stopped cleanly (exit 0)"
