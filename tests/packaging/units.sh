#!/bin/bash
# systemd-analyze on the unit files: verify must pass, and the security
# exposure of tmemd.service must be at most 2.5.  Works without systemd
# running (--offline); verify checks a copy whose ExecStart names a stand-in
# binary, since /usr/sbin/tmemd need not be installed.  Documentation= man
# pages are checked against man/ in the tree instead of the installed ones.
#   usage: units.sh [UNIT_DIR] [MAN_DIR]   (default systemd, man)
set -euo pipefail
units=${1:-systemd}
mandir=${2:-man}
max=2.5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

printf '#!/bin/sh\nexit 0\n' >"$tmp/tmemd" && chmod 755 "$tmp/tmemd"
for u in "$units"/*.service "$units"/*.socket "$units"/*.timer; do
	[[ -e "$u" ]] || continue
	name=${u##*/}
	sed "s|/usr/sbin/tmemd|$tmp/tmemd|g" "$u" >"$tmp/$name"
	if out=$(systemd-analyze verify --man=no "$tmp/$name" 2>&1) && [[ -z "$out" ]]; then
		echo "units: systemd-analyze verify $name: ok"
	else
		echo "units: systemd-analyze verify $name failed:"; echo "$out" | sed 's/^/    /'
		fail=1
	fi
	for ref in $(sed -n 's/^Documentation=//p' "$u"); do
		[[ "$ref" =~ ^man:([^\(]+)\(([0-9])\)$ ]] || continue
		page="$mandir/${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
		[[ -f "$page" ]] || { echo "units: $name: Documentation=$ref, but no $page"; fail=1; }
	done
done

service="$units/tmemd.service"
# systemctl reload must fail on a bad file: the file is checked before SIGHUP.
first_reload=$(sed -n 's/^ExecReload=//p' "$service" | head -n 1)
if [[ "$first_reload" != *"tmemd --check-config --config /etc/tmemd/tmemd.conf" ]]; then
	echo "units: tmemd.service's first ExecReload does not run tmemd --check-config: $first_reload"
	fail=1
fi
report=$(systemd-analyze security --offline=true --no-pager "$service" 2>&1) || true
score=$(sed -n 's/.*Overall exposure level for tmemd.service: \([0-9.]*\).*/\1/p' <<<"$report")
if [[ -z "$score" ]]; then
	echo "units: no score from systemd-analyze security:"; echo "$report" | sed 's/^/    /'
	exit 1
fi
echo "units: systemd-analyze security tmemd.service: exposure $score (max $max)"
if awk -v s="$score" -v m="$max" 'BEGIN { exit !(s > m) }'; then
	echo "$report" | grep '✗' | sed 's/^/    /'
	fail=1
fi
exit $fail
