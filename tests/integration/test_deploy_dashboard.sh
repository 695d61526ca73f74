#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The Grafana dashboard (scripts/deploy/qoslet-dashboard.json) against a real
# Prometheus scraping a real agent. A kubelet-shaped tree under the test's
# parent: an LS pod (Burstable, web/frontend) and a BE pod (BestEffort,
# batch/crunch, a CFS quota of 0.3 CPUs) share CPU 0, so there are run-queue
# waits, blame pairs and throttling; the agent runs with Kubernetes (the API
# stand-in, node status on) and batch capacity (window 4 s). Prometheus
# scrapes it every second (job "qoslet", as the PodMonitor's). Checks:
#   - the dashboard parses, has panels with titles, and every panel query and
#     every template variable's selector uses job="qoslet";
#   - every query (Grafana's variables substituted: $__rate_interval by 15s,
#     $instance, $namespace and $qos by .*) is valid PromQL for Prometheus and
#     returns data, except the panels listed below as conditional, with the
#     reason they can be empty on this node: those must still be valid, and
#     must return data when their condition holds here;
#   - the namespace variable finds the pods' namespaces.
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

require_root
require_cmds jq taskset curl python3 prometheus
require_binaries
test_setup
agent_setup
kube_require

LOAD_S=120 # every load exits by itself even if cleanup never runs
NODE=qoslet-test-node
P=${TEST_PARENT_REL#/}
DASHBOARD=$QOSLET_ROOT/scripts/deploy/qoslet-dashboard.json

LS_UID=$(cat /proc/sys/kernel/random/uuid)
BE_UID=$(cat /proc/sys/kernel/random/uuid)
ls=$(agent_cgroup "kubepods/burstable/pod$LS_UID")
be=$(agent_cgroup "kubepods/besteffort/pod$BE_UID")
# The BE pod's own quota, so the throttling panels have a unit to show.
if [ -e "$be/cpu.cfs_quota_us" ]; then
	echo 100000 >"$be/cpu.cfs_period_us"
	echo 30000 >"$be/cpu.cfs_quota_us"
elif [ -e "$be/cpu.max" ]; then
	echo "30000 100000" >"$be/cpu.max"
else
	skip "no CFS bandwidth control: no unit can be throttled"
fi

jq -n --arg node "$NODE" --arg ls "$LS_UID" --arg be "$BE_UID" '
	{kind: "PodList", apiVersion: "v1", metadata: {resourceVersion: "1"}, items: [
		{metadata: {uid: $ls, namespace: "web", name: "frontend", labels: {}},
		 spec: {nodeName: $node, priority: 0,
			containers: [{name: "c", resources: {requests: {memory: "64Mi"}}}]},
		 status: {qosClass: "Burstable"}},
		{metadata: {uid: $be, namespace: "batch", name: "crunch", labels: {}},
		 spec: {nodeName: $node, priority: 0, containers: [{name: "c"}]},
		 status: {qosClass: "BestEffort"}}]}' >"$KUBE_TMP/pods.json"
KUBE_PODS=$KUBE_TMP/pods.json
kube_start "$NODE"
PORT=$(free_port)

agent_config '{"cgroup_root": "'"$P/kubepods"'", "interval_s": 1,
	"kubernetes": {"enabled": true, "kubeconfig": "'"$KUBE_TMP/kubeconfig"'",
		"node_name": "'"$NODE"'", "resync_s": 1, "timeout_s": 2,
		"events": {"enabled": false}, "node_condition": {"enabled": false}},
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'},
	"suppress": {"enabled": false, "cpu_idle": false},
	"evict": {"cpu": {"enabled": false}, "memory": {"enabled": false}},
	"interference": {"enabled": false},
	"capacity": {"enabled": true, "window_s": 4, "stale_s": 4,
		"node_status": {"enabled": true, "min_interval_s": 1}}}'

agent_run "$ls" 0 "$DUTYCYCLE" 5000 5000 "$LOAD_S"
agent_run "$be" 0 "$DUTYCYCLE" 100000 0 "$LOAD_S"
agent_start

prometheus_start "$PORT"

# Data for the rates: the warm-up's end (window 4 s), the node status patch,
# and 15 s of 1-second scrapes.
for _ in $(seq 1 $(($(time_bound_ms 30000) / 100))); do
	[ "$(prom_query 'qoslet_kube_node_batch{job="qoslet"}' 2>/dev/null | jq '.data.result | length' 2>/dev/null)" = 2 ] && break
	kill -0 "$AGENT_PID" 2>/dev/null || fail "agent exited: $(tail -n 5 "$AGENT_ERR")"
	sleep 0.1
done
[ "$(prom_query 'qoslet_kube_node_batch{job="qoslet"}' | jq '.data.result | length')" = 2 ] ||
	fail "Prometheus has no qoslet_kube_node_batch: $(tail -n 5 "$TMP/prometheus.log")"
sleep 15
metrics=$(curl -s "http://127.0.0.1:$PORT/metrics")

# What holds on this node, for the conditional panels.
v2=0
cg_is_v2 && v2=1
has() { grep -q "^$1" <<<"$metrics" && echo 1 || echo 0; }

python3 - "$DASHBOARD" "$PROM_PORT" "$v2" "$(has 'qoslet_cpu_cycles_total{')" \
	"$(has 'qoslet_memory_reclaim_stall_seconds_bucket{')" "$(has 'qoslet_oom_kills_total{')" <<'EOF'
import json, re, sys, urllib.parse, urllib.request

dashboard, pport, v2, pmu, stalled, oom = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def ok(msg):
    print("# ok: " + msg)


# Panels that may show nothing here, with why, and whether their condition
# holds on this node (then they must show data too).
CONDITIONAL = {
    "Interference breaches by cause": ("only after an LS unit breached its target (interference is off here)", False),
    "Failed or refused evictions": ("only when an eviction failed or was refused (evictions are off here)", False),
    "BE CPU quota qoslet applied": ("only where qoslet changed a unit's settings (no policy that writes runs here)", False),
    "PSI: share of time stalled (some)": ("cgroup v2 only (units have no *.pressure on v1 and hybrid nodes)", v2),
    "CPI per pod": ("only with a PMU that counts cycles and instructions (the cpi probe)", pmu),
    "Memory reclaim stall p99 (memcg)": ("only for units that stalled in memcg reclaim", stalled),
    "OOM kills": ("only after the OOM killer chose a task of a unit", oom),
}

d = json.load(open(dashboard))
panels = [p for p in d["panels"] if p["type"] != "row"]
if len(panels) < 20:
    fail("the dashboard has %d panels" % len(panels))
titles = [p["title"] for p in panels]
if len(set(titles)) != len(titles) or not all(titles):
    fail("panel titles are missing or repeated: %s" % titles)
if set(CONDITIONAL) - set(titles):
    fail("conditional panels the dashboard does not have: %s" % sorted(set(CONDITIONAL) - set(titles)))
ok("%d panels with distinct titles" % len(panels))


def promql(expr):
    """Grafana's variables as a dashboard with every value selected has them."""
    expr = expr.replace("$__rate_interval", "15s")
    return re.sub(r"\$(instance|namespace|qos)\b", ".*", expr)


def query(expr):
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (pport, urllib.parse.urlencode({"query": expr}))
    try:
        r = json.load(urllib.request.urlopen(url, timeout=10))
    except urllib.error.HTTPError as e:
        r = json.load(e)
    if r.get("status") != "success":
        fail("Prometheus refused %r: %s" % (expr, r.get("error")))
    return r["data"]["result"]


def job_qoslet(expr, where):
    sels = re.findall(r"\b([a-z_:]+)\{([^}]*)\}", expr)
    if not sels or any('job="qoslet"' not in s for _, s in sels):
        fail("%s: a selector without job=\"qoslet\": %s" % (where, expr))


n = 0
for p in panels:
    targets = p.get("targets", [])
    if not targets:
        fail("panel %r has no query" % p["title"])
    for t in targets:
        expr = promql(t["expr"])
        job_qoslet(t["expr"], "panel %r" % p["title"])
        if "$" in expr:
            fail("panel %r: a variable the test does not know: %s" % (p["title"], t["expr"]))
        res = query(expr)
        n += 1
        cond = CONDITIONAL.get(p["title"])
        if res:
            ok("%s [%s]: %d series" % (p["title"], t["refId"], len(res)))
        elif cond and not cond[1]:
            ok("%s [%s]: empty, as expected here: %s" % (p["title"], t["refId"], cond[0]))
        elif cond:
            fail("panel %r [%s] is empty though its condition holds here (%s): %s"
                 % (p["title"], t["refId"], cond[0], expr))
        else:
            fail("panel %r [%s] returns no data: %s" % (p["title"], t["refId"], expr))

variables = {v["name"]: v for v in d["templating"]["list"]}
for name in ("instance", "namespace"):
    v = variables[name]
    m = re.fullmatch(r"label_values\((.*), (\w+)\)", v["definition"])
    if not m or m.group(2) != name or v["query"]["query"] != v["definition"]:
        fail("variable %s: %r is not label_values(SELECTOR, %s)" % (name, v["definition"], name))
    job_qoslet(m.group(1), "variable %s" % name)
    values = {r["metric"].get(name) for r in query(promql(m.group(1)))} - {None}
    ok("variable %s: %s" % (name, sorted(values)))
    if name == "namespace" and not {"web", "batch"} <= values:
        fail("the namespace variable does not list the pods' namespaces: %s" % sorted(values))
    if name == "instance" and not values:
        fail("the instance variable lists no agent")
ok("%d queries evaluated against a real Prometheus scraping the agent" % n)
EOF
agent_stop
