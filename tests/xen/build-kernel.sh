#!/bin/bash
# Build (once per machine) the test kernel for the e2e-xen harness: Debian's
# linux-source-6.1 + the PATCHES below (a free frontswap, and cleancache
# restored for ext4; one kernel serves pv-frontswap, which leaves
# cleancache unregistered, and pv-cleancache), configured with
# `make x86_64_defconfig xen.config` + the CONFIGS fragments.  trim.config,
# last, takes out what a domU here never uses (graphics, sound, USB, NICs,
# ATA/SCSI, EFI, ...): a cold build compiles 1,864 objects instead of 2,946,
# about 40% less code (README, "What `.ci/run` runs"); WANT below lists
# what it must leave.  The tree is cached outside the repository, keyed by
# a hash of the source package's version, the patches, the config fragments
# and RECIPE, so a change to any of them builds a new one.  Bump RECIPE when
# the build steps below change.
#
# usage: build-kernel.sh            build if needed; print the tree's path
#        build-kernel.sh --path     print the tree's path only (no build)
# env:   TMEMD_E2E_CACHE (default /var/cache/tmemd-e2e), KJOBS (default 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${TMEMD_E2E_CACHE:-/var/cache/tmemd-e2e}
tarball=/usr/src/linux-source-6.1.tar.xz
[[ -f $tarball ]] || { echo "build-kernel: $tarball missing (apt-get install linux-source-6.1)" >&2; exit 1; }

RECIPE=1
PATCHES="frontswap-prompt.patch cleancache.patch"   # applied in this order
CONFIGS="frontswap.config cleancache.config trim.config"
WANT="CONFIG_FRONTSWAP=y CONFIG_XEN_PV=y CONFIG_XEN_PVH=y CONFIG_XEN_BLKDEV_FRONTEND=y"
WANT+=" CONFIG_BLK_DEV_LOOP=y CONFIG_KPROBES=y CONFIG_CLEANCACHE=y CONFIG_EXT4_FS=y"
# and what trim.config must leave: the console, xl save, PVH, the shim's
# counters and its dm target, the guests' /dev and initramfs.
WANT+=" CONFIG_HVC_XEN=y CONFIG_XEN_SAVE_RESTORE=y CONFIG_ACPI=y CONFIG_DEBUG_FS=y CONFIG_BLK_DEV_DM=y"
WANT+=" CONFIG_DEVTMPFS=y CONFIG_BLK_DEV_INITRD=y CONFIG_SWAP=y CONFIG_KALLSYMS_ALL=y"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
key=$( { echo "recipe $RECIPE $srcver"; for p in $PATCHES $CONFIGS; do cat "$here/kernel/$p"; done; } |
	sha256sum | cut -c1-16)
tree=$cache/kernel-$key
if [[ ${1:-} == --path ]]; then echo "$tree"; exit 0; fi
if [[ -f $tree/.tmemd-e2e-done ]]; then echo "$tree"; exit 0; fi

mkdir -p "$cache"
exec 9>"$cache/kernel-$key.lock"
flock 9                         # a second run waits for the first
if [[ -f $tree/.tmemd-e2e-done ]]; then echo "$tree"; exit 0; fi

log=$cache/kernel-$key.log
echo "build-kernel: building $tree (log: $log)" >&2
start=$(date +%s)
{
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xJf "$tarball" -C "$tree.tmp" --strip-components=1
	for p in $PATCHES; do patch -d "$tree.tmp" -p1 --forward <"$here/kernel/$p"; done
	cd "$tree.tmp"
	make -s x86_64_defconfig xen.config
	args=()
	for c in $CONFIGS; do
		while read -r op sym; do
			[[ -z $op || $op == \#* ]] && continue
			args+=("$op" "$sym")
		done <"$here/kernel/$c"
	done
	scripts/config "${args[@]}"
	make -s olddefconfig
	# Fail loudly if Kconfig dropped a setting the harness depends on.
	for want in $WANT; do
		grep -qx "$want" .config || { echo "build-kernel: .config lacks $want" >&2; exit 1; }
	done
	! grep -q '^CONFIG_ZSWAP=y' .config || { echo "build-kernel: ZSWAP still on" >&2; exit 1; }
	nice -n 10 make -j"${KJOBS:-2}" bzImage modules_prepare
	cd /
	mv "$tree.tmp" "$tree"
} >"$log" 2>&1 || { echo "build-kernel: FAILED, last lines of $log:" >&2; tail -30 "$log" >&2; exit 1; }
echo "$(( $(date +%s) - start ))" >"$tree/.tmemd-e2e-done"
echo "build-kernel: built in $(( $(date +%s) - start ))s" >&2
echo "$tree"
