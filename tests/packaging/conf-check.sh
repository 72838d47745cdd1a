#!/bin/bash
# The shipped tmemd.conf must parse, as shipped and with every key
# uncommented (so its examples are real keys with good values): tmemd
# starts with it, opens guest.sock, and stops cleanly on SIGTERM.
#   usage: conf-check.sh TMEMD [CONF]   (default systemd/tmemd.conf)
set -euo pipefail
tmemd=${1:?usage: conf-check.sh TMEMD [CONF]}
conf=${2:-systemd/tmemd.conf}
tmp=$(mktemp -d)
# The arena must be on tmpfs; the example's path is swapped for this one.
arena=/dev/shm/conf-check-arena.$$
pid=
trap '[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp" "$arena"' EXIT

try() { # name, config file
	mkdir "$tmp/run-$1"
	"$tmemd" --foreground --transport local --runtime-dir "$tmp/run-$1" \
		--memory 16M -c "$2" 2>"$tmp/$1.log" &
	pid=$!
	for _ in $(seq 100); do
		[[ -S "$tmp/run-$1/guest.sock" ]] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if [[ ! -S "$tmp/run-$1/guest.sock" ]]; then
		cat "$tmp/$1.log"; echo "conf-check: tmemd did not start with the $1 config"; exit 1
	fi
	kill -TERM "$pid"
	wait "$pid" || { cat "$tmp/$1.log"; echo "conf-check: tmemd failed to stop"; exit 1; }
	pid=
}

try shipped "$conf"
# Uncomment "#key = value" and "#[section]" lines; keep runtime-dir ours.
sed -E -e 's/^#([a-z-]+ = )/\1/' -e 's/^#(\[[a-z]+( [^]]+)?\])/\1/' \
	-e "s|^runtime-dir = .*|runtime-dir = $tmp/run-uncommented|" \
	-e "s|^arena = .*|arena = $arena|" -e "s|^spill = .*|spill = $tmp/spill|" \
	"$conf" >"$tmp/uncommented.conf"
n=$(grep -cE '^[a-z-]+ = ' "$tmp/uncommented.conf")
try uncommented "$tmp/uncommented.conf"
echo "conf-check: $conf parses as shipped and with all $n example keys set"
