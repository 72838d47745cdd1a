#!/bin/bash
# make bench-ab: is this tree slower than REV (default 223faaa, the last
# commit before compression) with compress = off?  Builds REV in a
# temporary git worktree, then runs each tree's own bench-daemon.sh
# (tmemd + tmem-bench, JSON) ROUNDS times, alternating, so that both see
# the same machine; prints each round and the medians, this tree's over
# REV's.  The machine is shared and noisy: read the medians, and expect
# single rounds to differ by more than the trees do.
set -euo pipefail
cd "$(dirname "$0")/../.."
REV=${REV:-223faaa}
ROUNDS=${ROUNDS:-6}
PHASES=${PHASES:-memcpy,pipeline,roundtrip,mix}
command -v jq >/dev/null || { echo "bench-ab: needs jq"; exit 1; }
old=$(mktemp -d /tmp/tmemd-ab.XXXXXX)
out=$old.results
cleanup() { git worktree remove --force "$old" 2>/dev/null || rm -rf "$old"; rm -f "$out"; }
trap cleanup EXIT
git worktree add --detach "$old" "$REV" >/dev/null
echo "bench-ab: building $REV in $old"
make -C "$old" -j2 all >"$old.build.log" 2>&1 || { tail -20 "$old.build.log"; exit 1; }
rm -f "$old.build.log"

# run TREE LABEL: one bench-daemon run; one JSON line of the figures.
run() {
	(cd "$1" && COMPRESS=off BENCH_ARGS="--phases $PHASES --json" BUILD=build \
		tools/tmem-bench/bench-daemon.sh) | sed -n '/^{/,/^}/p' |
		jq -c --arg t "$2" '{tree: $t,
			pipeline: .pipeline.puts_per_s, pipe_x_memcpy: .pipeline.ratio_to_cold_memcpy,
			rt_pairs: .roundtrip.pairs_per_s, rt_p50: .roundtrip.p50_us, rt_p99: .roundtrip.p99_us,
			mix: .mix.ops_per_s, mix_p99: .mix.p99_us}'
}
for i in $(seq "$ROUNDS"); do
	run "$old" "$REV" | tee -a "$out"
	run . now | tee -a "$out"
done
echo "bench-ab: medians over $ROUNDS rounds (now / $REV; rates: higher is better, latencies: lower):"
jq -rs --arg rev "$REV" '
	def med: sort | .[length / 2 | floor];
	(map(select(.tree == $rev))) as $o | (map(select(.tree == "now"))) as $n |
	["pipeline", "pipe_x_memcpy", "rt_pairs", "rt_p50", "rt_p99", "mix", "mix_p99"][] as $k |
	($o | map(.[$k]) | med) as $a | ($n | map(.[$k]) | med) as $b |
	select($a != null and $b != null) |   # a phase PHASES left out
	"\($k): \($b * 1000 | round / 1000) / \($a * 1000 | round / 1000) = \(if $a > 0 then ($b / $a * 100 | round / 100) else "-" end)"' "$out"
