#!/bin/bash
# Pack the e2e-xen dom0 initramfs: busybox, the host's Xen 4.17 toolstack,
# tmemd and tmemctl, and the guests (kernels, their initramfs, xl configs).
#
# usage: mkinitramfs.sh OUT   with, in the environment:
#   KV          the stock Debian kernel version (dom0 and the stock guests)
#   WORK        scratch folder
#   TMEMD TMEMCTL WORKLOAD FILESET CGFILL  the programs
#   SHIM_STOCK  tmem_shim.ko built for KV
#   FS_KERNEL FS_SHIM  the frontswap test kernel's bzImage and its tmem_shim.ko
#   GUESTS      guest lines "NAME TYPE KERNEL(stock|fs) MODE QUOTA DISK"
#   SWAPMB      size of /dev/tmemswap0 (MiB)
#   FILESMB     the pv-readcache file set (MiB)
# optional (make e2e-xen-migrate's hosts, run-migrate.sh):
#   DOM0_INIT   dom0's /init (default dom0-init.sh)
#   DOM0_MODS   more stock modules for dom0 (loaded at boot, in load-order)
#   DOM0_BINS   more host programs for dom0, with their libraries
#   DOM0_FILES  more files, "SRC=DEST" words (DEST inside dom0's root)
#   GUEST_MEM   each guest's memory (MiB, default 256)
#   E2E_GUEST_EXTRA  more guest kernel arguments (after the e2e.* ones)
#   a guest line's DISK "none": the guest has no disk
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
out=${1:?usage: mkinitramfs.sh OUT}
: "${KV:?}" "${WORK:?}" "${TMEMD:?}" "${TMEMCTL:?}" "${WORKLOAD:?}" "${FILESET:?}" "${CGFILL:?}" "${SHIM_STOCK:?}" "${GUESTS:?}" "${SWAPMB:?}" "${FILESMB:?}"
xenbin=/usr/lib/xen-4.17/bin

# --- guest initramfs images: one per kernel ---
guest_irfs() {   # OUT SHIM [stock-modules...]
	local gout=$1 shim=$2 r; shift 2
	r=$(mktemp -d "$WORK/guest-root.XXXX")
	busybox_root "$r"
	if (($#)); then copy_modules "/lib/modules/$KV" "$r/mods" "$@"; fi
	cp "$shim" "$r/mods/tmem_shim.ko"
	cp "$WORKLOAD" "$r/bin/e2e-workload"
	cp "$FILESET" "$r/bin/e2e-fileset"
	# pv-readcache: the host's dmsetup and mke2fs with their libraries.
	copy_bins "$r" /usr/sbin/dmsetup /usr/sbin/mke2fs
	cp "$here/readcache.sh" "$here/cleancache.sh" "$r/bin/"
	cp "$here/guest-init.sh" "$r/init"
	pack_cpio "$r" "$gout"
	rm -rf "$r"
}

root=$(mktemp -d "$WORK/dom0-root.XXXX")
trap 'rm -rf "$root"' EXIT
busybox_root "$root"
mkdir -p "$root"/{guest,var/lib/xen,var/lib/xenstored,var/log/xen/console,etc/xen/scripts,root}
copy_modules "/lib/modules/$KV" "$root/mods" xen-privcmd xenfs xen-evtchn xen-gntdev \
	xen-gntalloc xen-blkback virtio_pci virtio_blk ${DOM0_MODS:-}
copy_bins "$root" $xenbin/xl $xenbin/xenstored $xenbin/xenconsoled $xenbin/xen-init-dom0 \
	$xenbin/libxl-save-helper $xenbin/xenstore-control $xenbin/xenctx \
	/usr/bin/xenstore-read /usr/bin/xenstore-write /usr/bin/xenstore-list /usr/bin/xenstore-ls
[[ -d /usr/lib/xen-4.17/lib ]] && { mkdir -p "$root/usr/lib/xen-4.17/lib"; cp -a /usr/lib/xen-4.17/lib/. "$root/usr/lib/xen-4.17/lib/"; }
# xl aborts in pthread_cancel without libgcc_s (dlopen'd, so ldd misses it).
cp -L /lib/x86_64-linux-gnu/libgcc_s.so.1 "$root/lib/x86_64-linux-gnu/"
ln -sf $xenbin/xl "$root/sbin/xl"
echo 'autoballoon="off"' >"$root/etc/xen/xl.conf"
cp "$here/vbd-hotplug.sh" "$root/etc/xen/scripts/e2e-vbd"

mkdir -p "$root/usr/sbin" "$root/usr/bin"
# shellcheck disable=SC2086 # a word list
if [[ -n ${DOM0_BINS:-} ]]; then copy_bins "$root" $DOM0_BINS; fi
for f in ${DOM0_FILES:-}; do
	mkdir -p "$root/$(dirname "${f#*=}")"
	cp -p "${f%%=*}" "$root/${f#*=}"
done
copy_bins "$root" "$TMEMD" "$TMEMCTL" "$CGFILL"
mv "$root/$TMEMD" "$root/usr/sbin/tmemd"; mv "$root/$TMEMCTL" "$root/usr/bin/tmemctl"
# Issue 28's cgroup case in dom0: the client and the memory hog.
mv "$root/$CGFILL" "$root/usr/bin/e2e-cgfill"; cp "$WORKLOAD" "$root/usr/bin/e2e-workload"

cp "/boot/vmlinuz-$KV" "$root/guest/vmlinuz-stock"
# dm_mod first: tmem_shim.ko uses its symbols (the tmemcache target);
# ext4 and crc32c for pv-readcache's filesystem.
guest_irfs "$root/guest/initrd-stock.gz" "$SHIM_STOCK" xen-blkfront dm_mod ext4 crc32c_generic
if [[ -n ${FS_KERNEL:-} ]]; then
	cp "$FS_KERNEL" "$root/guest/vmlinuz-fs"
	guest_irfs "$root/guest/initrd-fs.gz" "$FS_SHIM"
fi

: >"$root/guest/guests"
while read -r name type kernel mode quota disk; do
	[[ -n $name ]] || continue
	[[ -f $root/guest/vmlinuz-$kernel ]] || die "guest $name: no kernel '$kernel'"
	# A PVH guest keeps to one pCPU: moved between the emulated CPUs, PVH
	# guests triple-faulted in most runs; pinned, in none (README).
	pin=; [[ $type == pvh ]] && pin="cpus = \"$(( ${SMP:-2} - 1 ))\""
	disks="disk = [ \"format=raw, vdev=xvdb, access=rw, script=/etc/xen/scripts/e2e-vbd, target=$disk\" ]  # target last: it takes the rest"
	[[ $disk == none ]] && disks=
	cat >"$root/guest/$name.cfg" <<EOC
name = "$name"
type = "$type"
kernel = "/guest/vmlinuz-$kernel"
ramdisk = "/guest/initrd-$kernel.gz"
extra = "console=hvc0 ${E2E_GUEST_ARGS:-quiet} panic=-1 e2e.name=$name e2e.mode=$mode e2e.quota=$quota e2e.swapmb=$SWAPMB e2e.filesmb=$FILESMB ${E2E_GUEST_EXTRA:-}"
memory = ${GUEST_MEM:-256}
maxmem = ${GUEST_MEM:-256}
vcpus = 1
$pin
$disks
on_poweroff = "destroy"
on_crash = "preserve"
on_reboot = "destroy"   # a triple-faulting PVH guest must not come back
${E2E_XLCFG_EXTRA:-}
EOC
	echo "$name $quota" >>"$root/guest/guests"
done <<<"$GUESTS"
cp "${DOM0_INIT:-$here/dom0-init.sh}" "$root/init"
cp "$here/dom0-boot.sh" "$root/dom0-boot.sh"
pack_cpio "$root" "$out"
echo "mkinitramfs: $out $(du -h "$out" | cut -f1)"
