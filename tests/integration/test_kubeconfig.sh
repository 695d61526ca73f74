#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Kubeconfigs as users have them (user/kube/kubeconfig.c), each loaded by the
# client library (tests/helpers/kubecheck) and used against the API stand-in
# (tests/helpers/kube_api_server.py with --client-ca and --log-auth), which
# says which credentials arrived:
#   - kind-style: the CA, the client certificate and key as base64 data: the
#     stand-in sees the certificate's CN and no token;
#   - flow style (one line of YAML flow mappings), with a tokenFile;
#   - two clusters and users, current-context on the second (listed last):
#     only its token arrives, never the first user's; switched to the first
#     cluster (nothing listening) it fails, still without sending that token;
#   - an exec plugin (a script written here, logging each run): run once
#     with its args, the kubeconfig's env and KUBERNETES_EXEC_INFO (v1,
#     interactive false, the cluster's server and CA data), its token cached,
#     run again before its expirationTimestamp, and again after a 401; and
#     one that answers with a client certificate and key instead of a token;
#   - a refused one (auth-provider) fails before any request, naming it.
# Needs no root: it touches no cgroups. About 10 s.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

KUBECHECK=${KUBECHECK:-$QOSLET_ROOT/build/tests/helpers/kubecheck}
[ -x "$KUBECHECK" ] || fail "$KUBECHECK is missing: run make $KUBECHECK"
require_cmds jq base64 date

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

kube_certs
kube_client_certs kind-admin
# $TMP/down, while it exists, answers every request with its status: a 401 below.
kube_server 127.0.0.1 "$TMP/port" --client-ca "$TMP/client-ca.crt" --log-auth \
	--down-file "$TMP/down" ||
	fail "API stand-in did not start: $(cat "$TMP/server.err")"
PORT=$(cat "$TMP/port")
TOKEN=$(cat "$TMP/token")
# No in-cluster fallback anywhere below.
unset KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT

# list_with KUBECONFIG: one pod list through it; the kubecheck output.
list_with() {
	"$KUBECHECK" --kubeconfig "$1" <<<"list n1" 2>&1 || true
}
# since N FILTER: the API log's entries after the first N lines matching FILTER (a jq array).
since() {
	tail -n +"$(($1 + 1))" "$TMP/api.log" | jq -sc "map(select($2))"
}

log "kind-style kubeconfig: CA, client certificate and key as data"
kube_kubeconfig_data "$TMP/kind.yaml" "$PORT"
n=$(wc -l <"$TMP/api.log")
out=$(list_with "$TMP/kind.yaml")
echo "$out" | grep -qx "list ok 3 0" || fail "kind-style: $out"
assert_eq "$(since "$n" true | jq -c 'map([.status, .user, .bearer])')" '[[200,"kind-admin",null]]' \
	"kind-style: the stand-in's view (status, certificate user, token)"

log "flow style, tokenFile"
cat >"$TMP/flow.yaml" <<KC
{apiVersion: v1, kind: Config, current-context: flow, contexts: [{name: flow, context: {cluster: c, user: u, namespace: web}}], clusters: [{name: c, cluster: {server: "https://127.0.0.1:$PORT", certificate-authority: ca.crt}}], users: [{name: u, user: {tokenFile: token}}]}
KC
n=$(wc -l <"$TMP/api.log")
out=$(list_with "$TMP/flow.yaml")
echo "$out" | grep -qx "list ok 3 0" || fail "flow style: $out"
assert_eq "$(since "$n" true | jq -c --arg t "$TOKEN" 'map([.status, .user, .bearer == $t])')" \
	'[[200,null,true]]' "flow style: the stand-in's view"

log "two clusters, current-context on the second"
two_clusters() { # CURRENT-CONTEXT
	cat <<KC
apiVersion: v1
kind: Config
current-context: $1
contexts:
- name: other
  context: {cluster: other, user: other-admin}
- name: test
  context: {cluster: test, user: agent}
clusters:
- name: other
  cluster:
    server: https://127.0.0.1:1
    certificate-authority: other-ca.crt
- name: test
  cluster:
    server: https://127.0.0.1:$PORT
    certificate-authority: ca.crt
users:
- name: other-admin
  user:
    token: other-cluster-secret
- name: agent
  user:
    tokenFile: token
KC
}
two_clusters test >"$TMP/two.yaml"
n=$(wc -l <"$TMP/api.log")
out=$(list_with "$TMP/two.yaml")
echo "$out" | grep -qx "list ok 3 0" || fail "two clusters: $out"
echo "$out" | grep -qx "server https://127.0.0.1:$PORT" || fail "two clusters: server: $out"
two_clusters other >"$TMP/two-other.yaml"
out=$(list_with "$TMP/two-other.yaml")
echo "$out" | grep -q "^error .*127.0.0.1:1" || fail "the other context reached some server: $out"
assert_eq "$(since "$n" true | jq -c --arg t "$TOKEN" 'map([.status, .bearer == $t])')" \
	'[[200,true]]' "two clusters: the stand-in's view"
! grep -q other-cluster-secret "$TMP/api.log" || fail "the other cluster's token reached the stand-in"

log "exec plugin: run, cached, re-run before expiry, and after a 401"
# Expiring 4 s past the client's refresh margin (KUBE_EXEC_REFRESH_S, 10 s):
# the second list comes well within those 4 s, the third after them.
mkdir -p "$TMP/bin"
kube_exec_plugin "$TMP/bin/plugin" 14
kube_kubeconfig_exec "$TMP/exec.yaml" "$PORT" ./bin/plugin
mkfifo "$TMP/in"
"$KUBECHECK" --kubeconfig "$TMP/exec.yaml" <"$TMP/in" >"$TMP/out" 2>"$TMP/kc.err" &
KC_PID=$!
exec 3>"$TMP/in"
# ask CMD: sends one command and waits for its answer line ("list ..." or "error ...").
ask() {
	local want=$(($(grep -cE '^(list|error) ' "$TMP/out" || true) + 1))
	echo "$*" >&3
	for _ in $(seq 200); do
		[ "$(grep -cE '^(list|error) ' "$TMP/out" || true)" -ge "$want" ] && break
		sleep 0.05
	done
	[ "$(grep -cE '^(list|error) ' "$TMP/out" || true)" -ge "$want" ] ||
		fail "no answer to '$*': $(cat "$TMP/out" "$TMP/kc.err")"
	grep -E '^(list|error) ' "$TMP/out" | tail -n 1
}
runs() { wc -l <"$TMP/bin/plugin.log"; }
assert_eq "$(ask list n1)" "list ok 3 0" "exec: first list"
assert_eq "$(ask list n1)" "list ok 3 0" "exec: second list"
assert_eq "$(runs)" 1 "exec: plugin runs after two lists (the token cached)"
sleep 4.5
assert_eq "$(ask list n1)" "list ok 3 0" "exec: list within the refresh margin"
assert_eq "$(runs)" 2 "exec: plugin runs after the credential neared its expiry"
echo 401 >"$TMP/down"
out=$(ask list n1)
rm "$TMP/down"
case $out in "error -13 "*"status 401"*) ;; *) fail "exec: the refused token: $out" ;; esac
assert_eq "$(runs)" 2 "exec: plugin runs right after the 401"
assert_eq "$(ask list n1)" "list ok 3 0" "exec: list after the 401"
assert_eq "$(runs)" 3 "exec: plugin runs after the 401 dropped its token"
exec 3>&-
wait "$KC_PID" || fail "kubecheck exited with $?: $(cat "$TMP/kc.err")"
KC_PID=""
log "what the plugin ran with: $(head -n 1 "$TMP/bin/plugin.log")"
IFS='|' read -r args env info <"$TMP/bin/plugin.log"
assert_eq "$args" "get-token --cluster test" "exec: args"
assert_eq "$env" "from-kubeconfig" "exec: the kubeconfig's env"
assert_eq "$(jq -c '[.apiVersion, .kind, .spec.interactive, .spec.cluster.server]' <<<"$info")" \
	"[\"client.authentication.k8s.io/v1\",\"ExecCredential\",false,\"https://127.0.0.1:$PORT\"]" \
	"exec: KUBERNETES_EXEC_INFO"
assert_eq "$(jq -r '.spec.cluster["certificate-authority-data"]' <<<"$info")" \
	"$(base64 -w0 "$TMP/ca.crt")" "exec: the cluster's CA data"
assert_eq "$(jq -s 'map(select(.violations != [] and .status != 401)) | length' "$TMP/api.log")" \
	0 "violations other than the expected 401"

log "exec plugin that answers with a client certificate and key"
jq -n --rawfile c "$TMP/client.crt" --rawfile k "$TMP/client.key" \
	'{apiVersion: "client.authentication.k8s.io/v1beta1", kind: "ExecCredential",
	  status: {clientCertificateData: $c, clientKeyData: $k}}' >"$TMP/cert-credential.json"
printf '#!/bin/sh\ncat "%s"\n' "$TMP/cert-credential.json" >"$TMP/bin/cert-plugin"
chmod 0755 "$TMP/bin/cert-plugin"
sed -e 's|command: ./bin/plugin|command: ./bin/cert-plugin|' \
	-e 's|client.authentication.k8s.io/v1$|client.authentication.k8s.io/v1beta1|' \
	"$TMP/exec.yaml" >"$TMP/exec-cert.yaml"
n=$(wc -l <"$TMP/api.log")
out=$(list_with "$TMP/exec-cert.yaml")
echo "$out" | grep -qx "list ok 3 0" || fail "exec plugin with a certificate: $out"
assert_eq "$(since "$n" true | jq -c 'map([.status, .user, .bearer])')" '[[200,"kind-admin",null]]' \
	"exec plugin with a certificate: the stand-in's view"

log "a refused kubeconfig fails before any request, naming what it refuses"
n=$(wc -l <"$TMP/api.log")
sed 's/    tokenFile: token/    auth-provider: {name: oidc}/' "$TMP/two.yaml" >"$TMP/refused.yaml"
out=$("$KUBECHECK" --kubeconfig "$TMP/refused.yaml" </dev/null 2>&1) && fail "refused.yaml loaded"
echo "$out" | grep -qF 'user "agent": auth-provider is not supported' ||
	fail "refused.yaml: the error does not name it: $out"
assert_eq "$(wc -l <"$TMP/api.log")" "$n" "requests made with a refused kubeconfig"
echo "PASS"
