#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Memory eviction under a subtree memory limit removes BE work in the right
# order and never LS. The test's parent gets a memory limit of 800 MiB (the
# agent's memory capacity); an LS unit holds 250 MiB, three BE units hold
# 100, 150 and 200 MiB: about 700 MiB in use, above the 70% threshold.
# evict.action "kill". From the kernel's own counters (the parent's usage
# minus its inactive file pages, each unit's working set and anon +
# unevictable) the test computes the round koordlet's rule makes: BE units,
# largest anon + unevictable first, until the working sets taken cover
# use - 68% of the limit. Then:
#   - the first evict decision names the largest BE unit, and the first round
#     names exactly the expected units, in that order;
#   - their evidence: capacity = the limit, used_ratio >= 0.70 and within 2
#     points of the kernel's;
#   - the victims' processes die of SIGKILL and their cgroups empty;
#   - the LS memhog lives and no evict decision ever names it;
#   - once the kernel's use is below 68%, no further unit is evicted (the
#     BE units left survive a cool-down and more).
# jq filters are single-quoted; agent_start takes its own options, not the script's.
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

MEMHOG=${MEMHOG:-$QOSLET_ROOT/build/tests/helpers/memhog}
MIB=$((1024 * 1024))
LIMIT_MIB=800
LS_MIB=250
BE_MIBS=(100 150 200)
HOLD_S=120 # the memhogs exit by themselves even if cleanup never runs
COOLDOWN_S=4
THRESHOLD=0.70
RELEASE=0.68

require_root
require_cmds jq taskset
require_binaries
[ -x "$MEMHOG" ] || fail "$MEMHOG is missing: run make $MEMHOG"
test_setup
agent_setup

mem_parent=$(agent_cg_in "$TEST_PARENT" memory)
[ -d "$mem_parent" ] || skip "no memory controller"
if [ -e "$mem_parent/memory.limit_in_bytes" ]; then
	echo $((LIMIT_MIB * MIB)) >"$mem_parent/memory.limit_in_bytes"
	USAGE=memory.usage_in_bytes ANON=total_rss UNEVICT=total_unevictable INACTIVE=total_inactive_file
elif [ -e "$mem_parent/memory.max" ]; then
	echo $((LIMIT_MIB * MIB)) >"$mem_parent/memory.max"
	USAGE=memory.current ANON=anon UNEVICT=unevictable INACTIVE=inactive_file
else
	skip "memory controller without a limit file (memory.limit_in_bytes nor memory.max)"
fi
P=${TEST_PARENT_REL#/}
CPUS=$(seq -s, 0 $(($(nproc) - 1)))
# The test's subtree outweighs the rest of the node: on this shared machine
# other work must not keep the memhogs from touching their memory.
cg_weight "$TEST_PARENT" 10240

# memstat CG KEY: a field of CG's memory.stat (CG: a path in the cpu hierarchy).
memstat() {
	awk -v k="$2" '$1 == k { print $2 }' "$(agent_cg_in "$1" memory)/memory.stat"
}
usage() {
	cat "$(agent_cg_in "$1" memory)/$USAGE"
}
# Working set, as the agent counts a unit's release: usage - inactive file.
working_set() {
	echo $(($(usage "$1") - $(memstat "$1" "$INACTIVE")))
}

# hog NAME MIB: a memhog holding MIB MiB in unit NAME; waits until charged.
declare -A PID CG
hog() {
	local name=$1 mib=$2 cg
	cg=$(agent_cgroup "$name")
	agent_run "$cg" "$CPUS" "$MEMHOG" "$mib" "$HOLD_S"
	PID[$name]=$CG_PID CG[$name]=$cg
	for _ in $(seq 1 600); do
		[ "$(usage "$cg")" -ge $((mib * MIB)) ] && return 0
		kill -0 "$CG_PID" 2>/dev/null || fail "memhog $mib MiB in $name exited: $(cat "$TMP"/bg.*.log)"
		sleep 0.05
	done
	fail "memhog in $name charged only $(usage "$cg") bytes after 30 s;" \
		"$(grep State "/proc/$CG_PID/status"), schedstat $(cat "/proc/$CG_PID/schedstat")"
}

hog ls "$LS_MIB"
BE=()
for mib in "${BE_MIBS[@]}"; do
	hog "be/m$mib" "$mib"
	BE+=("be/m$mib")
done

# The kernel's view, before the agent runs.
cap=$((LIMIT_MIB * MIB))
used=$(($(usage "$TEST_PARENT") - $(memstat "$TEST_PARENT" "$INACTIVE")))
kratio=$(ratio "$used" "$cap")
log "subtree: $used of $cap bytes in use: $kratio"
assert_cmp "$kratio" ">=" "$THRESHOLD" "the loads put the subtree above the threshold"
need=$(awk -v u="$used" -v c="$cap" -v r="$RELEASE" 'BEGIN { printf "%.0f", u - r * c }')
# Expected round: BE units by anon + unevictable, largest first, until the
# working sets taken reach the need (all units have the same priority, 0).
mapfile -t EXPECTED < <(for n in "${BE[@]}"; do
	echo "$(($(memstat "${CG[$n]}" "$ANON") + $(memstat "${CG[$n]}" "$UNEVICT"))) $(working_set "${CG[$n]}") $n"
done | sort -k1,1nr | awk -v need="$need" 'got < need { print $3; got += $2 }')
log "need $need bytes: expected victims, in order: ${EXPECTED[*]}"
first=${EXPECTED[0]}
assert_eq "$first" "be/m${BE_MIBS[-1]}" "the largest BE unit has the most anon + unevictable memory"

agent_config '{"classes": [{"glob": "'"$P"'/ls", "class": "LS"}, {"glob": "'"$P"'/be/*", "class": "BE"}],
	"evict": {"action": "kill", "memory": {"cooldown_s": '"$COOLDOWN_S"'}, "cpu": {"enabled": false}},
	"suppress": {"enabled": false}, "interference": {"enabled": false}}'
# Only memory eviction may name units here: CPU-satisfaction eviction is off,
# and so are suppression and interference, which would only add quota noise.
agent_start

evict='.kind == "evict"'
d=$(wait_decision "$evict" 10) || fail "no evict decision within 10 s: $(tail -n 3 "$AGENT_ERR")"
assert_eq "$(jget "$d" .target.cgroup)" "/$P/$first" "the first evict decision names the largest BE unit"
assert_eq "$(jget "$d" .rule)" evict.memory "its rule"
assert_eq "$(jget "$d" .outcome)" applied "its outcome"
assert_cmp "$(jget "$d" .evidence.used_ratio)" ">=" "$THRESHOLD" "evidence: used_ratio"
assert_eq "$(jget "$d" '.evidence.mem_capacity_bytes | floor')" "$cap" "evidence: capacity is the subtree's limit"
diff=$(awk -v a="$(jget "$d" .evidence.used_ratio)" -v b="$kratio" 'BEGIN { d = a - b; printf "%.4f", d < 0 ? -d : d }')
assert_cmp "$diff" "<=" 0.02 "evidence: used_ratio agrees with the kernel's ($kratio)"
round=$(decisions "$evict"' and .ts_ns == '"$(jget "$d" .ts_ns)" |
	jq -r --arg p "/$P/" 'map(.target.cgroup | ltrimstr($p)) | join(" ")')
assert_eq "$round" "${EXPECTED[*]}" "the first round names the expected units, in order"

for n in "${EXPECTED[@]}"; do
	# 2>/dev/null: bash's own "Killed" notice when it reaps the job.
	{
		for _ in $(seq 1 100); do
			kill -0 "${PID[$n]}" || break
			sleep 0.05
		done
	} 2>/dev/null
	kill -0 "${PID[$n]}" 2>/dev/null && fail "memhog in $n still runs 5 s after its eviction"
	rc=0
	{ wait "${PID[$n]}" || rc=$?; } 2>/dev/null
	assert_eq "$rc" 137 "memhog in $n was killed (SIGKILL)"
	assert_eq "$(cat "${CG[$n]}/cgroup.procs")" "" "no process left in $n"
done

# The kernel's use once the victims are gone: below 68% ends the eviction.
for _ in $(seq 1 40); do
	used=$(($(usage "$TEST_PARENT") - $(memstat "$TEST_PARENT" "$INACTIVE")))
	awk -v r="$(ratio "$used" "$cap")" -v m="$RELEASE" 'BEGIN { exit !(r < m) }' && break
	sleep 0.05
done
assert_cmp "$(ratio "$used" "$cap")" "<" "$RELEASE" "after the round the subtree is below the release mark"
# A cool-down and two ticks: a further round would have come by now.
sleep $((COOLDOWN_S + 2))
all=$(decisions "$evict" | jq -c 'map(.target.cgroup)')
assert_eq "$(echo "$all" | jq length)" "${#EXPECTED[@]}" "no unit evicted after the first round ($all)"
assert_eq "$(decisions "$evict"' and .target.cgroup == "/'"$P"'/ls"' | jq length)" 0 \
	"no evict decision names the LS unit"
assert_json "$(decisions "$evict")" 'all(.[]; .class == "BE")' "every evict decision is on a BE unit"
kill -0 "${PID[ls]}" 2>/dev/null || fail "the LS memhog died"
log "ok: the LS memhog is alive"
for n in "${BE[@]}"; do
	case " ${EXPECTED[*]} " in
	*" $n "*) ;;
	*) kill -0 "${PID[$n]}" 2>/dev/null || fail "BE memhog $n, not a victim, died"
		log "ok: $n survived" ;;
	esac
done
agent_stop
log "pass"
