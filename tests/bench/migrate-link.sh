#!/bin/sh
# make bench-migrate's second half: migrate-bench over a link of RATE
# (tc's units: 1gbit, 10gbit), not loopback's memory copy.  Run under
# `unshare -n`: a network namespace of its own, whose lo is shaped with a
# token bucket, so both tmemds' link and the plain stream it is compared
# with cross the same RATE.  Needs root, unshare, ip and tc (iproute2).
set -e
rate=$1
bench=$2
ip link set lo up
tc qdisc add dev lo root tbf rate "$rate" burst 512k latency 100ms
MIGRATE_BENCH_LINK="a $rate link (tbf on lo, a network namespace of its own)" exec "$bench"
