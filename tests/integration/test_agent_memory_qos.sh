#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Memory QoS on real cgroups (docs/memory-qos.md). A kubelet-shaped tree under
# the test's parent, the agent managing PARENT/kubepods (memory.max 1 GiB: the
# capacity), memory_qos on, the other policies off; the API stand-in lists the
# pods with their memory requests:
#   kubepods/pod<G>             Guaranteed (LSR), request = limit = 128 MiB
#   kubepods/burstable/pod<B>   Burstable (LS), request 64 MiB
#   kubepods/besteffort/pod<E1> BestEffort (BE), memory.max 256 MiB
#   kubepods/besteffort/pod<E2> BestEffort (BE), no limit
# On cgroup v2:
#   - memory_min on G: 90% of its limit, page-aligned (the request would
#     reach the limit: capped, and the evidence says so); memory_low on B
#     (its request); memory_high on E1 (90% of its limit) and on E2 (from
#     the node's free memory); every decision applied, with its evidence;
#   - the files hold them, and the parents carry the sums up to kubepods
#     (kubepods/burstable memory.low, kubepods memory.min and memory.low);
#   - a clean stop writes every original back (pods and parents), and the
#     journal is gone.
# On cgroup v1 (this project's hybrid host): the agent says once at start
# that memory.min/low/high need cgroup v2 and makes no memory decision;
# the v2 part is then skipped with its reason.
# jq filters are single-quoted.
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

require_root
require_cmds jq python3
require_binaries
test_setup
agent_setup
kube_require

NODE=qoslet-test-node
P=${TEST_PARENT_REL#/}
MIB=$((1 << 20))
G=$(cat /proc/sys/kernel/random/uuid)
B=$(cat /proc/sys/kernel/random/uuid)
E1=$(cat /proc/sys/kernel/random/uuid)
E2=$(cat /proc/sys/kernel/random/uuid)
g=$(agent_cgroup "kubepods/pod$G")
b=$(agent_cgroup "kubepods/burstable/pod$B")
e1=$(agent_cgroup "kubepods/besteffort/pod$E1")
e2=$(agent_cgroup "kubepods/besteffort/pod$E2")
kp=$TEST_PARENT/kubepods # made above, with the controllers on for its children

# mem_file CG FILE: the memory controller's file of one of our cgroups (v1: its hierarchy).
mem_file() { echo "$(agent_cg_in "$1" memory)/$2"; }
if cg_is_v2; then
	echo $((1024 * MIB)) >"$kp/memory.max"
	echo $((128 * MIB)) >"$g/memory.max"
	echo $((256 * MIB)) >"$e1/memory.max"
else
	echo $((1024 * MIB)) >"$(mem_file "$kp" memory.limit_in_bytes)"
fi

jq -n --arg node "$NODE" --arg g "$G" --arg b "$B" --arg e1 "$E1" --arg e2 "$E2" '
	def pod($uid; $name; $qos; $res): {metadata: {uid: $uid, namespace: "web", name: $name, labels: {}},
		spec: {nodeName: $node, priority: 0, containers: [{name: "c", resources: $res}]},
		status: {qosClass: $qos}};
	{kind: "PodList", apiVersion: "v1", metadata: {resourceVersion: "1"}, items: [
		pod($g; "db-0"; "Guaranteed"; {requests: {memory: "128Mi", cpu: "1"}, limits: {memory: "128Mi", cpu: "1"}}),
		pod($b; "web-0"; "Burstable"; {requests: {memory: "64Mi"}}),
		pod($e1; "batch-0"; "BestEffort"; {}),
		pod($e2; "batch-1"; "BestEffort"; {})]}' >"$KUBE_TMP/pods.json"
KUBE_PODS=$KUBE_TMP/pods.json
kube_start "$NODE"

agent_config '{"cgroup_root": "'"$P/kubepods"'", "interval_s": 0.5, "fast_path": false,
	"kubernetes": '"$(kube_link_config "$NODE")"', '"$AGENT_POLICIES_OFF"',
	"memory_qos": {"enabled": true}}'
mem_decisions() { decisions '.kind | startswith("memory_")'; }

if ! cg_is_v2; then
	agent_start
	sleep 3 # six ticks with the pods listed
	agent_stop
	n=$(grep -c "memory QoS: memory.min/low/high need cgroup v2; on v1" "$AGENT_ERR" || true)
	assert_eq "$n" 1 "v1: the agent says once what is off"
	assert_eq "$(mem_decisions | jq length)" 0 "v1: no memory decision"
	skip_part "the v2 writes (memory.min/low/high): this host's memory controller is cgroup v1 (run it in the v2 VM: docs/testing.md)"
	test_end
fi

[ -e "$g/memory.min" ] || skip "kernel without memory.min (before 4.18)"
names=(memory.min memory.low memory.high)
snapshot() {
	local cg f
	for cg in "$kp" "$kp/burstable" "$kp/besteffort" "$g" "$b" "$e1" "$e2"; do
		for f in "${names[@]}"; do
			printf '%s/%s=%s ' "${cg#"$kp"}" "$f" "$(cat "$cg/$f")"
		done
	done
}
ORIG=$(snapshot)
log "originals: $ORIG"

agent_start
wait_decision '.rule == "memory_qos.high_free"' 15 >/dev/null ||
	fail "no memory decisions within 15 s: $(decisions 'true' | head -c 2000); $(tail -n 5 "$AGENT_ERR")"
sleep 1 # the other wishes of that tick land
d=$(mem_decisions)
log "decisions: $(jq -c 'map([.rule, .target.cgroup, .value, .outcome])' <<<"$d")"
assert_eq "$(jq -c 'map(select(.outcome != "applied"))' <<<"$d")" "[]" "every memory decision applied"
one() { jq -c --arg r "$1" --arg p "$2" '[.[] | select(.rule == $r and (.target.cgroup | endswith($p)))][0]' <<<"$d"; }

dg=$(one memory_qos.min "pod$G")
min_g=$(((128 * MIB * 9 / 10) / 4096 * 4096))
assert_eq "$(jget "$dg" .value)" "$min_g" "LSR: memory.min = 90% of the limit, page-aligned"
assert_eq "$(jget "$dg" .evidence.capped)" 1 "the cap is in the evidence"
assert_eq "$(jget "$dg" .evidence.request_bytes)" $((128 * MIB)) "evidence: the request"
assert_eq "$(jget "$dg" .evidence.limit_bytes)" $((128 * MIB)) "evidence: the limit"
assert_eq "$(cat "$g/memory.min")" "$min_g" "the LSR pod's memory.min"
assert_cmp "$min_g" "<" "$(cat "$g/memory.max")" "memory.min below the limit"

db=$(one memory_qos.low "pod$B")
assert_eq "$(jget "$db" .value)" $((64 * MIB)) "LS: memory.low = the request"
assert_eq "$(cat "$b/memory.low")" $((64 * MIB)) "the LS pod's memory.low"
assert_eq "$(one memory_qos.min "pod$B")" null "LS: no memory.min (LS protects with low)"

de1=$(one memory_qos.high_limit "pod$E1")
high_e1=$(((256 * MIB * 9 / 10) / 4096 * 4096))
assert_eq "$(jget "$de1" .value)" "$high_e1" "BE with a limit: memory.high = 90% of it"
assert_eq "$(jget "$de1" .evidence.throttling)" 0.9 "evidence: the factor"
assert_eq "$(cat "$e1/memory.high")" "$high_e1" "the BE pod's memory.high"
de2=$(one memory_qos.high_free "pod$E2")
assert_eq "$(cat "$e2/memory.high")" "$(jget "$de2" .value)" "the unlimited BE pod's memory.high"
assert_cmp "$(jget "$de2" .value)" "<=" $((1024 * MIB)) "at most the capacity"
assert_cmp "$(jget "$de2" .evidence.node_free_bytes)" ">" 0 "evidence: the node's free memory"

# Protection counts only as far as every ancestor carries it.
assert_eq "$(cat "$kp/burstable/memory.low")" $((64 * MIB)) "the burstable tier carries its pods' memory.low"
assert_eq "$(cat "$kp/memory.low")" $((64 * MIB)) "kubepods carries the memory.low sum"
assert_eq "$(cat "$kp/memory.min")" "$min_g" "kubepods carries the memory.min sum"
assert_eq "$(cat "$kp/besteffort/memory.min")" 0 "the besteffort tier gets no protection"

agent_stop
AGENT_PID=""
assert_eq "$(snapshot)" "$ORIG" "a clean stop restored every file, parents included"
[ ! -e "$STATE_DIR/actuator.json" ] || fail "journal left after a clean stop: $(cat "$STATE_DIR/actuator.json")"
test_end
