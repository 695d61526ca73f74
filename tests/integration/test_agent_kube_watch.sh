#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The agent's pod informer (user/kube/informer.h) against the API stand-in,
# with the shipped config and the Kubernetes link on (resync_s 0: list once,
# then watch), on real pod cgroups in the kubelet's layout:
#   1. a BE pod (BestEffort) added to the API, then its cgroup made: the first
#      protective write (cpu.idle) within 1 s of the mkdir (the measured ms
#      printed; make bench has the figures);
#   2. a kube-system, a DaemonSet-owned (apps/v1 controller, in a namespace
#      daemonset_namespaces lists) and a static (mirror) pod, all BestEffort,
#      never get a BE action nor cpu.idle, whether their API object comes before
#      their cgroup or after it; a tenant's own DaemonSet pod elsewhere is BE;
#   3. steady state: one LIST, then watches only (the stand-in's request log);
#   4. a network cut mid-watch (the stand-in drops the stream): the watch
#      resumes from its version without a LIST, and a pod added meanwhile is
#      known;
#   5. the API server restarted on the same port with a pod added while it was
#      down: its empty history answers 410, the agent lists again and knows
#      the pod;
#   6. a pod over the size cap (a 17 MiB annotation): /readyz says not ready
#      with the reason and qoslet_kube_pods_degraded is 1; once it is gone the
#      agent is ready again.
# About 30 s.
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
require_cmds jq curl
require_binaries
test_setup
agent_setup
kube_require

P=${TEST_PARENT_REL#/}
probe=$(agent_cgroup probe)
[ -e "$probe/cpu.idle" ] || skip "no cpu.idle in this kernel's cpu controller (5.15+)"

uuid() { cat /proc/sys/kernel/random/uuid; }
PODS=$KUBE_TMP/pods.json
echo '{"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": []}' >"$PODS"
KUBE_PODS=$PODS
# add_pod UID NS NAME [EXTRA-JQ]: a BestEffort pod on this node in the API (the stand-in
# turns the pods file's change into a watch event)
add_pod() {
	jq --arg uid "$1" --arg ns "$2" --arg name "$3" --arg node "$NODE" \
		'.items += [{metadata: {uid: $uid, namespace: $ns, name: $name}, spec: {nodeName: $node},
		status: {qosClass: "BestEffort"}} | '"${4:-.}"']' "$PODS" >"$PODS.new"
	mv "$PODS.new" "$PODS"
}
del_pod() {
	jq --arg uid "$1" '.items |= map(select(.metadata.uid != $uid))' "$PODS" >"$PODS.new"
	mv "$PODS.new" "$PODS"
}
kube_start "$NODE" --bookmark-interval 1
PORT=$(cat "$KUBE_TMP/port")

# The kubelet's QoS parents exist before any pod of theirs (the kubelet makes them at start).
agent_cgroup "$(dirname "$(kube_pod_rel besteffort "$(uuid)")")" >/dev/null

HTTP_PORT=$(free_port)
agent_config '{"kubernetes": {"enabled": true, "kubeconfig": "'"$KUBE_TMP/kubeconfig"'",
		"node_name": "'"$NODE"'", "resync_s": 0, "timeout_s": 2},
	"daemonset_namespaces": ["infra"],
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$HTTP_PORT"'}}'
agent_start
metric() { curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
# wait_pods N: until the agent knows N pods (qoslet_kube_pods), 10 s at most
wait_pods() {
	for _ in $(seq 1 100); do
		[ "$(metric qoslet_kube_pods)" = "$1" ] && return 0
		sleep 0.1
	done
	fail "the agent knows $(metric qoslet_kube_pods) pods, not $1: $(tail -n 3 "$AGENT_ERR")"
}
kube_wait_api '.verb == "watch"' 10 || fail "no pod watch within 10 s: $(tail -n 3 "$AGENT_ERR")"

log "1. a BE pod in the API, then its cgroup"
be_uid=$(uuid)
add_pod "$be_uid" batch crunch-0
wait_pods 1
be_rel=$(kube_pod_rel besteffort "$be_uid")
t0=$(date +%s%N)
agent_cgroup "$be_rel" >/dev/null
d=$(wait_decision '.kind == "cpu_idle" and .target.cgroup == "/'"$P/$be_rel"'" and .outcome == "applied"' 10) ||
	fail "no cpu.idle for the BE pod within 10 s: $(decisions '.target.cgroup == "/'"$P/$be_rel"'"')"
ms=$(jq -n --argjson d "$d" --argjson t0 "$t0" '($d.ts_ns - $t0) / 1e6 | floor')
log "the BE pod's cpu.idle came $ms ms after its mkdir; its decisions: $(decisions \
	'.target.cgroup == "/'"$P/$be_rel"'"' | jq -c --argjson t0 "$t0" \
	'map([((.ts_ns - $t0) / 1e6 | floor), .kind, .outcome])')"
assert_cmp "$ms" "<=" "$(time_bound_ms 1000)" "ms from the BE pod's mkdir to its cpu.idle"
assert_eq "$(cat "$TEST_PARENT/$be_rel/cpu.idle")" 1 "the BE pod's cpu.idle"

log "2. pods that keep the node running: never BE, API object before or after the cgroup"
DS_OWNER='.metadata.ownerReferences = [{apiVersion: "apps/v1", kind: "DaemonSet", name: "agent", controller: true}]'
declare -A REL
i=0
for kind in system daemonset mirror; do
	case $kind in
	system) ns=kube-system extra='.' ;;
	daemonset) ns=infra extra=$DS_OWNER ;;
	mirror) ns=infra extra='.metadata.annotations = {"kubernetes.io/config.mirror": "abc"}' ;;
	esac
	for order in before after; do
		uid=$(uuid)
		REL[$kind-$order]=$(kube_pod_rel besteffort "$uid")
		i=$((i + 1))
		if [ "$order" = before ]; then
			add_pod "$uid" "$ns" "$kind-$order" "$extra"
			wait_pods $((1 + i))
			agent_cgroup "${REL[$kind-$order]}" >/dev/null
		else
			agent_cgroup "${REL[$kind-$order]}" >/dev/null
			sleep 0.3 # the tree's tick has seen it unknown
			add_pod "$uid" "$ns" "$kind-$order" "$extra"
			wait_pods $((1 + i))
		fi
	done
done
sleep 1.5 # a regular tick and the pod events' ticks
for k in "${!REL[@]}"; do
	rel=/$P/${REL[$k]}
	assert_eq "$(decisions '((.target.cgroup // "") | startswith("'"$rel"'")) and .class == "BE"' | jq length)" 0 \
		"BE decisions on the $k pod"
	assert_eq "$(cat "$TEST_PARENT/${REL[$k]}/cpu.idle")" 0 "the $k pod's cpu.idle"
done
# A tenant may make a DaemonSet of their own: outside daemonset_namespaces it is not the node's.
tenant_uid=$(uuid)
add_pod "$tenant_uid" tenant-a own-ds "$DS_OWNER"
wait_pods 8
tenant_rel=$(kube_pod_rel besteffort "$tenant_uid")
agent_cgroup "$tenant_rel" >/dev/null
wait_decision '.kind == "cpu_idle" and .target.cgroup == "/'"$P/$tenant_rel"'" and .outcome == "applied"' 10 >/dev/null ||
	fail "a tenant's DaemonSet pod was not taken as BE: $(decisions '.target.cgroup == "/'"$P/$tenant_rel"'"')"

log "3. steady state: one LIST, then watches"
assert_eq "$(kube_api '.verb == "list"' | jq length)" 1 "pod LISTs so far"
assert_cmp "$(kube_api '.verb == "watch"' | jq length)" ">=" 1 "pod watches"
assert_eq "$(kube_violations | wc -l)" 0 "calls that broke a rule: $(kube_violations | head -n 3)"

log "4. a network cut mid-watch, a pod added meanwhile"
watches=$(kube_api '.verb == "watch"' | jq length)
kill -USR2 "${KUBE_SERVER_PIDS[0]}"
add_pod "$(uuid)" batch during-cut
wait_pods 9
kube_wait_api '.verb == "watch"' 1
assert_cmp "$(kube_api '.verb == "watch"' | jq length)" ">" "$watches" "a new watch after the cut"
assert_eq "$(kube_api '.verb == "list"' | jq length)" 1 "pod LISTs after the cut (resumed, not relisted)"
assert_cmp "$(metric 'qoslet_kube_pod_watch_broken_total')" ">=" 1 "broken watches counted"

log "5. the API server restarted on the same port, a pod added while it was down"
kube_stop_servers
add_pod "$(uuid)" batch during-restart
kube_server 127.0.0.1 "$KUBE_TMP/port2" --node "$NODE" --port "$PORT" --bookmark-interval 1 ||
	fail "the stand-in did not restart: $(tail -n 3 "$KUBE_TMP/server.err")"
BG_PIDS+=("${KUBE_SERVER_PIDS[@]}")
wait_pods 10
assert_eq "$(kube_api '.verb == "list"' | jq length)" 2 "pod LISTs: the first, then after the restart's 410"
assert_cmp "$(metric 'qoslet_kube_pod_expired_total')" ">=" 1 "410s counted"

log "6. a pod over the size cap"
big_uid=$(uuid)
head -c $((17 << 20)) /dev/zero | tr '\0' a >"$KUBE_TMP/big"
jq --arg uid "$big_uid" --arg node "$NODE" --rawfile big "$KUBE_TMP/big" \
	'.items += [{metadata: {uid: $uid, namespace: "batch", name: "huge",
	annotations: {note: $big}}, spec: {nodeName: $node}, status: {qosClass: "BestEffort"}}]' \
	"$PODS" >"$PODS.new"
mv "$PODS.new" "$PODS"
ready=""
for _ in $(seq 1 100); do
	ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz" || true)
	case $ready in *"size cap"*) break ;; esac
	sleep 0.1
done
case $ready in *"pod list over the size cap"*) ;; *) fail "/readyz while a pod is over the cap: $ready" ;; esac
assert_eq "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/readyz")" 503 "/readyz status"
assert_eq "$(metric qoslet_kube_pods_degraded)" 1 "qoslet_kube_pods_degraded"
assert_cmp "$(metric qoslet_kube_pod_oversize_total)" ">=" 1 "qoslet_kube_pod_oversize_total"
grep -q "size cap" "$AGENT_ERR" || fail "the over-size list is not logged"
del_pod "$big_uid"
for _ in $(seq 1 200); do
	[ "$(metric qoslet_kube_pods_degraded)" = 0 ] && break
	sleep 0.1
done
assert_eq "$(metric qoslet_kube_pods_degraded)" 0 "degraded once the pod is gone"
assert_eq "$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")" ok "/readyz"
kill -0 "$AGENT_PID" || fail "the agent died"
agent_stop
log "pass"
