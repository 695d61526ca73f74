#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A qoslet started over pins an older qoslet left (docs/pinning.md):
#   1. the agent over the sched probe's pins as tests/helpers/oldpins leaves
#      them (no layout metadata; rq_hist smaller and preallocated; rq_blame
#      with an older value; rq_alert_watch another kind of map; a directory
#      and a symbolic link where maps belong; sched_drops as today but mode
#      0644) starts and says what it kept, migrated and replaced. The entry
#      the old rq_hist held is in the new one (from 6.1; before, the shared
#      rq_hist cannot take per-CPU entries and replaces it), sched_drops is the same map
#      with its counter, the replaced maps have today's shape, the metadata
#      records every map, and every pin is mode 0600 (the directory 0700).
#      rq_blame_cache and rq_blame_fresh, which that qoslet did not have, are created.
#   2. the CLI started next keeps every map (same ids) and says nothing.
#   3. a map whose recorded revision is older than this qoslet's is replaced.
#   4. while another process holds the pin directory's lock (the one that
#      attaches), a pin that must change is left alone, and the error says
#      why; once the lock is free it is replaced.
#   5. damaged layout metadata (a directory in its place) is replaced, and
#      the maps it described are kept.
# shellcheck disable=SC2016,SC2046 # jq filters are single-quoted; hex bytes are split on purpose
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

OLDPINS=${OLDPINS:-$QOSLET_ROOT/build/tests/helpers/oldpins}

require_root
require_cmds jq bpftool flock
require_binaries
[ -x "$OLDPINS" ] || fail "$OLDPINS is missing: run make $OLDPINS"
test_setup
agent_setup

# The sched probe's pins and the layout metadata (the agent pins other probes' maps too).
PINS="qoslet_layout rq_alert_cfg rq_alert_watch rq_alerts rq_displacers rq_blame rq_blame_cache rq_blame_fresh rq_hist rq_pending sched_drops"

# map_json NAME: bpftool's description of the pinned map.
map_json() {
	bpftool -j map show pinned "$PIN_DIR/$1"
}

map_id() {
	map_json "$1" | jq -r .id
}

# ids: "name id" of every pin, one line.
ids() {
	local m
	for m in $PINS; do
		printf '%s %s ' "$m" "$(map_id "$m")"
	done
}

# hex_bytes STRING_OF_HEX: "0x.." words, as bpftool takes keys and values.
hex_bytes() {
	local hex=$1
	while [ -n "$hex" ]; do
		printf '0x%s ' "${hex:0:2}"
		hex=${hex:2}
	done
}

# le64 N: N as 8 little-endian bytes in hex.
le64() {
	printf '%016x' "$1" | sed 's/../& /g' | awk '{ for (i = 8; i >= 1; i--) printf "%s", $i }'
}

# cli LOG [ARGS]: one interval of qoslet runqlat over the pin dir; its exit status.
cli() {
	local log=$1
	shift
	timeout -k 5 30 "$QOSLET" runqlat -j --pin-dir "$PIN_DIR" "$@" 1 1 >"$TMP/cli.out" 2>"$log"
}

# assert_modes WHEN: every entry of the pin dir is a pin of mode 0600, no
# temporary pin of a migration is left, and the directory is 0700 (the test
# made it 0755).
assert_modes() {
	local bad m
	bad=$(find "$PIN_DIR" -mindepth 1 \( ! -type f -o ! -perm 600 -o -name '*-new' \) -printf '%f %M; ')
	[ -z "$bad" ] || fail "$1: not a pin of mode 0600: $bad"
	for m in $PINS; do
		[ -f "$PIN_DIR/$m" ] || fail "$1: $m is not pinned"
	done
	assert_eq "$(stat -c %a "$PIN_DIR")" 700 "$1: only root lists the pin directory"
	log "ok: $1: $(find "$PIN_DIR" -mindepth 1 | wc -l) pins, every one of mode 0600"
}

# ---- 1. the agent over an older qoslet's pins ----
idle=$(agent_cgroup idle) # no task ever runs here: its histogram stays as the old one left it
IDLE_ID=$(cg_id "$idle")
mkdir "$PIN_DIR"
"$OLDPINS" "$PIN_DIR" "$IDLE_ID" || fail "oldpins failed"
DROPS_ID=$(map_id sched_drops)
log "old pins: $(find "$PIN_DIR" -mindepth 1 -maxdepth 1 -printf '%f %M; ')"

# Without BPF's allocator (before 6.1) today's rq_hist is a preallocated
# hash shared by the CPUs (bpf/cg_maps.bpf.h), which the old per-CPU
# entries cannot be copied into: it is replaced, as docs/pinning.md says.
if kernel_has_struct bpf_mem_alloc; then
	HIST_SAID="rq_hist: max_entries 1024, now 4096; flags 0x0, now 0x1: entries copied into a new map: 1"
	HIST_DONE="migrated rq_hist; replaced rq_pending" HIST_SHAPE='.type == "percpu_hash" and .flags == 1'
else
	HIST_SAID="rq_hist: type percpu_hash, now hash; max_entries 1024, now 4096: its entries cannot be copied: replaced by a new, empty map"
	HIST_DONE="replaced rq_hist, rq_pending" HIST_SHAPE='.type == "hash" and .flags == 0'
fi
agent_config '{}'
agent_start --dry-run
grep "pin" "$AGENT_ERR" | sed 's/^/#   /' || true
for want in \
	"$HIST_SAID" \
	"rq_blame: value size 8, now 16: replaced" \
	"rq_alert_watch: type percpu_hash, now hash: its entries cannot be copied: replaced" \
	"rq_pending: it is a directory, not a map: replaced" \
	"rq_alert_cfg: it is a symbolic link, not a map: replaced" \
	"upgraded to this qoslet's layout: kept sched_drops; $HIST_DONE, rq_blame, rq_alert_cfg, rq_alert_watch; created rq_blame_cache, rq_blame_fresh, rq_displacers, rq_alerts" \
	"sched_drops had mode 0644: now 0600"; do
	grep -qF -- "$want" "$AGENT_ERR" || fail "the agent's log lacks '$want': $(cat "$AGENT_ERR")"
	log "ok: said '$want'"
done
grep -q "sched probe: attached" "$AGENT_ERR" || fail "the sched probe did not attach: $(cat "$AGENT_ERR")"

if [[ $HIST_DONE == migrated* ]]; then
	hist=$(bpftool -j map lookup pinned "$PIN_DIR/rq_hist" key $(hex_bytes "$(le64 "$IDLE_ID")"))
	assert_json "$hist" '[.formatted.values[].value.count] | add == 7' "the old histogram's count survived"
	assert_json "$hist" '[.formatted.values[].value.sum_ns] | add == 7000' "its sum survived"
	assert_json "$hist" '[.formatted.values[].value.slots[3]] | add == 7' "its bucket survived"
fi
assert_json "$(map_json rq_hist)" ".max_entries == 4096 and $HIST_SHAPE" "rq_hist has today's shape"
assert_eq "$(map_id sched_drops)" "$DROPS_ID" "sched_drops is the old map"
drops=$(bpftool -j map lookup pinned "$PIN_DIR/sched_drops" key 0 0 0 0)
assert_json "$drops" '[.formatted.values[].value] | add >= 5' "its counter carried on"
assert_json "$(map_json rq_blame)" '.bytes_value == 16' "rq_blame has today's value"
assert_json "$(map_json rq_alert_watch)" '.type == "hash"' "rq_alert_watch has today's type"
assert_json "$(map_json rq_pending)" '.type == "percpu_array"' "rq_pending is a map"
assert_json "$(map_json rq_alert_cfg)" '.type == "array"' "rq_alert_cfg is a map"
assert_json "$(map_json rq_blame_cache)" '.type == "percpu_array"' \
	"rq_blame_cache, which the older qoslet did not have, is created"
assert_json "$(map_json rq_blame_fresh)" '.type == "lru_percpu_hash"' \
	"rq_blame_fresh, which the older qoslet did not have, is created"
meta=$(bpftool -j map dump pinned "$PIN_DIR/qoslet_layout")
assert_json "$meta" '["rq_alert_cfg", "rq_alert_watch", "rq_displacers", "rq_blame", "rq_hist",
	"rq_blame_cache", "rq_blame_fresh", "rq_pending", "sched_drops"] - [.[].formatted | select(.value.revision == 1) | .key] == []
	and ([.[].formatted | select(.key == "rq_alerts") | .value.revision] == [2])' \
	"the metadata records the revision of every map"
assert_modes "after the upgrade"
agent_stop

# ---- 2. a second start keeps everything ----
before=$(ids)
cli "$TMP/keep.err" || fail "runqlat over the upgraded pins failed: $(cat "$TMP/keep.err")"
assert_eq "$(ids)" "$before" "every map kept"
if grep -q "pin" "$TMP/keep.err"; then
	fail "runqlat had something to say about the pins: $(cat "$TMP/keep.err")"
fi

# ---- 3. an older revision of a map is replaced ----
# The key is the name NUL-padded to 16 bytes; the value revision 0 and no writer.
name=$(printf 'rq_blame' | od -An -tx1 | tr -d ' \n')
bpftool map update pinned "$PIN_DIR/qoslet_layout" key $(hex_bytes "${name}0000000000000000") \
	value $(hex_bytes "$(printf '%064d' 0)")
BLAME_ID=$(map_id rq_blame)
HIST_ID=$(map_id rq_hist)
cli "$TMP/rev.err" || fail "runqlat after a revision change failed: $(cat "$TMP/rev.err")"
grep -qF "rq_blame: revision 0, now 1: replaced" "$TMP/rev.err" ||
	fail "no word of the revision: $(cat "$TMP/rev.err")"
[ "$(map_id rq_blame)" != "$BLAME_ID" ] || fail "rq_blame of revision 0 was kept"
assert_eq "$(map_id rq_hist)" "$HIST_ID" "rq_hist kept meanwhile"

# ---- 4. pins are not changed under a qoslet that is attached ----
rm "$PIN_DIR/rq_blame"
# Today's shape, but without BTF: nothing tells what its entries are.
bpftool map create "$PIN_DIR/rq_blame" type lru_percpu_hash key 16 value 16 entries 8192 name rq_blame
BLAME_ID=$(map_id rq_blame)
exec 9<"$PIN_DIR"
flock -x 9 # this shell is "another qoslet" now
rc=0
cli "$TMP/busy.err" || rc=$?
[ "$rc" != 0 ] || fail "runqlat loaded while the pins it must change were locked"
[ "$rc" -lt 128 ] || fail "runqlat died of a signal: $(cat "$TMP/busy.err")"
grep -qF "rq_blame: key layout without BTF, now {victim:u8@0,culprit:u8@64}16, but another qoslet process is attached to the pins in $PIN_DIR" \
	"$TMP/busy.err" || fail "no word of the lock: $(cat "$TMP/busy.err")"
assert_eq "$(map_id rq_blame)" "$BLAME_ID" "rq_blame left alone while locked"
exec 9<&- # unlocks
cli "$TMP/free.err" || fail "runqlat after the lock was released failed: $(cat "$TMP/free.err")"
[ "$(map_id rq_blame)" != "$BLAME_ID" ] || fail "rq_blame was not replaced once unlocked"
grep -qF "rq_blame: key layout without BTF, now" "$TMP/free.err" ||
	fail "no word of the missing BTF: $(cat "$TMP/free.err")"

# ---- 5. damaged metadata ----
# Without it every pin counts as of revision 1: the maps of revision 1 are
# kept, rq_alerts (revision 2) is replaced.
ids_rev1() {
	ids | sed 's/qoslet_layout [0-9]* //; s/rq_alerts [0-9]* //'
}
before=$(ids_rev1)
ALERTS_ID=$(map_id rq_alerts)
rm "$PIN_DIR/qoslet_layout"
mkdir "$PIN_DIR/qoslet_layout"
cli "$TMP/meta.err" || fail "runqlat over damaged metadata failed: $(cat "$TMP/meta.err")"
grep -qF "qoslet_layout: it is a directory: replaced" "$TMP/meta.err" ||
	fail "no word of the damaged metadata: $(cat "$TMP/meta.err")"
assert_eq "$(ids_rev1)" "$before" "every map of revision 1 kept"
grep -qF "rq_alerts: revision 1, now 2: replaced" "$TMP/meta.err" ||
	fail "no word of rq_alerts' revision: $(cat "$TMP/meta.err")"
[ "$(map_id rq_alerts)" != "$ALERTS_ID" ] || fail "rq_alerts of unknown revision was kept"
assert_json "$(map_json qoslet_layout)" '.type == "hash" and .bytes_key == 16 and .bytes_value == 32' \
	"the metadata is a map again"
assert_modes "at the end"

log "all pin upgrade checks passed"
