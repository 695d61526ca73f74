#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A new pod is acted on when its cgroup appears, not at the next regular
# tick: the agent polls the cgroup tree's notifications between ticks and
# ticks at once (user/agent/loop.h). With interval_s 30, a BE pod created
# after the first tick gets its cpu.idle decision long before the second
# regular tick would come, and that tick is counted as an extra one.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq
require_binaries
test_setup
agent_setup

probe=$(agent_cgroup probe)
[ -e "$probe/cpu.idle" ] || skip "no cpu.idle in this kernel's cpu controller (5.15+)"
agent_config '{"interval_s": 30, "classes": [{"glob": "'"${TEST_PARENT_REL#/}"'/be*", "class": "BE"}]}'
agent_start --dry-run
sleep 1 # the first tick is behind us
t0=$(date +%s%N)
be=$(agent_cgroup be1)
BE_REL=${be#"$CG_ROOT"}
d=$(wait_decision '.kind == "cpu_idle" and .target.cgroup == "'"$BE_REL"'"' 10) ||
	fail "no cpu.idle decision for $BE_REL within 10 s of its mkdir (interval 30 s): $(tail -n 5 "$AGENT_ERR")"
ms=$(jq -n --argjson d "$d" --argjson t0 "$t0" '($d.ts_ns - $t0) / 1e6 | floor')
log "ok: cpu.idle for $BE_REL decided $ms ms after its mkdir"
agent_stop
grep -qE "stopping after [0-9]+ ticks \([1-9][0-9]* on the fast path\)" "$AGENT_ERR" ||
	fail "no extra tick counted: $(grep "stopping after" "$AGENT_ERR")"
test_end
