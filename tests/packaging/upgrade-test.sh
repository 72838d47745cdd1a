#!/bin/bash
# Issue 30: an upgrade loses nothing, or is refused before it can.  Two
# builds: each REV's tmemd (built from "git archive REV" under
# build/upgrade/REV, kept for the next run) runs on an arena file with a
# client of its own libtmem holding a persistent page (smoke_client
# --hold); then this tree's package preinst (systemd/module.mk makes it)
# is run as dpkg would before an upgrade, and
#   - when this tree reads REV's arena layout (TMEM_ARENA_LAYOUT_OLDEST
#     to TMEM_ARENA_LAYOUT): the preinst lets it through, the old tmemd
#     stops, this tmemd starts on the same arena, and the client reads
#     its page back from it;
#   - when it does not: the preinst refuses with what to do, and the old
#     tmemd runs on with the page (the client reads it back); without the
#     preinst this tmemd would not start on that arena (shown); after the
#     preinst's steps (stop, rm the arena) the upgrade goes through.
# Each REV is judged by the layouts of its pools/durable.h and of this
# tree's, so the test stays right when the layout changes again.
#   usage: upgrade-test.sh TMEMD TMEMCTL PREINST REV...
set -euo pipefail
new_tmemd=$(realpath "${1:?usage: upgrade-test.sh TMEMD TMEMCTL PREINST REV...}")
new_tmemctl=$(realpath "${2:?}")
preinst=$(realpath "${3:?}")
shift 3
top=$(pwd)
tmp=$(mktemp -d)
pids=()
fail() { echo "upgrade-test: $*" >&2; exit 1; }
step() { echo "upgrade-test: $*"; }
cleanup() {
	local rc=$?
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	rm -rf "$tmp" /dev/shm/tmemd-upgrade-$$-*
	((rc)) && echo "upgrade-test: FAILED" >&2
	exit $rc
}
trap cleanup EXIT

layout_of() { sed -n 's/^#define TMEM_ARENA_LAYOUT \([0-9]*\)u$/\1/p' "$1"; }
oldest_of() { sed -n 's/^#define TMEM_ARENA_LAYOUT_OLDEST \([0-9]*\)u$/\1/p' "$1"; }

# build/upgrade/REV/{tmemd,smoke_client}, from REV's own sources.
build_old() {
	local rev=$1 dir=build/upgrade/$1
	[[ -x $dir/tmemd && -x $dir/smoke_client ]] && return 0
	git cat-file -e "$rev^{commit}" 2>/dev/null || fail "$rev: not a commit here (a git clone is needed)"
	rm -rf "$dir" && mkdir -p "$dir/src"
	git archive "$rev" | tar -x -C "$dir/src"
	step "$rev: building its tmemd and libtmem (once; kept in $dir)"
	# Not the calling make's variables (BUILD=, SANITIZE=...): REV's defaults.
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$dir/src" -j2 build/tmemd build/libtmem.a \
		>"$dir/build.log" 2>&1 ||
		{ tail -20 "$dir/build.log"; fail "$rev: build failed ($dir/build.log)"; }
	cc -std=gnu11 -I"$dir/src/guest-shim/libtmem" -I"$dir/src/proto" \
		"$dir/src/tests/packaging/smoke_client.c" "$dir/src/build/libtmem.a" -pthread \
		-o "$dir/smoke_client"
	cp "$dir/src/build/tmemd" "$dir/tmemd"
	layout_of "$dir/src/pools/durable.h" >"$dir/layout"
}

# start_tmemd BIN RUNDIR: a tmemd on the test's arena; its pid in $tmemd_pid.
start_tmemd() {
	local bin=$1 run=$2
	rm -rf "$run" && mkdir -p "$run"
	"$bin" --foreground --transport local --runtime-dir "$run" --state-dir "$run/state" \
		--memory 16M --workers 1 -c "$conf" 2>>"$tmp/tmemd.log" &
	tmemd_pid=$!
	pids+=("$tmemd_pid")
	for _ in $(seq 500); do
		[[ -S $run/guest.sock ]] && return 0
		kill -0 "$tmemd_pid" 2>/dev/null || return 1
		sleep 0.01
	done
	fail "$bin did not come up in 5 s"
}

stop_tmemd() {
	kill -TERM "$tmemd_pid"
	wait "$tmemd_pid" || fail "tmemd (pid $tmemd_pid) did not stop cleanly"
}

new_layout=$(layout_of pools/durable.h)
[[ -n $new_layout ]] || fail "no TMEM_ARENA_LAYOUT in pools/durable.h"
oldest=$(oldest_of pools/durable.h)
[[ -n $oldest ]] || fail "no TMEM_ARENA_LAYOUT_OLDEST in pools/durable.h"
for rev in "$@"; do
	build_old "$rev"
	old=$top/build/upgrade/$rev
	old_layout=$(cat "$old/layout")
	arena=/dev/shm/tmemd-upgrade-$$-$rev
	conf=$tmp/tmemd.conf
	printf '[tmemd]\narena = %s\n' "$arena" >"$conf"
	: >"$tmp/tmemd.log"
	step "$rev (arena layout $old_layout) -> this tree (layout $new_layout)"

	start_tmemd "$old/tmemd" "$tmp/run" || { cat "$tmp/tmemd.log"; fail "$rev's tmemd did not start"; }
	coproc CLIENT { "$old/smoke_client" "$tmp/run/guest.sock" --hold 2>&1; }
	pids+=("$CLIENT_PID")
	read -r -t 10 line <&"${CLIENT[0]}" || fail "$rev: the client said nothing"
	[[ $line == stored ]] || fail "$rev: the client: $line"

	set +e
	TMEMD_CONF=$conf TMEMD_PIDS=$tmemd_pid sh "$preinst" upgrade 0.0 2>"$tmp/preinst.err"
	rc=$?
	set -e
	if ((old_layout >= oldest && old_layout <= new_layout)); then
		((rc == 0)) || { cat "$tmp/preinst.err"; fail "$rev: preinst refused a same-layout upgrade"; }
		stop_tmemd
		start_tmemd "$new_tmemd" "$tmp/run" ||
			{ cat "$tmp/tmemd.log"; fail "this tmemd did not start on $rev's arena"; }
		recovered=$("$new_tmemctl" --runtime-dir "$tmp/run" stats --json |
			sed -n 's/.*"persistent_pages_recovered": *\([0-9]*\).*/\1/p')
		[[ $recovered == 1 ]] || fail "$rev: this tmemd recovered '$recovered' persistent pages, not 1"
		echo go >&"${CLIENT[1]}"
		wait "$CLIENT_PID" || fail "$rev: the client did not read its page back after the upgrade"
		step "$rev: preinst let it through; this tmemd recovered the page and the client read it back"
		stop_tmemd
	else
		((rc == 1)) || fail "$rev: preinst exit $rc on a layout change, wanted 1"
		for want in "refusing to upgrade" "layout $old_layout" "reads layout $oldest to $new_layout" \
			"systemctl stop tmemd" "rm $arena" "Nothing has been changed"; do
			grep -qF "$want" "$tmp/preinst.err" ||
				{ cat "$tmp/preinst.err"; fail "$rev: preinst does not say \"$want\""; }
		done
		kill -0 "$tmemd_pid" || fail "$rev: the old tmemd is gone after the refusal"
		echo go >&"${CLIENT[1]}"
		wait "$CLIENT_PID" || fail "$rev: the client lost its page after the refusal"
		step "$rev: preinst refused, saying what to do; the old tmemd kept the page"
		# What the preinst prevents: this tmemd refuses the old arena.
		stop_tmemd
		if start_tmemd "$new_tmemd" "$tmp/run"; then
			fail "this tmemd started on a layout-$old_layout arena"
		fi
		grep -q -- "--discard-arena" "$tmp/tmemd.log" || fail "the refusal does not name --discard-arena"
		# The preinst's steps, then the upgrade goes through.
		rm "$arena"
		TMEMD_CONF=$conf TMEMD_PIDS='' sh "$preinst" upgrade 0.0 ||
			fail "$rev: preinst still refuses after its own steps"
		start_tmemd "$new_tmemd" "$tmp/run" || { cat "$tmp/tmemd.log"; fail "this tmemd did not start"; }
		TMEMD_CONF=$conf TMEMD_PIDS=$tmemd_pid sh "$preinst" upgrade 0.0 ||
			fail "preinst refuses this tmemd's own arena"
		stop_tmemd
		step "$rev: after the preinst's steps the upgrade goes through"
	fi
	rm -f "$arena"
done
echo "upgrade-test: every upgrade kept its pages or was refused before it could lose them"
