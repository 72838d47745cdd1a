#!/bin/bash
# Install the Debian packages listed in $1 that are missing.  Quick and
# silent when everything is there; needs root (or sudo) otherwise.
set -euo pipefail
list=${1:?usage: deps.sh LIST}
missing=()
while read -r pkg _; do
	[[ -z "$pkg" || "$pkg" == \#* ]] && continue
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[[ "$status" == installed ]] || missing+=("$pkg")
done <"$list"
((${#missing[@]} == 0)) && exit 0
echo "deps: installing ${missing[*]}"
sudo=()
if ((EUID != 0)); then
	command -v sudo >/dev/null || { echo "deps: need root to install: ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
