#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Batch requests into BE cgroups on real cgroups (docs/batch-resources.md).
# A kubelet-shaped tree under the test's parent (QOSLET_CGROUP_LAYOUT), the
# API stand-in serving one BestEffort pod whose container requests
# kubernetes.io/batch-cpu 500 (limit 1000) and batch-memory 256Mi (limit
# 512Mi), and a BestEffort pod without batch resources. Checks:
#   - dry-run: a dry_run decision for each of the settings, with the
#     request and limit as evidence, and no file changed; its recording
#     replays to the same decisions, the container's among them;
#   - live: the pod's cgroup gets v1 cpu.shares 512 / v2 cpu.weight 20, the
#     CFS quota of 1 CPU (100000 of a 100000 us period) and the memory limit
#     512 MiB; its container's cgroup the same weight and memory limit (its
#     own batch resources, batch.container_*), and on v2 only the quota (v1
#     keeps the kubelet's: docs/batch-resources.md); the other pod is left
#     alone;
#   - every file is back to what the kubelet wrote after the agent stops, and
#     after a kill -9 the next start reconciles them from the journal;
#   - eviction on overcommit: with a batch CPU capacity of almost 0 (threshold
#     1 %), the pod's 500m is over it; after evict.after_s (1 s) the pod is
#     named (evict.action report), the pod without batch requests never;
#     qoslet_batch_requested_cpu_cores shows the 0.5 CPU.
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
require_cmds jq python3 curl
require_binaries
test_setup
agent_setup
kube_require

NODE=qoslet-test-node
BE_UID=$(cat /proc/sys/kernel/random/uuid)
PLAIN_UID=$(cat /proc/sys/kernel/random/uuid)
CID=$(random_hex 32)
ctr=$(agent_cgroup "$(kube_container_rel besteffort "$BE_UID" "$CID")")
be=${ctr%/*}
plain=$(agent_cgroup "$(kube_pod_rel besteffort "$PLAIN_UID")")
MEM=$((512 << 20))

jq -n --arg node "$NODE" --arg be "$BE_UID" --arg plain "$PLAIN_UID" --arg cid "$CID" '
	{kind: "PodList", apiVersion: "v1", metadata: {resourceVersion: "1"}, items: [
		{metadata: {uid: $be, namespace: "batch", name: "crunch-0"},
		 spec: {nodeName: $node, priority: 0, containers: [{name: "c", resources: {
			requests: {"kubernetes.io/batch-cpu": "500", "kubernetes.io/batch-memory": "256Mi"},
			limits: {"kubernetes.io/batch-cpu": "1000", "kubernetes.io/batch-memory": "512Mi"}}}]},
		 status: {qosClass: "BestEffort",
			  containerStatuses: [{name: "c", containerID: ("containerd://" + $cid)}]}},
		{metadata: {uid: $plain, namespace: "batch", name: "plain-0"},
		 spec: {nodeName: $node, priority: 0, containers: [{name: "c"}]},
		 status: {qosClass: "BestEffort"}}]}' >"$KUBE_TMP/pods.json"
KUBE_PODS=$KUBE_TMP/pods.json
kube_start "$NODE"

# The three files of a cgroup, v1 or v2, as one line.
# N: the settings written, the pod's three and the container's two (three on v2, with its quota).
if cg_is_v2; then
	WEIGHT=cpu.weight QUOTA=cpu.max LIMIT=memory.max WANT="20 100000 100000 $MEM" N=6
	crules='["batch.container_cpu_weight", "batch.container_memory_limit", "batch.container_cpu_quota"]'
else
	WEIGHT=cpu.shares QUOTA=cpu.cfs_quota_us LIMIT=memory.limit_in_bytes WANT="512 100000 $MEM" N=5
	crules='["batch.container_cpu_weight", "batch.container_memory_limit"]'
fi
files() {
	echo "$(cat "$1/$WEIGHT") $(cat "$1/$QUOTA") $(cat "$(agent_cg_in "$1" memory)/$LIMIT")"
}
# The container's: its own batch values, the same as the pod's here; on v1 its quota kept.
ctr_want() { if cg_is_v2; then echo "$WANT"; else echo "${WANT%% *} $orig_ctr_quota $MEM"; fi; }
# BestEffort pods as the kubelet leaves them: the least weight.
if cg_is_v2; then echo 1 >"$be/cpu.weight"; else echo 2 >"$be/cpu.shares"; fi
orig_be=$(files "$be") orig_ctr=$(files "$ctr") orig_plain=$(files "$plain")
orig_ctr_quota=$(cat "$ctr/$QUOTA")

# run DRY_RUN [JSON [ARGS...]]: the agent with the API link, suppression (and its cpu.idle) off,
# JSON merged over that, and ARGS on its command line.
run() {
	local base='{"dry_run": '"$1"', "interval_s": 0.5,
	"kubernetes": {"enabled": true, "kubeconfig": "'"$KUBE_TMP/kubeconfig"'",
		"node_name": "'"$NODE"'", "resync_s": 1, "timeout_s": 2,
		"events": {"enabled": false}, "node_condition": {"enabled": false}},
	"suppress": {"enabled": false, "cpu_idle": false}, "interference": {"enabled": false},
	"evict": {"cpu": {"enabled": false}, "memory": {"enabled": false}},
	"capacity": {"node_status": {"enabled": false}}}'
	agent_config "$(jq -cn --argjson a "$base" --argjson b "${2:-{\}}" '$a * $b')"
	agent_start "${@:3}"
}
rules='["batch.cpu_weight", "batch.cpu_quota", "batch.memory_limit"]'
# wait_all OUTCOME: the N decisions on the pod and its container with that outcome; prints them.
wait_all() {
	local sel='(.target.cgroup == "'"${be#"$CG_ROOT"}"'" and (.rule as $r | '"$rules"' | index($r))
		or .target.cgroup == "'"${ctr#"$CG_ROOT"}"'" and (.rule as $r | '"$crules"' | index($r)))
		and .outcome == "'"$1"'"'
	for _ in $(seq 1 100); do
		[ "$(decisions "$sel" | jq 'map(.rule) | unique | length')" = "$N" ] && {
			decisions "$sel"
			return 0
		}
		kill -0 "$AGENT_PID" 2>/dev/null || fail "agent exited: $(tail -n 5 "$AGENT_ERR")"
		sleep 0.1
	done
	fail "no $N $1 decisions on the pod and its container within 10 s: $(decisions '.rule | startswith("batch.")')"
}

log "dry-run, recorded"
run true '{}' --record "$TMP/run.rec"
d=$(wait_all dry_run)
ev() { jq -r --arg r "$1" --arg k "$2" 'map(select(.rule == $r))[0].evidence[$k]' <<<"$d"; }
assert_eq "$(ev batch.cpu_weight batch_cpu_request_milli)" 500 "the weight's evidence: the request"
assert_eq "$(ev batch.cpu_quota batch_cpu_limit_milli)" 1000 "the quota's evidence: the limit"
assert_eq "$(ev batch.memory_limit batch_memory_limit_bytes)" "$MEM" "the memory limit's evidence"
assert_eq "$(ev batch.memory_limit batch_memory_request_bytes)" $((256 << 20)) "and its request"
assert_eq "$(ev batch.container_cpu_weight batch_cpu_request_milli)" 500 "the container's request"
assert_eq "$(ev batch.container_memory_limit batch_memory_limit_bytes)" "$MEM" "and its limit"
assert_eq "$(jq -r 'map(select(.rule == "batch.container_cpu_weight"))[0].target.pod_uid // empty' <<<"$d")" \
	"$BE_UID" "a container's decision names its pod"
assert_eq "$(jq -r 'map(select(.rule == "batch.container_memory_limit"))[0].related.cgroup' <<<"$d")" \
	"${be#"$CG_ROOT"}" "and relates it"
sleep 1 # a few more ticks: dry-run must still write nothing
assert_eq "$(files "$be")" "$orig_be" "dry-run writes nothing"
assert_eq "$(files "$ctr")" "$orig_ctr" "not on the container either"
agent_stop
# The recording holds the container and replays to the same decisions (targets and values).
"$QOSLET" replay "$TMP/run.rec" -j >"$TMP/replay.jsonl" || fail "replay failed"
key='select(.rule | startswith("batch.")) | [.rule, .target.cgroup, .value, .target.pod_uid]'
assert_eq "$(jq -sc "[.[] | $key] | sort" "$TMP/replay.jsonl")" \
	"$(jq -sc "[.[] | $key] | sort" "$AGENT_OUT")" "the replay gives the same batch decisions"
assert_eq "$(jq -s --arg c "${ctr#"$CG_ROOT"}" 'map(select(.target.cgroup == $c)) | length' "$TMP/replay.jsonl")" \
	"$((N - 3))" "the container's among them"
: >"$AGENT_OUT"

log "live"
run false
d=$(wait_all applied)
assert_eq "$(files "$be")" "$WANT" "the pod's weight, quota and memory limit from its batch resources"
assert_eq "$(files "$ctr")" "$(ctr_want)" "its container's own batch values (on v1 its quota kept)"
assert_eq "$(files "$plain")" "$orig_plain" "a BE pod without batch resources is left alone"
assert_eq "$(decisions '.target.cgroup == "'"${plain#"$CG_ROOT"}"'"')" "[]" "and has no decision"
sleep 1
assert_eq "$(decisions '.rule | startswith("batch.")' | jq length)" "$N" "each setting decided once"
agent_stop
assert_eq "$(files "$be")" "$orig_be" "all restored on stop"
assert_eq "$(files "$ctr")" "$orig_ctr" "the container's cgroup too"
: >"$AGENT_OUT"

log "crash, then reconcile"
run false
wait_all applied >/dev/null
kill -KILL "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
assert_eq "$(files "$be")" "$WANT" "kill -9 leaves the values"
jq -e --argjson n "$N" '[.changes[].file] | length == $n' "$STATE_DIR/actuator.json" >/dev/null ||
	fail "the journal lacks the $N settings: $(jq -c . "$STATE_DIR/actuator.json")"
: >"$AGENT_ERR"
run false '{"batch_resources": {"enabled": false}}'
grep -q "restored $N cgroup settings a previous run left changed" "$AGENT_ERR" ||
	fail "restart did not say it reconciled: $(cat "$AGENT_ERR")"
assert_eq "$(files "$be")" "$orig_be" "the restart reconciled them"
assert_eq "$(files "$ctr")" "$orig_ctr" "the container's too"
agent_stop
: >"$AGENT_OUT"

log "eviction on overcommit"
PORT=$(free_port)
run true '{"capacity": {"cpu_threshold_percent": 1, "memory_threshold_percent": 100,
	"window_s": 1, "stale_s": 2}, "batch_resources": {"evict": {"enabled": true, "after_s": 1}},
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'}}'
d=$(wait_decision '.kind == "evict"' 10) || fail "no eviction within 10 s: $(tail -n 3 "$AGENT_ERR")"
assert_eq "$(jget "$d" .rule)" batch.overcommit_cpu "the rule"
assert_eq "$(jget "$d" .target.cgroup)" "${be#"$CG_ROOT"}" "the pod that requests batch CPU"
assert_eq "$(jget "$d" .evidence.batch_requested)" 0.5 "its request is the whole BE demand"
awk -v a="$(jget "$d" .evidence.batch_allocatable)" 'BEGIN { exit !(a < 0.5) }' ||
	fail "allocatable $(jget "$d" .evidence.batch_allocatable) is not below the request"
assert_eq "$(jget "$d" .outcome)" reported "evict.action report: named, not evicted"
assert_eq "$(curl -s "http://127.0.0.1:$PORT/metrics" |
	awk '$1 == "qoslet_batch_requested_cpu_cores" { print $2 }')" 0.5 "the requested gauge"
sleep 1
assert_eq "$(decisions '.kind == "evict" and .target.cgroup != "'"${be#"$CG_ROOT"}"'"')" "[]" \
	"no other pod is named"
agent_stop
test_end
