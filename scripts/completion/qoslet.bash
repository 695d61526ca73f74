# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Bash completion for qoslet (installed as share/bash-completion/completions/qoslet).
#
# Commands, options and option values are read from the binary's own --help
# when first needed, and kept for the shell's life: completion follows the
# qoslet being completed (also ./build/qoslet) and cannot drift from it, at
# the cost of one `qoslet CMD --help` (a few ms, no root) per command and
# shell. From the help text:
#   - commands: the indented first words under "Commands:";
#   - options: each "-x, --long ARG" line under "Options:"; ARG is the
#     upper-case word after the option (FILE, DIR, HOOK, ...);
#   - values: for an ARG other than FILE, DIR, SECONDS, CGROUP, the
#     lower-case words of the option's description listed as "a, b or c"
#     (parenthesised remarks and text up to a colon dropped), e.g.
#     "--hook HOOK  auto (default), tp_btf or raw_tp" -> auto tp_btf raw_tp.
# FILE completes file names, DIR directories, and so does an operand the usage
# calls FILE (replay's recording); other operands (INTERVAL, COUNT) nothing.

declare -gA _qoslet_cache

# _qoslet_load BIN [CMD]: runs BIN [CMD] --help once per shell into the cache.
# Called directly, not in $(...), so that the cache outlives the call.
_qoslet_load() {
	local key="$1 ${2-}"
	[[ -n ${_qoslet_cache[$key]+set} ]] ||
		_qoslet_cache[$key]=$("$1" ${2:+"$2"} --help 2>/dev/null)
}

# The top-level options (from the usage lines) and the commands `qoslet --help`
# lists.
_qoslet_toplevel() {
	awk '/^$/ { exit } { print }' <<<"${_qoslet_cache["$1 "]}" | grep -o -- '--[a-z-]*'
}
_qoslet_commands() {
	awk '
		/^Commands:/ { on = 1; next }
		on && /^[^ ]/ { exit }
		on && /^  [a-z]/ { print $1 }' <<<"${_qoslet_cache["$1 "]}"
}

# One line per long option of BIN CMD: "--name -x ARG VALUE...", with "-" for
# no short option or no ARG. Continuation lines of a description are joined
# first.
_qoslet_options() {
	awk '
		function flush(    desc, n, i, w, vals, out) {
			if (opt == "")
				return
			out = opt " " short " " (arg == "" ? "-" : arg)
			if (arg != "" && arg !~ /^(FILE|DIR|SECONDS|CGROUP)$/) {
				desc = text
				gsub(/\([^)]*\)/, "", desc)
				sub(/^[^:]*:/, "", desc)
				gsub(/ or /, ",", desc)
				n = split(desc, w, ",")
				vals = ""
				for (i = 1; i <= n; i++) {
					gsub(/^ +| +$/, "", w[i])
					if (w[i] ~ /^[a-z][a-z0-9_]*$/)
						vals = vals " " w[i]
				}
				# A single word is prose, not a list of values.
				if (split(vals, w, " ") > 1)
					out = out vals
			}
			print out
			opt = ""
		}
		/^Options:/ { on = 1; next }
		!on { next }
		/^ *(-[a-zA-Z], )?--[a-z]/ {
			flush()
			line = $0
			sub(/^ */, "", line)
			short = "-"
			if (line ~ /^-[a-zA-Z], /) {
				short = substr(line, 1, 2)
				line = substr(line, 5)
			}
			opt = line
			sub(/[ =].*/, "", opt)
			line = substr(line, length(opt) + 1)
			arg = ""
			if (match(line, /^ [A-Z][A-Z_]*( |$)/)) {
				arg = substr(line, 2, RLENGTH - 1)
				sub(/ $/, "", arg)
				line = substr(line, RLENGTH + 1)
			}
			text = line
			next
		}
		/^                  / && opt != "" { text = text " " $0; next }
		{ flush() }
		END { flush() }' <<<"${_qoslet_cache["$1 $2"]}"
}

# True when BIN CMD's usage takes a FILE operand (replay's recording): a FILE
# in the usage lines that is no option's value.
_qoslet_file_operand() {
	awk '/^$/ { exit }
		{ for (i = 2; i <= NF; i++)
			if ($i ~ /^\[?FILE/ && $(i - 1) !~ /^\[?-/) found = 1 }
		END { exit !found }' <<<"${_qoslet_cache["$1 $2"]}"
}

_qoslet() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev="" bin=${COMP_WORDS[0]} cmd opt arg vals
	local -a words
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	# shellcheck disable=SC2088 # the word as typed: its tilde is literal
	[[ $bin == "~/"* ]] && bin=$HOME/${bin#"~/"}
	command -v "$bin" >/dev/null 2>&1 || return 0

	_qoslet_load "$bin"
	if ((COMP_CWORD == 1)); then
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$(_qoslet_toplevel "$bin")" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$(_qoslet_commands "$bin")" -- "$cur")
		fi
		return 0
	fi

	cmd=${COMP_WORDS[1]}
	_qoslet_load "$bin" "$cmd"
	# --opt=value: bash splits it into "--opt" "=" "value" (COMP_WORDBREAKS).
	opt=$prev
	if [[ $cur == "=" ]]; then
		opt=$prev cur=""
	elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	fi

	if [[ $opt == --?* || $opt == -[a-zA-Z] ]]; then
		while read -r -a words; do
			[[ ${words[0]} == "$opt" || ${words[1]} == "$opt" ]] || continue
			arg=${words[2]}
			vals=${words[*]:3}
			case $arg in
			-) break ;;
			FILE)
				compopt -o filenames 2>/dev/null
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
				;;
			DIR)
				compopt -o filenames 2>/dev/null
				mapfile -t COMPREPLY < <(compgen -d -- "$cur")
				;;
			*) [[ -n $vals ]] && mapfile -t COMPREPLY < <(compgen -W "$vals" -- "$cur") ;;
			esac
			return 0
		done < <(_qoslet_options "$bin" "$cmd")
	fi

	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_qoslet_options "$bin" "$cmd" |
			awk '{ print $1 }')" -- "$cur")
		return 0
	fi
	if _qoslet_file_operand "$bin" "$cmd"; then
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
}

complete -F _qoslet qoslet
