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
#           E2E_CPU (QEMU -cpu; default $CPU_DEFAULT below),
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

# QEMU CPU model.  -smap,-smep,-rdtscp: see the xen-nested reference.
# -xsave and what depends on it: with XSAVE, QEMU 7.2's TCG corrupts dom0
# user state (busybox, xl and tmemctl segfault in TLS setup or libc, several
# times a minute); with FXSAVE alone, none in 8 runs (README).
CPU_DEFAULT=max,-smap,-smep,-rdtscp,-xsave,-xsaveopt,-xgetbv1,-avx,-avx2,-fma,-f16c,-vaes,-mpx,-pku

# --- prerequisites: the exact stock kernel and its headers ---
KV=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null | grep -oE 'linux-image-[^ ,]+' | head -1)
KV=${KV#linux-image-}
[[ -n $KV ]] || die "linux-image-amd64 is not installed"
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
build_shim() {   # NAME KDIR [make args...]
	local d=$E2E_WORK/shim-$1 kdir=$2; shift 2
	cp -r "$SHIM_SRC" "$d"
	make -s -C "$kdir" M="$d" "$@" modules >"$d.log" 2>&1 || { cat "$d.log"; die "tmem_shim.ko ($kdir) did not build"; }
	[[ -f $d/tmem_shim.ko ]] || die "no $d/tmem_shim.ko"
}
build_shim stock "$HDRS"
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
	build_shim fs "$ktree" KBUILD_MODPOST_WARN=1
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

# watch_silence PID LOG SECONDS: dom0 prints stats every 20 s while a guest
# runs, so a log that stops growing means the emulated machine hung (seen
# with one emulated CPU): stop QEMU then, rather than at E2E_TIMEOUT.
watch_silence() {
	local size last=-1 quiet=0
	while kill -0 "$1" 2>/dev/null; do
		size=$(stat -c %s "$2" 2>/dev/null || echo 0)
		if [[ $size == "$last" ]]; then quiet=$((quiet + 10)); else quiet=0 last=$size; fi
		if ((quiet >= $3)); then
			stamp "no serial output for ${3}s: the emulated machine hung; stopping QEMU"
			kill "$1" 2>/dev/null || true
			return
		fi
		sleep 10
	done
}

# --- boot: dom0 runs the guests and powers off; progress is shown live ---
serial=$E2E_WORK/serial.log
T1=$(date +%s)
set +e
timeout "${E2E_TIMEOUT:-3600}" ${E2E_QEMU:-qemu-system-x86_64} -accel "tcg,thread=${E2E_TCG_THREAD:-multi}" \
	-cpu "${E2E_CPU:-$CPU_DEFAULT}" -m 3072 -smp "${E2E_SMP:-2}" \
	-display none -serial "file:$serial" -monitor none -no-reboot \
	"${drives[@]}" \
	-kernel "$E2E_WORK/xen.elf" \
	-append "dom0_mem=1024M,max:2560M dom0_max_vcpus=${E2E_SMP:-2} console=com1 com1=115200,8n1 loglvl=warning guest_loglvl=warning noreboot ${E2E_XEN_EXTRA:-}" \
	-initrd "/boot/vmlinuz-$KV console=hvc0 earlyprintk=xen panic=-1 loglevel=4 ${E2E_DOM0_EXTRA:-} e2e.parallel=${E2E_PARALLEL:-0},$E2E_WORK/dom0.cpio.gz" \
	</dev/null >"$E2E_WORK/qemu.log" 2>&1 &
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
