#!/bin/bash
# make e2e-xen-migrate: two nested Xen 4.17 hosts in two QEMUs (TCG) on
# this machine, linked by a UDP tunnel on loopback, each dom0 running
# tmemd with migration between hosts set up (issue 27, point 2).  A PVH
# guest that swaps through /dev/tmemswap0 (no disk: its root is its
# initramfs) is live-migrated a -> b in the middle of its verify pass, and
# back b -> a, then a -> b once more with b's tmemd stopped
# (dom0-migrate.sh).  Judged from both serial logs (check-migrate.sh).
#
# env (from tests/xen/module.mk): E2E_WORK TMEMD TMEMCTL WORKLOAD FILESET CGFILL SHIM_SRC
# optional: E2E_TIMEOUT (s, each QEMU; default 3600),
#           E2E_SMP (QEMU CPUs = Xen pCPUs = dom0 vCPUs, each host; default 1),
#           E2E_MIG_WLMB (the workload's MiB; default 384, in 128 MiB of RAM:
#             its verify pass must outlast both moves),
#           E2E_MIG_MOVEAT (verify progress, MiB, of the first move; 16),
#           E2E_MIG_PWAIT (the shim's persist_wait_ms; 300000, not its
#             default 120000: a move's pull must end within it, and pulls
#             over this TCG link took up to 149 s; each read after the
#             move to the host without tmemd fails after it),
#           E2E_MIG_FREEWAIT (s a source waits for its pages to be freed; 240),
#           E2E_MIG_MTU (the link's MTU in both dom0s; 9000),
#           E2E_SILENCE (default 600 s: a host whose dom0 says nothing for that
#             long is taken as hung; each dom0 says something every minute),
#           E2E_CPU, E2E_QEMU, E2E_TCG_THREAD (as run-e2e.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
: "${E2E_WORK:?}" "${TMEMD:?}" "${TMEMCTL:?}" "${WORKLOAD:?}" "${FILESET:?}" "${CGFILL:?}" "${SHIM_SRC:?}"
T0=$(date +%s)
stamp() { echo "e2e-xen-migrate: [$(( $(date +%s) - T0 ))s] $*"; }

SMP=${E2E_SMP:-1}
WLMB=${E2E_MIG_WLMB:-384} MOVEAT=${E2E_MIG_MOVEAT:-16} PWAIT=${E2E_MIG_PWAIT:-300000}
FREEWAIT=${E2E_MIG_FREEWAIT:-240}
# NAME TYPE KERNEL MODE QUOTA DISK, as run-e2e.sh: quota "mig" is
# guest-init.sh's migration case, disk "none" gives it none.
GUESTS="pvh-mig pvh stock tmemswap mig none"

KV=$(stock_kv)
HDRS=/usr/src/linux-headers-$KV
for f in /boot/vmlinuz-$KV /boot/xen-4.17-amd64.gz "$HDRS/Makefile" /usr/lib/xen-4.17/bin/xl \
	/bin/busybox /usr/bin/socat /usr/bin/jq "$TMEMD" "$TMEMCTL" "$WORKLOAD" "$SHIM_SRC/Kbuild"; do
	[[ -e $f ]] || die "missing $f (make e2e-xen-migrate installs mk/deps-xen.list; is a package out of step?)"
done
for c in qemu-system-x86_64 jq cpio gzip modinfo od; do
	command -v $c >/dev/null || die "missing command $c"
done
mkdir -p "$(dirname "$E2E_WORK")"
exec 8>"$E2E_WORK.lock"
flock -n 8 || { stamp "another run holds $E2E_WORK.lock: waiting"; flock 8; }
rm -rf "$E2E_WORK"; mkdir -p "$E2E_WORK"

build_shim "$E2E_WORK" stock "$HDRS"
stamp "tmem_shim.ko for $KV built"

# One key file for both hosts (tmemd.conf(5), migrate-key): a line per
# host, 32 random bytes each, mode 0600.
keys=$E2E_WORK/migrate.keys
hex() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
( umask 077; printf 'hosta %s\nhostb %s\n' "$(hex)" "$(hex)" >"$keys" )
# A fixed UUID, so each host's tmemd can be asked about the guest by it.
UUID=$(cat /proc/sys/kernel/random/uuid)

# One dom0 initramfs for both hosts: e2e.host=a|b picks the role.
export KV SMP WORK=$E2E_WORK TMEMD TMEMCTL WORKLOAD FILESET CGFILL GUESTS \
	SHIM_STOCK=$E2E_WORK/shim-stock/tmem_shim.ko FS_KERNEL= FS_SHIM= SWAPMB=448 FILESMB=0 \
	GUEST_MEM=128 DOM0_INIT=$here/dom0-migrate.sh DOM0_MODS=virtio_net \
	DOM0_BINS="/usr/bin/socat /usr/bin/jq" DOM0_FILES="$keys=/etc/tmemd/migrate.keys" \
	E2E_XLCFG_EXTRA="uuid = \"$UUID\"" \
	E2E_GUEST_EXTRA="e2e.disk=0 e2e.pwait=$PWAIT e2e.wlmb=$WLMB e2e.step=16 e2e.ioerr=1"
"$here/mkinitramfs.sh" "$E2E_WORK/dom0.cpio.gz"
zcat /boot/xen-4.17-amd64.gz >"$E2E_WORK/xen.elf"
stamp "dom0 initramfs packed (guest $UUID); booting two Xen hosts under QEMU"

# The link: a UDP tunnel between the two QEMUs' NICs on loopback (no
# listener to start first); two ports no other run is likely to take.
PA=$((20000 + RANDOM % 20000 * 2)) PB=$((PA + 1))

T1=$(date +%s)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
for h in a b; do
	if [[ $h == a ]]; then me=$PA peer=$PB mac=52:54:00:99:00:01; else me=$PB peer=$PA mac=52:54:00:99:00:02; fi
	xen_qemu_cmd qemu_cmd 2048 "$SMP" "$E2E_WORK/serial-$h.log" "$E2E_WORK/xen.elf" \
		"dom0_mem=1024M,max:1536M ${E2E_XEN_EXTRA:-}" \
		"e2e.host=$h e2e.moveat=$MOVEAT e2e.freewait=$FREEWAIT e2e.mtu=${E2E_MIG_MTU:-9000}" "$E2E_WORK/dom0.cpio.gz"
	timeout "${E2E_TIMEOUT:-3600}" "${qemu_cmd[@]}" \
		-netdev "socket,id=mig,udp=127.0.0.1:$peer,localaddr=127.0.0.1:$me" \
		-device "virtio-net-pci,netdev=mig,mac=$mac" \
		</dev/null >"$E2E_WORK/qemu-$h.log" 2>&1 &
	q=$!
	pids+=("$q")
	tail -n +1 -F "$E2E_WORK/serial-$h.log" --pid=$q 2>/dev/null |
		grep --line-buffered -aoE $'E2E-(DOM0|LIVE) [^\r]*' | sed -u "s/^/  $h: /" &
	watch_silence $q "$E2E_WORK/serial-$h.log" "${E2E_SILENCE:-600}" &
done
rcs=()
set +e
for p in "${pids[@]}"; do wait "$p"; rcs+=($?); done
set -e
sleep 1
T2=$(date +%s)
stamp "QEMUs exited rc=${rcs[*]} after $((T2 - T1))s (serial logs: $E2E_WORK/serial-{a,b}.log)"
for i in 0 1; do
	((rcs[i] == 0)) || tail -20 "$E2E_WORK/qemu-$([[ $i == 0 ]] && echo a || echo b).log"
done

WALL=$((T2 - T0)) QEMU_S=$((T2 - T1)) UUID=$UUID PWAIT=$PWAIT \
	"$here/check-migrate.sh" "$E2E_WORK/serial-a.log" "$E2E_WORK/serial-b.log" ||
	die "assertions failed (serial logs: $E2E_WORK/serial-{a,b}.log)"
((rcs[0] == 0 && rcs[1] == 0)) || die "QEMU rc=${rcs[*]}"
stamp "PASS"
