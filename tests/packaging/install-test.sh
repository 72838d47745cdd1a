#!/bin/bash
# make install into a DESTDIR must produce exactly the expected files (and
# symlinks), with sane modes, and make uninstall must remove them all.
#   usage: install-test.sh MAKE VERSION [make arguments...]
set -euo pipefail
make=${1:?usage: install-test.sh MAKE VERSION [ARGS...]}
version=${2:?}
shift 2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
paths=(PREFIX=/usr LIBDIR=/usr/lib SYSCONFDIR=/etc SYSTEMDUNITDIR=/lib/systemd/system
       DKMSDIR=/usr/src/tmem-shim-$version VERSION="$version")

expected() {
	cat <<LIST
etc/tmemd/tmemd.conf
lib/systemd/system/tmemd.service
usr/bin/tmem-bench
usr/bin/tmemctl
usr/include/tmem.h
usr/include/tmem_barrier.h
usr/include/tmem_local.h
usr/include/tmem_proto.h
usr/include/tmem_raw.h
usr/lib/libtmem.a
usr/lib/libtmem.so -> libtmem.so.0
usr/lib/libtmem.so.0 -> libtmem.so.$version
usr/lib/libtmem.so.$version
usr/lib/pkgconfig/libtmem.pc
usr/sbin/tmemd
usr/share/bash-completion/completions/tmemctl
usr/share/man/man1/tmem-bench.1
usr/share/man/man4/tmem_shim.4
usr/share/man/man5/tmemd.conf.5
usr/share/man/man7/tmem.7
usr/share/man/man8/tmemctl.8
usr/share/man/man8/tmemd.8
usr/src/tmem-shim-$version/dkms.conf
LIST
	# The DKMS tree: the module's source (guest-shim/kernel/ at the top)
	# and proto/'s headers, as the repository has them.
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		{ git ls-files -- guest-shim/kernel proto; git ls-files -o --exclude-standard -- guest-shim/kernel proto; }
	else
		find guest-shim/kernel proto -type f
	fi | grep -E '^(guest-shim/kernel/(core/)?[^/]*\.[ch]|guest-shim/kernel/(Kbuild|Makefile)|proto/[^/]*\.h)$' |
		grep -v '\.mod\.c$' | sed -e 's|^guest-shim/kernel/||' -e "s|^|usr/src/tmem-shim-$version/|"
}

listing() {
	(cd "$dest" && find . \( -type f -o -type l \) -printf '%P%l\n' |
		sed 's/\(libtmem\.so[.0-9]*\)\(libtmem\.so.*\)$/\1 -> \2/' | LC_ALL=C sort)
}

"$make" --no-print-directory install DESTDIR="$dest" "${paths[@]}" "$@"
if ! diff -u <(expected | LC_ALL=C sort -u) <(listing) >"$dest.diff"; then
	echo "install-test: DESTDIR install differs from the expected list (- expected, + installed):"
	sed 's/^/    /' "$dest.diff"; rm -f "$dest.diff"
	exit 1
fi
rm -f "$dest.diff"
n=$(listing | wc -l)

# Modes: programs 0755, everything else 0644.
bad=$(cd "$dest" && find . -type f \( \( -path './usr/*bin/*' ! -perm 0755 \) -o \
	\( ! -path './usr/*bin/*' ! -perm 0644 \) \) -printf '%m %P\n')
[[ -z "$bad" ]] || { echo "install-test: wrong modes:"; echo "$bad" | sed 's/^/    /'; exit 1; }
# The pkg-config file and dkms.conf have their placeholders filled in.
! grep -l '@[A-Z]*@' "$dest/usr/lib/pkgconfig/libtmem.pc" "$dest/usr/src/tmem-shim-$version/dkms.conf" ||
	{ echo "install-test: unreplaced @VARIABLE@ above"; exit 1; }
grep -qx "PACKAGE_VERSION=\"$version\"" "$dest/usr/src/tmem-shim-$version/dkms.conf"
[[ $(readlink -f "$dest/usr/lib/libtmem.so") == "$dest/usr/lib/libtmem.so.$version" ]]

# A second install keeps an edited config.
echo "# edited" >>"$dest/etc/tmemd/tmemd.conf"
"$make" --no-print-directory install DESTDIR="$dest" "${paths[@]}" "$@" >/dev/null
grep -q '^# edited' "$dest/etc/tmemd/tmemd.conf" || { echo "install-test: install overwrote an edited tmemd.conf"; exit 1; }

# uninstall leaves only the edited config.
"$make" --no-print-directory uninstall DESTDIR="$dest" "${paths[@]}" "$@"
left=$(cd "$dest" && find . \( -type f -o -type l \) -printf '%P\n')
if [[ "$left" != etc/tmemd/tmemd.conf ]]; then
	echo "install-test: uninstall left:"; echo "$left" | sed 's/^/    /'; exit 1
fi
echo "install-test: $n files installed as expected; uninstall removed them"
