#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The agent with its Kubernetes link, against the HTTPS API stand-in
# (tests/helpers/kube_api_server.py, its own CA; every call checked against
# the API reference) and real pod cgroups under the test's parent, in the
# kubelet's cgroupfs layout (or the systemd one, kubepods.slice/..., with
# QOSLET_CGROUP_LAYOUT=systemd as in the VMs):
#   kubepods/pod<ls>                 Guaranteed: LSR, holds 250 MiB
#   kubepods/besteffort/pod<be>      BestEffort: BE, holds 100 MiB
#   kubepods/burstable/pod<labelled> Burstable, but labelled
#                                    koordinator.sh/qosClass=BE: holds 300 MiB
# with an 800 MiB memory limit on the parent (about 81% in use, over the 70%
# memory eviction threshold) and evict.action "kubernetes". Asserted:
#   - the pods are listed with fieldSelector spec.nodeName=<node>, then watched;
#   - the label classes the Burstable pod BE: it is the one evicted (the
#     largest BE), LS/LSR pods never are;
#   - the eviction: scripted 429 then 201 gives the decision records
#     requested, retry (attempt 1, HTTP 429) and evicted (attempt 2, HTTP
#     201), at least 1 s apart; the server saw a policy/v1 Eviction with the
#     pod's UID as precondition;
#   - an "Evicting" Event on that pod, and the node condition
#     QoSletInterference=False (NoInterference) is written;
#   - the service-account token rotated mid-run keeps working: no call is
#     refused (the stand-in takes the replaced token for 2 s only, so a call
#     built just before the rotation passes and a cached token does not);
#   - an API outage (every call 503) does not stop the agent: it logs once,
#     backs off, and recovers when the API is back;
#   - the server saw no malformed call; SIGTERM still stops it cleanly.
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

agent_memory_limit "$LIMIT_MIB"
P=${TEST_PARENT_REL#/}
cg_weight "$TEST_PARENT" 10240 # the memhogs must get to touch their memory

uuid() { cat /proc/sys/kernel/random/uuid; }
declare -A UID_OF PATH_OF
UID_OF[ls]=$(uuid) UID_OF[be]=$(uuid) UID_OF[labelled]=$(uuid) UID_OF[elsewhere]=$(uuid)
# In the kubelet's layout of this run (QOSLET_CGROUP_LAYOUT, lib.sh's kube_pod_rel).
PATH_OF[ls]=$(kube_pod_rel guaranteed "${UID_OF[ls]}")
PATH_OF[be]=$(kube_pod_rel besteffort "${UID_OF[be]}")
PATH_OF[labelled]=$(kube_pod_rel burstable "${UID_OF[labelled]}")

# The pod list: three pods here, one on another node (the server filters it out).
jq -n --arg node "$NODE" --arg ls "${UID_OF[ls]}" --arg be "${UID_OF[be]}" \
	--arg lab "${UID_OF[labelled]}" --arg far "${UID_OF[elsewhere]}" '
	def pod($uid; $ns; $name; $node; $qos; $labels):
		{metadata: {uid: $uid, namespace: $ns, name: $name, labels: $labels},
		 spec: {nodeName: $node, priority: 0}, status: {qosClass: $qos}};
	{kind: "PodList", apiVersion: "v1", metadata: {resourceVersion: "1"}, items: [
		pod($ls; "web"; "frontend-0"; $node; "Guaranteed"; {app: "web"}),
		pod($be; "batch"; "crunch-0"; $node; "BestEffort"; {}),
		pod($lab; "batch"; "spark-exec-1"; $node; "Burstable"; {"koordinator.sh/qosClass": "BE"}),
		pod($far; "batch"; "far-away"; "other-node"; "BestEffort"; {})]}' >"$KUBE_TMP/pods.json"
KUBE_PODS=$KUBE_TMP/pods.json
printf '429\n201\n' >"$KUBE_TMP/evict-script"
kube_start "$NODE" --down-file "$KUBE_TMP/down"


# hog NAME MIB: a memhog holding MIB MiB in pod NAME; waits until charged.
hog() {
	agent_memhog "$(agent_cgroup "${PATH_OF[$1]}")" "$2"
}
hog ls 250
hog be 100
hog labelled 300

agent_config '{"kubernetes": {"enabled": true, "kubeconfig": "'"$KUBE_TMP/kubeconfig"'",
		"node_name": "'"$NODE"'", "resync_s": 1, "timeout_s": 2,
		"events": {"interval_s": 1}},
	"evict": {"action": "kubernetes", "memory": {"cooldown_s": 4}, "cpu": {"enabled": false}},
	"suppress": {"enabled": false}, "interference": {"enabled": false}}'
agent_start
grep -q "Kubernetes API link on for node $NODE" "$AGENT_ERR" ||
	fail "the agent does not say its API link is on: $(tail -n 3 "$AGENT_ERR")"

kube_wait_api '.verb == "list" and .status == 200' 10 || fail "no pod list within 10 s: $(tail -n 3 "$AGENT_ERR")"
assert_eq "$(kube_api '.verb == "list"' | jq -r '.[0].path')" \
	"/api/v1/pods?fieldSelector=spec.nodeName%3D$NODE&resourceVersion=0" \
	"the pods are listed for this node only, from the watch cache, whole (no limit)"
kube_wait_api '.verb == "watch"' 10 || fail "no pod watch within 10 s: $(tail -n 3 "$AGENT_ERR")"
kube_api '.verb == "watch"' | jq -e '.[0].path | test("^/api/v1/pods[?]fieldSelector=spec.nodeName%3D'"$NODE"'&resourceVersion=[0-9]+&allowWatchBookmarks=true&timeoutSeconds=[0-9]+&watch=true$")' \
	>/dev/null || fail "the watch: $(kube_api '.verb == "watch"' | jq -r '.[0].path')"
log "rotating the service-account token"
echo "token-two-$RANDOM" >"$KUBE_TMP/token.new"
mv "$KUBE_TMP/token.new" "$KUBE_TMP/token"
rotated_at=$(wc -l <"$KUBE_TMP/api.log")

# (the batch resources are patched on the same path: docs/capacity.md)
cond='.method == "PATCH" and (.path | endswith("/status")) and .body.status.conditions != null'
kube_wait_api "$cond" 10 || fail "no node condition within 10 s"
c=$(kube_api "$cond" | jq -c '.[0].body.status.conditions[0]')
assert_eq "$(jget "$c" .type)/$(jget "$c" .status)/$(jget "$c" .reason)" \
	"QoSletInterference/False/NoInterference" "the node condition says no interference"
assert_eq "$(kube_api "$cond" | jq -r '.[0].path')" "/api/v1/nodes/$NODE/status" "on this node"

lab="/$P/${PATH_OF[labelled]}"
evict='.kind == "evict"'
d=$(wait_decision "$evict"' and .outcome == "evicted"' 20) ||
	fail "no evicted decision within 20 s: $(decisions "$evict")"
assert_eq "$(jget "$d" .target.cgroup)" "$lab" "the labelled pod is evicted: its label made it BE"
assert_eq "$(jget "$d" .class)" BE "its class"
assert_eq "$(decisions "$evict"' and .target.cgroup == "'"$lab"'"' | jq -r 'map(.outcome) | join(" ")')" \
	"requested retry evicted" "every attempt is a decision record"
r=$(decisions "$evict"' and .outcome == "retry"' | jq -c '.[0]')
assert_eq "$(jget "$r" .before)/$(jget "$r" .after)" \
	"pod batch/spark-exec-1, attempt 1/HTTP 429" "the first attempt met the disruption budget"
echo "$r" | jq -e '.why | test("disruption budget")' >/dev/null || fail "no server message: $r"
assert_eq "$(jget "$d" .before)/$(jget "$d" .after)" "pod batch/spark-exec-1, attempt 2/HTTP 201" \
	"the second attempt evicted"
gap=$(awk -v a="$(jget "$r" .ts_ns)" -v b="$(jget "$d" .ts_ns)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
assert_cmp "$gap" ">=" 0.9 "the retry backed off (${gap} s)"
posts=$(kube_api '.method == "POST" and (.path | endswith("/eviction"))')
assert_eq "$(echo "$posts" | jq length)" 2 "two eviction calls"
assert_json "$posts" 'all(.[]; .path == "/api/v1/namespaces/batch/pods/spark-exec-1/eviction"
	and .body.deleteOptions.preconditions.uid == "'"${UID_OF[labelled]}"'")' \
	"each names the pod with its UID as precondition"
assert_eq "$(decisions "$evict"' and .class != "BE"' | jq length)" 0 "no LS pod is ever evicted"

ev='.method == "POST" and (.path | endswith("/events"))'
kube_wait_api "$ev"' and .body.reason == "Evicting"' 10 || fail "no Evicting event within 10 s: $(kube_api "$ev")"
e=$(kube_api "$ev"' and .body.reason == "Evicting"' | jq -c '.[0].body')
assert_eq "$(jget "$e" .regarding.uid)/$(jget "$e" .regarding.name)/$(jget "$e" .type)" \
	"${UID_OF[labelled]}/spark-exec-1/Warning" "the Event is on the evicted pod"
assert_eq "$(kube_api '.status == 401' | jq length)" 0 "a call with the replaced token after its grace ($(($(wc -l <"$KUBE_TMP/api.log") - rotated_at)) calls after it)"

log "an API outage: every call gets 503"
# Only what the agent logs from here counts: a slow machine (a VM under TCG)
# may have timed out a call, and backed off, earlier in the run.
err_mark=$(wc -l <"$AGENT_ERR")
: >"$KUBE_TMP/down"
sleep 4
kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent died in the outage: $(tail -n 5 "$AGENT_ERR")"
outage_log=$(tail -n +$((err_mark + 1)) "$AGENT_ERR")
grep -q "backing off" <<<"$outage_log" || fail "the outage is not logged: $(tail -n 5 "$AGENT_ERR")"
assert_eq "$(grep -c "backing off" <<<"$outage_log")" 1 "the outage is logged once"
down_calls=$(kube_api '.status == 503' | jq length)
assert_cmp "$down_calls" "<=" 6 "calls back off in the outage ($down_calls in 4 s)"
rm "$KUBE_TMP/down"
mark=$(wc -l <"$KUBE_TMP/api.log")
# The informer's retries back off (jittered, doubling) through the outage: its
# next list may come some seconds after the API's return.
listed_again() {
	tail -n +$((mark + 1)) "$KUBE_TMP/api.log" |
		jq -s -e 'any(.[]; .verb == "list" and .status == 200)' >/dev/null
}
for _ in $(seq 1 150); do
	listed_again && grep -q "answers again" "$AGENT_ERR" && break
	sleep 0.1
done
listed_again || fail "no pod list within 15 s of the API's return"
grep -q "answers again" "$AGENT_ERR" || fail "the recovery is not logged: $(tail -n 3 "$AGENT_ERR")"
log "ok: recovered after the outage"

assert_eq "$(kube_violations | wc -l)" 0 "the server saw no malformed call: $(kube_violations | head -n 3)"
agent_stop
log "pass"
