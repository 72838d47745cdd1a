# bash completion for tmemctl(8); installed as
# /usr/share/bash-completion/completions/tmemctl.
# Completes the commands, each command's options, top's sort keys, and
# CLIENT from the connected clients (the CLIENT and NAME columns of
# "tmemctl list": a domain's uuid:U and xl name, a local client's name, on
# the socket the line names with --socket or --runtime-dir).

_tmemctl_clients()
{
	local -a where=()
	local i
	for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
		case ${COMP_WORDS[i]} in
		--socket | --runtime-dir) where+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}") ;;
		esac
	done
	tmemctl "${where[@]}" list 2>/dev/null | awk 'NR > 1 { print $2; if ($3 != $2) print $3 }'
}

_tmemctl()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="status stats list set freeze thaw flush shared-auth pool-size release top freeable forget saved unset migrate-check migrate-push"
	local global="--socket --runtime-dir --json --help --version"
	local cmd="" i

	case $prev in
	--socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--runtime-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--compress) COMPREPLY=($(compgen -W "off lz4 zstd zstd:1 zstd:3 zstd:9 zstd:19" -- "$cur")); return ;;
	--sort | -s) COMPREPLY=($(compgen -W "name eph pers puts gets hit evict" -- "$cur")); return ;;
	--weight | --ephemeral-max | --persistent-max | --spill-max | --delay | -d | --iterations | -n) return ;;
	esac
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--socket | --runtime-dir) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$global" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		return
	fi
	local opts="--json --help --socket --runtime-dir" clients=0
	case $cmd in
	stats) opts+=" --prometheus"; clients=1 ;;
	list) opts+=" --all -a"; clients=1 ;;
	set) opts+=" --all -a --weight --ephemeral-max --persistent-max --spill-max --compress"; clients=1 ;;
	freeze | thaw | flush) opts+=" --all -a"; clients=1 ;;
	forget | saved | migrate-check | migrate-push) clients=1 ;;
	unset) opts+=" --all -a --weight --ephemeral-max --persistent-max --compress --frozen --spill-max"; clients=1 ;;
	shared-auth) opts+=" --revoke" ;;
	top) opts+=" --delay --sort --iterations" ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	elif ((clients)); then
		COMPREPLY=($(compgen -W "$(_tmemctl_clients)" -- "$cur"))
	fi
}
complete -F _tmemctl tmemctl
