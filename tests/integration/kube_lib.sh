# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared by the tests that talk to the Kubernetes API stand-in
# (tests/helpers/kube_api_server.py). Source after lib.sh, then call
# kube_require: it skips without the tools and makes KUBE_TMP ($TMP/kube
# unless the caller set it), the stand-in's private directory, which goes
# with $TMP. Provides:
#   kube_certs            a CA (ca.crt), a server certificate it signs for
#                         127.0.0.1/::1/localhost (srv.crt/srv.key), and an
#                         unrelated CA (other-ca.crt), all in KUBE_TMP
#   kube_server BIND PORTFILE [server args...]
#                         starts the stand-in (token file KUBE_TMP/token, eviction
#                         script KUBE_TMP/evict-script, log KUBE_TMP/api.log;
#                         pods from KUBE_PODS); its pid joins KUBE_SERVER_PIDS
#   kube_kubeconfig FILE PORT
#                         a kubeconfig for https://127.0.0.1:PORT with the CA and
#                         token files given relative to FILE's directory
#   kube_link_config NODE the agent config's "kubernetes" object for the stand-in
#                         kube_start made (pods every second, no Events, no node
#                         condition), as JSON
#   kube_stop_servers     ends the servers it started (call from the cleanup)
#   kube_scratch [HOOK]   for a test without cgroups: TMP (and KUBE_TMP) a new
#                         scratch directory, and a trap that at exit runs HOOK
#                         (a function: the test's own last words), ends the
#                         processes in KUBE_PIDS (the test's own, by pid) and
#                         the stand-ins, and removes TMP (kept after a failure
#                         with QOSLET_TEST_KEEP set)
#   kube_client_certs CN  a client CA (client-ca.crt, for the stand-in's
#                         --client-ca) and a client certificate it signs for CN
#                         (client.crt/client.key), in KUBE_TMP
#   kube_kubeconfig_data FILE PORT
#                         a kubeconfig as kind writes one: the CA, the client
#                         certificate and key as base64 data, no token
#   kube_exec_plugin FILE TTL
#                         an exec credential plugin script: prints an
#                         ExecCredential (v1) with KUBE_TMP/token's content,
#                         expiring TTL seconds later, and logs each run (its
#                         args, PLUGIN_ENV and KUBERNETES_EXEC_INFO) as a line
#                         of FILE.log
#   kube_kubeconfig_exec FILE PORT PLUGIN
#                         a kubeconfig whose user runs PLUGIN (args get-token
#                         --cluster test, env PLUGIN_ENV=from-kubeconfig)
#   kube_violations       the API log's calls that broke a rule, as JSON lines
#   kube_api FILTER       the API log's entries matching the jq FILTER (one array)
#   kube_wait_api FILTER SECONDS
#                         waits for such an entry; 1 when none came (fails when
#                         AGENT_PID, if set, exited meanwhile)
# shellcheck shell=bash

KUBE_PY=/usr/bin/python3
[ -x "$KUBE_PY" ] || KUBE_PY=$(command -v python3 || true)
KUBE_SERVER=$QOSLET_ROOT/tests/helpers/kube_api_server.py
KUBE_PODS=${KUBE_PODS:-$QOSLET_ROOT/tests/helpers/kube_pods.json}
KUBE_SERVER_PIDS=()

kube_require() {
	require_cmds openssl
	[ -n "$KUBE_PY" ] || skip "needs python3 (scripts/deps.sh installs it)"
	KUBE_TMP=${KUBE_TMP:-$TMP/kube}
	mkdir -p "$KUBE_TMP" || fail "kube_lib.sh: cannot create $KUBE_TMP"
}

_kube_mkcert() { # NAME SUBJECT [openssl req args...]
	local name=$1 subj=$2
	shift 2
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$subj" \
		-keyout "$KUBE_TMP/$name.key" "$@" 2>/dev/null
}

kube_certs() {
	local ca_ext=(-addext basicConstraints=critical,CA:TRUE
		-addext keyUsage=critical,keyCertSign,cRLSign)
	_kube_mkcert ca /CN=qoslet-test-ca -x509 -days 1 -out "$KUBE_TMP/ca.crt" "${ca_ext[@]}"
	_kube_mkcert other-ca /CN=qoslet-other-ca -x509 -days 1 -out "$KUBE_TMP/other-ca.crt" \
		"${ca_ext[@]}"
	_kube_mkcert srv /CN=kubernetes -out "$KUBE_TMP/srv.csr"
	printf 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
		>"$KUBE_TMP/srv.ext"
	openssl x509 -req -in "$KUBE_TMP/srv.csr" -CA "$KUBE_TMP/ca.crt" -CAkey "$KUBE_TMP/ca.key" \
		-CAcreateserial -days 1 -extfile "$KUBE_TMP/srv.ext" -out "$KUBE_TMP/srv.crt" 2>/dev/null
	[ -s "$KUBE_TMP/token" ] || echo "token-one" >"$KUBE_TMP/token"
	[ -e "$KUBE_TMP/evict-script" ] || : >"$KUBE_TMP/evict-script"
	[ -e "$KUBE_TMP/api.log" ] || : >"$KUBE_TMP/api.log"
}

kube_server() { # BIND PORTFILE [server args...]
	local bind=$1 portfile=$2
	shift 2
	"$KUBE_PY" "$KUBE_SERVER" --bind "$bind" --cert "$KUBE_TMP/srv.crt" \
		--key "$KUBE_TMP/srv.key" --token-file "$KUBE_TMP/token" --pods "$KUBE_PODS" \
		--evict-script "$KUBE_TMP/evict-script" --log "$KUBE_TMP/api.log" \
		--port-file "$portfile" "$@" 2>>"$KUBE_TMP/server.err" &
	KUBE_SERVER_PIDS+=($!)
	for _ in $(seq 100); do
		[ -s "$portfile" ] && return 0
		kill -0 "${KUBE_SERVER_PIDS[-1]}" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

kube_kubeconfig() { # FILE PORT
	cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: "https://127.0.0.1:$2/"
    certificate-authority: ca.crt
users:
- name: agent
  user:
    tokenFile: token
contexts:
- name: test
  context: {cluster: test, user: agent}
current-context: test
KC
}

# kube_start NODE [SERVER-ARGS...]: certificates, an API stand-in on
# 127.0.0.1 serving $KUBE_PODS for NODE (stopped with the test's background
# processes; SERVER-ARGS go to kube_server), and $KUBE_TMP/kubeconfig
# pointing at it.
kube_start() {
	kube_certs
	kube_server 127.0.0.1 "$KUBE_TMP/port" --node "$@" ||
		fail "API stand-in did not start: $(cat "$KUBE_TMP/server.err")"
	BG_PIDS+=("${KUBE_SERVER_PIDS[@]}")
	kube_kubeconfig "$KUBE_TMP/kubeconfig" "$(cat "$KUBE_TMP/port")"
}

kube_link_config() {
	jq -nc --arg kc "$KUBE_TMP/kubeconfig" --arg node "$1" '{enabled: true, kubeconfig: $kc,
		node_name: $node, resync_s: 1, timeout_s: 2, events: {enabled: false},
		node_condition: {enabled: false}}'
}

kube_stop_servers() {
	local p
	for p in "${KUBE_SERVER_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	KUBE_SERVER_PIDS=()
}

KUBE_PIDS=()
kube_scratch() {
	TMP=$(mktemp -d "/tmp/qoslet-$TEST_NAME.XXXXXX")
	KUBE_TMP=$TMP
	_KUBE_HOOK=${1:-}
	trap _kube_scratch_end EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

_kube_scratch_end() {
	local rc=$? p
	[ -z "$_KUBE_HOOK" ] || "$_KUBE_HOOK" || true
	for p in "${KUBE_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	kube_stop_servers
	if [ "$rc" != 0 ] && [ -n "${QOSLET_TEST_KEEP:-}" ]; then
		echo "# kept $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}

kube_violations() {
	jq -c 'select(.violations != [])' "$KUBE_TMP/api.log"
}

kube_api() {
	jq -sc "map(select($1))" "$KUBE_TMP/api.log"
}

kube_wait_api() {
	for _ in $(seq 1 $(($2 * 10))); do
		[ "$(kube_api "$1" | jq length)" -gt 0 ] && return 0
		[ -z "${AGENT_PID:-}" ] || kill -0 "$AGENT_PID" 2>/dev/null ||
			fail "agent exited: $(tail -n 5 "$AGENT_ERR")"
		sleep 0.1
	done
	return 1
}

kube_client_certs() { # CN
	_kube_mkcert client-ca /CN=qoslet-client-ca -x509 -days 1 -out "$KUBE_TMP/client-ca.crt" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
	_kube_mkcert client "/O=system:masters/CN=$1" -out "$KUBE_TMP/client.csr"
	printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' >"$KUBE_TMP/client.ext"
	openssl x509 -req -in "$KUBE_TMP/client.csr" -CA "$KUBE_TMP/client-ca.crt" \
		-CAkey "$KUBE_TMP/client-ca.key" -CAcreateserial -days 1 -extfile "$KUBE_TMP/client.ext" \
		-out "$KUBE_TMP/client.crt" 2>/dev/null
}

kube_kubeconfig_data() { # FILE PORT
	cat >"$1" <<KC
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: $(base64 -w0 "$KUBE_TMP/ca.crt")
    server: https://127.0.0.1:$2
  name: kind-qoslet
contexts:
- context:
    cluster: kind-qoslet
    user: kind-qoslet
  name: kind-qoslet
current-context: kind-qoslet
kind: Config
preferences: {}
users:
- name: kind-qoslet
  user:
    client-certificate-data: $(base64 -w0 "$KUBE_TMP/client.crt")
    client-key-data: $(base64 -w0 "$KUBE_TMP/client.key")
KC
}

kube_exec_plugin() { # FILE TTL
	cat >"$1" <<PLUGIN
#!/bin/sh
printf '%s\n' "\$*|\$PLUGIN_ENV|\$KUBERNETES_EXEC_INFO" >>"$1.log"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
printf '"status":{"token":"%s","expirationTimestamp":"%s"}}\n' "\$(cat "$KUBE_TMP/token")" \
	"\$(date -u -d "+$2 seconds" +%Y-%m-%dT%H:%M:%SZ)"
PLUGIN
	chmod 0755 "$1"
	: >"$1.log"
}

kube_kubeconfig_exec() { # FILE PORT PLUGIN
	cat >"$1" <<KC
apiVersion: v1
kind: Config
current-context: exec
contexts:
- name: exec
  context: {cluster: test, user: plugin}
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:$2
    certificate-authority: ca.crt
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: $3
      args: [get-token, --cluster, test]
      env:
      - {name: PLUGIN_ENV, value: from-kubeconfig}
      interactiveMode: Never
      provideClusterInfo: true
KC
}
