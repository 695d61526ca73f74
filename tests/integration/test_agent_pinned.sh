#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Exclusive CPUs (docs/agent-policies.md, "Exclusive CPUs"): with a
# Guaranteed pod pinned to CPUs X by the kubelet's static CPU manager, no BE
# cpuset and no LS move qoslet makes ever names X. The kubelet is played by
# the test, in its cgroupfs layout under PARENT/kubepods (the agent manages
# that):
#   kubepods/pod<G>/c1              Guaranteed (LSR), pinned: cpuset X, a hog on X
#   kubepods/burstable/pod<B>/c1    Burstable (LS): cpuset the shared pool
#   kubepods/besteffort/pod<E>/c1   BestEffort (BE): cpuset the shared pool, hogs
# and its checkpoint, a cpu_manager_state in the test's directory (policy
# static, defaultCpuSet the pool, G's container on X) that the config points
# the agent at. X is CPUs 1-2 with 4 CPUs or more, CPU 0 on fewer (the CPU a
# policy blind to X picks first: CPUs are taken lowest first). Three runs,
# each policy alone:
#  (a) suppression `cpuset`: an applied suppress.cpuset decision on BE,
#      within the pool; the metrics say X's size and G's pinned CPUs;
#  (b) suppression `split` (threshold 95): on 2 shared CPUs or more BE and
#      LS get lists of their own, out of the pool; with one shared CPU there
#      is nothing to split and no cpuset decision at all;
#  (c) SLO control (cfsQuota suppression off): the LS wake-up loop shares
#      the pool with BE's hogs against a 100 us target; with 2 shared CPUs
#      or more BE is confined (slo.confine) within the pool, with one it is
#      cut by cpu.idle and quota only.
# In each: every cpuset decision (any outcome) lists no CPU of X, nor
# targets G; every value seen after it in the units' cpuset files (pod and
# container) other than its original names no CPU of X; G's container keeps
# X. A policy the load here did not drive to its cpuset step (the shared
# host's other load counts as the system's) is a skipped part, not a pass.
# Functional, not timed: each run is a few seconds (about 25 s in all).
# The 4-CPU run: docs/testing.md (VM_SMP=4).
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq curl
require_binaries
test_setup
agent_setup

NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || skip "needs 2 CPUs: one pinned, one shared"
if [ "$NCPU" -ge 4 ]; then X=1-2; else X=0; fi
# The pool: every CPU but X ("0,3-7" with 8).
POOL=$(seq 0 $((NCPU - 1)) | awk -v x="$X" 'BEGIN { n = split(x, r, "-"); lo = r[1]; hi = (n > 1 ? r[2] : r[1]) }
	$1 < lo || $1 > hi { printf "%s%s", sep, $1; sep = "," }')
NPOOL=$((NCPU - $(awk -F- '{ print ($2 == "" ? 1 : $2 - $1 + 1) }' <<<"$X")))
log "$NCPU CPUs: pinned $X, shared pool $POOL ($NPOOL)"

P=${TEST_PARENT_REL#/}
G=$(cat /proc/sys/kernel/random/uuid)
B=$(cat /proc/sys/kernel/random/uuid)
E=$(cat /proc/sys/kernel/random/uuid)
g=$(agent_cgroup "kubepods/pod$G/c1")
b=$(agent_cgroup "kubepods/burstable/pod$B/c1")
e=$(agent_cgroup "kubepods/besteffort/pod$E/c1")
[ -e "$(agent_cg_in "$e" cpuset)/cpuset.cpus" ] || skip "no cpuset controller for the pods"
# The containers' cpusets as the kubelet's static policy writes them; the pod
# cgroups keep every CPU (v1) or none of their own (v2), as the kubelet's do.
echo "$X" >"$(agent_cg_in "$g" cpuset)/cpuset.cpus"
echo "$POOL" >"$(agent_cg_in "$b" cpuset)/cpuset.cpus"
echo "$POOL" >"$(agent_cg_in "$e" cpuset)/cpuset.cpus"
STATE=$TMP/cpu_manager_state
jq -n --arg g "$G" --arg x "$X" --arg pool "$POOL" \
	'{policyName: "static", defaultCpuSet: $pool, entries: {($g): {c1: $x}}, checksum: 1}' >"$STATE"

# The cpuset files whose values must never name X once qoslet wrote them
# (the pods' and their containers'), and the pinned container's.
WATCHED=()
for cg in "$(dirname "$b")" "$b" "$(dirname "$e")" "$e"; do
	WATCHED+=("$(agent_cg_in "$cg" cpuset)/cpuset.cpus")
done
G_FILE=$(agent_cg_in "$g" cpuset)/cpuset.cpus
# A pod cgroup on v2 has no CPUs of its own (""): a kernel that refuses to
# empty a cpuset with tasks gets its parent's CPUs back instead on restore
# (docs/agent-actuator.md), the same CPUs: an original value too.
declare -A ORIG ORIG_EFF
for f in "${WATCHED[@]}"; do
	ORIG[$f]=$(cat "$f")
	ORIG_EFF[$f]=""
	[ -n "${ORIG[$f]}" ] || ORIG_EFF[$f]=$(cat "$(dirname "$(dirname "$f")")/cpuset.cpus.effective" 2>/dev/null || true)
done

# names_x LIST: whether a CPU list names a CPU of X.
names_x() {
	tr ',' '\n' <<<"$1" | awk -F- -v x="$X" 'BEGIN { n = split(x, r, "-"); lo = r[1]; hi = (n > 1 ? r[2] : r[1]) }
		NF { for (c = $1; c <= ($2 == "" ? $1 : $2); c++) if (c >= lo && c <= hi) found = 1 }
		END { exit !found }'
}

# sample_files: every watched file's value now, checked (called while a run goes on).
sample_files() {
	local f v
	for f in "${WATCHED[@]}"; do
		v=$(<"$f") || continue
		[ "$v" = "${ORIG[$f]}" ] || [ "$v" = "${ORIG_EFF[$f]}" ] && continue
		! names_x "$v" || fail "$f holds \"$v\": CPUs $X are pinned"
	done
	v=$(<"$G_FILE")
	[ "$v" = "$X" ] || fail "the pinned container's cpuset became \"$v\", not $X"
}

# check_decisions RUN: every cpuset decision so far keeps off X and off G.
check_decisions() {
	local d bad
	d=$(decisions '.kind == "cpuset"')
	bad=$(jq -c --arg g "pod$G" '[.[] | select(.target.cgroup | contains($g))]' <<<"$d")
	assert_eq "$bad" "[]" "($1) no cpuset decision on the pinned pod"
	while read -r v; do
		[ -n "$v" ] || continue
		! names_x "$v" || fail "($1) a cpuset decision names pinned CPUs $X: $(jq -c 'map({rule, target: .target.cgroup, value, after, outcome})' <<<"$d" | head -c 1500)"
	done < <(jq -r '.[] | .value, .after' <<<"$d")
	log "($1) $(jq length <<<"$d") cpuset decisions, none on $X: $(jq -c 'map([.rule, .value, .outcome]) | unique' <<<"$d" | head -c 400)"
}

# rules_seen: the rules of the run's decisions, each once (a skipped part says them).
rules_seen() {
	decisions 'true' | jq -c 'map(.rule) | unique'
}

# run_policy NAME SECONDS JSON [UNTIL]: one agent run with the policy JSON
# alone; samples the files while it goes. With UNTIL (a jq filter) it goes
# on past SECONDS until a decision matching it is written, for at most four
# times SECONDS scaled like every bound: under TCG the agent's first ticks
# come late (5.10's whole matrix run once saw no cut in the SLO run's fixed
# 5 s; the next passed).
# stop_policy NAME stops it and checks its decisions (the file is complete
# only once the agent stopped).
run_policy() {
	local name=$1 secs=$2 until=${4:-}
	: >"$AGENT_OUT"
	agent_config '{"cgroup_root": "'"$P/kubepods"'", "interval_s": 0.5, "cpu_manager_state": "'"$STATE"'",
		'"$AGENT_POLICIES_OFF"', "http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'}}'
	jq --argjson x "$3" '. * $x' "$TMP/agent.json" >"$TMP/agent.json.new"
	mv "$TMP/agent.json.new" "$TMP/agent.json"
	agent_start
	local end=$((SECONDS + secs)) last=$((SECONDS + $(time_bound_ms $((secs * 4000))) / 1000))
	while [ "$SECONDS" -lt "$end" ] || { [ -n "$until" ] && [ "$SECONDS" -lt "$last" ] &&
		[ "$(decisions "$until" | jq length)" = 0 ]; }; do
		sample_files
		kill -0 "$AGENT_PID" 2>/dev/null || fail "($name) agent exited: $(tail -n 5 "$AGENT_ERR")"
		sleep 0.1
	done
}
stop_policy() {
	agent_stop
	sample_files
	check_decisions "$1"
	log "($1) done at ${SECONDS}s"
}

PORT=$(free_port)
LIFE=$(load_lifetime_s)
agent_run "$g" "$X" "$DUTYCYCLE" 100000 0 "$LIFE"
agent_run "$e" "$POOL" "$DUTYCYCLE" 100000 0 "$LIFE"
[ "$NPOOL" -lt 2 ] || agent_run "$e" "$POOL" "$DUTYCYCLE" 100000 0 "$LIFE"

# (a) cpuset: the LS pod busy on one shared CPU.
agent_run "$b" "$POOL" "$DUTYCYCLE" 100000 0 "$LIFE"
LS_HOG=$CG_PID
run_policy cpuset 4 '{"suppress": {"enabled": true, "policy": "cpuset", "min_cpus": 0.2}}' \
	'.rule == "suppress.cpuset" and .outcome == "applied"'
m=$(curl -sf "http://127.0.0.1:$PORT/metrics") || fail "(cpuset) no /metrics"
assert_eq "$(awk '$1 == "qoslet_exclusive_cpus" { print $2 }' <<<"$m")" $((NCPU - NPOOL)) \
	"qoslet_exclusive_cpus counts X"
grep -q "^qoslet_pinned_cpus{.*pod_uid=\"$G\".*qos=\"LSR\"} $((NCPU - NPOOL))\$" <<<"$m" ||
	fail "no qoslet_pinned_cpus series for the pinned pod: $(grep pinned <<<"$m")"
stop_policy cpuset
n=$(decisions '.rule == "suppress.cpuset" and .outcome == "applied" and (.target.cgroup | contains("pod'"$E"'"))' | jq length)
assert_cmp "$n" ">=" 1 "(cpuset) BE's cpuset was written"
kill -TERM "$LS_HOG" 2>/dev/null || true

# (b) split: the LS pod light (0.1 CPU).
agent_run "$b" "$POOL" "$DUTYCYCLE" 1000 9000 "$LIFE"
if [ "$NPOOL" -lt 2 ]; then until='.rule == "suppress.cfs_quota"'; else until='.rule == "suppress.split_ls" and .outcome == "applied"'; fi
run_policy split 5 '{"suppress": {"enabled": true, "policy": "split", "threshold_percent": 95}}' "$until"
stop_policy split
if [ "$NPOOL" -lt 2 ]; then
	assert_eq "$(decisions '.kind == "cpuset"' | jq length)" 0 "(split) one shared CPU: nothing to split"
	assert_cmp "$(decisions "$until" | jq length)" ">=" 1 "(split) BE held by a quota instead"
elif [ "$(decisions "$until" | jq length)" -ge 1 ]; then
	log "(split) LS moved within the pool"
else
	skip_part "(split) the load here never left a whole shared CPU spare: the split did not start (rules: $(rules_seen))"
fi

# (c) SLO control: the LS wake-up loop on the pool's first CPU, against 100 us.
agent_run "$b" "${POOL%%[,-]*}" "$DUTYCYCLE" 200 2000 "$LIFE"
if [ "$NPOOL" -lt 2 ]; then until='.rule | startswith("slo.cut")'; else until='.rule == "slo.confine" and .kind == "cpuset"'; fi
run_policy slo 5 '{"slo": {"enabled": true, "targets": {"ls_p99_us": 100}}}' "$until"
stop_policy slo
log "(slo) decisions: $(decisions 'true' | jq -c 'map([.rule, .kind, .target.cgroup[-12:], .outcome]) | unique')"
if [ "$NPOOL" -lt 2 ]; then
	assert_eq "$(decisions '.kind == "cpuset"' | jq length)" 0 "(slo) one shared CPU: no confinement"
	[ "$(decisions "$until" | jq length)" -ge 1 ] ||
		skip_part "(slo) the LS loop never went over its target here: nothing was cut (rules: $(rules_seen))"
elif [ "$(decisions "$until" | jq length)" -ge 1 ]; then
	log "(slo) BE confined within the pool"
else
	skip_part "(slo) the LS loop never went over its target here: BE was not confined (rules: $(rules_seen))"
fi
log "all done at ${SECONDS}s"
test_end
