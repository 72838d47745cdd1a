#!/bin/bash
# Installs the built .debs on this machine (as CI does), runs the installed
# tmemd with the local transport (no systemd here), checks it with the
# installed tmemctl and a libtmem client built from the installed -dev
# package, reloads it the way the installed unit's ExecReload does (a held
# client must keep its connection and page, and the edited config must
# apply), runs the notify-protocol test against the installed binary,
# stops it, builds the module with DKMS against every installed kernel's
# headers, and purges the packages again, checking that nothing is left.
# Any failure (the purge's too) exits non-zero.  Needs root.
#   usage: deb-smoke.sh DEBDIR [TEST_NOTIFY]
set -euo pipefail
debs=${1:?usage: deb-smoke.sh DEBDIR [TEST_NOTIFY]}
debs=$(cd "$debs" && pwd)
test_notify=${2:-}
packages=(tmemd libtmem0 libtmem-dev tmem-shim-dkms)
unit=/lib/systemd/system/tmemd.service
tmp=$(mktemp -d)
pid=
hold_pid=
purged=
step() { echo "deb-smoke: $*"; }
fail() { echo "deb-smoke: $*" >&2; exit 1; }

# Purges the packages; fails if one, or a file of theirs, is left.
purge() {
	local left
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${packages[@]}" >"$tmp/purge.log" 2>&1 ||
		{ cat "$tmp/purge.log"; echo "deb-smoke: apt-get purge failed"; return 1; }
	left=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null |
		awk 'substr($2, 2, 1) != "n"' || true)
	left+=$(compgen -G '/usr/src/tmem-shim-*' || true)
	left+=$(compgen -G '/var/lib/dkms/tmem-shim' || true)
	left+=$(compgen -G '/lib/modules/*/updates/dkms/tmem_shim.ko*' || true)
	left+=$(compgen -G '/etc/tmemd' || true)
	[[ -z "$left" ]] || { echo "deb-smoke: left after the purge:"; echo "$left"; return 1; }
	purged=1
}
cleanup() {
	local rc=$?
	[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null
	[[ -n "$hold_pid" ]] && kill -KILL "$hold_pid" 2>/dev/null
	[[ -n "$purged" ]] || purge || rc=1
	rm -rf "$tmp"
	((rc)) && echo "deb-smoke: FAILED" >&2
	exit $rc
}
trap cleanup EXIT

# A run that died half-way may have left the packages: start clean.
if dpkg-query -W -f='${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null | grep -qv '^.n'; then
	step "purging a previous run's packages"
	purge
fi

step "installing ${packages[*]}"
files=()
for p in "${packages[@]}"; do
	f=("$debs/${p}_"*.deb)
	[[ -f "${f[0]}" ]] || fail "no $p .deb in $debs (make debs)"
	files+=("${f[0]}")
done
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	"${files[@]}" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "apt-get install failed"; }
for p in "${packages[@]}"; do
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$p") == installed ]] || fail "$p not installed"
done
[[ -f $unit && -f /etc/tmemd/tmemd.conf ]] || fail "no $unit or /etc/tmemd/tmemd.conf"
for m in man1/tmem-bench.1 man4/tmem_shim.4 man5/tmemd.conf.5 man7/tmem.7 man8/tmemctl.8 man8/tmemd.8; do
	[[ -f /usr/share/man/$m.gz ]] || fail "no /usr/share/man/$m.gz"
done
[[ -f /usr/share/bash-completion/completions/tmemctl ]] ||
	fail "no bash completion for tmemctl in the tmemd package"
tests/packaging/completion.sh /usr/share/bash-completion/completions/tmemctl ||
	fail "the installed bash completion does not work"
# ExecReload's /bin/kill is procps'; a minimal system has it only through Depends.
dpkg-query -W -f='${Depends}' tmemd | grep -qw procps || fail "tmemd does not depend on procps"

# The installed unit, with the installed binary and man pages in place now.
step "systemd-analyze verify / security $unit"
out=$(systemd-analyze verify --man=yes "$unit" 2>&1) && [[ -z "$out" ]] ||
	{ echo "$out"; fail "systemd-analyze verify $unit failed"; }
score=$(systemd-analyze security --offline=true --no-pager "$unit" 2>&1 |
	sed -n 's/.*Overall exposure level for tmemd.service: \([0-9.]*\).*/\1/p')
echo "deb-smoke: systemd-analyze security tmemd.service (installed): ${score:-none}"
[[ -n "$score" ]] && awk -v s="$score" 'BEGIN { exit !(s <= 2.5) }' ||
	fail "installed tmemd.service: exposure '${score:-none}' above 2.5"

# An upgrade must be a restart, which keeps the arena memfd in systemd's
# fd store (a stop would drop it): prerm stops tmemd only on remove, and
# postinst restarts it when configuring an upgrade.
step "maintainer scripts: an upgrade restarts tmemd, never stops it"
deb=("$debs"/tmemd_*.deb)
dpkg-deb -e "${deb[0]}" "$tmp/ctrl"
grep -q "deb-systemd-invoke stop 'tmemd.service'" "$tmp/ctrl/prerm" ||
	fail "prerm does not stop tmemd on remove"
grep -B2 "deb-systemd-invoke stop 'tmemd.service'" "$tmp/ctrl/prerm" | grep -q '"$1" = remove' ||
	{ cat "$tmp/ctrl/prerm"; fail "prerm stops tmemd on upgrade (the fd store would drop the pages)"; }
grep -q '_dh_action=restart' "$tmp/ctrl/postinst" ||
	{ cat "$tmp/ctrl/postinst"; fail "postinst does not restart tmemd on upgrade"; }

# The installed config, in a copy the reload step may edit.
conf="$tmp/tmemd.conf"
cp /etc/tmemd/tmemd.conf "$conf"
step "starting /usr/sbin/tmemd --transport local"
run="$tmp/run"
mkdir -m 0755 "$run"
/usr/sbin/tmemd --foreground --transport local --runtime-dir "$run" \
	--config "$conf" --memory 32M 2>"$tmp/tmemd.log" &
pid=$!
for _ in $(seq 100); do
	[[ -S "$run/control.sock" && -S "$run/guest.sock" ]] && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/tmemd.log"; fail "tmemd died"; }
	sleep 0.1
done
[[ -S "$run/control.sock" ]] || { cat "$tmp/tmemd.log"; fail "no control.sock after 10 s"; }

step "a libtmem client built with pkg-config libtmem"
cc -std=gnu11 -Wall -Werror tests/packaging/smoke_client.c \
	$(pkg-config --cflags --libs libtmem) -o "$tmp/smoke_client"
"$tmp/smoke_client" "$run/guest.sock"

step "tmemctl stats"
/usr/bin/tmemctl --socket "$run/control.sock" stats | tee "$tmp/stats.txt"
[[ -s "$tmp/stats.txt" ]] || fail "tmemctl stats printed nothing"

# The unit's own ExecReload, run as systemd would (with $MAINPID).
reload=$(sed -n 's/^ExecReload=[-+!@:]*//p' "$unit")
[[ -n "$reload" ]] || fail "$unit has no ExecReload="
step "reload: ExecReload=$reload, with a client attached"
coproc HOLD { "$tmp/smoke_client" "$run/guest.sock" --hold; }
# bash forgets HOLD's descriptors once it ends: keep copies.
hold_pid=$HOLD_PID
exec {hold_out}<&"${HOLD[0]}" {hold_in}>&"${HOLD[1]}"
read -r -t 10 line <&"$hold_out" && [[ $line == stored ]] ||
	fail "the held client stored no page (got '${line:-}')"
printf '\n[client deb-smoke]\nweight = 300\n' >>"$conf"
MAINPID=$pid bash -c "$reload"
for _ in $(seq 50); do
	grep -q "reloaded $conf" "$tmp/tmemd.log" && break
	sleep 0.1
done
grep -q "reloaded $conf" "$tmp/tmemd.log" || { cat "$tmp/tmemd.log"; fail "tmemd did not reload $conf"; }
kill -0 "$pid" 2>/dev/null || fail "tmemd died on reload"
/usr/bin/tmemctl --socket "$run/control.sock" list | tee "$tmp/list.txt"
# By the header's WEIGHT column, not a fixed one (list's columns have grown).
weight=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "WEIGHT") col = i }
	$2 == "deb-smoke" && col { print $col }' "$tmp/list.txt")
[[ $weight == 300 ]] || fail "after the reload client deb-smoke has weight '$weight', not 300"
echo >&"$hold_in"
timeout 10 cat <&"$hold_out"
wait "$hold_pid" || fail "the held client lost its page or connection in the reload"
hold_pid=
exec {hold_out}<&- {hold_in}>&-

step "stopping tmemd"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[[ $rc == 0 ]] || { cat "$tmp/tmemd.log"; fail "tmemd exited $rc on SIGTERM"; }

# READY=1, STATUS=, WATCHDOG=1, and RELOADING=1 then READY=1 on SIGHUP,
# from the installed binary.
if [[ -n "$test_notify" ]]; then
	step "notify protocol of /usr/sbin/tmemd ($test_notify)"
	"$test_notify" /usr/sbin/tmemd || fail "notify test failed on /usr/sbin/tmemd"
fi

version=$(dpkg-query -W -f='${Version}' tmem-shim-dkms)
version=${version%%-*}
[[ -f /usr/src/tmem-shim-$version/dkms.conf ]] || fail "no /usr/src/tmem-shim-$version/dkms.conf"
built=0
for build in /lib/modules/*/build; do
	[[ -e "$build/Makefile" ]] || continue
	kver=$(basename "$(dirname "$build")")
	# The package's postinst builds for every kernel with headers; build
	# again from scratch so this step proves it either way.
	dkms unbuild -m tmem-shim -v "$version" -k "$kver" >/dev/null 2>&1 || true
	step "dkms build tmem-shim/$version for $kver"
	dkms build -m tmem-shim -v "$version" -k "$kver" >"$tmp/dkms.log" 2>&1 ||
		{ cat "$tmp/dkms.log"; cat "/var/lib/dkms/tmem-shim/$version/build/make.log" 2>/dev/null; fail "dkms build failed"; }
	ko=$(find "/var/lib/dkms/tmem-shim/$version/$kver" -name 'tmem_shim.ko*' | head -1)
	[[ -n "$ko" ]] || fail "dkms made no tmem_shim.ko for $kver"
	modinfo "$ko" | grep -E '^(filename|vermagic|license):'
	built=$((built + 1))
done
((built)) || fail "no kernel headers installed (linux-headers-amd64 is in mk/deps.list)"

step "purging ${packages[*]}"
purge
step "passed; packages purged"
