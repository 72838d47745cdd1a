#!/bin/bash
# make-corpus.sh FILE [PAGES]: a page corpus for tmem-bench --corpus and
# compress-bench, from files on this machine (issue 16): 4 KiB pages of
# ELF shared libraries, of text and docs (headers, licenses, man pages
# and docs that are not compressed already), plus 20% zero pages,
# shuffled.  PAGES (default 16384, 64 MiB) is the total.
set -euo pipefail
out=${1:?usage: make-corpus.sh FILE [PAGES]}
pages=${2:-16384}
zero=$((pages / 5))
elf=$(((pages - zero) / 2))
text=$((pages - zero - elf))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Whole 4 KiB pages of the files find lists, up to n pages, into $2.
take() {
	local n=$1 dst=$2
	shift 2
	find "$@" -type f -size +8k 2>/dev/null | LC_ALL=C sort | while read -r f; do
		cat "$f"
	done | head -c $((n * 4096)) >"$dst" || true
	local got=$(($(stat -c %s "$dst") / 4096))
	if [ "$got" -lt "$n" ]; then
		echo "make-corpus.sh: only $got of $n pages from $*" >&2
	fi
}
take "$elf" "$tmp/elf" /usr/lib/x86_64-linux-gnu -name '*.so*'
take "$text" "$tmp/text" /usr/include /usr/share/common-licenses /usr/share/doc \
	\( -name '*.h' -o -name '*.txt' -o -name '*.md' -o -name 'copyright' -o -name '*.html' \
	-o -path '/usr/share/common-licenses/*' \)
head -c $((zero * 4096)) /dev/zero >"$tmp/zero"
# Shuffle whole pages (a fixed random source: the same corpus each time).
mkdir "$tmp/p"
cat "$tmp/elf" "$tmp/text" "$tmp/zero" | (cd "$tmp/p" && split -a 6 -b 4096 - pg.)
(cd "$tmp/p" && ls | shuf --random-source=<(yes 16) | xargs cat) >"$out"
echo "make-corpus.sh: $out: $(($(stat -c %s "$out") / 4096)) pages ($elf ELF, $text text, $zero zero wanted)" >&2
