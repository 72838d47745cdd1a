# Sourced by the dom0 /init scripts (dom0-init.sh for make e2e-xen,
# dom0-migrate.sh for make e2e-xen-migrate's two hosts): the bring-up of a
# busybox dom0 with the host's Xen toolstack, and the helpers both use.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/usr/lib/xen-4.17/bin
export LD_LIBRARY_PATH=/usr/lib/xen-4.17/lib
up() { cut -d' ' -f1 /proc/uptime; }
say() { echo "E2E-DOM0 $*"; }
CON=/var/log/xen/console
TMEMCTL="tmemctl --socket /run/tmemd/control.sock"

# dom0_boot SHM_SIZE: file systems (the arena's tmpfs /dev/shm of
# SHM_SIZE), then the modules of /mods/load-order and xenfs.
dom0_boot() {
	mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
	mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts
	mount -t tmpfs -o size=$1 tmpfs /dev/shm
	mount -t tmpfs tmpfs /run; mkdir -p /var/run; mount -t tmpfs tmpfs /var/run
	mkdir -p /var/run/xen /var/run/xenstored /run/xen /run/tmemd /var/log/xen/console /var/lock /run/e2e
	echo 1 >/proc/sys/kernel/printk
	echo 1 >/proc/sys/debug/exception-trace   # dom0 segfaults go to dmesg
	say "USERSPACE uptime=$(up) kernel=$(uname -r)"
	for m in $(cat /mods/load-order); do insmod /mods/$m || say "insmod $m FAILED"; done
	mkdir -p /proc/xen; mount -t xenfs xenfs /proc/xen
}

# dom0_toolstack: xenstored, dom0's xenstore nodes, xenconsoled (guest
# consoles logged to $CON, read afterwards without interaction).
dom0_toolstack() {
	xenstored --pid-file /var/run/xenstored.pid || say "xenstored FAILED"
	xenstore-write /local/domain/0/name Domain-0
	xen-init-dom0 >/dev/null || say "xen-init-dom0 FAILED"
	xenconsoled --pid-file=/var/run/xenconsoled.pid --log=guest --log-dir=$CON || say "xenconsoled FAILED"
	say "TOOLSTACK uptime=$(up) $(xl info | grep -E '^xen_version' | tr -s ' ')"
}

# start_tmemd: $TMEMD_BIN $TMEMD_ARGS in the background, its pid in
# /run/e2e/tmemd.pid, its output in /run/tmemd.log; 0 once its control
# socket answers.
start_tmemd() {
	$TMEMD_BIN $TMEMD_ARGS >>/run/tmemd.log 2>&1 &
	echo $! >/run/e2e/tmemd.pid
	i=0; while ! $TMEMCTL status >/dev/null 2>&1 && [ $i -lt 300 ] && kill -0 $! 2>/dev/null; do
		sleep 0.1; i=$((i+1)); done
	$TMEMCTL status >/dev/null 2>&1
}
snapshot() {   # LABEL GUEST DOMID: one line of compact stats JSON
	echo "E2E-STATS $1 $2 $3 uptime=$(up) $($TMEMCTL stats --json 2>&1 | tr -d '\n\t')"
}
# conlog GUEST: its console as xenconsoled logged it: a migration here
# gives the new domain the name GUEST--incoming, and xenconsoled keeps
# that file for it after the rename.
conlog() { cat $CON/guest-$1.log $CON/guest-$1--incoming.log 2>/dev/null; }
