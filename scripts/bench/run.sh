#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/run.sh: runs every benchmark and writes its report to
# docs/bench/NAME.md (`make bench` calls this after building build/qoslet).
#
#   ctxsw          context-switch cost with qoslet's probes attached
#                  (scripts/bench/ctxsw.sh) -> docs/bench/ctxsw.md
#   ctxsw-xcg      the same with the two ends in two cgroups, so that the
#                  probe's blame step runs on every switch (ctxsw.sh -g)
#                  -> docs/bench/ctxsw-xcg.md
#   top_footprint  RSS and CPU of `qoslet top -j` with 500 busy cgroups
#                  (scripts/bench/top_footprint.sh) -> docs/bench/top_footprint.md
#   colobench      LS wake-up latency next to BE batch, without and with
#                  `qoslet agent` (scripts/bench/colobench.sh) -> docs/bench/colobench.md
#   agent_footprint  CPU, RSS and cost per pod per tick of `qoslet agent` on a
#                  kubelet-shaped tree of 100, 500 and 1000 pods, and `qoslet
#                  top -j` at 500 (scripts/bench/agent_footprint.sh)
#                  -> docs/bench/agent_footprint.md
#   detectbench    interference detection scored on labelled scenarios
#                  (scripts/bench/detectbench.sh) -> docs/bench/detectbench.md
#   slobench       request latency of real servers (nginx, redis) under closed
#                  and open-loop load next to BE batch, without and with
#                  `qoslet agent` (scripts/bench/slobench.sh) -> docs/bench/slobench.md
#   newpod         new-pod protection time with the Kubernetes link on (pod in the
#                  API, then its cgroup: mkdir to cpu.idle), 10 pods, and one node's
#                  API footprint (scripts/bench/newpod.sh) -> docs/bench/newpod.md
#   kube_scale     what many agents' Kubernetes link costs the API server: steady
#                  state, a rolling restart, a compaction storm, an outage; per agent
#                  and projected to 5,000 nodes (scripts/bench/kube_scale.sh)
#                  -> docs/bench/kube_scale.md
#   reassert       time from another writer's change of a setting the agent
#                  applied to the agent's write-back (scripts/bench/reassert.sh)
#                  -> docs/bench/reassert.md
#   memcolo        an LS pod's page-cache reads next to a BE stream under a shared
#                  memory limit, without and with `qoslet agent`; BE MB/s; the
#                  agent's reaction (scripts/bench/memcolo.sh) -> docs/bench/memcolo.md
#   bioprobe       a streaming read from disk traced by the memstall probe and
#                  untraced (scripts/bench/bioprobe.sh) -> docs/bench/bioprobe.md
#
# A benchmark that cannot run here (exit 77: a tool is missing, not root)
# is reported as skipped with its reason and leaves its report untouched; a
# report is replaced only after a complete run. Exits 1 if any benchmark
# failed. Prints one line per benchmark and a summary line.
#
# Environment:
#   BENCH_ROUNDS      rounds of every configuration (default 15)
#   BENCH_LOOPS       perf bench sched pipe loops per block (default 100000)
#   BENCH_CPU         CPU the pipe benchmark is pinned to (default 0)
#   BENCH_QUIET_WAIT  seconds to wait for a quiet machine first (default 120)
#   COLOBENCH_ROUNDS  rounds of colobench (default 5, about a minute each)
#   COLOBENCH_WORK_US CPU work of colobench's LS service per 1 ms wake-up (default 800)
#   AGENT_FOOTPRINT_ROUNDS    rounds of agent_footprint (default 2, ~3.5 min each)
#   AGENT_FOOTPRINT_BASELINE  a qoslet binary to measure beside build/qoslet in
#                  agent_footprint (the numbers before a change; default: none)
#   DETECTBENCH_ROUNDS rounds of detectbench (default 3, about 5 to 12 minutes each)
#   DETECTBENCH_BASELINE another qoslet binary detectbench's system_slice also runs under
#   SLOBENCH_ROUNDS   rounds of slobench (default 5, about 9.5 minutes each)
#   SLOBENCH_SECS     seconds per slobench block (default 15: BE's start sets
#                     an 8 s block's p99 in some rounds, docs/slo-control.md)
#   SLOBENCH_SHARE    slobench's open-loop rate: where the LS pod alone uses this
#                     share of the CPUs (its -u; default 0.5); set empty for half
#                     the alone maximum (which can leave BE no room: slobench -u)
#   SLOBENCH_EXTRA    one extra agent scenario for slobench, NAME=JSON (its -x);
#                     default agent-split_slo, the node split with the SLO
#                     controller (docs/slo-control.md, issue 14's targets); set
#                     empty for none
#   REASSERT_ROUNDS   rounds of reassert (default 30, about a second each)
#   KUBE_SCALE_NODES  agents (nodes) of kube_scale (default 50, about 5 minutes)
#   MEMCOLO_ROUNDS    rounds of memcolo (default 3, about 3.5 minutes each)
#   BIOPROBE_ROUNDS   rounds of bioprobe (default 11, a few seconds each)
#   BENCHES           space-separated benchmarks to run (default: all)
set -euo pipefail

cd "$(dirname "$0")/../.."

ROUNDS=${BENCH_ROUNDS:-15}
LOOPS=${BENCH_LOOPS:-100000}
CPU=${BENCH_CPU:-0}
QUIET_WAIT=${BENCH_QUIET_WAIT:-120}
BENCHES=${BENCHES:-ctxsw ctxsw-xcg top_footprint colobench agent_footprint detectbench slobench newpod reassert kube_scale memcolo bioprobe}

if [ "$(id -u)" != 0 ]; then
	echo "bench: not root: configurations that load BPF programs will be skipped" >&2
fi

ran=0
failed=0
skipped=0
tmp=""
trap '[ -z "$tmp" ] || rm -f "$tmp" "$tmp.stdout"' EXIT
mkdir -p docs/bench

for b in $BENCHES; do
	out=docs/bench/$b.md
	tmp=$(mktemp "docs/bench/.$b.md.XXXXXX")
	rc=0
	case $b in
	ctxsw | ctxsw-xcg)
		xcg=""
		[ "$b" = ctxsw ] || xcg=-g
		echo "bench: $b: taskset -c $CPU perf bench sched pipe -l $LOOPS${xcg:+, the ends in two cgroups}, $ROUNDS rounds"
		scripts/bench/ctxsw.sh -r "$ROUNDS" -l "$LOOPS" -c "$CPU" $xcg -q "$QUIET_WAIT" \
			-o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	top_footprint)
		echo "bench: $b: qoslet top -j 1 with 500 busy cgroups, 3 rounds of 30 s"
		scripts/bench/top_footprint.sh -o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	colobench)
		echo "bench: $b: LS wake-up latency next to BE stress-ng, without and with qoslet agent, ${COLOBENCH_ROUNDS:-5} rounds of 3 x 20 s"
		scripts/bench/colobench.sh -r "${COLOBENCH_ROUNDS:-5}" -q "$QUIET_WAIT" -o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	agent_footprint)
		af_rounds=${AGENT_FOOTPRINT_ROUNDS:-2}
		af_base=${AGENT_FOOTPRINT_BASELINE:-}
		echo "bench: $b: qoslet agent on 100, 500 and 1000 pods, top -j at 500, $af_rounds rounds${af_base:+, beside $af_base}"
		# Each run waits at most 30 s for a quiet machine (there are 8 to 16).
		scripts/bench/agent_footprint.sh -r "$af_rounds" ${af_base:+-b "$af_base"} \
			-q "$((QUIET_WAIT < 30 ? QUIET_WAIT : 30))" -o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	detectbench)
		echo "bench: $b: fifteen labelled interference scenarios (eleven CPU, four memory), ${DETECTBENCH_ROUNDS:-3} rounds of 20 s each"
		scripts/bench/detectbench.sh -r "${DETECTBENCH_ROUNDS:-3}" -q "$QUIET_WAIT" \
			${DETECTBENCH_BASELINE:+-b "$DETECTBENCH_BASELINE"} -o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	slobench)
		echo "bench: $b: nginx and redis, closed and open loop, next to BE stress-ng, without and with qoslet agent, ${SLOBENCH_ROUNDS:-5} rounds of ${SLOBENCH_SECS:-15} s blocks"
		# unset: the configuration nearest issue 14's targets; set empty: no extra scenario
		split_slo='split_slo={"suppress": {"policy": "split", "threshold_percent": 95}, "slo": {"enabled": true}}'
		extra=${SLOBENCH_EXTRA-$split_slo}
		share=${SLOBENCH_SHARE-0.5}
		scripts/bench/slobench.sh -r "${SLOBENCH_ROUNDS:-5}" -s "${SLOBENCH_SECS:-15}" -q "$QUIET_WAIT" \
			${share:+-u "$share"} ${extra:+-x "$extra"} -o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	newpod)
		echo "bench: $b: 10 BestEffort pods in the API, then their cgroups: mkdir to cpu.idle; API bytes of a node"
		scripts/bench/newpod.sh -n 10 -o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	kube_scale)
		echo "bench: $b: ${KUBE_SCALE_NODES:-50} agents' Kubernetes link: steady state, restart, 410 storm, outage"
		scripts/bench/kube_scale.sh -n "${KUBE_SCALE_NODES:-50}" -o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	reassert)
		echo "bench: $b: another writer's cpu.idle=0 on a BE pod, time to the agent's write-back, ${REASSERT_ROUNDS:-30} rounds"
		scripts/bench/reassert.sh -r "${REASSERT_ROUNDS:-30}" -o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	memcolo)
		echo "bench: $b: LS page-cache reads next to a BE stream under a memory limit, without and with qoslet agent, ${MEMCOLO_ROUNDS:-3} rounds of 3 x 60 s"
		scripts/bench/memcolo.sh -r "${MEMCOLO_ROUNDS:-3}" -q "$QUIET_WAIT" -o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	bioprobe)
		echo "bench: $b: a streaming read from disk, memstall probe attached and not, ${BIOPROBE_ROUNDS:-21} rounds"
		scripts/bench/bioprobe.sh -r "${BIOPROBE_ROUNDS:-21}" -o "$tmp" >"$tmp.stdout" || rc=$?
		;;
	*)
		echo "bench: unknown benchmark '$b'" >&2
		rc=2
		;;
	esac
	case $rc in
	0)
		mv "$tmp" "$out"
		rm -f "$tmp.stdout"
		echo "bench: $b: wrote $out"
		sed -n '/^| Configuration/,/^$/p;/^| Target/,/^$/p;/^| Agent | Target/,/^$/p;/^| Score/,/^$/p;/^- qoslet/p' "$out"
		ran=$((ran + 1))
		;;
	77)
		echo "bench: $b: SKIP: $(sed -n 's/^SKIP: //p' "$tmp.stdout" | head -n 1)"
		rm -f "$tmp" "$tmp.stdout"
		skipped=$((skipped + 1))
		;;
	*)
		echo "bench: $b: FAILED (exit $rc)" >&2
		cat "$tmp.stdout" >&2 || true
		rm -f "$tmp" "$tmp.stdout"
		failed=$((failed + 1))
		;;
	esac
done

echo "bench: $ran ran, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
