#!/bin/bash
# make e2e-xen: tmemd in a real Xen 4.17 dom0, tmem_shim.ko in real domUs,
# all under QEMU (TCG; see /work/shared/reference/xen-nested/README.md for
# why TCG and these CPU flags).  Builds the modules and the frontswap test
# kernel, packs dom0, boots, and judges the serial log (check-results.sh).
# A missing prerequisite fails; nothing is skipped.
#
# env (from tests/xen/module.mk): E2E_WORK TMEMD TMEMCTL WORKLOAD FILESET CGFILL SHIM_SRC
# optional: E2E_GUESTS (guest lines, see below), E2E_TIMEOUT (s),
#           E2E_DOM0_EXTRA (dom0 kernel args; e2e.tmemd=0: no tmemd;
#             e2e.diag=1: xl list and vcpu-list, domain, VMCB and xenctx dumps 8 s in),
#           E2E_PARALLEL=1 (all guests at once instead of one at a time),
#           E2E_PVH=0 (leave the PVH guest out; see GUESTS below),
#           E2E_CLEANCACHE=0 (leave pv-cleancache out),
#           E2E_DOM0_EXTRA=e2e.moves=0 (no xl save/restore, no xl migrate),
#           E2E_CPU (QEMU -cpu; default $CPU_DEFAULT, lib.sh),
#           E2E_QEMU (QEMU command instead of qemu-system-x86_64),
#           E2E_XLCFG_EXTRA (more xl.cfg lines for every guest),
#           E2E_XEN_EXTRA (more Xen command-line options),
#           E2E_GUEST_ARGS (guest kernel arguments instead of "quiet"),
#           E2E_SMP (QEMU CPUs = Xen pCPUs = dom0 vCPUs; default 2),
#           E2E_SILENCE (s without serial output before QEMU counts as hung; 300),
#           E2E_TCG_THREAD=single (diagnostics: one host thread for all vCPUs),
#           E2E_NO_FS_KERNEL=1 (development only: stock guests alone; fails)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
: "${E2E_WORK:?}" "${TMEMD:?}" "${TMEMCTL:?}" "${WORKLOAD:?}" "${FILESET:?}" "${CGFILL:?}" "${SHIM_SRC:?}"
T0=$(date +%s)
stamp() { echo "e2e-xen: [$(( $(date +%s) - T0 ))s] $*"; }

# NAME TYPE KERNEL MODE QUOTA DISK (DISK: dom0's virtio disk, one per guest)
# mkinitramfs.sh pins PVH guests to the last pCPU: unpinned, QEMU 7.2's TCG
# emulation of nested SVM/NPT makes them triple-fault at random (README,
# "Known platform limits").
# pv-readcache: the tmemcache target under ext4 (readcache.sh), QUOTA eph
# lowering its ephemeral cap before the last pass; fallow (issue 28) does
# that too, after tmemd restarted with memory = auto gave the pool's
# ephemeral pages back for a new domain (dom0-init.sh, fallow_actor), and
# holds persistent pages through it all.  pv-stock's QUOTA tier (issue
# 29): its tmemd has a pool far smaller than its swap and a host tier on
# a disk of dom0's own, so most of its pages go through the tier.
# pv-cleancache: the
# same workload on the test kernel's ext4 with cleancache_ops (cleancache.sh).
GUESTS=${E2E_GUESTS:-"pv-stock pv stock tmemswap tier /dev/vda
pv-frontswap pv fs frontswap 1 /dev/vdb
pv-readcache pv stock readcache fallow /dev/vdc"}
if [[ ${E2E_PVH:-1} == 1 && -z ${E2E_GUESTS:-} ]]; then
	GUESTS+=$'\npvh-stock pvh stock tmemswap 0 /dev/vdd'
fi
# pv-cleancache: the test kernel (cleancache restored, build-kernel.sh);
# E2E_CLEANCACHE=0 leaves it out.
if [[ ${E2E_CLEANCACHE:-1} == 1 && -z ${E2E_GUESTS:-} ]]; then
	GUESTS+=$'\npv-cleancache pv fs cleancache eph /dev/vde'
fi
SWAPMB=512
FILESMB=600   # pv-readcache's file set: over twice its 256 MiB of RAM

# --- prerequisites: the exact stock kernel and its headers ---
KV=$(stock_kv)
HDRS=/usr/src/linux-headers-$KV
for f in /boot/vmlinuz-$KV /boot/xen-4.17-amd64.gz /lib/modules/$KV/kernel "$HDRS/Makefile" \
	/usr/lib/xen-4.17/bin/xl /bin/busybox "$TMEMD" "$TMEMCTL" "$WORKLOAD" "$FILESET" "$CGFILL" "$SHIM_SRC/Kbuild" \
	/usr/sbin/dmsetup /usr/sbin/mke2fs; do
	[[ -e $f ]] || die "missing $f (make e2e-xen installs mk/deps-xen.list; is a package out of step?)"
done
for c in qemu-system-x86_64 jq cpio gzip modinfo; do
	command -v $c >/dev/null || die "missing command $c"
done
file /bin/busybox 2>/dev/null | grep -q 'statically linked' || ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' ||
	die "/bin/busybox is not static (install busybox-static)"
# One run at a time per work folder (and the machine has room for one QEMU).
mkdir -p "$(dirname "$E2E_WORK")"
exec 8>"$E2E_WORK.lock"
flock -n 8 || { stamp "another e2e-xen run holds $E2E_WORK.lock: waiting"; flock 8; }
rm -rf "$E2E_WORK"; mkdir -p "$E2E_WORK"

# --- tmem_shim.ko for the stock kernel, against exactly its headers ---
build_shim "$E2E_WORK" stock "$HDRS"
vm=$(modinfo -F vermagic "$E2E_WORK/shim-stock/tmem_shim.ko")
[[ $vm == "$KV "* ]] || die "stock tmem_shim.ko vermagic '$vm' is not $KV"
stamp "tmem_shim.ko for $KV built ($vm)"

# --- the frontswap test kernel (cached, built once per machine) ---
FS_KERNEL= FS_SHIM=
if [[ ${E2E_NO_FS_KERNEL:-0} != 1 ]]; then
	stamp "frontswap test kernel: $("$here/build-kernel.sh" --path)"
	ktree=$("$here/build-kernel.sh")
	FS_KERNEL=$ktree/arch/x86/boot/bzImage
	[[ -f $FS_KERNEL ]] || die "no $FS_KERNEL"
	build_shim "$E2E_WORK" fs "$ktree" KBUILD_MODPOST_WARN=1
	FS_SHIM=$E2E_WORK/shim-fs/tmem_shim.ko
	krel=$(make -s -C "$ktree" kernelrelease)
	vm=$(modinfo -F vermagic "$FS_SHIM")
	[[ $vm == "$krel "* ]] || die "test-kernel tmem_shim.ko vermagic '$vm' is not $krel"
	stamp "tmem_shim.ko for the test kernel $krel built"
else
	GUESTS=$(grep -v ' fs ' <<<"$GUESTS")
fi

# --- dom0 initramfs, guest disks ---
export E2E_XLCFG_EXTRA E2E_GUEST_ARGS KV SMP=${E2E_SMP:-2} WORK=$E2E_WORK TMEMD TMEMCTL WORKLOAD FILESET CGFILL \
	SHIM_STOCK=$E2E_WORK/shim-stock/tmem_shim.ko FS_KERNEL FS_SHIM GUESTS SWAPMB FILESMB
"$here/mkinitramfs.sh" "$E2E_WORK/dom0.cpio.gz"
drives=()
while read -r name _ _ mode _ disk; do
	[[ -n $name ]] || continue
	img=$E2E_WORK/disk-${disk##*/}.img
	# sparse; read caches: the file set, ext4's overhead and the rewrites
	if [[ $mode == *cache ]]; then size=$((FILESMB * 3 / 2)); else size=$((SWAPMB + 64)); fi
	truncate -s ${size}M "$img"
	drives+=(-drive "file=$img,if=virtio,format=raw,cache=unsafe")
done <<<"$GUESTS"
# dom0's scratch disk for xl save's image (a guest's 256 MiB): dom0's RAM
# holds tmemd's arena; the disk after the guests' is the one no xl.cfg names.
truncate -s 512M "$E2E_WORK/disk-save.img"
drives+=(-drive "file=$E2E_WORK/disk-save.img,if=virtio,format=raw,cache=unsafe")
# dom0's disk for the host tier (QUOTA tier), after the save disk: a block
# device, as on a host with a spare SSD.
truncate -s 1024M "$E2E_WORK/disk-tier.img"
drives+=(-drive "file=$E2E_WORK/disk-tier.img,if=virtio,format=raw,cache=unsafe")
zcat /boot/xen-4.17-amd64.gz >"$E2E_WORK/xen.elf"   # QEMU's multiboot loader wants the ELF
stamp "dom0 initramfs packed; booting Xen under QEMU"

# --- boot: dom0 runs the guests and powers off; progress is shown live ---
serial=$E2E_WORK/serial.log
T1=$(date +%s)
set +e
xen_qemu_cmd qemu_cmd 3072 "${E2E_SMP:-2}" "$serial" "$E2E_WORK/xen.elf" \
	"dom0_mem=1024M,max:2560M ${E2E_XEN_EXTRA:-}" \
	"${E2E_DOM0_EXTRA:-} e2e.parallel=${E2E_PARALLEL:-0}" "$E2E_WORK/dom0.cpio.gz"
timeout "${E2E_TIMEOUT:-3600}" "${qemu_cmd[@]}" "${drives[@]}" </dev/null >"$E2E_WORK/qemu.log" 2>&1 &
qemu=$!
trap 'kill $qemu 2>/dev/null || true' EXIT
tail -n +1 -F "$serial" --pid=$qemu 2>/dev/null | tr -d '\r' | grep --line-buffered -aoE 'E2E-(DOM0|LIVE) .*' | sed -u 's/^/  /' &
watch_silence $qemu "$serial" "${E2E_SILENCE:-300}" &
wait $qemu; qrc=$?
sleep 1
set -e
T2=$(date +%s)
stamp "QEMU exited rc=$qrc after $((T2 - T1))s (serial log: $serial)"
((qrc == 0)) || { tail -20 "$E2E_WORK/qemu.log"; grep -aE 'Panic|panic|crash' "$serial" | head; }

WALL=$((T2 - T0)) GUESTS=$GUESTS "$here/check-results.sh" "$serial" || die "assertions failed (serial log: $serial)"
((qrc == 0)) || die "QEMU rc=$qrc"
[[ -n $FS_KERNEL ]] || die "the frontswap guest did not run (E2E_NO_FS_KERNEL=1)"
stamp "PASS"
