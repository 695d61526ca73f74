#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The Kubernetes client library (user/kube/) against a local HTTPS stand-in
# for the API server (tests/helpers/kube_api_server.py) with its own CA:
# pod listing with labels, priority and owners; a service-account token
# rotated while one client keeps running; every scripted eviction status
# (201/429/404/500/200); the server's checks of method, path, headers, token,
# content type and body; refusal of a server signed by another CA; a bad
# token; the response size limit; a kubeconfig; and an IPv6 API address.
# Needs no root: it touches no cgroups.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

KUBECHECK=${KUBECHECK:-$QOSLET_ROOT/build/tests/helpers/kubecheck}
[ -x "$KUBECHECK" ] || fail "$KUBECHECK is missing: run make $KUBECHECK"

TMP=$(mktemp -d "/tmp/qoslet-$TEST_NAME.XXXXXX")
KUBE_TMP=$TMP
KC_PID=""
cleanup() {
	exec 3>&- 2>/dev/null || true
	kube_stop_servers
	if [ -n "$KC_PID" ]; then
		kill "$KC_PID" 2>/dev/null || true
		wait "$KC_PID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
kube_require

# ---- a CA, a server certificate it signs, and an unrelated CA; the API stand-in ----
kube_certs
# No grace for a rotated token: this client's calls are one at a time, and the
# stale-token check below follows the rotation within a second.
kube_server 127.0.0.1 "$TMP/port" --token-grace 0 || fail "API stand-in did not start: $(cat "$TMP/server.err")"
export KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT
KUBERNETES_SERVICE_PORT=$(cat "$TMP/port")

# ---- one long-lived client, commands through a FIFO ------------------------------
mkfifo "$TMP/in"
"$KUBECHECK" --token "$TMP/token" --ca "$TMP/ca.crt" <"$TMP/in" >"$TMP/out" 2>"$TMP/kc.err" &
KC_PID=$!
exec 3>"$TMP/in"
# Sends one command and prints the lines it produced once its answer line is there.
# (Called in $(...): no state may outlive it, so it counts answers in the file.)
answered() {
	grep -cE '^(list|evict|error) ' "$TMP/out" || true
}
ask() {
	local before want
	before=$(wc -l <"$TMP/out")
	want=$(($(answered) + 1))
	echo "$*" >&3
	for _ in $(seq 200); do
		[ "$(answered)" -ge "$want" ] && break
		sleep 0.05
	done
	[ "$(answered)" -ge "$want" ] || fail "no answer to '$*': $(cat "$TMP/out" "$TMP/kc.err")"
	tail -n +"$((before + 1))" "$TMP/out"
}

log "list the pods on n1"
out=$(ask list n1)
echo "$out"
assert_eq "$(echo "$out" | tail -1)" "list ok 3 0" "pods on n1"
echo "$out" | grep -qx "pod 6f1c2a8e-0b1d-4c55-9d7e-1a2b3c4d5e01 batch spark-exec-1 BE 0 BestEffort ReplicaSet spark-exec-7d9f" ||
	fail "BE pod fields"
echo "$out" | grep -qx "pod 6f1c2a8e-0b1d-4c55-9d7e-1a2b3c4d5e02 web frontend-0 LS 2000 Guaranteed StatefulSet frontend" ||
	fail "LS pod fields"
echo "$out" | grep -qx "pod 6f1c2a8e-0b1d-4c55-9d7e-1a2b3c4d5e03 kube-system static-probe - - Burstable - -" ||
	fail "bare pod fields"
echo "$out" | grep -q elsewhere && fail "a pod of another node was listed"

log "rotate the token (as the kubelet does: a new file renamed over the old) and list again"
echo "token-two" >"$TMP/token.new"
mv "$TMP/token.new" "$TMP/token"
out=$(ask list n1)
assert_eq "$(echo "$out" | tail -1)" "list ok 3 0" "list after the token rotation"

log "evictions: each scripted status"
printf '201\n429\n404\n500\n200\n' >"$TMP/evict-script"
uid=6f1c2a8e-0b1d-4c55-9d7e-1a2b3c4d5e01
assert_eq "$(ask evict batch spark-exec-1 $uid)" "evict evicted 201" "201"
out=$(ask evict batch spark-exec-1 $uid)
assert_eq "$out" "evict retry 429 evict batch/spark-exec-1: status 429 Cannot evict pod as it would violate the pod's disruption budget." "429 (disruption budget)"
assert_eq "$(ask evict batch spark-exec-1 $uid)" \
	"evict gone 404 evict batch/spark-exec-1: status 404 pods \"spark-exec-1\" not found" "404"
assert_eq "$(ask evict batch spark-exec-1 $uid)" \
	"evict failed 500 evict batch/spark-exec-1: status 500 scripted failure" "500"
assert_eq "$(ask evict batch spark-exec-1 $uid)" "evict evicted 200" "200"
out=$(ask list Bad_Node)
case $out in "error -22 "*) ;; *) fail "invalid node name: $out" ;; esac

exec 3>&-
wait "$KC_PID" || fail "kubecheck exited with $?: $(cat "$TMP/kc.err")"
KC_PID=""
# 2 lists + 5 evictions reached the server; 429, 404 and 500 are HTTP errors.
assert_eq "$(tail -1 "$TMP/out")" \
	"stats requests=7 transport_errors=0 http_errors=3 parse_errors=0" "client counters"

log "the server saw every call well-formed"
assert_eq "$(jq -s 'map(select(.violations != [])) | length' "$TMP/api.log")" 0 "violations"
assert_eq "$(jq -s 'map(select(.method == "GET" and
	.path == "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=0")) | length' "$TMP/api.log")" 2 "GETs"
assert_eq "$(jq -s --arg uid "$uid" 'map(select(.method == "POST" and
	.path == "/api/v1/namespaces/batch/pods/spark-exec-1/eviction" and
	.body.deleteOptions.preconditions.uid == $uid)) | length' "$TMP/api.log")" 5 "POSTs"

# One-shot clients for the failure cases.
oneshot() { # COMMAND KUBECHECK-ARGS...
	local cmd=$1
	shift
	echo "$cmd" | "$KUBECHECK" "$@" 2>&1
}

log "a stale token is refused with 401 and counted"
echo "token-one" >"$TMP/stale"
out=$(oneshot "list n1" --token "$TMP/stale" --ca "$TMP/ca.crt")
echo "$out" | grep -q '^error -13 list pods on n1: status 401' || fail "stale token: $out"
echo "$out" | grep -qx "stats requests=1 transport_errors=0 http_errors=1 parse_errors=0" ||
	fail "stale token counters: $out"

log "a server whose certificate another CA signed is refused"
before=$(wc -l <"$TMP/api.log")
out=$(oneshot "list n1" --token "$TMP/token" --ca "$TMP/other-ca.crt")
echo "$out" | grep -q '^error -1 ' || fail "wrong CA: $out"
echo "$out" | grep -qx "stats requests=1 transport_errors=1 http_errors=0 parse_errors=0" ||
	fail "wrong CA counters: $out"
assert_eq "$(wc -l <"$TMP/api.log")" "$before" "requests served over an unverified connection"

log "a response over the size limit is refused"
out=$(oneshot "list n1" --token "$TMP/token" --ca "$TMP/ca.crt" --max-body 200)
echo "$out" | grep -q '^error -27 .*larger than the limit' || fail "size limit: $out"

log "missing in-cluster settings are named"
out=$(env -u KUBERNETES_SERVICE_HOST "$KUBECHECK" --token "$TMP/token" --ca "$TMP/ca.crt" \
	</dev/null 2>&1) && fail "started without KUBERNETES_SERVICE_HOST"
echo "$out" | grep -q KUBERNETES_SERVICE_HOST || fail "unnamed missing variable: $out"
out=$("$KUBECHECK" --token "$TMP/nope" --ca "$TMP/ca.crt" </dev/null 2>&1) &&
	fail "started without a token file"
echo "$out" | grep -q "$TMP/nope" || fail "unnamed missing token: $out"

log "kubeconfig with relative certificate-authority and tokenFile"
kube_kubeconfig "$TMP/kubeconfig" "$KUBERNETES_SERVICE_PORT"
out=$(env -u KUBERNETES_SERVICE_HOST "$KUBECHECK" --kubeconfig "$TMP/kubeconfig" <<<"list n1" 2>&1)
echo "$out" | grep -qx "list ok 3 0" || fail "kubeconfig: $out"

log "an IPv6 API address goes in brackets"
if kube_server ::1 "$TMP/port6" 2>/dev/null; then
	out=$(KUBERNETES_SERVICE_HOST=::1 KUBERNETES_SERVICE_PORT=$(cat "$TMP/port6") \
		"$KUBECHECK" --token "$TMP/token" --ca "$TMP/ca.crt" <<<"list n1" 2>&1)
	echo "$out" | grep -qx "server https://\[::1\]:$(cat "$TMP/port6")" || fail "IPv6 URL: $out"
	echo "$out" | grep -qx "list ok 3 0" || fail "IPv6 list: $out"
else
	log "no IPv6 loopback here: IPv6 part not run"
fi
echo "PASS"
