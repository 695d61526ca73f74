#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# BE suppression with the split policy, on real cgroups with real load: BE
# gets whole CPUs to itself, the LS unit the others, and the kernel confines
# each to its set. A BE unit runs one CPU hog per CPU; an LS unit runs a light
# load (0.1 CPU); threshold 95% (the most split allows), so LS leaves a whole
# CPU idle and, confined to the others, shows a need for more by crossing it.
#  1. Applied decisions suppress.split_be on the BE unit and suppress.split_ls
#     on the LS unit; their cpuset.cpus files show the two lists, which are
#     disjoint, non-empty and together every CPU; every BE task's
#     Cpus_allowed_list (/proc) is BE's list; on cgroup v1, the BE unit's
#     cpuacct.usage_percpu grows only on its own CPUs over 2 s.
#  2. The LS unit then runs a hog per CPU: the split ends at once, BE is held
#     by a quota again (suppress.cfs_quota) and the LS unit's cpuset.cpus is
#     given back (its original, or on v2 before 6.x its parent's CPUs).
#  3. The LS hogs stop: the split comes back; a clean stop gives both units
#     their cpusets back and removes the journal.
# Not how fast: every wait is 15 s (the agent ticks every second). Under TCG
# steps 2 and 3 but the clean stop are left out, and step 1's kernel view when
# the guest's own use ends the split in each of its three windows (the test
# reports a skip). A node whose own use leaves BE no whole CPU (a loaded host)
# cannot split: the test skips, naming what the agent saw.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq stress-ng
require_binaries
test_setup
agent_setup

NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || skip "needs 2 CPUs to split"
ls=$(agent_cgroup ls)
be=$(agent_cgroup be)
ls_set=$(agent_cg_in "$ls" cpuset)
be_set=$(agent_cg_in "$be" cpuset)
[ -e "$be_set/cpuset.cpus" ] || skip "no cpuset controller for $be"
LS_REL=${ls#"$CG_ROOT"/}
BE_REL=${be#"$CG_ROOT"/}
CPUS=$(seq -s, 0 $((NCPU - 1)))
ls_orig=$(cat "$ls_set/cpuset.cpus")
be_orig=$(cat "$be_set/cpuset.cpus")
parent_eff=$(cat "$(dirname "$be_set")/cpuset.cpus.effective" 2>/dev/null || true)
log "before: LS cpuset.cpus \"$ls_orig\", BE \"$be_orig\""
agent_run "$be" "$CPUS" stress-ng --cpu "$NCPU" --timeout 120s
agent_run "$ls" "$CPUS" "$DUTYCYCLE" 1000 9000 120

# expand LIST: its CPUs, one a line ("0-2,5" -> 0 1 2 5).
expand() {
	tr ',' '\n' <<<"$1" | awk -F- 'NF { for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }'
}

# wait_file FILE WANT WHAT: FILE holds WANT within 15 s; else false, with
# WAIT_FILE_WHY saying what it held.
wait_file() {
	for _ in $(seq 1 150); do
		[ "$(cat "$1")" = "$2" ] && return 0
		kill -0 "$AGENT_PID" 2>/dev/null || fail "agent exited: $(tail -n 5 "$AGENT_ERR")"
		sleep 0.1
	done
	WAIT_FILE_WHY="$3: $1 holds \"$(cat "$1")\", not \"$2\""
	return 1
}

# no_room_for_split: skips when one of the agent's last suppression decisions
# saw less than a whole CPU allowed to BE: the node's own use (other work on a
# loaded host, the guest's system under TCG) beside the LS unit's left none,
# and the split rightly never started or ended. Returns when there was room.
no_room_for_split() {
	local allowed
	allowed=$(decisions '.rule | startswith("suppress")' |
		jq -r '[.[-5:][] | .evidence.be_allowed_raw_cpus // empty] | min // empty')
	[ -n "$allowed" ] || return 0
	if awk -v a="$allowed" 'BEGIN { exit !(a < 1) }'; then
		skip "the node's own use left BE at most $allowed CPUs in 15 s, less than the whole CPU a split needs: $(decisions '.rule | startswith("suppress")' | jq -c '.[-1].evidence')"
	fi
}

# min_allowance_since SINCE_NS: the least BE allowance (before its floor) the
# agent's suppression decisions since then saw; room_since: it was a whole CPU.
min_allowance_since() {
	decisions '.ts_ns >= '"$1"' and (.rule | startswith("suppress"))' |
		jq -r '[.[] | .evidence.be_allowed_raw_cpus // empty] | min // "none"'
}
room_since() {
	local a
	a=$(min_allowance_since "$1")
	[ "$a" = none ] || awk -v a="$a" 'BEGIN { exit !(a >= 1) }'
}

# wait_split SINCE_NS: the BE and LS lists of the first applied split decisions
# after SINCE_NS, once both files show them: BE_LIST, LS_LIST.
wait_split() {
	local q='.outcome == "applied" and .ts_ns > '"$1"
	if ! BE_LIST=$(wait_decision "$q"' and .rule == "suppress.split_be" and .target.cgroup == "/'"$BE_REL"'"' 15 | jq -r .after); then
		no_room_for_split
		fail "no applied split for the BE unit in 15 s: $(decisions '.rule | startswith("suppress")' | jq -c 'map({rule, outcome, after, why, evidence}) | .[-3:]')"
	fi
	LS_LIST=$(wait_decision "$q"' and .rule == "suppress.split_ls" and .target.cgroup == "/'"$LS_REL"'"' 15 | jq -r .after) ||
		fail "no applied split for the LS unit in 15 s: $(decisions '.rule == "suppress.split_ls"' | jq -c 'map({outcome, after, why}) | .[-3:]')"
	wait_file "$be_set/cpuset.cpus" "$BE_LIST" "the BE unit's cpuset shows the split" ||
		{ no_room_for_split; fail "$WAIT_FILE_WHY"; }
	wait_file "$ls_set/cpuset.cpus" "$LS_LIST" "the LS unit's cpuset shows the split" ||
		{ no_room_for_split; fail "$WAIT_FILE_WHY"; }
}

agent_config '{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"}, {"glob": "'"$BE_REL"'", "class": "BE"}],
	"suppress": {"policy": "split", "threshold_percent": 95}, "interference": {"enabled": false}}'
agent_start

# ---- 1: split, as the kernel sees it ----
wait_split 0
log "split: BE \"$BE_LIST\", LS \"$LS_LIST\""
# kernel_view: BE's cpuset files, every BE task's CPU mask, and on v1 BE's
# CPU time per CPU over 2 s, as "file", "mask" and "percpu CPU:ms" lines.
be_acct=$(agent_cg_in "$be" cpuacct)
kernel_view() {
	local p u0 u1 c
	echo "file $(cat "$be_set/cpuset.cpus")/$(cat "$be_set/cpuset.cpus.effective" 2>/dev/null || echo -)"
	for p in $(cat "$be/cgroup.procs"); do
		awk -v p="$p" '$1 == "Cpus_allowed_list:" { print "mask", $2, p }' "/proc/$p/status" 2>/dev/null || true
	done
	[ -e "$be_acct/cpuacct.usage_percpu" ] || return 0
	read -ra u0 <"$be_acct/cpuacct.usage_percpu"
	sleep 2
	read -ra u1 <"$be_acct/cpuacct.usage_percpu"
	for c in $(seq 0 $((NCPU - 1))); do
		echo "percpu $c:$(((u1[c] - u0[c]) / 1000000))"
	done
}
mapfile -t be_cpus < <(expand "$BE_LIST")
mapfile -t ls_cpus < <(expand "$LS_LIST")
assert_cmp "${#be_cpus[@]}" ">=" 1 "BE holds a CPU"
assert_cmp "${#ls_cpus[@]}" ">=" 1 "LS holds a CPU"
assert_eq "$(printf '%s\n' "${be_cpus[@]}" "${ls_cpus[@]}" | sort -n | uniq | paste -sd, -)" "$CPUS" \
	"the two lists are disjoint and together every CPU"
assert_eq "$(printf '%s\n' "${be_cpus[@]}" "${ls_cpus[@]}" | wc -l)" "$NCPU" "no CPU in both lists"
# Other load on the machine can end the split for a tick (the allowance is
# what LS and the system leave): a window in which the agent moved the BE
# unit says nothing, and is taken again (3 times at most).
for try in 1 2 3; do
	t0=$(date +%s%N)
	at_start=$(cat "$be_set/cpuset.cpus")
	view=$(kernel_view)
	moved=$(decisions '.kind == "cpuset" and .target.cgroup == "/'"$BE_REL"'" and .ts_ns >= '"$t0" | jq length)
	[ "$at_start" = "$BE_LIST" ] || moved=$((moved + 1))
	[ "$moved" = 0 ] && break
	log "the agent moved the BE unit during window $try (foreign load: $(decisions '.ts_ns >= '"$t0" | jq -c 'map(.evidence.system_used_cpus) | map(select(. != null)) | .[:3]')); the most CPU time so far:"
	ps -eo pid,etimes,time,comm --sort=-time | head -6 | sed 's/^/#   /' >&2
	wait_split "$t0"
done
if [ "$moved" != 0 ] && { [ "${QOSLET_VM:-}" = tcg ] || ! room_since "$t0"; }; then
	# The node's own use is not the test's to control: once it ended all three
	# windows in a CI VM run (1.1 to 1.14 CPUs outside LS and BE), and on a
	# loaded host the agent saw less than a whole CPU left for BE.
	skip_part "the kernel's view of a held split (the node's own use ended it in 3 windows: BE's raw allowance down to $(min_allowance_since "$t0") CPUs)"
	view=""
else
	assert_eq "$moved" 0 "a window without the agent moving BE"
fi
file=""
while read -r what v pid; do
	case $what in
	file) file=$v ;;
	mask) assert_eq "$v" "$BE_LIST" "BE task $pid may run only on BE's CPUs (cpuset.cpus/effective then: $file)" ;;
	percpu)
		if [[ " ${be_cpus[*]} " == *" ${v%%:*} "* ]]; then
			assert_cmp "${v#*:}" ">" 1000 "BE's CPU time on its own CPU ${v%%:*} over 2 s (ms, cpuacct.usage_percpu)"
		else
			assert_cmp "${v#*:}" "<" 20 "BE's CPU time on LS's CPU ${v%%:*} over 2 s (ms, cpuacct.usage_percpu)"
		fi
		;;
	esac
done <<<"$view"
[ -z "$view" ] || grep -q "^percpu" <<<"$view" || log "no cpuacct.usage_percpu (cgroup v2): the per-CPU check is v1's"

# Steps 2 and 3 judge the split's dynamics by the LS unit's CPU time. Under
# TCG a vCPU's time lags the wall clock (the host runs it among other work),
# so a confined LS unit's use need not cross the threshold: not run there.
grow_and_drop() {
	# ---- 2: LS load grows: the split ends at once ----
	t0=$(date +%s%N)
	LS_HOGS=()
	for _ in $(seq 1 "$NCPU"); do
		agent_run "$ls" "$CPUS" "$DUTYCYCLE" 1000 0 120
		LS_HOGS+=("$CG_PID")
	done
	wait_decision '.rule == "suppress.cfs_quota" and .outcome == "applied" and .ts_ns > '"$t0" 15 >/dev/null ||
		fail "BE not back under a quota within 15 s of the LS load: $(decisions '.ts_ns > '"$t0" | jq -c 'map({rule, outcome, after}) | .[-4:]')"
	ls_parent_eff=$(cat "$(dirname "$ls_set")/cpuset.cpus.effective" 2>/dev/null || true)
	for _ in $(seq 1 150); do
		[ "$(cat "$ls_set/cpuset.cpus")" != "$LS_LIST" ] && break
		sleep 0.1
	done
	assert_cpus_restored "$ls_set" "$ls_orig" "$ls_parent_eff" "the split ended: the LS unit's cpuset is given back"

	# ---- 3: LS load drops: split again (the clean stop follows) ----
	t0=$(date +%s%N)
	for p in "${LS_HOGS[@]}"; do
		kill -TERM "$p"
		wait "$p" 2>/dev/null || true
	done
	wait_split "$t0"
	log "split again: BE \"$BE_LIST\", LS \"$LS_LIST\""
}
if [ "${QOSLET_VM:-}" = tcg ]; then
	skip_part "the split ending under LS load and coming back (under TCG a confined LS unit's CPU time lags the wall clock)"
else
	grow_and_drop
fi
agent_stop
assert_cpus_restored "$ls_set" "$ls_orig" "$parent_eff" "clean stop restored the LS unit's cpuset"
assert_cpus_restored "$be_set" "$be_orig" "$parent_eff" "clean stop restored the BE unit's cpuset"
[ ! -e "$STATE_DIR/actuator.json" ] || fail "the journal outlived a clean stop: $(cat "$STATE_DIR/actuator.json")"
test_end
