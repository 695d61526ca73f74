#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/soak/sample.sh AGENT_PID PIN_DIR URL CHURN_DIR CHURN_PID PHASE_FILE START CGROUP_ROOT
#
# The soak's sampler (scripts/soak/soak.sh starts it): once a second, until
# the agent exits or this is killed, one CSV line on stdout with
#
#   t_s            seconds since START (unix seconds, fractions allowed)
#   phase, cycle   the two words of PHASE_FILE: what the driver is doing
#   rss_kib        the agent's resident set (/proc/PID/status VmRSS)
#   fds            the agent's open file descriptors (/proc/PID/fd)
#   loop_ms        qoslet_agent_loop_duration_seconds from URL (/metrics), in ms
#   agent_cpu_s    the agent's CPU time so far (user + system)
#   churn_cpu_s    the churn driver's CPU time so far, its reaped tasks included
#   churn_cgroups  cgroups below CHURN_DIR now
#   map_<name>...  entries of each pinned hash map in PIN_DIR, one column a map
#   dead_<name>... of those, the entries whose key names a cgroup id (the key
#                  itself, or a field of it) that no directory below
#                  CGROUP_ROOT (the hierarchy the maps' ids come from) has
#
# The maps keyed by cgroup id hold an entry for every cgroup on the machine
# whose tasks did what the map counts, so their totals follow the machine's
# other work (a service that first waits on the disk adds one to
# memstall_cg); a leak is an entry of a cgroup that is gone, which
# dead_<name> counts. The dump comes before the walk, so an entry counts as
# dead only if its cgroup went before the walk (the rmdir sweep is then a
# moment late, which medians absorb). A map whose keys are no cgroup ids
# (a thread id; a key with no number, when the map has no BTF) counts every
# entry as dead: its column is its total.
#
# A value that cannot be read this second is left empty. The first line is
# the header. Arrays, ring buffers and task storage have no entries to count
# (fixed size, or kept with the task): only hash maps are listed.
set -uo pipefail

[ $# = 8 ] || {
	echo "usage: sample.sh AGENT_PID PIN_DIR URL CHURN_DIR CHURN_PID PHASE_FILE START CGROUP_ROOT" >&2
	exit 2
}
pid=$1 pins=$2 url=$3 churn=$4 churn_pid=$5 phase_file=$6 start=$7 cgroot=$8
HZ=$(getconf CLK_TCK)

maps=()
for f in "$pins"/*; do
	case $(bpftool -j map show pinned "$f" 2>/dev/null | jq -r '.type // empty') in
	hash | lru_hash | percpu_hash | lru_percpu_hash) maps+=("${f##*/}") ;;
	esac
done

# Unix microseconds, without a fork.
now_us() {
	local t=$EPOCHREALTIME
	echo $((${t%.*} * 1000000 + 10#${t#*.}))
}

# Fields 14-17 of /proc/PID/stat (utime stime cutime cstime) in seconds; the
# command name (field 2) may hold spaces, so fields count from its ')'.
cpu_s() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	stat=${stat##*) }
	awk -v hz="$HZ" '{ printf "%.2f", ($12 + $13 + $14 + $15) / hz }' <<<"$stat"
}

# Entries of one pinned map: one "key" per entry in bpftool's dump (with BTF
# it prints no "Found N elements" line). Bounded: a dump that does not end
# (lib.sh's map_dump says how one can) would hold the sampler, and its
# TERM, for ever; the keys it printed in 5 s count, and the growth checks
# see them.
# Prints "ENTRIES,DEAD"; the live cgroup ids are read from $live_ids, which
# the caller fills after the dumps (see above).
map_entries() {
	timeout 5 bpftool -j map dump pinned "$pins/$1" 2>/dev/null >"$dumps/$1"
}
map_counts() {
	# A dump cut short by the timeout is no JSON: count its keys alone.
	jq -r --slurpfile live <(printf '%s\n' "${live_ids[@]}") '
		($live | map({key: tostring, value: true}) | from_entries) as $l
		| [.[] | .formatted.key // .key
		   | [if type == "number" then . elif type == "object" then .[] else empty end
		      | select(type == "number") | tostring]
		   | length == 0 or any(.[]; $l[.] | not)]
		| "\(length),\(map(select(.)) | length)"' "$dumps/$1" 2>/dev/null ||
		echo "$(grep -c '"key":' "$dumps/$1"),"
}
dumps=$(mktemp -d)
trap 'rm -rf "$dumps"' EXIT

header="t_s,phase,cycle,rss_kib,fds,loop_ms,agent_cpu_s,churn_cpu_s,churn_cgroups"
for m in "${maps[@]}"; do
	header="$header,map_$m,dead_$m"
done
echo "$header"

start_us=$(awk -v s="$start" 'BEGIN { printf "%.0f", s * 1000000 }')
shopt -s nullglob
exec {sleeper}<> <(:) # read -t on it sleeps without a fork
next=$(now_us)
while [ -d "/proc/$pid" ]; do
	t=$(now_us)
	phase="" cycle=""
	read -r phase cycle _ <"$phase_file" 2>/dev/null
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
	fd_list=("/proc/$pid/fd/"*)
	loop=$(curl -s --max-time 2 "$url" |
		awk '$1 == "qoslet_agent_loop_duration_seconds" { printf "%.3f", $2 * 1000 }')
	live=("$churn"/c*/)
	line="$(awk -v t="$t" -v s="$start_us" 'BEGIN { printf "%.1f", (t - s) / 1e6 }'),$phase,$cycle,$rss,${#fd_list[@]},$loop"
	line="$line,$(cpu_s "$pid"),$(cpu_s "$churn_pid"),${#live[@]}"
	for m in "${maps[@]}"; do
		map_entries "$m"
	done
	mapfile -t live_ids < <(find "$cgroot" -type d -printf '%i\n' 2>/dev/null)
	for m in "${maps[@]}"; do
		line="$line,$(map_counts "$m")"
	done
	echo "$line"
	next=$((next + 1000000))
	t=$(now_us)
	[ "$next" -gt "$t" ] || next=$((t + 1000000)) # overran: start again from now
	read -r -t "$(awk -v d=$((next - t)) 'BEGIN { printf "%.6f", d / 1e6 }')" -u "$sleeper" _
done
