#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The split's LS move waits for its BE move, on real v1 cgroups: a BE unit
# whose cpuset directory is not made yet (v1 makes a pod's directories one
# hierarchy at a time) running a CPU hog per CPU, and a light LS unit.
#  1. The agent's split_be write fails (its cpuset directory is missing), and
#     the split_ls of the same tick is held: a refused decision saying so, and
#     the LS unit's cpuset.cpus unchanged while BE has no cpuset.
#  2. Once BE's cpuset directory exists and holds its tasks, both land: BE's
#     applied split first (or in the same tick), the files show the two
#     lists, disjoint.
# cgroup v1 only: on v2 a unit's cpuset is its own directory's, never missing.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq stress-ng
require_binaries
test_setup
cg_is_v2 && skip "cgroup v2: a unit's cpuset lives in its one directory and cannot be missing"
agent_setup

NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || skip "needs 2 CPUs to split"
CPUSET_MNT=$(v1_mount cpuset)
if [ -z "$CPUSET_MNT" ] || [ "$CPUSET_MNT" = "$CG_ROOT" ]; then
	skip "no v1 cpuset hierarchy apart from cpu"
fi
CPUS=$(seq -s, 0 $((NCPU - 1)))
ls=$(agent_cgroup ls)
ls_set=$(agent_cg_in "$ls" cpuset)
LS_REL=${ls#"$CG_ROOT"/}
ls_orig=$(cat "$ls_set/cpuset.cpus")

# BE in every hierarchy the agent reads but cpuset, its tasks in each.
be=$TEST_PARENT/be
BE_REL=${be#"$CG_ROOT"/}
be_set=$CPUSET_MNT$TEST_PARENT_REL/be
mkdir "$be" || fail "cannot create $be"
all_ctrls=("${AGENT_CTRLS[@]}")
AGENT_CTRLS=()
for mnt in "${all_ctrls[@]}"; do
	[ "$mnt" = "$CPUSET_MNT" ] && continue
	mkdir "$mnt$TEST_PARENT_REL/be" || fail "cannot create $mnt$TEST_PARENT_REL/be"
	AGENT_CTRLS+=("$mnt")
done
agent_run "$be" "$CPUS" stress-ng --cpu "$NCPU" --timeout 120s
AGENT_CTRLS=("${all_ctrls[@]}")
agent_run "$ls" "$CPUS" "$DUTYCYCLE" 1000 9000 120

agent_config '{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"}, {"glob": "'"$BE_REL"'", "class": "BE"}],
	"suppress": {"policy": "split", "threshold_percent": 95}, "interference": {"enabled": false}}'
agent_start

# ---- 1: BE's write fails, LS's is held ----
failed=$(wait_decision '.rule == "suppress.split_be" and .outcome == "failed"' 15) ||
	fail "no failed split for the BE unit without its cpuset in 15 s: $(decisions '.rule | startswith("suppress")' | jq -c 'map({rule, outcome, why}) | .[-3:]')"
ts=$(jq .ts_ns <<<"$failed")
held=$(decisions '.rule == "suppress.split_ls" and .ts_ns == '"$ts")
assert_eq "$(jq -r '.[0].outcome' <<<"$held")" refused "the LS move of the tick BE's failed in is not written"
why=$(jq -r '.[0].why' <<<"$held")
[[ $why == "held: a BE cpuset of this tick did not land"* ]] || fail "the held move does not say why: \"$why\""
log "the held move: $why"
sleep 2
assert_eq "$(decisions '.rule == "suppress.split_ls" and .outcome == "applied"' | jq length)" 0 \
	"no LS move lands while BE has no cpuset"
assert_eq "$(cat "$ls_set/cpuset.cpus")" "$ls_orig" "the LS unit keeps its CPUs while BE has no cpuset"

# ---- 2: BE's cpuset appears: both land ----
mkdir "$be_set" || fail "cannot create $be_set"
cat "$(dirname "$be_set")/cpuset.cpus" >"$be_set/cpuset.cpus"
cat "$(dirname "$be_set")/cpuset.mems" >"$be_set/cpuset.mems"
for p in $(cat "$be/cgroup.procs"); do
	echo "$p" >"$be_set/cgroup.procs" 2>/dev/null || true # a task may have exited
done
be_done=$(wait_decision '.rule == "suppress.split_be" and .outcome == "applied"' 15) ||
	fail "no applied split for the BE unit within 15 s of its cpuset: $(decisions '.rule | startswith("suppress.split")' | jq -c 'map({rule, outcome, why}) | .[-4:]')"
ls_done=$(wait_decision '.rule == "suppress.split_ls" and .outcome == "applied"' 15) ||
	fail "no applied split for the LS unit after BE's: $(decisions '.rule == "suppress.split_ls"' | jq -c 'map({outcome, why}) | .[-3:]')"
assert_cmp "$(jq .ts_ns <<<"$ls_done")" ">=" "$(jq .ts_ns <<<"$be_done")" "LS moves no sooner than BE"
BE_LIST=$(jq -r .after <<<"$be_done")
LS_LIST=$(jq -r .after <<<"$ls_done")
for _ in $(seq 1 50); do
	[ "$(cat "$be_set/cpuset.cpus")" = "$BE_LIST" ] && [ "$(cat "$ls_set/cpuset.cpus")" = "$LS_LIST" ] && break
	sleep 0.1
done
assert_eq "$(cat "$be_set/cpuset.cpus")" "$BE_LIST" "the BE unit's cpuset shows the split"
assert_eq "$(cat "$ls_set/cpuset.cpus")" "$LS_LIST" "the LS unit's cpuset shows the split"
assert_eq "$(printf '%s\n' "$BE_LIST" "$LS_LIST" | tr ',' '\n' | sort | uniq -d | wc -l)" 0 \
	"the two lists share no entry"
agent_stop
test_end
