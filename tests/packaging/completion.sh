#!/bin/bash
# The bash completion of tmemctl (tools/tmemctl/tmemctl.bash): commands,
# per-command options, top's sort keys and CLIENT from "tmemctl list".
# A stand-in tmemctl prints a list table, so no tmemd is needed.
#   usage: completion.sh [SCRIPT]
set -uo pipefail
script=${1:-tools/tmemctl/tmemctl.bash}
# shellcheck source=/dev/null
source "$script" || { echo "completion: cannot source $script"; exit 1; }
tmemctl() {
	printf 'ID   CLIENT   NAME   WEIGHT\n1    vm1      vm1    100\n2    domid:5  web1   100\n'
	printf '3    uuid:00112233-4455-6677-8899-aabbccddeeff  db   100\n'
}
fail=0
# expect "WORDS..." WANT...: completing the last word offers every WANT.
expect() {
	local words=$1 want got
	shift
	read -ra COMP_WORDS <<<"$words"
	[[ $words == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_tmemctl
	got=" ${COMPREPLY[*]} "
	for want in "$@"; do
		if [[ $got != *" $want "* ]]; then
			echo "completion: '$words' offers [${COMPREPLY[*]}], not $want"
			fail=1
		fi
	done
}
expect "tmemctl st" status stats
expect "tmemctl " status list set forget freeable top saved
expect "tmemctl --" --socket --runtime-dir --json
expect "tmemctl set vm1 --c" --compress
expect "tmemctl set vm1 --compress " off lz4 zstd
expect "tmemctl freeze " vm1 domid:5 web1 uuid:00112233-4455-6677-8899-aabbccddeeff db
expect "tmemctl --runtime-dir /tmp freeze v" vm1
expect "tmemctl freeze -" --all -a
expect "tmemctl top --sort " name eph pers puts gets hit evict
expect "tmemctl stats --p" --prometheus
expect "tmemctl list --a" --all
((fail)) && exit 1
echo "completion: tmemctl's bash completion offers what it should"
