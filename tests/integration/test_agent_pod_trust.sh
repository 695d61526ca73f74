#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A pod's own metadata decides only what its resources allow
# (docs/security.md, TRUST MODEL), on a real agent: real pod cgroups in the
# kubelet's layout, the pods listed by the API stand-in (kube_lib.sh), the
# shipped defaults for what pods may claim:
#   lse    batch/claim-lse    BestEffort, labelled koordinator.sh/qosClass=LSE
#   sys    batch/claim-sys    BestEffort, labelled SYSTEM
#   keep   batch/keep-0       BestEffort, qoslet.io/eviction-disabled "true"
#   tight  web/tight-0        Burstable, qoslet.io/runq-p99-target-us "1"
#   whole  db/whole-0         Guaranteed, 2 CPUs requested, labelled LSE
# Asserted, from the agent's recording (the units the policies see), its
# /metrics and its log:
#   - lse and sys are BE (their labels refused), whole is LSE (allowed);
#   - keep is not guarded from eviction (its namespace is not allowed);
#   - tight's target is recorded as annotated (the SLO policy applies the
#     500 us floor: test_slo);
#   - qoslet_pod_metadata_refused counts each refusal once, with its reason;
#   - each refusal is logged once, not at every pod list (1 s apart).
# About 10 s.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

NODE=qoslet-test-node

require_root
require_cmds jq curl
require_binaries
test_setup
agent_setup
kube_require
P=${TEST_PARENT_REL#/}
PORT=$(free_port)

uuid() { cat /proc/sys/kernel/random/uuid; }
declare -A UID_OF PATH_OF
for p in lse sys keep tight whole; do UID_OF[$p]=$(uuid); done
PATH_OF[lse]=$(kube_pod_rel besteffort "${UID_OF[lse]}")
PATH_OF[sys]=$(kube_pod_rel besteffort "${UID_OF[sys]}")
PATH_OF[keep]=$(kube_pod_rel besteffort "${UID_OF[keep]}")
PATH_OF[tight]=$(kube_pod_rel burstable "${UID_OF[tight]}")
PATH_OF[whole]=$(kube_pod_rel guaranteed "${UID_OF[whole]}")

jq -n --arg node "$NODE" --arg lse "${UID_OF[lse]}" --arg sys "${UID_OF[sys]}" \
	--arg keep "${UID_OF[keep]}" --arg tight "${UID_OF[tight]}" --arg whole "${UID_OF[whole]}" '
	def pod($uid; $ns; $name; $qos; $labels; $annotations; $cpu):
		{metadata: {uid: $uid, namespace: $ns, name: $name, labels: $labels,
		            annotations: $annotations},
		 spec: {nodeName: $node, priority: 0,
		        containers: [{name: "c", resources: {requests: $cpu, limits: $cpu}}]},
		 status: {qosClass: $qos}};
	{kind: "PodList", apiVersion: "v1", metadata: {resourceVersion: "1"}, items: [
		pod($lse; "batch"; "claim-lse"; "BestEffort"; {"koordinator.sh/qosClass": "LSE"}; {}; {}),
		pod($sys; "batch"; "claim-sys"; "BestEffort"; {"koordinator.sh/qosClass": "SYSTEM"}; {}; {}),
		pod($keep; "batch"; "keep-0"; "BestEffort"; {}; {"qoslet.io/eviction-disabled": "true"}; {}),
		pod($tight; "web"; "tight-0"; "Burstable"; {}; {"qoslet.io/runq-p99-target-us": "1"};
			{cpu: "500m"}),
		pod($whole; "db"; "whole-0"; "Guaranteed"; {"koordinator.sh/qosClass": "LSE"}; {};
			{cpu: "2", memory: "64Mi"})]}' >"$KUBE_TMP/pods.json"
KUBE_PODS=$KUBE_TMP/pods.json
kube_start "$NODE"
for p in lse sys keep tight whole; do agent_cgroup "${PATH_OF[$p]}" >/dev/null; done

agent_config '{"kubernetes": {"enabled": true, "kubeconfig": "'"$KUBE_TMP/kubeconfig"'",
		"node_name": "'"$NODE"'", "resync_s": 1, "timeout_s": 2,
		"events": {"enabled": false}, "node_condition": {"enabled": false}},
	"capacity": {"node_status": {"enabled": false}},
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'}}'
agent_start --record "$TMP/rec.jsonl"

refused='^qoslet_pod_metadata_refused\{input="([a-z0-9_]+)",reason="([a-z0-9_]+)"\} ([0-9]+)$'
for _ in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt" || true
	grep -qE 'qoslet_pod_metadata_refused\{input="runq_target",reason="below_floor"\} 1' \
		"$TMP/metrics.txt" && break
	sleep 0.1
done
sed -nE "s/$refused/\1\/\2 \3/p" "$TMP/metrics.txt" | sort >"$TMP/refused"
[ -s "$TMP/refused" ] || fail "no qoslet_pod_metadata_refused on /metrics: $(tail -n 3 "$AGENT_ERR")"
assert_eq "$(awk '$2 != 0' "$TMP/refused" | tr '\n' ' ')" \
	"eviction_opt_out/namespace_not_allowed 1 qos_label/needs_guaranteed 1 qos_label/system_class 1 runq_target/below_floor 1 " \
	"the refusals counted, each once"
assert_eq "$(wc -l <"$TMP/refused")" 10 "every (input, reason) listed"

sleep 2.5 # two more pod lists: nothing is logged again
agent_stop
for what in "claim-lse: label koordinator.sh/qosClass=LSE not taken as asked: LSR and LSE need Guaranteed QoS (class BE)" \
	"claim-sys: label koordinator.sh/qosClass=SYSTEM not taken as asked" \
	"keep-0: eviction opt-out not taken as asked: the namespace is not in evict.opt_out_namespaces" \
	"tight-0: annotation qoslet.io/runq-p99-target-us=1 not taken as asked"; do
	assert_eq "$(grep -cF "$what" "$AGENT_ERR")" 1 "logged once: ${what%%:*}"
done
assert_eq "$(grep -c "whole-0.*not taken" "$AGENT_ERR")" 0 "the Guaranteed 2-CPU pod's LSE label is taken"

# unit P FIELD: the pod's unit in the last tick recorded.
unit() {
	jq -rs --arg path "$P/${PATH_OF[$1]}" \
		'[.[] | .. | objects | select(has("pod_uid") and .path == $path)] | last | '"$2" \
		"$TMP/rec.jsonl"
}
assert_eq "$(unit lse .class)" BE "the BestEffort pod labelled LSE is BE"
assert_eq "$(unit sys .class)" BE "the BestEffort pod labelled SYSTEM is BE"
assert_eq "$(unit whole .class)" LSE "the Guaranteed pod with 2 whole CPUs labelled LSE is LSE"
assert_eq "$(unit keep '.evict_guard // "none"')" none "the opt-out outside the allowed namespaces guards nothing"
assert_eq "$(unit tight .rq_target_us)" 1 "the target recorded as annotated (the policy applies the floor)"
test_end
