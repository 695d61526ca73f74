#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/kube_scale.sh: what many agents' Kubernetes link costs the API
# server (issue 36's scale test). The probes are off: each agent is
# tests/helpers/kubesync, which links user/kube and runs the link's threads
# (the pod informer and the calls thread) as the agent does, one process a
# node, against the API stand-in (tests/helpers/kube_api_server.py), which
# serves LISTs as a real API server before 1.31 does and counts requests and
# bytes by verb. scripts/bench/kube_scale.py drives five phases: start,
# settle (each agent's capacity policy sees an hour of its load), steady state
# (the loop's calls of a node whose BE suppression follows the load, and pod
# churn), a rolling restart of every agent, a compaction storm
# (every watch gets an ERROR 410), an API outage (503 for a while, then back
# with its history gone). The report gives each agent's requests and bytes
# per hour by verb, every phase's LISTs (how many per agent, from the watch
# cache or only etcd), the peak request rate, and the projection to 5,000
# nodes x 110 pods. Needs no root. About 5 minutes with the defaults.
#
#   scripts/bench/kube_scale.sh [-n NODES] [-p PODS] [-s STEADY_S] [-r RESTART_S]
#                               [-d OUTAGE_S] [-b STEP,MIN_S] [-H HOLD_S] [-x SPEED]
#                               [-k DIR] [-o FILE]
#
# Defaults: 50 nodes of 110 pods, 120 s of steady state, the restart spread
# over 20 s, 20 s of outage, the shipped capacity.node_status (-b: its
# step_percent as a share, min_interval_s; -H its hold_s). The batch capacity
# is the agent's own capacity policy's (in kubesync), whose clock runs SPEED
# (-x, 60) times faster than real time so that its hour-long hold is reached
# (kube_scale.py, "settle"): the node status patches are per simulated hour.
# -k keeps the raw data (the stand-in's log and stats, the results JSON, each
# agent's stderr) in DIR.
#
# Exit 0 after a measurement, 77 when it cannot run here, 1 on failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NODES=50 PODS=110 STEADY=120 RESTART=20 OUTAGE=20 BATCH=0.10,30 HOLD=3600 SPEED=60 KEEP="" OUT=""
while getopts "n:p:s:r:d:b:H:x:k:o:" o; do
	case $o in
	n) NODES=$OPTARG ;;
	p) PODS=$OPTARG ;;
	s) STEADY=$OPTARG ;;
	r) RESTART=$OPTARG ;;
	d) OUTAGE=$OPTARG ;;
	b) BATCH=$OPTARG ;;
	H) HOLD=$OPTARG ;;
	x) SPEED=$OPTARG ;;
	k) KEEP=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) exit 2 ;;
	esac
done
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh"
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/kube_lib.sh
. "$ROOT/tests/integration/kube_lib.sh"

KUBESYNC=$ROOT/build/tests/helpers/kubesync
[ -x "$KUBESYNC" ] || skip "$KUBESYNC is missing: run make $KUBESYNC"
require_cmds jq python3
keep() {
	[ -n "$KEEP" ] || return 0
	mkdir -p "$KEEP"
	cp "$TMP"/api.log "$TMP"/stats.json "$TMP"/results.json "$TMP"/*.err "$KEEP"/ 2>/dev/null || true
}
kube_scratch keep
kube_require
kube_certs

jq -nc --arg uid 00000000-0000-4000-8000-000000000000 --arg name crunch --arg node n \
	-f "$ROOT/scripts/bench/kube_pod.jq" >"$TMP/pod.json"
python3 "$ROOT/scripts/bench/kube_scale.py" gen "$TMP/pod.json" "$NODES" "$PODS" "$TMP/pods.json"
# A bookmark a minute, as a real API server sends them; gzip over 128 KiB, as it does.
KUBE_PODS=$TMP/pods.json kube_server 127.0.0.1 "$TMP/port" --node 'scale-node-*' \
	--bookmark-interval 60 --stats "$TMP/stats.json" --down-file "$TMP/down" ||
	fail "API stand-in did not start: $(cat "$TMP/server.err")"
kube_kubeconfig "$TMP/kubeconfig" "$(cat "$TMP/port")"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
python3 "$ROOT/scripts/bench/kube_scale.py" run --kubesync "$KUBESYNC" \
	--kubeconfig "$TMP/kubeconfig" --pods "$TMP/pods.json" --stats "$TMP/stats.json" \
	--log "$TMP/api.log" --down-file "$TMP/down" --workdir "$TMP" --out "$TMP/results.json" \
	--server-pid "${KUBE_SERVER_PIDS[0]}" --nodes "$NODES" --pods-per-node "$PODS" \
	--steady "$STEADY" --restart "$RESTART" --outage "$OUTAGE" --batch "$BATCH" \
	--hold "$HOLD" --speed "$SPEED"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
[ ! -s "$TMP/server.err" ] || fail "the API stand-in reported errors: $(tail -n 5 "$TMP/server.err")"

commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
pod_bytes=$(wc -c <"$TMP/pod.json")
cat >"$TMP/header.md" <<MD
# kube_scale: what the agents' Kubernetes link costs the API server

Command: \`scripts/bench/kube_scale.sh -n $NODES -p $PODS -s $STEADY -r $RESTART -d $OUTAGE -b $BATCH -H $HOLD -x $SPEED\`
(\`make bench\`, BENCHES=kube_scale), commit $commit, $(date -u +%Y-%m-%d), $(nproc) CPUs,
Linux $(uname -r), a machine shared with other builds and tests (load average $load_before
at the start, $load_after at the end: the stand-in and the agents share the 2 CPUs with
them, so the phases' times and peaks are this machine's, the requests and bytes are not).

$NODES agents' Kubernetes link (\`tests/helpers/kubesync\`: user/kube's threads, no probes),
each on its own node of $PODS pods of $pod_bytes bytes (\`scripts/bench/kube_pod.jq\`),
against the API stand-in (\`tests/helpers/kube_api_server.py\`: LISTs served as a real API
server before 1.31 serves them, a bookmark a minute, gzip over 128 KiB). Each agent's link
gets what the loop hands it while BE suppression follows a varying load on 4 BE pods
(\`feed()\` in \`scripts/bench/kube_scale.py\`): the batch capacity as the agent's own
capacity policy (\`user/policy/capacity.c\`, linked into kubesync) publishes it from the
node's LS load (16 CPUs and 64 GiB; LS + system CPU swinging between 1 and 3 CPUs over 10
minutes, memory between 18 and 22 GiB over an hour, both with noise; the shipped capacity
settings but for \`-b\` and \`-H\`: step, min_interval_s $BATCH, hold_s $HOLD), and the node
condition, every 2 s; a \`Suppressed\` Event occurrence when each pod's suppression starts
(not at every quota change). **The policy's clock is simulated**: each agent's load trace is
replayed $SPEED times faster than real time (a policy tick every 2 s of its clock) and the
link's min_interval_s divided by $SPEED, so that the hour-long hold is reached; node status
patches are counted per hour of that clock, every other figure per real hour. Pod
churn: every 10 s, one pod on a tenth of the nodes changes. Phases: start (every agent at
once), settle (until every agent's policy has seen its hold and window of load), steady
state ($STEADY s, $(awk -v s="$STEADY" -v x="$SPEED" 'BEGIN { printf "%.1f", s * x / 3600 }') hours of each agent's load), a rolling restart of every agent over $RESTART s, a
compaction storm (every watch gets an ERROR 410), an outage ($OUTAGE s of 503 with every
watch cut, then back with its history gone, as a restarted API server).
MD
python3 "$ROOT/scripts/bench/kube_scale.py" report "$TMP/results.json" "$TMP/header.md" >"$TMP/report.md"
if [ -n "$OUT" ]; then cp "$TMP/report.md" "$OUT"; else cat "$TMP/report.md"; fi
test_end
