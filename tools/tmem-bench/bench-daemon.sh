#!/bin/bash
# make bench-daemon: start tmemd on a temp runtime dir, run tmem-bench's
# default phases plus tmemd's idle CPU, print the numbers, stop tmemd
# (SIGTERM, exit status 0).  Extra tmem-bench flags: BENCH_ARGS; extra
# tmemd flags: TMEMD_ARGS (e.g. --arena /dev/shm/FILE for a store that
# survives restarts, as under systemd's fd store).
set -euo pipefail
BUILD=${BUILD:-build}
. "$(dirname "$0")/tmemd-run.sh"

# COMPRESS (default off): the clients' compression.  Off keeps these
# figures comparable with the runs before compression existed (pages of
# random bytes would only pay LZ4 to be stored raw); bench-compress-daemon
# runs lz4 on a corpus of real pages.
printf '[defaults]\ncompress = %s\n' "${COMPRESS:-off}" >"$run/tmemd.conf"
# shellcheck disable=SC2086
start_tmemd -c "$run/tmemd.conf" --transport local --memory 256M ${TMEMD_ARGS:-}
# 49152 keys = 192 MiB of pages: more than any cache here, so the puts
# write a cold arena, as the cold memcpy they are compared with does.
# shellcheck disable=SC2086
"$BUILD/tmem-bench" --socket "$run/guest.sock" --idle-pid "$tmemd_pid" --keys 49152 ${BENCH_ARGS:-}
stop_tmemd
echo "tmemd stopped cleanly"
