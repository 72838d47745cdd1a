# Sourced by demo.sh and bench-daemon.sh: run build/tmemd in a temporary
# runtime dir ($run) and stop it cleanly.  Needs $BUILD.

run=$(mktemp -d /tmp/tmemd-run.XXXXXX)
tmemd_pid=
extra_cleanup=:

cleanup() {
	$extra_cleanup
	[[ -n "$tmemd_pid" ]] && kill "$tmemd_pid" 2>/dev/null || true
	rm -rf "$run"
}
trap cleanup EXIT

# start_tmemd ARGS...: starts tmemd and waits for guest.sock.
start_tmemd() {
	"$BUILD/tmemd" --runtime-dir "$run" --state-dir "$run/state" "$@" 2>"$run/tmemd.log" &
	tmemd_pid=$!
	for _ in $(seq 200); do [[ -S "$run/guest.sock" ]] && return 0; sleep 0.05; done
	cat "$run/tmemd.log"
	echo "tmemd did not start"
	exit 1
}

# stop_tmemd: SIGTERM, wait, fail unless it exited with status 0.
stop_tmemd() {
	local rc
	kill -TERM "$tmemd_pid"
	set +e
	wait "$tmemd_pid"
	rc=$?
	set -e
	tmemd_pid=
	if [[ $rc != 0 ]]; then
		cat "$run/tmemd.log"
		echo "tmemd exited with status $rc"
		exit 1
	fi
}
