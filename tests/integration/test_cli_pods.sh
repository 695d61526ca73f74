#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The views' --pod NAME|UID and --namespace NS, with two pods on kubepods-
# shaped cgroups ("frontend-0" in namespace "web", "crunch-0" in "batch"),
# both busy, and the API stand-in of kube_lib.sh listing them on this node:
#   - --pod NAME, --namespace NS and both together select exactly the pods
#     they name (runqlat -j and top -j): every row's pod is one of them, and
#     each selected pod's container is there;
#   - a name that matches nothing is a usage error (exit 2) naming it;
#   - without any API configuration, --pod UID still works, and a name or a
#     namespace is refused (exit 2) saying it needs the API and that UIDs and
#     paths work without it;
#   - --pod NAME works with a kind-style kubeconfig (client certificate as
#     data) and with an exec credential plugin's.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

require_root
require_cmds jq python3
require_binaries
test_setup
kube_require

NODE=qoslet-test-node
# pod_uid CGROUP: the pod UID in a container cgroup's path (dashes or, in
# the systemd layout, underscores).
pod_uid() {
	grep -oE 'pod[0-9a-f_-]{36}' <<<"$1" | head -n 1 | cut -c4- | tr _ -
}
WEB=$(kube_cgroup burstable) BATCH=$(kube_cgroup besteffort)
WEB_UID=$(pod_uid "$WEB") BATCH_UID=$(pod_uid "$BATCH")
WEB_REL=$(cg_rel "$WEB") BATCH_REL=$(cg_rel "$BATCH")
cg_run "$WEB" 0 "$DUTYCYCLE" 500 500 "$(load_lifetime_s)"
cg_run "$BATCH" 0 "$DUTYCYCLE" 500 500 "$(load_lifetime_s)"
log "web/frontend-0 $WEB_UID, batch/crunch-0 $BATCH_UID"

jq -n --arg node "$NODE" --arg web "$WEB_UID" --arg batch "$BATCH_UID" '
	def pod($uid; $ns; $name; $qos):
		{metadata: {uid: $uid, namespace: $ns, name: $name},
		 spec: {nodeName: $node, priority: 0}, status: {qosClass: $qos}};
	{kind: "PodList", apiVersion: "v1", metadata: {resourceVersion: "1"}, items: [
		pod($web; "web"; "frontend-0"; "Burstable"),
		pod($batch; "batch"; "crunch-0"; "BestEffort")]}' >"$KUBE_TMP/pods.json"
KUBE_PODS=$KUBE_TMP/pods.json
# A client CA too: the kind-style kubeconfig below authenticates by certificate.
kube_client_certs qoslet-cli
kube_start "$NODE" --client-ca "$KUBE_TMP/client-ca.crt" --log-auth

# q ARGS...: qoslet with the API configured (Q_KUBECONFIG, else kube_start's
# kubeconfig); RC, $TMP/out, $TMP/err.
q() {
	RC=0
	NODE_NAME=$NODE KUBECONFIG=${Q_KUBECONFIG:-$KUBE_TMP/kubeconfig} timeout -k 5 60 "$QOSLET" "$@" \
		--pin-dir "$PIN_DIR" >"$TMP/out" 2>"$TMP/err" || RC=$?
}
# q_noapi ARGS...: the same with no kubeconfig, no ~/.kube/config, not in a pod.
q_noapi() {
	RC=0
	env -u KUBECONFIG -u KUBERNETES_SERVICE_HOST HOME="$TMP" NODE_NAME=$NODE \
		timeout -k 5 60 "$QOSLET" "$@" --pin-dir "$PIN_DIR" >"$TMP/out" 2>"$TMP/err" || RC=$?
}
# expect_pods WHAT UID...: the last line's rows all belong to these pods, and
# each of them has its container's row.
expect_pods() {
	local what=$1 uids pods uid
	shift
	[ "$RC" = 0 ] || fail "$what: exit $RC: $(cat "$TMP/err")"
	uids=$(printf '%s\n' "$@" | sort -u | tr '\n' ' ')
	pods=$(tail -n 1 "$TMP/out" | jq -r '[.cgroups[].pod] | unique | join(" ")')
	assert_eq "$pods " "$uids" "$what: the pods of the rows"
	for uid in "$@"; do
		tail -n 1 "$TMP/out" | jq -e --arg u "$uid" 'any(.cgroups[]; .pod == $u and .container != null)' >/dev/null ||
			fail "$what: no container row of pod $uid: $(tail -n 1 "$TMP/out" | head -c 1000)"
	done
}

q runqlat -j --pod frontend-0 1 1
expect_pods "runqlat --pod frontend-0" "$WEB_UID"
q runqlat -j --namespace batch 1 1
expect_pods "runqlat --namespace batch" "$BATCH_UID"
q top -j --pod crunch-0 --namespace batch 1 1
expect_pods "top --pod crunch-0 --namespace batch" "$BATCH_UID"
q runqlat -j --pod "$WEB_UID" --namespace web 1 1
expect_pods "runqlat --pod UID --namespace web" "$WEB_UID"
# -c and --pod together: both must hold.
q runqlat -j -c "$WEB_REL" --namespace web 1 1
expect_pods "runqlat -c WEB --namespace web" "$WEB_UID"
q runqlat -j -c "$BATCH_REL" --namespace web 1 1
[ "$RC" = 0 ] || fail "runqlat -c BATCH --namespace web: exit $RC: $(cat "$TMP/err")"
assert_eq "$(tail -n 1 "$TMP/out" | jq '.cgroups | length')" 0 "runqlat -c BATCH --namespace web: rows"

q runqlat --pod frontend-0 --namespace batch 1 1
assert_eq "$RC" 2 "a pod in another namespace: exit status"
grep -qF "no pod named 'frontend-0' in namespace 'batch' on node '$NODE'" "$TMP/err" ||
	fail "no pod: stderr does not say so: $(cat "$TMP/err")"
log "ok: $(cat "$TMP/err")"

q_noapi runqlat -j --pod "$BATCH_UID" 1 1
expect_pods "without the API: runqlat --pod UID" "$BATCH_UID"
for args in "--pod crunch-0" "--namespace batch"; do
	# shellcheck disable=SC2086 # two words
	q_noapi runqlat $args 1 1
	assert_eq "$RC" 2 "without the API: runqlat $args: exit status"
	grep -q "needs the Kubernetes API.*UIDs (--pod UID) and cgroup paths (-c) work without it" "$TMP/err" ||
		fail "without the API: runqlat $args: stderr does not say why: $(cat "$TMP/err")"
done
log "ok: without the API: $(cat "$TMP/err")"

# --pod NAME with the kubeconfigs users have (tests/integration/test_kubeconfig.sh
# checks each against the stand-in in detail): kind's (a client certificate
# as data) and an exec credential plugin's.
kube_kubeconfig_data "$KUBE_TMP/kind.yaml" "$(cat "$KUBE_TMP/port")"
Q_KUBECONFIG=$KUBE_TMP/kind.yaml q runqlat -j --pod frontend-0 1 1
expect_pods "runqlat --pod frontend-0, kind-style kubeconfig" "$WEB_UID"
mkdir -p "$KUBE_TMP/bin"
kube_exec_plugin "$KUBE_TMP/bin/plugin" 600
kube_kubeconfig_exec "$KUBE_TMP/exec.yaml" "$(cat "$KUBE_TMP/port")" ./bin/plugin
Q_KUBECONFIG=$KUBE_TMP/exec.yaml q top -j --pod crunch-0 1 1
expect_pods "top --pod crunch-0, exec plugin kubeconfig" "$BATCH_UID"
assert_eq "$(wc -l <"$KUBE_TMP/bin/plugin.log")" 1 "exec plugin runs for one --pod lookup"
assert_eq "$(kube_api '.user == "qoslet-cli"' | jq length)" 1 "requests the stand-in saw by certificate"

# Every lookup was one LIST the API server's watch cache answers (resourceVersion=0, no
# limit) with this node's field selector: none that only etcd could serve.
lists=$(kube_api '.verb == "list"')
assert_cmp "$(echo "$lists" | jq length)" ">=" 6 "CLI pod lookups"
assert_eq "$(echo "$lists" | jq --arg p "/api/v1/pods?fieldSelector=spec.nodeName%3D$NODE&resourceVersion=0" \
	'map(select(.path != $p or .source != "cache")) | length')" 0 \
	"CLI lookups not rv=0 + spec.nodeName=$NODE from the cache: $(echo "$lists" | jq -c 'map(.path)')"
test_end
