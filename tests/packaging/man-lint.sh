#!/bin/bash
# Lints every man page in man/: any message fails.
#  - groff -ww, twice: groff's default device and the UTF-8 terminal man(1)
#    uses, whose glyphs differ;
#  - mandoc -T lint, which also checks what groff lets by (a date .TH cannot
#    parse, macros in the wrong place, input lines over 80 bytes);
#  - the page as mandoc renders it for an 80-column terminal: no line wider
#    than 80 characters (a wide table would be cut or wrapped).
#   usage: man-lint.sh [DIR]   (default man)
set -uo pipefail
export LC_ALL=C.UTF-8
dir=${1:-man}
shopt -s nullglob
pages=("$dir"/*.[0-9])
((${#pages[@]})) || { echo "man-lint: no pages in $dir/"; exit 1; }
command -v mandoc >/dev/null || { echo "man-lint: mandoc missing (mk/deps.list)"; exit 1; }
# Prints the rendered lines of page $1 wider than 80 characters.  The
# overstrikes mandoc uses for bold and underline are removed first; bash
# counts characters, not bytes, in a UTF-8 locale (awk here may not).
too_wide() {
	local n=0 line
	mandoc -T utf8 -O width=78 "$1" 2>/dev/null | sed 's/.\x08//g' |
		while IFS= read -r line; do
			n=$((n + 1))
			((${#line} <= 80)) || echo "$1: rendered line $n is wider than 80 columns: $line"
		done
}
fail=0
for p in "${pages[@]}"; do
	out=$(groff -ww -z -man "$p" 2>&1; groff -ww -z -man -Tutf8 "$p" 2>&1)
	out+=$(mandoc -T lint -W style "$p" 2>&1)
	out+=$(too_wide "$p")
	if [[ -n "$out" ]]; then
		echo "man-lint: $p:"; echo "$out" | sed 's/^/    /'; fail=1
	fi
done
# Facts the pages once had wrong (issue 14): the package's config path,
# and control.sock among the runtime dir's files in both places it is
# described.
if grep -n '/etc/tmemd\.conf' "${pages[@]}"; then
	echo "man-lint: the config file is /etc/tmemd/tmemd.conf (debian/tmemd.install)"; fail=1
fi
for p in "$dir/tmemd.8" "$dir/tmemd.conf.5"; do
	[[ -f $p ]] || continue
	sed -n '/runtime\\-dir/,/^\.TP/p' "$p" | grep -q 'control\.sock' ||
		{ echo "man-lint: $p: runtime-dir does not name control.sock"; fail=1; }
done
((fail)) && exit 1
echo "man-lint: ${#pages[@]} pages, no groff or mandoc warnings, none wider than 80 columns (${pages[*]##*/})"
