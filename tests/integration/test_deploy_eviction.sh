#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The shipped manifests are safe by default (docs/deploy.md, EVICTION). The
# agent runs with the config.json of the ConfigMap that
# `kubectl kustomize scripts/deploy-overlays/observe` renders (without
# kubectl: the files that hold it), mounted as a
# ConfigMap volume; then the volume is swapped, as the kubelet does, to the
# `enforce` overlay's. Both are changed only where a test must (cgroup_root,
# state_dir, the decisions file, the HTTP endpoint off, the API stand-in's
# kubeconfig and node, a 1 s resync), on real pod cgroups in the kubelet's
# layout under an 800 MiB memory limit (the agent's memory capacity), with
# the API stand-in (kube_lib.sh) listing the pods:
#   ls    web/frontend-0          Guaranteed                    200 MiB
#   be    batch/crunch-0          BestEffort                     50 MiB
#   sys   kube-system/dns-cache-0 BestEffort                    200 MiB
#   ds    logging/shipper-x       BestEffort, DaemonSet-owned   100 MiB, BE by a class rule
#   opt   batch/keep-0            BestEffort, opted out         100 MiB
#         (annotation qoslet.io/eviction-disabled: "true")
#   young batch/young-0           BestEffort, started 60 s ago    empty
#   old   batch/old-0             BestEffort, started 1 h ago     empty
# About 81% in use, over the 70% memory eviction threshold: a round needs
# about 106 MiB, more than every evictable pod holds. Asserted:
#   - observe: an evict.memory decision on the BE pod says "reported" (the
#     action is "report"), no eviction reaches the API, the memhog lives;
#   - enforce with evict.nodes "canary-*" (not this node): the start says
#     this node only reports, the decision says "reported", no API call;
#   - enforce: the agent reloads it without a restart (evict.action
#     "report" -> "kubernetes" changes live), and the eviction request for
#     the BE pod reaches the stand-in;
#   - both: the kube-system, DaemonSet and opted-out pods are never evicted
#     nor named by an evict decision, although they are larger than the BE
#     pod (as BE, the kube-system one would go first: largest first);
#   - observe: the first round names crunch-0 (the largest evictable), then
#     young-0 before old-0 (equal usage: the shorter run time first), and
#     reports the DaemonSet and opted-out pods it passed over, with why.
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

MEMHOG=${MEMHOG:-$QOSLET_ROOT/build/tests/helpers/memhog}
LIMIT_MIB=800
NODE=qoslet-test-node

require_root
require_cmds jq taskset
require_binaries
[ -x "$MEMHOG" ] || fail "$MEMHOG is missing: run make $MEMHOG"
test_setup
agent_setup
kube_require

# shipped_config OVERLAY: the config.json of the ConfigMap the overlay renders
# (kubectl kustomize); without kubectl, of the file that holds it
# (test_deploy_manifests checks that the overlays render exactly these).
shipped_config() {
	local file
	if command -v kubectl >/dev/null; then
		kubectl kustomize "$QOSLET_ROOT/scripts/deploy-overlays/$1" 2>"$TMP/kustomize.err" ||
			fail "kubectl kustomize $1: $(cat "$TMP/kustomize.err")"
	else
		file=$QOSLET_ROOT/scripts/deploy/configmap.yaml
		[ "$1" = observe ] || file=$QOSLET_ROOT/scripts/deploy-overlays/$1/evict-kubernetes.yaml
		cat "$file"
	fi | "$KUBE_PY" -c 'import sys, yaml
for d in yaml.safe_load_all(sys.stdin):
    if d and d["kind"] == "ConfigMap" and d["metadata"]["name"] == "qoslet-config":
        print(d["data"]["config.json"])'
}
"$KUBE_PY" -c 'import yaml' 2>/dev/null || skip "needs python3-yaml (scripts/deps.sh installs it)"
OBSERVE=$(shipped_config observe)
ENFORCE=$(shipped_config enforce)
assert_eq "$(jq -r .evict.action <<<"$OBSERVE")" report "the shipped (observe) config reports"
assert_eq "$(jq -r .evict.action <<<"$ENFORCE")" kubernetes "the enforce overlay evicts through the API"

agent_memory_limit "$LIMIT_MIB"
P=${TEST_PARENT_REL#/}
cg_weight "$TEST_PARENT" 10240 # the memhogs must get to touch their memory

uuid() { cat /proc/sys/kernel/random/uuid; }
declare -A UID_OF PATH_OF
for p in ls be sys ds opt young old; do UID_OF[$p]=$(uuid); done
PATH_OF[ls]=$(kube_pod_rel guaranteed "${UID_OF[ls]}")
PATH_OF[be]=$(kube_pod_rel besteffort "${UID_OF[be]}")
PATH_OF[sys]=$(kube_pod_rel besteffort "${UID_OF[sys]}")
PATH_OF[ds]=$(kube_pod_rel besteffort "${UID_OF[ds]}")
for p in opt young old; do PATH_OF[$p]=$(kube_pod_rel besteffort "${UID_OF[$p]}"); done

started() { date -u -d "@$(($(date +%s) - $1))" +%Y-%m-%dT%H:%M:%SZ; }
jq -n --arg node "$NODE" --arg ls "${UID_OF[ls]}" --arg be "${UID_OF[be]}" \
	--arg sys "${UID_OF[sys]}" --arg ds "${UID_OF[ds]}" --arg opt "${UID_OF[opt]}" \
	--arg young "${UID_OF[young]}" --arg old "${UID_OF[old]}" \
	--arg t_young "$(started 60)" --arg t_old "$(started 3600)" '
	def pod($uid; $ns; $name; $qos; $owners):
		{metadata: {uid: $uid, namespace: $ns, name: $name, ownerReferences: $owners},
		 spec: {nodeName: $node, priority: 0}, status: {qosClass: $qos}};
	{kind: "PodList", apiVersion: "v1", metadata: {resourceVersion: "1"}, items: [
		pod($ls; "web"; "frontend-0"; "Guaranteed"; []),
		pod($be; "batch"; "crunch-0"; "BestEffort"; []),
		pod($sys; "kube-system"; "dns-cache-0"; "BestEffort"; []),
		pod($ds; "logging"; "shipper-x"; "BestEffort";
			[{apiVersion: "apps/v1", kind: "DaemonSet", name: "shipper", uid: "d1",
			  controller: true}]),
		(pod($opt; "batch"; "keep-0"; "BestEffort"; [])
			| .metadata.annotations = {"qoslet.io/eviction-disabled": "true"}),
		(pod($young; "batch"; "young-0"; "BestEffort"; []) | .status.startTime = $t_young),
		(pod($old; "batch"; "old-0"; "BestEffort"; []) | .status.startTime = $t_old)]}' \
	>"$KUBE_TMP/pods.json"
KUBE_PODS=$KUBE_TMP/pods.json
printf '201\n201\n201\n' >"$KUBE_TMP/evict-script" # the stand-in answers 500 once it runs out
kube_start "$NODE"

declare -A PID
# hog NAME MIB: a memhog holding MIB MiB in pod NAME; waits until charged.
hog() {
	agent_memhog "$(agent_cgroup "${PATH_OF[$1]}")" "$2"
	PID[$1]=$CG_PID
}
hog ls 200
hog be 50
hog sys 200
hog ds 100
hog opt 100
# old-0's cgroup first: its lower id would put it first if run time did not
for p in old young; do agent_cgroup "${PATH_OF[$p]}" >/dev/null; done

# test_config SHIPPED OUT: the shipped config, changed only where a test must (and a class
# rule that makes the DaemonSet's pods BE: eviction must still pass them by, where the
# config trusts the logging namespace's DaemonSets; and the batch namespace's opt-outs
# allowed, since a pod's own opt-out counts only where the config says).
test_config() {
	jq --arg root "$P" --arg state "$STATE_DIR" --arg out "$AGENT_OUT" \
		--arg kc "$KUBE_TMP/kubeconfig" --arg node "$NODE" \
		'. * {cgroup_root: $root, state_dir: $state, decisions: {file: $out},
		      http: {enabled: false}, classes: [{namespace: "logging", class: "BE"}],
		      daemonset_namespaces: ["kube-system", "logging"],
		      evict: {opt_out_namespaces: ["batch"]},
		      kubernetes: {kubeconfig: $kc, node_name: $node, resync_s: 1, timeout_s: 2}}' \
		<<<"$1" >"$2" || fail "cannot write the agent's config"
}
test_config "$OBSERVE" "$TMP/observe.json"
test_config "$ENFORCE" "$TMP/enforce.json"
jq '.evict.nodes = "canary-*"' "$TMP/enforce.json" >"$TMP/canary.json"
# Mounted as the DaemonSet mounts the ConfigMap: a volume the kubelet updates by a swap.
CM=$TMP/configmap
configmap_swap "$CM" "$TMP/observe.json"

evictions='.method == "POST" and (.path | endswith("/eviction"))'
protected_untouched() {
	local p
	for p in sys ds opt; do
		assert_eq "$(decisions '.kind == "evict" and .target.cgroup == "/'"$P/${PATH_OF[$p]}"'"' | jq length)" 0 \
			"no evict decision names the $p pod ($1)"
		kill -0 "${PID[$p]}" 2>/dev/null || fail "the $p memhog died ($1)"
	done
	assert_eq "$(kube_api "$evictions"' and (.path | test("dns-cache-0|shipper-x|keep-0"))' | jq length)" 0 \
		"no eviction call for the kube-system, DaemonSet or opted-out pod ($1)"
}

log "observe: the shipped config"
agent_start --config "$CM/config.json"
be="/$P/${PATH_OF[be]}"
d=$(wait_decision '.kind == "evict" and .rule == "evict.memory"' 20) ||
	fail "no evict.memory decision within 20 s: $(tail -n 3 "$AGENT_ERR")"
assert_eq "$(jget "$d" .target.cgroup)" "$be" "the decision names the BE pod"
assert_eq "$(jget "$d" .outcome)" reported "the decision says reported"
echo "$d" | jq -e '.why | test("report")' >/dev/null || fail "the decision does not say why: $d"
sleep 3 # a cool-down (4 s) and the resync: an eviction call would have come by now
assert_eq "$(kube_api "$evictions" | jq length)" 0 "no eviction reached the API"
kill -0 "${PID[be]}" 2>/dev/null || fail "the BE memhog died under the observe config"
order=$(decisions '.kind == "evict" and .rule == "evict.memory"' | jq -r '.[0:3][].target.cgroup' | paste -sd' ')
assert_eq "$order" "$be /$P/${PATH_OF[young]} /$P/${PATH_OF[old]}" \
	"the round's order: the largest, then the shorter run time first"
for p in ds:daemonset opt:opted_out; do
	d=$(decisions '.kind == "report" and .rule == "evict.memory" and .target.cgroup == "/'"$P/${PATH_OF[${p%%:*}]}"'"' | jq -c '.[0] // empty')
	[ -n "$d" ] || fail "no report names the ${p%%:*} pod the round passed over: $(decisions '.kind == "report"')"
	assert_eq "$(jget "$d" .cause)/$(jget "$d" .class)" "${p#*:}/BE" "the ${p%%:*} pod: BE, skipped, and why"
done
skipped='.method == "POST" and (.path | endswith("/events")) and .body.reason == "EvictionSkipped"'
kube_wait_api "$skipped"' and .body.regarding.name == "shipper-x"' 5 ||
	fail "no EvictionSkipped Event on the DaemonSet's pod: $(kube_api "$skipped")"
kube_api "$skipped"' and .body.regarding.name == "shipper-x"' | jq -e '.[0].body.note | test("not evicted: daemonset")' >/dev/null ||
	fail "the Event does not say why: $(kube_api "$skipped" | jq -c '.[0].body.note')"
assert_eq "$(decisions '.kind == "evict" and .outcome != "reported"' | jq length)" 0 \
	"every evict decision is reported only"
protected_untouched observe
agent_stop

log "enforce on canary-* nodes only: this node reports"
configmap_swap "$CM" "$TMP/canary.json"
: >"$AGENT_OUT"
: >"$AGENT_ERR" # agent_start waits for this agent's "managing" line, not the last one's
agent_start --config "$CM/config.json"
grep -q 'agent: evict.nodes "canary-\*" does not match node '"$NODE"': evictions here are reported only' "$AGENT_ERR" ||
	fail "the start does not say this node only reports: $(tail -n 3 "$AGENT_ERR")"
d=$(wait_decision '.kind == "evict" and .rule == "evict.memory"' 20) ||
	fail "no evict.memory decision within 20 s: $(tail -n 3 "$AGENT_ERR")"
assert_eq "$(jget "$d" .outcome)/$(jget "$d" .why)" \
	"reported/evictions are reported only here (evict.action, evict.nodes)" \
	"the decision on a node evict.nodes leaves out"
sleep 2
assert_eq "$(kube_api "$evictions" | jq length)" 0 "no eviction reached the API"

log "enforce: the enforce overlay's ConfigMap, swapped in while the agent runs"
configmap_swap "$CM" "$TMP/enforce.json"
for _ in $(seq 1 50); do
	grep -q 'agent: evict.action is now "kubernetes" on this node' "$AGENT_ERR" && break
	sleep 0.1
done
grep -q 'agent: evict.action is now "kubernetes" on this node' "$AGENT_ERR" ||
	fail "the enforce config was not reloaded: $(grep reload "$AGENT_ERR" | tail -n 2)"
t_enf=$(date +%s)
# A unit named by an eviction is not named again for 30 s (EVICT_PENDING_S): the reported
# round's victim comes up again only then.
kube_wait_api "$evictions" 45 || fail "no eviction call within 45 s: $(decisions '.kind == "evict"')"
log "the eviction call came $(($(date +%s) - t_enf)) s after the reload"
call=$(kube_api "$evictions" | jq -c '.[0]')
assert_eq "$(jget "$call" .path)" "/api/v1/namespaces/batch/pods/crunch-0/eviction" \
	"the eviction request for the BE pod reached the stand-in"
assert_eq "$(jget "$call" .body.deleteOptions.preconditions.uid)" "${UID_OF[be]}" "with its UID"
wait_decision '.kind == "evict" and .outcome == "evicted"' 10 >/dev/null ||
	fail "no evicted decision: $(decisions '.kind == "evict"')"
protected_untouched enforce
assert_eq "$(kube_violations | wc -l)" 0 "the server saw no malformed call: $(kube_violations | head -n 3)"
agent_stop
log "pass"
