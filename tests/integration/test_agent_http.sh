#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The agent's HTTP endpoint, against a running agent (dry-run) with an LS
# unit whose two busy loops share one CPU (so its tasks wait on the run
# queue):
#  - /healthz 200 "ok"; /readyz 200 after the first tick; /metrics in text
#    format 0.0.4 with the unit's run-queue histogram (cgroup and qos
#    labels), no duplicate series, and `promtool check metrics` clean;
#    /decisions a JSON array; 404 for other paths, 405 (with Allow) for
#    other methods, HEAD without a body, requests with a body or oversized
#    headers refused.
#  - A second agent on the same port exits 1 naming the address, and writes
#    nothing (no decisions file, no journal).
#  - A real Prometheus server (when installed) scrapes the agent, and a
#    PromQL histogram_quantile() over the unit's buckets returns a number.
# shellcheck disable=SC2016,SC2015
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq curl python3
require_binaries
test_setup
agent_setup

# A port nobody listens on now (the kernel's choice of an ephemeral one).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

PORT=$(free_port)
URL=http://127.0.0.1:$PORT
ls=$(agent_cgroup ls)
LS_REL=${ls#"$CG_ROOT"/}
agent_run "$ls" 0 "$DUTYCYCLE" 1000 0 60
agent_run "$ls" 0 "$DUTYCYCLE" 1000 0 60
CONFIG='{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"}],
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'}}'
agent_config "$CONFIG"
agent_start --dry-run
grep -qF "serving $URL/metrics" "$AGENT_ERR" || fail "no 'serving $URL/metrics' log line: $(cat "$AGENT_ERR")"

# status METHOD PATH [CURL-ARGS]: the HTTP status code; the body in $TMP/body.
status() {
	local method=$1 path=$2
	shift 2
	curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' -X "$method" "$@" "$URL$path"
}

assert_eq "$(status GET /healthz)" 200 "/healthz status"
assert_eq "$(cat "$TMP/body")" ok "/healthz body"
for _ in $(seq 1 50); do
	[ "$(status GET /readyz)" = 200 ] && break
	sleep 0.1
done
assert_eq "$(status GET /readyz)" 200 "/readyz status after the first tick"

# The unit's series, once a tick has seen its waits.
SERIES='qoslet_runqueue_wait_seconds_count{cgroup="/'"$LS_REL"'",qos="LS"}'
n=0
for _ in $(seq 1 50); do
	assert_eq "$(status GET /metrics)" 200 "/metrics status"
	n=$(awk -v s="$SERIES" '$1 == s { print $2 }' "$TMP/body")
	[ -n "$n" ] && [ "$n" -gt 0 ] && break
	sleep 0.2
done
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "no run-queue waits for /$LS_REL in /metrics: $(grep -F "$LS_REL" "$TMP/body" | head -n 3)"
cp "$TMP/body" "$TMP/metrics.txt"
grep -qi '^content-type: text/plain; version=0.0.4' "$TMP/headers" ||
	fail "/metrics content type: $(grep -i content-type "$TMP/headers")"
grep -qF 'qoslet_runqueue_wait_seconds_bucket{cgroup="/'"$LS_REL"'",qos="LS",le="+Inf"} '"$n" "$TMP/metrics.txt" ||
	fail "+Inf bucket of /$LS_REL is not its count $n"
for m in qoslet_runqueue_wait_seconds qoslet_decisions_total qoslet_agent_ticks_total \
	qoslet_agent_loop_duration_seconds qoslet_agent_probe_up; do
	grep -q "^# TYPE $m " "$TMP/metrics.txt" || fail "no TYPE line for $m"
done
grep -q '^qoslet_agent_probe_up{probe="sched"} 1$' "$TMP/metrics.txt" || fail "sched probe not reported up"
dups=$(grep -v '^#' "$TMP/metrics.txt" | sed 's/ [^ ]*$//' | sort | uniq -d)
[ -z "$dups" ] || fail "duplicate series: $dups"
log "ok: /metrics: $(grep -vc '^#' "$TMP/metrics.txt") series, $n waits of /$LS_REL"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/metrics.txt" >"$TMP/promtool.out" 2>&1 ||
		fail "promtool check metrics: $(cat "$TMP/promtool.out")"
	log "ok: promtool check metrics"
else
	log "promtool missing (Debian package prometheus): format check skipped"
fi

assert_eq "$(status GET /decisions)" 200 "/decisions status"
jq -e 'type == "array"' "$TMP/body" >/dev/null || fail "/decisions is not a JSON array: $(head -c 200 "$TMP/body")"
assert_eq "$(status GET /nope)" 404 "unknown path"
assert_eq "$(status POST /metrics)" 405 "POST"
grep -qi '^allow: GET, HEAD' "$TMP/headers" || fail "405 without Allow: GET, HEAD"
assert_eq "$(status DELETE /healthz)" 405 "DELETE"
assert_eq "$(status HEAD /metrics -I)" 200 "HEAD"
# curl -I writes the headers where the body would go: no metric may follow them.
! grep -q qoslet_ "$TMP/body" || fail "HEAD returned a body"
assert_eq "$(status GET /metrics --data-binary 12345)" 413 "GET with a body"
big=$(head -c 32768 /dev/zero | tr '\0' a)
code=$(status GET /metrics -H "X-Big: $big")
[ "$code" -ge 400 ] && [ "$code" -lt 500 ] || fail "a 32 KiB header got status $code"
log "ok: /healthz, /readyz, /decisions, 404, 405, HEAD, body and header limits ($code)"

# ---- a second agent on the taken port: exit 1, naming it, nothing written ----
second=$TMP/second
mkdir "$second"
jq --arg out "$second/decisions.jsonl" --arg state "$second/state" \
	'.decisions.file = $out | .state_dir = $state' "$TMP/agent.json" >"$second/agent.json"
rc=0
timeout 20 "$QOSLET" agent --config "$second/agent.json" --pin-dir "$PIN_DIR" >/dev/null 2>"$second/err" || rc=$?
assert_eq "$rc" 1 "second agent on port $PORT: exit status"
grep -qF "cannot listen on 127.0.0.1:$PORT: Address already in use" "$second/err" ||
	fail "bind failure does not name the address: $(cat "$second/err")"
[ ! -e "$second/decisions.jsonl" ] && [ ! -e "$second/state" ] || fail "the second agent wrote files: $(ls -R "$second")"
log "ok: $(head -n1 "$second/err")"

# ---- a real Prometheus scrapes it ----
if ! command -v prometheus >/dev/null; then
	log "prometheus missing (Debian package prometheus): scrape test skipped"
	agent_stop
	exit 0
fi
PPORT=$(free_port)
cat >"$TMP/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: qoslet
    static_configs: [{targets: ["127.0.0.1:$PORT"]}]
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" >"$TMP/prometheus.log" 2>&1 &
BG_PIDS+=("$!")
QUERY='histogram_quantile(0.99, qoslet_runqueue_wait_seconds_bucket{cgroup="/'"$LS_REL"'"})'
q=""
for _ in $(seq 1 100); do
	q=$(curl -s --get "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$QUERY" |
		jq -r '.data.result[0].value[1] // empty' 2>/dev/null) || true
	[ -n "$q" ] && break
	sleep 0.2
done
[ -n "$q" ] || fail "Prometheus returned no quantile for /$LS_REL: $(tail -n 5 "$TMP/prometheus.log")"
awk -v q="$q" 'BEGIN { exit !(q + 0 > 0) }' || fail "p99 run-queue wait of /$LS_REL is $q"
up=$(curl -s --get "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode 'query=up{job="qoslet"}' | jq -r '.data.result[0].value[1]')
assert_eq "$up" 1 "Prometheus up{job=\"qoslet\"}"
log "ok: Prometheus scraped the agent; p99 run-queue wait of /$LS_REL: $q s"
agent_stop
