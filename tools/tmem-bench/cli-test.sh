#!/bin/bash
# make bench-cli-test (part of make check): the command lines of
# tmem-bench and tmem-demo-guest.  A ratio is printed only when the phase
# it divides by ran, and an unknown phase is refused; tmem-demo-guest
# --help lists its kinds.  Starts
# build/tmemd on a temporary runtime dir (tmemd-run.sh).  Needs $BUILD.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tools/tmem-bench/tmemd-run.sh
fail() { echo "bench-cli-test: $*"; exit 1; }

"$BUILD/tmem-demo-guest" --help >"$run/help" || fail "tmem-demo-guest --help exited $?"
for kind in cleancache frontswap shared-put shared-get; do
	grep -q "^  $kind " "$run/help" || fail "tmem-demo-guest --help does not list $kind"
done
rc=0
"$BUILD/tmem-demo-guest" "$run/none.sock" vm1 bogus 1 2>/dev/null || rc=$?
[[ $rc == 2 ]] || fail "tmem-demo-guest with an unknown kind exited $rc, not 2"

start_tmemd --transport local --memory 64M --workers 1
bench() { "$BUILD/tmem-bench" --socket "$run/guest.sock" --pipe-ops 20000 --rt-ops 2000 "$@"; }
bench -p pipeline,roundtrip >"$run/out1"
grep -q '^pipelined puts:' "$run/out1" || fail "no pipelined line: $(cat "$run/out1")"
! grep -q 'memcpy' "$run/out1" || fail "a ratio to a memcpy phase that did not run: $(cat "$run/out1")"
bench -p memcpy,pipeline >"$run/out2"
grep -q 'x cold memcpy' "$run/out2" || fail "no ratio though memcpy ran: $(cat "$run/out2")"
bench -p scale -c 2 >"$run/out3"
grep -q '^pipelined puts x2:' "$run/out3" || fail "no scale line: $(cat "$run/out3")"
! grep -q 'one client' "$run/out3" || fail "a ratio to a pipeline phase that did not run: $(cat "$run/out3")"
bench -p pipeline,scale -c 2 >"$run/out4"
grep -q 'x one client' "$run/out4" || fail "no ratio though pipeline ran: $(cat "$run/out4")"
rc=0
bench -p pipline 2>/dev/null || rc=$?
[[ $rc == 2 ]] || fail "tmem-bench with an unknown phase exited $rc, not 2"
stop_tmemd
echo "bench-cli-test: tmem-bench prints no ratio to a skipped phase and refuses an unknown one; tmem-demo-guest --help lists its kinds"
