#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The layering of user/, checked on the sources (make check-layers; make test
# runs it first). It fails, naming file:line, on:
#  - an include of a higher folder from a lower one (the ranks below);
#  - an include that is not in the one style: "folder/file.h" from user/,
#    "file.h" for user/'s own top-level files, "bpf/file.h" for the types the
#    BPF programs share; so no "../" and no bare same-folder names;
#  - two files of the same name under user/ and bpf/.
# Only quoted includes count; generated skeletons (*.skel.h) and vmlinux.h
# are the build's, not the tree's.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# Higher ranks may include lower ones, never the other way round, and two
# folders of one rank not each other. bpf: the types the BPF programs share
# with user space; base: user/'s top-level files (clock, log, ...); cgroup:
# the cgroup layer (paths, knobs, tasks) the probes, collector and actuator use.
# policy sits low because its model.h is the tick record's types, which the
# collector fills. main.c, the command dispatcher, sits above everything.
declare -A RANK=(
	[bpf]=0
	[base]=1
	[cgroup]=2
	[probes]=3
	[policy]=4
	[decision]=5
	[actuate]=6 [kube]=6
	[collect]=7
	[report]=8 [cli]=8
	[config]=9
	[record]=10
	[agent]=11
	[main]=12
)

folder_of() { # user/x/y.c -> x; user/y.c -> base (main for main.c); bpf/y.h -> bpf
	case $1 in
	user/main.c) echo main ;;
	user/*/*) local p=${1#user/}; echo "${p%%/*}" ;;
	user/*) echo base ;;
	bpf/*) echo bpf ;;
	esac
}

fail=0
bad() {
	echo "check-layers: $*" >&2
	fail=1
}

mapfile -t files < <(git ls-files 'user/*.c' 'user/*.h' 'bpf/*.c' 'bpf/*.h')
for f in "${files[@]}"; do
	from=$(folder_of "$f")
	[ -n "${RANK[$from]:-}" ] || { bad "$f: folder '$from' has no rank (add it to scripts/check-layers.sh)"; continue; }
	while IFS=: read -r line inc; do
		inc=${inc#*\"}
		inc=${inc%\"*}
		case $inc in *.skel.h | vmlinux.h) continue ;; esac
		if [[ $f == bpf/* ]]; then
			# BPF programs include their neighbours by name (-Ibpf).
			[ -f "bpf/$inc" ] || bad "$f:$line: \"$inc\" is not a file of bpf/"
			continue
		fi
		if [[ $inc == ../* || $inc == */../* ]]; then
			bad "$f:$line: \"$inc\": include as \"folder/file.h\" from user/, not relative"
			continue
		fi
		if [ -f "user/$inc" ]; then
			to=$(folder_of "user/$inc")
		elif [[ $inc == bpf/* && -f $inc ]]; then
			to=bpf
		else
			bad "$f:$line: \"$inc\" names no file as \"folder/file.h\" from user/ (or bpf/file.h)"
			continue
		fi
		[ "$to" = "$from" ] && continue
		if [ -z "${RANK[$to]:-}" ]; then
			bad "$f:$line: folder '$to' has no rank (add it to scripts/check-layers.sh)"
		elif ((RANK[$to] >= RANK[$from])); then
			bad "$f:$line: $from (rank ${RANK[$from]}) includes $inc of $to (rank ${RANK[$to]}): a lower layer may not include a higher one or a peer"
		fi
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done

while read -r name; do
	bad "two files named $name: $(printf '%s\n' "${files[@]}" | grep "/$name\$" | tr '\n' ' ')"
done < <(printf '%s\n' "${files[@]}" | xargs -n1 basename | sort | uniq -d)

[ "$fail" = 0 ] && echo "check-layers: ${#files[@]} files, layering and include style hold"
exit "$fail"
