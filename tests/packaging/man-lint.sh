#!/bin/bash
# Lints every man page in man/ with groff: any warning fails.  Each page is
# formatted twice: as "groff -ww -z -man PAGE" (groff's default device) and
# for the UTF-8 terminal man(1) uses, whose glyphs differ.
#   usage: man-lint.sh [DIR]   (default man)
set -uo pipefail
dir=${1:-man}
shopt -s nullglob
pages=("$dir"/*.[0-9])
((${#pages[@]})) || { echo "man-lint: no pages in $dir/"; exit 1; }
fail=0
for p in "${pages[@]}"; do
	out=$(groff -ww -z -man "$p" 2>&1; LC_ALL=C.UTF-8 groff -ww -z -man -Tutf8 "$p" 2>&1)
	if [[ -n "$out" ]]; then
		echo "man-lint: $p:"; echo "$out" | sed 's/^/    /'; fail=1
	fi
done
((fail)) && exit 1
echo "man-lint: ${#pages[@]} pages, no warnings (${pages[*]##*/})"
