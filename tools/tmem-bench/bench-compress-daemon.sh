#!/bin/bash
# make bench-compress-daemon: tmemd with compress = lz4 (COMPRESS to
# change it) and two workers, and tmem-bench --corpus CORPUS, in one run:
# one core's LZ4 rate on the corpus, pipelined puts from one client
# against it, pipelined puts from two clients at once (one per worker)
# against one client's, sync put->get latency.  Then the synchronous mix
# from one and from two clients, and the ratio tmemd reports.
set -euo pipefail
BUILD=${BUILD:-build}
CORPUS=${CORPUS:?CORPUS=FILE (tools/tmem-bench/make-corpus.sh makes one)}
. "$(dirname "$0")/tmemd-run.sh"

printf '[tmemd]\nworkers = 2\n[defaults]\ncompress = %s\n' "${COMPRESS:-lz4}" >"$run/tmemd.conf"
start_tmemd -c "$run/tmemd.conf" --transport local --memory 256M
bench() {
	"$BUILD/tmem-bench" --socket "$run/guest.sock" --corpus "$CORPUS" --keys 49152 "$@"
}
bench --phases lz4,pipeline,scale,roundtrip --clients 2
# The synchronous mix does not show the workers' parallelism on a 2-CPU
# host: one client already keeps both CPUs busy (it polls for its answer
# while its worker compresses), two clients are four such threads.
echo "-- mix, one client:"
bench --phases mix --clients 1
echo "-- mix, two clients:"
bench --phases mix --clients 2
# The ratio tmemd reports, read while a client holds its pages (they go
# with the client): a long pipelined run in the background.
bench --phases pipeline --pipe-ops 4000000 >/dev/null &
filler=$!
sleep 2
"$BUILD/tmemctl" --socket "$run/control.sock" --json stats >"$run/stats.json"
wait "$filler"
echo "tmemd reports, mid-run (pool, then the client):"
grep -o '"\(compression_ratio\|effective_ratio\|same_pages\|huge_pages\|mem_used_total\|overhead_bytes\|fragmentation_bytes\)":[^,}]*' \
	"$run/stats.json" | head -20
stop_tmemd
echo "tmemd stopped cleanly"
