#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The agent's HTTP endpoint, against a running agent with two LS units: "ls",
# whose two busy loops share one CPU (so its tasks wait on the run queue),
# and "lsq", limited to 0.5 CPU by a CFS quota with a load that wants 0.8
# (so it is throttled) and burst.policy cpuBurstOnly with a burst of 10% of
# the limit (so the agent sets its burst allowance and nothing else, and the
# burst is too small to end the throttling):
#  - /healthz 200 "ok"; /readyz 200 after the first tick; /metrics in text
#    format 0.0.4 with the run-queue histogram of "ls" (cgroup and qos
#    labels), no duplicate series, and `promtool check metrics` clean;
#    /decisions a JSON array; 404 for other paths, 405 (with Allow) for
#    other methods, HEAD without a body, requests with a body or oversized
#    headers refused.
#  - The families beyond the run queue, against the kernel's own numbers:
#    the CFS counters of "lsq" lie between its cpu.stat read before and
#    after the scrape; its applied burst is what cpu.cfs_burst_us (or
#    cpu.max.burst) holds; PSI of "lsq" where it has pressure files, none
#    where not; a blame pair with "ls" as victim; the process's RSS and open
#    files near /proc's; no cgroup read errors.
#  - A second agent on the same port exits 1 naming the address, and writes
#    nothing (no decisions file, no journal).
#  - A real Prometheus server (when installed) scrapes the agent, and a
#    PromQL histogram_quantile() over the unit's buckets returns a number.
# shellcheck disable=SC2016,SC2015,SC2119
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

PORT=$(free_port)
URL=http://127.0.0.1:$PORT
# The test's subtree outweighs the rest of the node, so other work on the
# shared CPUs cannot keep lsq's load below its quota (it would not be throttled).
cg_weight "$TEST_PARENT" 10240
ls=$(agent_cgroup ls)
LS_REL=${ls#"$CG_ROOT"/}
lsq=$(agent_cgroup lsq)
LSQ_REL=${lsq#"$CG_ROOT"/}
if [ -e "$lsq/cpu.cfs_quota_us" ]; then
	echo 100000 >"$lsq/cpu.cfs_period_us"
	echo 50000 >"$lsq/cpu.cfs_quota_us"
	BURST_FILE=$lsq/cpu.cfs_burst_us
	THROTTLED_TIME=throttled_time # ns
	THROTTLED_UNIT=1000000000
elif [ -e "$lsq/cpu.max" ]; then
	echo "50000 100000" >"$lsq/cpu.max"
	BURST_FILE=$lsq/cpu.max.burst
	THROTTLED_TIME=throttled_usec
	THROTTLED_UNIT=1000000
else
	skip "kernel without CONFIG_CFS_BANDWIDTH (no cpu.cfs_quota_us nor cpu.max)"
fi
agent_run "$ls" 0 "$DUTYCYCLE" 1000 0 "$(load_lifetime_s)"
agent_run "$ls" 0 "$DUTYCYCLE" 1000 0 "$(load_lifetime_s)"
agent_run "$lsq" 1 "$DUTYCYCLE" 8000 2000 "$(load_lifetime_s)"
CONFIG='{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"}, {"glob": "'"$LSQ_REL"'", "class": "LS"}],
	"burst": {"policy": "cpuBurstOnly", "burst_percent": 10},
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'}}'
agent_config "$CONFIG"
agent_start
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

# cpustat KEY: a field of lsq's cpu.stat.
cpustat() {
	awk -v k="$1" '$1 == k { print $2 }' "$lsq/cpu.stat"
}
# metric SERIES: its value in $TMP/metrics.txt; empty when absent.
metric() {
	awk -v s="$1" '$1 == s { print $2 }' "$TMP/metrics.txt"
}
# The kernel's counters, then a scrape rendered after them (one tick is 1 s),
# once the agent has set lsq's burst, then the counters again.
p0=$(cpustat nr_periods) t0=$(cpustat nr_throttled) tt0=$(cpustat "$THROTTLED_TIME")
sleep 2.5
LSQ='cgroup="/'"$LSQ_REL"'",qos="LS"'
BURST_SERIES="qoslet_applied_cpu_burst_seconds{$LSQ}"
[ -e "$BURST_FILE" ] || BURST_SERIES="" # kernel without CFS burst (5.14+)
for _ in $(seq 1 50); do
	status GET /metrics >/dev/null
	cp "$TMP/body" "$TMP/metrics.txt"
	[ -z "$BURST_SERIES" ] || [ -n "$(metric "$BURST_SERIES")" ] && break
	sleep 0.2
done
p1=$(cpustat nr_periods) t1=$(cpustat nr_throttled) tt1=$(cpustat "$THROTTLED_TIME")
n=$(metric "$SERIES")
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

# ---- the families beyond the run queue, against the kernel's counters ----
m=$(metric "qoslet_cpu_cfs_periods_total{$LSQ}")
assert_cmp "$m" ">=" "$p0" "lsq CFS periods: at least cpu.stat's before the scrape"
assert_cmp "$m" "<=" "$p1" "lsq CFS periods: at most cpu.stat's after it"
m=$(metric "qoslet_cpu_cfs_throttled_periods_total{$LSQ}")
assert_cmp "$m" ">" 0 "lsq was throttled"
assert_cmp "$m" ">=" "$t0" "lsq throttled periods: at least cpu.stat's before the scrape"
assert_cmp "$m" "<=" "$t1" "lsq throttled periods: at most cpu.stat's after it"
m=$(metric "qoslet_cpu_cfs_throttled_seconds_total{$LSQ}")
assert_cmp "$m" ">=" "$(awk -v v="$tt0" -v u="$THROTTLED_UNIT" 'BEGIN { printf "%.9f", v / u }')" \
	"lsq throttled seconds: at least cpu.stat's $THROTTLED_TIME before the scrape"
assert_cmp "$m" "<=" "$(awk -v v="$tt1" -v u="$THROTTLED_UNIT" 'BEGIN { printf "%.9f", v / u }')" \
	"lsq throttled seconds: at most cpu.stat's after it"
if [ -n "$BURST_SERIES" ]; then
	assert_cmp "$(metric "$BURST_SERIES")" "==" \
		"$(awk -v v="$(cat "$BURST_FILE")" 'BEGIN { printf "%.6f", v / 1e6 }')" \
		"applied burst of lsq is $(basename "$BURST_FILE")"
	assert_cmp "$(metric "$BURST_SERIES")" ">" 0 "the agent set a burst on lsq"
else
	log "kernel without CFS burst: no applied burst to check"
fi
# Only burst changed: no other applied setting, and none on ls.
applied=$(grep -c '^qoslet_applied_' "$TMP/metrics.txt" || true)
assert_eq "$applied" "$([ -n "$BURST_SERIES" ] && echo 1 || echo 0)" "applied settings series"
if [ -e "$lsq/cpu.pressure" ]; then
	m=$(metric "qoslet_pressure_stall_seconds_total{$LSQ,resource=\"cpu\",kind=\"some\"}")
	k=$(awk '$1 == "some" { sub("total=", "", $5); printf "%.6f", $5 / 1e6 }' "$lsq/cpu.pressure")
	assert_cmp "$m" "<=" "$k" "lsq cpu pressure: at most cpu.pressure's total after the scrape"
else
	! grep -q "^qoslet_pressure_stall_seconds_total{$LSQ," "$TMP/metrics.txt" ||
		fail "PSI series for lsq, which has no pressure files"
	log "ok: no PSI series for lsq (no cgroup2 pressure files on this host)"
fi
grep -q '^qoslet_blame_wait_seconds_total{cgroup="/'"$LS_REL"'",qos="LS",' "$TMP/metrics.txt" ||
	fail "no blame pair with /$LS_REL as victim: $(grep '^qoslet_blame' "$TMP/metrics.txt" | head -n 5)"
assert_cmp "$(metric qoslet_blame_pairs)" ">=" 1 "blame pairs held"
if grep -q '^qoslet_agent_probe_up{probe="cpi"} 1$' "$TMP/metrics.txt"; then
	grep -q '^qoslet_cpu_usage_seconds_total{' "$TMP/metrics.txt" || fail "cpi probe up, no CPU time series"
else
	! grep -q '^qoslet_cpu_\(usage_seconds\|cycles\|instructions\)_total' "$TMP/metrics.txt" ||
		fail "CPU time or CPI series without the cpi probe"
fi
assert_eq "$(metric 'qoslet_agent_errors_total{kind="cgroup_read"}')" 0 "cgroup read errors"
assert_eq "$(metric 'qoslet_agent_errors_total{kind="render"}')" 0 "render errors"
rss=$(awk -v p="$(getconf PAGESIZE)" '{ print $2 * p }' "/proc/$AGENT_PID/statm")
assert_cmp "$(metric process_resident_memory_bytes)" ">=" "$((rss / 2))" "RSS near /proc's $rss"
assert_cmp "$(metric process_resident_memory_bytes)" "<=" "$((rss * 2))" "RSS near /proc's $rss"
fds=$(find "/proc/$AGENT_PID/fd" -mindepth 1 | wc -l)
assert_cmp "$(metric process_open_fds)" ">=" "$((fds - 4))" "open fds near /proc's $fds"
assert_cmp "$(metric process_open_fds)" "<=" "$((fds + 4))" "open fds near /proc's $fds"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/metrics.txt" >"$TMP/promtool.out" 2>&1 ||
		fail "promtool check metrics: $(cat "$TMP/promtool.out")"
	log "ok: promtool check metrics"
else
	skip_part "promtool check metrics (no promtool: Debian package prometheus)"
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
	skip_part "the scrape by a real Prometheus (no prometheus: Debian package prometheus)"
	agent_stop
	test_end
fi
prometheus_start "$PORT"
QUERY='histogram_quantile(0.99, qoslet_runqueue_wait_seconds_bucket{cgroup="/'"$LS_REL"'"})'
q=""
for _ in $(seq 1 100); do
	q=$(prom_query "$QUERY" | jq -r '.data.result[0].value[1] // empty' 2>/dev/null) || true
	[ -n "$q" ] && break
	sleep 0.2
done
[ -n "$q" ] || fail "Prometheus returned no quantile for /$LS_REL: $(tail -n 5 "$TMP/prometheus.log")"
awk -v q="$q" 'BEGIN { exit !(q + 0 > 0) }' || fail "p99 run-queue wait of /$LS_REL is $q"
up=$(prom_query 'up{job="qoslet"}' | jq -r '.data.result[0].value[1]')
assert_eq "$up" 1 "Prometheus up{job=\"qoslet\"}"
log "ok: Prometheus scraped the agent; p99 run-queue wait of /$LS_REL: $q s"
agent_stop
test_end
