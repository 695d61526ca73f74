#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# What the agent writes to the API, and the config it takes from its Node,
# against the API stand-in (tests/helpers/kube_api_server.py) serving a Node
# with labels. Pods in the kubelet's layout under the test's parent:
#   kubepods/pod<ls>             web/frontend-0, Guaranteed: LS
#   kubepods/besteffort/pod<be>  batch/crunch-0, BestEffort: BE, a CPU hog
# Asserted:
#   1. Per-pool config: the agent reads its Node (GET, resourceVersion=0) and
#      says which overrides apply (the "gpu" pool's). With the API away at
#      start it runs on the cluster-wide settings, says why, and takes the
#      labels (a reload) once the API answers. Relabelled and reloaded (SIGHUP), it reads the
#      labels again and says the new pool's ("cpu"). A bad override written
#      to the file is refused with the reason; the running config stays.
#   2. Node status on change only: a run with nothing changing writes the
#      condition (QoSletInterference=False) and the batch resources (0 while
#      capacity warms up) in one patch, and never again (no heartbeat); a restart writes nothing (the Node already says so), and
#      a stop with nothing to reset writes nothing.
#   3. Events on transitions: suppression following a varying LS load and
#      floor (suppress.min_cpus reloaded) makes at least 4 quota writes but
#      one Suppressed Event on the BE pod, in its own namespace, naming no
#      pod of another namespace, and no series patch; the stop, handing the
#      quota back, makes one SuppressionEnded Event, also when the API
#      answers slowly then (the stop cancels the call in flight).
#   4. The server saw no malformed call.
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

NODE=qoslet-test-node

require_root
require_cmds jq stress-ng taskset
require_binaries
test_setup
agent_setup
kube_require

uuid() { cat /proc/sys/kernel/random/uuid; }
UID_LS=$(uuid) UID_BE=$(uuid)
LS_REL=$(kube_pod_rel guaranteed "$UID_LS")
BE_REL=$(kube_pod_rel besteffort "$UID_BE")
ls_cg=$(agent_cgroup "$LS_REL")
be_cg=$(agent_cgroup "$BE_REL")
[ -e "$be_cg/cpu.cfs_quota_us" ] || [ -e "$be_cg/cpu.max" ] || skip "no CFS bandwidth control"

jq -n --arg node "$NODE" --arg ls "$UID_LS" --arg be "$UID_BE" '
	def pod($uid; $ns; $name; $qos):
		{metadata: {uid: $uid, namespace: $ns, name: $name, labels: {}},
		 spec: {nodeName: $node, priority: 0}, status: {qosClass: $qos}};
	{kind: "PodList", apiVersion: "v1", metadata: {resourceVersion: "1"}, items: [
		pod($ls; "web"; "frontend-0"; "Guaranteed"),
		pod($be; "batch"; "crunch-0"; "BestEffort")]}' >"$KUBE_TMP/pods.json"
KUBE_PODS=$KUBE_TMP/pods.json
echo '{"kubernetes.io/hostname": "'"$NODE"'", "pool": "gpu"}' >"$KUBE_TMP/labels.json"
kube_start "$NODE" --node-labels "$KUBE_TMP/labels.json" --down-file "$KUBE_TMP/down" \
	--delay-file "$KUBE_TMP/delay"

# suppress.min_cpus 0.2: on a 2-CPU machine the default floor leaves nothing to suppress.
MIN_CPUS=0.2
config() { # SUPPRESS-ENABLED [EXTRA-OVERRIDE]
	agent_config '{"interval_s": 1, "fast_path": false,
	"kubernetes": {"enabled": true, "kubeconfig": "'"$KUBE_TMP/kubeconfig"'",
		"node_name": "'"$NODE"'", "resync_s": 0, "timeout_s": 2, "events": {"interval_s": 1}},
	"suppress": {"enabled": '"$1"', "min_cpus": '"$MIN_CPUS"', "cpu_idle": false},
	"interference": {"enabled": false},
	"evict": {"cpu": {"enabled": false}, "memory": {"enabled": false}},
	"overrides": [
		{"name": "gpu", "nodeSelector": {"matchLabels": {"pool": "gpu"}},
		 "config": {"suppress": {"threshold_percent": 40}}},
		{"name": "cpu", "nodeSelector": {"matchExpressions":
			[{"key": "pool", "operator": "In", "values": ["cpu", "highcpu"]}]},
		 "config": {"suppress": {"threshold_percent": 55}}}'"${2:-}"']}'
}
status_patches() {
	kube_api '.method == "PATCH" and (.path | endswith("/status")) and .status == 200' | jq length
}

# ---- 1. and 2.: no load, suppression off -------------------------------------------------
log "1. the Node's labels choose the overrides (the API away at start: later); 2. node status on change only"
config false
: >"$KUBE_TMP/down"
agent_start
grep -q "cannot read node $NODE" "$AGENT_ERR" ||
	fail "the agent does not say it could not read its Node: $(tail -n 3 "$AGENT_ERR")"
rm "$KUBE_TMP/down"
for _ in $(seq 1 150); do
	grep -q "config overrides on this node: gpu$" "$AGENT_ERR" && break
	sleep 0.1
done
grep -q "config overrides on this node: gpu$" "$AGENT_ERR" ||
	fail "the agent does not say the gpu override applies: $(grep -E "overrides|labels|node" "$AGENT_ERR")"
get='.method == "GET" and (.path | startswith("/api/v1/nodes/"))'
assert_eq "$(kube_api "$get"' and .status == 200' | jq -r '.[0].path')" \
	"/api/v1/nodes/$NODE?resourceVersion=0" "the Node is read from the watch cache, once the API is back"
cond='.method == "PATCH" and (.path | endswith("/status")) and .body.status.conditions != null'
kube_wait_api "$cond" 10 || fail "no node condition within 10 s"
assert_eq "$(kube_api "$cond" | jq -r '.[0].body.status.conditions[0].status')" False \
	"the condition says no interference"
sleep 6
assert_eq "$(status_patches)" 1 "one status write in a run where nothing changed"
# (batch capacity warms up for capacity.window_s, 300 s: 0 all along)
assert_eq "$(kube_api "$cond" | jq -c '.[0].body.status | [(.conditions | length),
	.capacity["kubernetes.io/batch-cpu"], .allocatable["kubernetes.io/batch-cpu"]]')" \
	'[1,"0","0"]' "that write holds the condition and the batch resources"
kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent died: $(tail -n 5 "$AGENT_ERR")"

log "relabelled into the cpu pool, then SIGHUP"
echo '{"kubernetes.io/hostname": "'"$NODE"'", "pool": "highcpu"}' >"$KUBE_TMP/labels.json"
kill -HUP "$AGENT_PID"
for _ in $(seq 1 50); do
	grep -q "labels changed" "$AGENT_ERR" && grep -q "config overrides on this node: cpu$" "$AGENT_ERR" && break
	sleep 0.1
done
grep -q "config overrides on this node: cpu$" "$AGENT_ERR" ||
	fail "the reload does not say the cpu override applies: $(grep -E "overrides|labels" "$AGENT_ERR")"
assert_eq "$(kube_api "$get"' and .status == 200' | jq length)" 2 "the Node read again for the reload, once"

log "a bad override is refused with its reason"
mark=$(wc -l <"$AGENT_ERR")
config false ', {"name": "bad", "nodeSelector": {}, "config": {"suppress": {"threshold_percent": 150}}}'
for _ in $(seq 1 50); do
	tail -n +$((mark + 1)) "$AGENT_ERR" | grep -q "reload refused" && break
	sleep 0.1
done
tail -n +$((mark + 1)) "$AGENT_ERR" | grep -q \
	"reload refused, the running config stays: .*overrides\[2\].config.suppress.threshold_percent: 150 is out of range" ||
	fail "no refusal naming the bad override: $(tail -n +$((mark + 1)) "$AGENT_ERR")"
agent_stop
assert_eq "$(status_patches)" 1 "the stop writes nothing when nothing needs a reset"

log "a restart: the Node already says what the agent would write"
config false
: >"$AGENT_ERR" # agent_start waits for this start's own "managing"
agent_start
sleep 4
agent_stop
assert_eq "$(status_patches)" 1 "a restart writes no status the Node already has"

# ---- 3. suppression following a varying LS load -------------------------------------------
log "3. suppression that follows the load: one Event"
config true
agent_run "$be_cg" 0 stress-ng --cpu 1 --timeout 60s
: >"$AGENT_ERR"
agent_start
# The LS load comes and goes every 2 s: the BE quota follows it. On a busy
# machine (other work counts as the node's use) the quota sits on its floor:
# the floor moves too (a reload each), so the quota moves either way.
for MIN_CPUS in 0.3 0.5 0.7 0.4; do
	agent_run "$ls_cg" 0 stress-ng --cpu 1 --timeout 2s
	config true
	sleep 3
done
q='.rule == "suppress.cfs_quota" and .outcome == "applied"'
n_quota=$(decisions "$q" | jq length)
[ "$n_quota" -ge 4 ] || fail "the BE quota did not follow ($n_quota writes): $(tail -n 8 "$AGENT_ERR") $(decisions 'true' |
	jq -c 'map([.rule, .kind, .outcome, .before, .after]) | .[-12:]')"
log "the BE quota was written $n_quota times"
# The API answers a second late at the stop: the end Event the stop queues
# wakes the API thread, whose call the stop then cancels mid-way; the stop
# must send it again itself (kube_sync_stop), not lose it.
echo 1 >"$KUBE_TMP/delay"
agent_stop
rm "$KUBE_TMP/delay"
ev='.method == "POST" and (.path | endswith("/events"))'
supp=$(kube_api "$ev and .body.reason == \"Suppressed\"")
assert_eq "$(echo "$supp" | jq length)" 1 "one Suppressed Event for $n_quota quota writes"
assert_eq "$(echo "$supp" | jq -r '.[0].path')" "/apis/events.k8s.io/v1/namespaces/batch/events" \
	"in the BE pod's own namespace"
assert_eq "$(echo "$supp" | jq -r '.[0].body.regarding.name')" crunch-0 "on the BE pod"
echo "$supp" | jq -e '.[0].body.note | test("frontend|web/") | not' >/dev/null ||
	fail "the BE pod's Event names the LS pod of another namespace: $(echo "$supp" | jq -r '.[0].body.note')"
assert_eq "$(kube_api '.method == "PATCH" and (.path | test("/events/"))' | jq length)" 0 \
	"no series patches: the quota steps are not occurrences"
# The stop hands the quota back: the transition a person wants to see.
ended=$(kube_api "$ev and .body.reason == \"SuppressionEnded\" and .body.regarding.name == \"crunch-0\"")
# By name: a create the stop cancelled mid-call is sent again under the
# same name (the API answers 409 if the first one got there): one Event.
assert_eq "$(echo "$ended" | jq '[.[].body.metadata.name] | unique | length')" 1 \
	"one SuppressionEnded Event on the BE pod when the stop hands its settings back"

assert_eq "$(kube_violations | wc -l)" 0 "the server saw no malformed call: $(kube_violations | head -n 3)"
log "pass"
