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
