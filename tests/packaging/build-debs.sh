#!/bin/bash
# Builds the Debian packages from a copy of the tree (so debian/'s scratch
# files never land in the work tree) and runs lintian on them: an error
# fails, warnings are printed.
#   usage: build-debs.sh OUTDIR    (the .debs and .changes end up there)
set -euo pipefail
out=${1:?usage: build-debs.sh OUTDIR}
rm -rf "$out"
mkdir -p "$out/src"
tar -c --exclude=./build --exclude=./.git --exclude=./debian/tmp \
	--exclude='./debian/.debhelper' . | tar -x -C "$out/src"
(cd "$out/src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 ||
	{ tail -60 "$out/build.log"; echo "debs: dpkg-buildpackage failed (log: $out/build.log)"; exit 1; }
rm -rf "$out/src"
changes=("$out"/*.changes)
echo "debs: built $(cd "$out" && echo *.deb)"
# lintian refuses nothing as root, but says so; keep its report only.
if ! lintian --fail-on error --display-info --tag-display-limit 0 "${changes[@]}" >"$out/lintian.log" 2>&1; then
	cat "$out/lintian.log"; echo "debs: lintian reported errors"; exit 1
fi
grep -v 'running with root privileges' "$out/lintian.log" | sed 's/^/    /' || true
echo "debs: lintian: $(grep -c '^E:' "$out/lintian.log" || true) errors," \
	"$(grep -c '^W:' "$out/lintian.log" || true) warnings," \
	"$(grep -c '^I:' "$out/lintian.log" || true) info (lintian.log in $out)"
