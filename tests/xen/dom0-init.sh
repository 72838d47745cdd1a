#!/bin/sh
# /init of the e2e-xen dom0 (busybox + the host's Xen toolstack + tmemd).
# Brings up xenstored/xenconsoled and tmemd --transport xen, then runs the
# guests listed in /guest/guests one after another ("NAME QUOTA" lines):
# xl create, watch the guest's console log for its markers, snapshot
# `tmemctl stats --json` while it runs, apply the quota case, xl destroy,
# check that its client is gone.  Everything the host checks is printed on
# the serial console as E2E-* lines; the host (run-e2e.sh) judges.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/usr/lib/xen-4.17/bin
export LD_LIBRARY_PATH=/usr/lib/xen-4.17/lib
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run; mkdir -p /var/run; mount -t tmpfs tmpfs /var/run
mkdir -p /var/run/xen /var/run/xenstored /run/xen /run/tmemd /var/log/xen/console
echo 1 >/proc/sys/kernel/printk
up() { cut -d' ' -f1 /proc/uptime; }
say() { echo "E2E-DOM0 $*"; }
CON=/var/log/xen/console
TMEMCTL="tmemctl --socket /run/tmemd/control.sock"

say "USERSPACE uptime=$(up) kernel=$(uname -r)"
for m in $(cat /mods/load-order); do insmod /mods/$m || say "insmod $m FAILED"; done
mkdir -p /proc/xen; mount -t xenfs xenfs /proc/xen
xenstored --pid-file /var/run/xenstored.pid || say "xenstored FAILED"
xenstore-write /local/domain/0/name Domain-0
xen-init-dom0 >/dev/null || say "xen-init-dom0 FAILED"
xenconsoled --pid-file=/var/run/xenconsoled.pid --log=guest --log-dir=$CON || say "xenconsoled FAILED"
say "TOOLSTACK uptime=$(up) $(xl info | grep -E '^xen_version' | tr -s ' ')"

tmemd --transport xen --runtime-dir /run/tmemd --state-dir /run/tmemd \
	--memory ${TMEMD_MEMORY:-640M} --verbose >/run/tmemd.log 2>&1 &
tmemd_pid=$!
i=0; while [ ! -S /run/tmemd/control.sock ] && [ $i -lt 100 ] && kill -0 $tmemd_pid 2>/dev/null; do
	sleep 0.1; i=$((i+1)); done
if [ -S /run/tmemd/control.sock ]; then
	say "TMEMD-UP pid=$tmemd_pid"
else
	say "TMEMD-FAILED (tmemd --transport xen did not come up)"
	sed 's/^/E2E-TMEMD-LOG /' /run/tmemd.log
fi

snapshot() {   # LABEL GUEST DOMID: one line of compact stats JSON
	echo "E2E-STATS $1 $2 $3 uptime=$(up) $($TMEMCTL stats --json 2>&1 | tr -d '\n\t')"
}
# wait_marker GUEST PATTERN SECONDS: until the guest's console log has it.
wait_marker() {
	j=0
	while [ $j -lt $(($3 * 2)) ]; do
		grep -q "$2" $CON/guest-$1.log 2>/dev/null && return 0
		xl domid $1 >/dev/null 2>&1 || return 1
		sleep 0.5; j=$((j+1))
	done
	return 1
}

while read -r name quota; do
	[ -n "$name" ] || continue
	say "CREATE $name uptime=$(up)"
	xl create /guest/$name.cfg >/tmp/xl-$name.log 2>&1 || { say "CREATE-FAILED $name"; sed 's/^/E2E-XL /' /tmp/xl-$name.log; continue; }
	domid=$(xl domid $name)
	say "DOMID $name $domid"
	# stats every 2 s while the guest runs
	( while :; do snapshot run $name $domid; sleep 2; done ) >/tmp/stats-$name.log 2>&1 &
	poller=$!
	wait_marker $name "E2E-GUEST $name READY" 180 || say "TIMEOUT $name READY"
	if [ "$quota" = 1 ]; then
		wait_marker $name "E2E-GUEST $name WAIT-QUOTA" 600 || say "TIMEOUT $name WAIT-QUOTA"
		snapshot pre-quota $name $domid
		$TMEMCTL set $domid --persistent-max 4M >/tmp/set.log 2>&1
		say "QUOTA $name domid=$domid rc=$? $(cat /tmp/set.log | tr '\n' ' ')"
		tty=$(xenstore-read /local/domain/$domid/console/tty)
		echo go >$tty
		say "GO-SENT $name tty=$tty"
	fi
	wait_marker $name "E2E-WORKLOAD-HOLD" 900 || say "TIMEOUT $name HOLD"
	kill $poller; wait $poller 2>/dev/null
	cat /tmp/stats-$name.log
	snapshot hold $name $domid
	xl destroy $name; say "DESTROYED $name rc=$? uptime=$(up)"
	j=0; while [ $j -lt 20 ] && $TMEMCTL list 2>/dev/null | grep -qw "$name"; do sleep 0.5; j=$((j+1)); done
	snapshot destroyed $name $domid
	echo "E2E-CONSOLE-BEGIN $name"
	sed "s/^/E2E-CON $name /" $CON/guest-$name.log
	echo "E2E-CONSOLE-END $name"
done </guest/guests

say "TMEMD-ALIVE $(kill -0 $tmemd_pid 2>/dev/null && echo yes || echo no)"
sed 's/^/E2E-TMEMD-LOG /' /run/tmemd.log | tail -n 200
say "XL-DMESG-ERRORS $(xl dmesg | grep -ciE 'error|crash|fatal')"
say "ALL-DONE uptime=$(up)"
poweroff -f
