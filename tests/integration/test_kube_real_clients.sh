#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The API stand-in (tests/helpers/kube_api_server.py) held to the real
# protocol by clients no one here wrote: kubectl (`get pods --watch
# --output-watch-events -o json`, after its discovery calls) and the official
# JavaScript client's informer (@kubernetes/client-node's makeInformer,
# tests/js/kube-client/, installed by `npm ci` from scripts/deps.sh's test
# profile). Both watch the same namespace while pods are added, changed and
# deleted, and both must see the same adds, updates and deletes; then the
# stand-in compacts (SIGUSR1: an ERROR 410 on every watch) and a pod is added:
# the informer lists again and sees it, kubectl reports the 410 and its next
# list sees it. Every answer is gzipped for a client that accepts it. Then
# kubectl holds the LIST semantics: --chunk-size pages by limit and continue
# token, resourceVersion=0 ignores a limit (the watch cache), an exact version
# with a limit older than the compaction is 410, and one without a limit is
# served (not older than). Every call is checked as for qoslet (token, paths, query). A
# missing kubectl, node or module skips that part with the reason. Needs no
# root. About 20 s (the JavaScript client takes seconds to load).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

JS_DIR=$QOSLET_ROOT/tests/js/kube-client
require_cmds jq
kube_scratch
kube_require

have_kubectl=1 have_js=1
command -v kubectl >/dev/null || { have_kubectl=0; skip_part "kubectl: not installed (scripts/deps.sh test installs kubernetes-client)"; }
if ! command -v node >/dev/null; then
	have_js=0
	skip_part "@kubernetes/client-node: node is not installed (scripts/deps.sh test installs nodejs)"
elif [ ! -d "$JS_DIR/node_modules/@kubernetes/client-node" ]; then
	have_js=0
	skip_part "@kubernetes/client-node: not installed (scripts/deps.sh test runs npm ci in tests/js/kube-client)"
fi
[ "$have_kubectl$have_js" != 00 ] || test_end

NS=demo
PODS=$TMP/pods.json
pod() { # UID NAME [LABEL-VALUE]
	jq -nc --arg uid "$1" --arg name "$2" --arg ns "$NS" --arg v "${3:-1}" \
		'{metadata: {uid: $uid, namespace: $ns, name: $name, labels: {v: $v}},
		  spec: {nodeName: "n1"}, status: {qosClass: "BestEffort"}}'
}
set_pods() { # POD-JSON...
	printf '%s\n' "$@" | jq -s '{kind: "PodList", apiVersion: "v1", metadata: {}, items: .}' \
		>"$PODS.new"
	mv "$PODS.new" "$PODS"
}
set_pods "$(pod u-a a)" "$(pod u-b b)"
KUBE_PODS=$PODS
kube_certs
# Every answer gzipped for a client that asks (the real threshold is 128 KiB): the clients
# must decode what the stand-in compresses.
kube_server 127.0.0.1 "$TMP/port" --node n1 --foreign-clients --bookmark-interval 1 \
	--gzip-threshold 0 ||
	fail "API stand-in did not start: $(cat "$TMP/server.err")"
SERVER=${KUBE_SERVER_PIDS[0]}
# Inline token and an absolute CA path: the forms every client reads.
cat >"$TMP/kc" <<KC
apiVersion: v1
kind: Config
clusters:
- name: t
  cluster: {server: "https://127.0.0.1:$(cat "$TMP/port")", certificate-authority: $TMP/ca.crt}
users:
- name: u
  user: {token: $(cat "$TMP/token")}
contexts:
- name: t
  context: {cluster: t, user: u, namespace: $NS}
current-context: t
KC

kubectl_watch() {
	kubectl --kubeconfig "$TMP/kc" get pods -n "$NS" --watch --output-watch-events -o json \
		>>"$TMP/kubectl.out" 2>>"$TMP/kubectl.err" &
	KUBE_PIDS+=($!)
	KUBECTL_PID=$!
}
[ "$have_kubectl" = 0 ] || kubectl_watch
if [ "$have_js" = 1 ]; then
	(cd "$JS_DIR" && exec node informer.mjs "$TMP/kc" "$NS") >"$TMP/js.out" 2>"$TMP/js.err" &
	KUBE_PIDS+=($!)
fi

# What each client saw, as "event name" lines (kubectl's event types in the informer's words).
kubectl_seen() {
	[ -s "$TMP/kubectl.out" ] || return 0
	jq -r 'select(.type != "ERROR") | "\(.type | {"ADDED": "add", "MODIFIED": "update",
		"DELETED": "delete"}[.]) \(.object.metadata.name)"' "$TMP/kubectl.out"
}
js_seen() {
	[ -s "$TMP/js.out" ] || return 0
	jq -r 'select(.on == "add" or .on == "update" or .on == "delete") | "\(.on) \(.name)"' \
		"$TMP/js.out"
}
# wait_seen WHO LINE SECONDS
wait_seen() {
	for _ in $(seq 1 $(($3 * 10))); do
		"$1_seen" | grep -qx "$2" && return 0
		sleep 0.1
	done
	fail "$1 did not see \"$2\" within $3 s: $("$1_seen" | paste -sd,) $(tail -n 3 "$TMP/$1.err" 2>/dev/null)"
}
CLIENTS=()
[ "$have_kubectl" = 0 ] || CLIENTS+=(kubectl)
[ "$have_js" = 0 ] || CLIENTS+=(js)

log "the initial list"
for c in "${CLIENTS[@]}"; do
	wait_seen "$c" "add a" 90 # node takes 1 s to load the client, and 20 s on a loaded machine
	wait_seen "$c" "add b" 5
done
log "an add, an update, a delete"
set_pods "$(pod u-a a)" "$(pod u-b b)" "$(pod u-c c)"
sleep 0.3
set_pods "$(pod u-a a 2)" "$(pod u-b b)" "$(pod u-c c)"
sleep 0.3
set_pods "$(pod u-a a 2)" "$(pod u-c c)"
for c in "${CLIENTS[@]}"; do
	wait_seen "$c" "delete b" 10
	assert_eq "$("${c}_seen" | paste -sd,)" "add a,add b,add c,update a,delete b" \
		"what $c saw, in order"
done

log "a compaction: an ERROR 410 on every watch, then a pod added"
lists_before=$(kube_api '.verb == "list"' | jq length)
js_mark=$(wc -l <"$TMP/js.out" 2>/dev/null || echo 0)
compacted_at=$(date +%s.%N)
kill -USR1 "$SERVER"
sleep 0.5
set_pods "$(pod u-a a 2)" "$(pod u-c c)" "$(pod u-d d)"
if [ "$have_js" = 1 ]; then
	wait_seen js "add d" 30
	assert_eq "$(tail -n +$((js_mark + 1)) "$TMP/js.out" | jq -s 'map(select(.on == "connect")) | length')" 1 \
		"the informer connected again after the 410"
	js_lists=$(jq -s --argjson t "$compacted_at" 'map(select(.verb == "list" and .time > $t and
		((.agent // "") | startswith("kubectl") | not))) | length' "$TMP/api.log")
	assert_eq "$js_lists" 1 "the informer's LISTs after the 410"
fi
if [ "$have_kubectl" = 1 ]; then
	for _ in $(seq 1 100); do
		grep -q '"code":410\|410\|too old' "$TMP/kubectl.out" "$TMP/kubectl.err" 2>/dev/null && break
		sleep 0.1
	done
	grep -q '410\|too old' "$TMP/kubectl.out" "$TMP/kubectl.err" ||
		fail "kubectl did not report the 410: $(tail -n 3 "$TMP/kubectl.err")"
	# kubectl's watch does not relist by itself: its next run does, and sees the new pod.
	kill "$KUBECTL_PID" 2>/dev/null || true
	: >"$TMP/kubectl.out"
	kubectl_watch
	wait_seen kubectl "add d" 15
	assert_eq "$(kubectl_seen | sort | paste -sd,)" "add a,add c,add d" "kubectl's list after the 410"
fi
assert_cmp "$(kube_api '.verb == "list"' | jq length)" ">" "$lists_before" "LISTs after the 410"

if [ "$have_kubectl" = 1 ]; then
	k() { kubectl --kubeconfig "$TMP/kc" "$@" 2>"$TMP/k.err"; }
	log "kubectl: gzip, continue tokens, resourceVersion as the API server serves them"
	assert_cmp "$(kube_api '.verb == "list" and (.agent | startswith("kubectl")) and .gzip' |
		jq length)" ">=" 1 "kubectl's LISTs came gzipped (and it read them)"
	# --chunk-size=1: a page of one pod, then the continue token, until the end.
	mark=$(wc -l <"$TMP/api.log")
	assert_eq "$(k get pods -n "$NS" --chunk-size=1 -o name | paste -sd,)" \
		"pod/a,pod/c,pod/d" "kubectl's paginated list"
	assert_eq "$(tail -n +$((mark + 1)) "$TMP/api.log" | jq -s -c 'map(select(.verb == "list")) |
		map([.limit, (.path | test("continue=")), .source])')" \
		'[[1,false,"etcd"],[1,true,"etcd"],[1,true,"etcd"]]' "its pages: a limit, then continue tokens"
	# resourceVersion=0 is the watch cache's: a limit is ignored, every pod comes back.
	assert_eq "$(k get --raw "/api/v1/namespaces/$NS/pods?resourceVersion=0&limit=1" |
		jq -c '[(.items | length), .metadata.continue]')" "[3,null]" "rv=0 with a limit: all, no token"
	# An exact version older than the compaction, with a limit: 410 Expired.
	k get --raw "/api/v1/namespaces/$NS/pods?resourceVersion=1&limit=1" >/dev/null &&
		fail "a compacted version with a limit was served"
	grep -qi "expired\|gone\|too old" "$TMP/k.err" || fail "kubectl's error: $(cat "$TMP/k.err")"
	# Not older than it (no limit): the cache's newest, whatever was compacted.
	assert_eq "$(k get --raw "/api/v1/namespaces/$NS/pods?resourceVersion=1" |
		jq '.items | length')" 3 "rv=N without a limit: not older than N"
fi
assert_eq "$(kube_violations | wc -l)" 0 "calls that broke a rule: $(kube_violations | head -n 3)"
log "pass"
test_end
