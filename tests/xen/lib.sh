# Shared helpers of the e2e-xen scripts (sourced, not run).

die() { echo "e2e-xen: FAIL: $*" >&2; exit 1; }

# copy_modules KDIR_MODULES DEST NAME...: copy the named modules of a
# /lib/modules/KV tree and everything they depend on into DEST, and write
# DEST/load-order (dependencies first) for insmod.
copy_modules() {
	local moddir=$1 dest=$2; shift 2
	local -A seen=()
	mkdir -p "$dest"
	: >"$dest/load-order"
	_copy_module() {
		local name=$1 path dep
		[[ -n ${seen[$name]:-} ]] && return 0
		seen[$name]=1
		path=$(find "$moddir/kernel" -name "$name.ko" -print -quit)
		[[ -n $path ]] || path=$(find "$moddir/kernel" -name "${name//_/-}.ko" -print -quit)
		[[ -n $path ]] || die "module $name not found under $moddir"
		for dep in $(modinfo -F depends "$path" | tr ',' ' '); do
			_copy_module "$dep"
		done
		cp "$path" "$dest/"
		basename "$path" >>"$dest/load-order"
	}
	local m
	for m in "$@"; do _copy_module "$m"; done
}

# copy_bins DEST FILE...: copy programs and the shared libraries they
# load (by their full paths) into the root DEST.
copy_bins() {
	local dest=$1 b l; shift
	for b in "$@"; do
		[[ -e $b ]] || die "$b missing"
		mkdir -p "$dest/$(dirname "$b")"
		cp -L "$b" "$dest/$b"
		for l in $(ldd "$b" 2>/dev/null | grep -oE '/[^ ]+\.so[^ ]*'); do
			mkdir -p "$dest/$(dirname "$l")"
			[[ -e $dest/$l ]] || cp -L "$l" "$dest/$l"
		done
	done
}

# busybox_root DIR: an empty root with busybox and its applet links.
busybox_root() {
	local dir=$1 a
	mkdir -p "$dir"/{bin,sbin,proc,sys,dev,tmp,run,mods,etc}
	cp /bin/busybox "$dir/bin/busybox"
	for a in $(/bin/busybox --list); do
		[[ -e $dir/bin/$a ]] || ln -s busybox "$dir/bin/$a"
	done
}

# pack_cpio DIR OUT: gzip'd newc archive of DIR.
pack_cpio() {
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2"
}

# QEMU CPU model.  -smap,-smep,-rdtscp: see the xen-nested reference.
# -xsave and what depends on it: with XSAVE, QEMU 7.2's TCG corrupts dom0
# user state (busybox, xl and tmemctl segfault in TLS setup or libc, several
# times a minute); with FXSAVE alone, none in 8 runs (README).
CPU_DEFAULT=max,-smap,-smep,-rdtscp,-xsave,-xsaveopt,-xgetbv1,-avx,-avx2,-fma,-f16c,-vaes,-mpx,-pku

# stock_kv: the version of Debian's stock kernel (dom0 and the stock
# guests), as linux-image-amd64 depends on it.
stock_kv() {
	local kv
	kv=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null | grep -oE 'linux-image-[^ ,]+' | head -1)
	kv=${kv#linux-image-}
	[[ -n $kv ]] || die "linux-image-amd64 is not installed"
	echo "$kv"
}

# build_shim WORK NAME KDIR [make args...]: tmem_shim.ko from SHIM_SRC
# into WORK/shim-NAME, against exactly the headers of KDIR.
build_shim() {
	local d=$1/shim-$2 kdir=$3; shift 3
	cp -r "$SHIM_SRC" "$d"
	make -s -C "$kdir" M="$d" "$@" modules >"$d.log" 2>&1 || { cat "$d.log"; die "tmem_shim.ko ($kdir) did not build"; }
	[[ -f $d/tmem_shim.ko ]] || die "no $d/tmem_shim.ko"
}

# xen_qemu_cmd ARRAY MEM_MIB SMP SERIAL XEN_ELF XEN_ARGS DOM0_ARGS CPIO: the
# QEMU command line of one nested Xen host (TCG), into the array named
# ARRAY; the caller adds its drives and NICs.  Xen gets the console and
# dom0's vCPU count, dom0 Debian's stock kernel (KV) with its console.
# E2E_QEMU, E2E_TCG_THREAD and E2E_CPU change QEMU, its threading and the
# CPU model (run-e2e.sh).
xen_qemu_cmd() {
	local -n _cmd=$1
	_cmd=(${E2E_QEMU:-qemu-system-x86_64} -accel "tcg,thread=${E2E_TCG_THREAD:-multi}"
		-cpu "${E2E_CPU:-$CPU_DEFAULT}" -m "$2" -smp "$3"
		-display none -serial "file:$4" -monitor none -no-reboot
		-kernel "$5"
		-append "dom0_max_vcpus=$3 console=com1 com1=115200,8n1 loglvl=warning guest_loglvl=warning noreboot $6"
		-initrd "/boot/vmlinuz-$KV console=hvc0 earlyprintk=xen panic=-1 loglevel=4 $7,$8")
}

# watch_silence PID LOG SECONDS: dom0 prints stats every 20 s while a guest
# runs, so a log that stops growing means the emulated machine hung (seen
# with one emulated CPU): stop QEMU then, rather than at the run's timeout.
# The caller defines stamp.
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
