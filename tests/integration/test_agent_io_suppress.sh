#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# I/O suppression with real disk I/O (docs/agent-policies.md, "I/O
# suppression"). Data under /var/tmp (disk-backed; a skip where it is not),
# removed at exit. The test's parent exists in every hierarchy the agent
# needs, blkio (v1) included; on v2 the io controller is enabled below it.
#   - An LS pod (CPU 0) reads a 512 MiB file at random, 4 KiB at a time,
#     with O_DIRECT: every read waits for the disk (an I/O stall).
#   - A BE pod (CPU 1) streams a 2 GiB file with 1 MiB O_DIRECT reads from
#     the same disk, as fast as the disk goes.
#   - The agent starts once the BE pod has streamed a while (the LS
#     latency with the BE pod unthrottled is measured first). Then:
#       the agent says once what I/O suppression does on this host;
#       an interference.io report names the LS pod as the victim and the
#       BE pod as the culprit;
#       the BE pod's read throttle on the disk is written (v1
#       blkio.throttle.read_bps_device, v2 io.max rbps: rule
#       io_suppress.limit, applied) and stepped down while it stays
#       guilty, never below the floor; the kernel's own counter of the BE
#       pod's bytes (v1 blkio.throttle.io_service_bytes, v2 io.stat
#       rbytes) grows at most at the throttle;
#       the LS pod's read latency (fileload's p99 per second, median over
#       the seconds) is lower than with the BE pod unthrottled, its p50 no
#       worse (within 25%); unless other users of the disk moved more than twice the
#       BE pod's throttle meanwhile (then that part is a skip, said why);
#       nothing is written on the LS pod;
#       on stop the BE pod's throttle is the owner's again (none);
#       a replay of the recording gives the live decisions.
# Under TCG emulation (the v2 VMs) everything but the latency runs: the
# detection, io.max written, stepped, obeyed by the kernel and restored;
# disk latency under emulation says nothing about the disk.
# jq filters are single-quoted; agent_start takes its own options.
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq taskset findmnt lsblk
require_binaries
require_fileload
MIB=$((1024 * 1024))
# The reads are O_DIRECT (no page cache): the files' sizes only spread them
# over the disk; under TCG the guest writes them 10-30 times slower.
if [ "${QOSLET_VM:-}" = tcg ]; then LS_MIB=128 STREAM_MIB=512; else LS_MIB=512 STREAM_MIB=2048; fi
FLOOR_MIB_S=10
UNTHROTTLED_S=8                     # the BE pod streams this long before the agent starts
LOAD_S=$((3 * $(load_lifetime_s)))  # the loads end by themselves even if cleanup never runs
WAIT_S=$(($(time_bound_ms 60000) / 1000)) # the agent's decisions: 60 s, scaled under TCG
test_setup
agent_setup
disk_tmp
P=${TEST_PARENT_REL#/}

# The block I/O controller below the test's parent, as for the others.
if cg_is_v2; then
	grep -qw io "$TEST_PARENT/cgroup.controllers" ||
		skip "the io controller is not available below $CG_ROOT"
	echo "+io" >"$TEST_PARENT/cgroup.subtree_control" || skip "cannot enable io below $TEST_PARENT"
	KNOB=io.max
else
	BLKIO=$(v1_mount blkio)
	[ -n "$BLKIO" ] || skip "no v1 blkio hierarchy and no cgroup v2: no block I/O controller"
	mkdir "$BLKIO$TEST_PARENT_REL" || fail "cannot create $BLKIO$TEST_PARENT_REL"
	EXTRA_PARENTS+=("$BLKIO$TEST_PARENT_REL")
	AGENT_CTRLS+=("$BLKIO")
	KNOB=blkio.throttle.read_bps_device
fi

# A shared host's other tenants compete for the CPUs: the LS reader, woken
# by each read's completion, must not wait a time slice for its CPU (that
# would be measured as read latency), so the test's cgroups weigh more.
cg_weight "$TEST_PARENT" 102400
ls_cg=$(agent_cgroup ls)
be_cg=$(agent_cgroup be)
cg_weight "$ls_cg" 10240
io_of() { agent_cg_in "$1" blkio; }
[ -e "$(io_of "$be_cg")/$KNOB" ] || skip "$KNOB is missing: a kernel without CONFIG_BLK_DEV_THROTTLING"

src=$(findmnt -n -o SOURCE --target "$DISK_TMP")
disk=$(lsblk -ndo PKNAME "$src" 2>/dev/null || true)
[ -n "$disk" ] || disk=$(basename "$src")
DEV=$(cat "/sys/block/$disk/dev") || fail "no device number for $src ($disk)"
log "the data is on $src: disk $disk ($DEV), scheduler $(cat "/sys/block/$disk/queue/scheduler" 2>/dev/null)"
be_orig=$(cat "$(io_of "$be_cg")/$KNOB")

"$FILELOAD" make "$DISK_TMP/ls" "$LS_MIB" || fail "cannot write $DISK_TMP/ls"
"$FILELOAD" make "$DISK_TMP/stream" "$STREAM_MIB" || fail "cannot write $DISK_TMP/stream"

# The kernel's count of the bytes cgroup $1 read from the disk.
io_read_bytes() {
	local f
	if cg_is_v2; then
		f=$(io_of "$1")/io.stat
		awk -v d="$DEV" '$1 == d { for (i = 2; i <= NF; i++) if ($i ~ /^rbytes=/) { sub(/rbytes=/, "", $i); print $i; exit } }' "$f"
	else
		f=$(io_of "$1")/blkio.throttle.io_service_bytes
		awk -v d="$DEV" '$1 == d && $2 == "Read" { print $3; exit }' "$f"
	fi
}
now_s() { date +%s.%N; }
# Bytes the whole disk read and wrote (its stat's sectors), every user's.
disk_bytes() { awk '{ printf "%.0f\n", ($3 + $7) * 512 }' "/sys/block/$disk/stat"; }

agent_config '{'"$AGENT_POLICIES_OFF"', "classes": [{"glob": "'"$P"'/ls", "class": "LS"}, {"glob": "'"$P"'/be", "class": "BE"}],
	"memory_suppress": {"enabled": false},
	"io_suppress": {"enabled": true, "floor_mib_s": '"$FLOOR_MIB_S"', "well_s": 600}}'

# The LS pod alone for a few seconds, then the BE pod streams.
LS_OUT=$TMP/ls.json
_cg_exec "$ls_cg" taskset -c 0 "$FILELOAD" rand -d -j "$DISK_TMP/ls" "$LOAD_S" >"$LS_OUT" 2>&1 &
LS_PID=$!
BG_PIDS+=("$LS_PID")
sleep 4
agent_run "$be_cg" "$(($(nproc) > 1))" "$FILELOAD" stream -d -j "$DISK_TMP/stream" "$LOAD_S"
BE_PID=$CG_PID
t_be=$(now_s)
sleep "$UNTHROTTLED_S"
agent_start --record "$TMP/rec.jsonl"

if cg_is_v2; then
	said="I/O suppression: stepping io.max rbps and wbps"
else
	said="I/O suppression: stepping blkio.throttle.read_bps_device and blkio.throttle.write_bps_device"
fi
assert_eq "$(grep -c -F "$said" "$AGENT_ERR")" 1 "the agent says once: $said"

rep='.rule == "interference.io" and .target.cgroup == "/'"$P"'/ls"'
d=$(wait_decision "$rep" "$WAIT_S") || fail "no interference.io report on the LS pod within $WAIT_S s: $(tail -n 3 "$AGENT_ERR")"
assert_eq "$(jget "$d" .related.cgroup)" "/$P/be" "the I/O breach names the BE pod"
log "breach: $(jget "$d" .cause), the LS pod's I/O stall share $(jget "$d" .evidence.stall_share)"

sup='.kind == "io_rbps" and .rule == "io_suppress.limit" and .target.cgroup == "/'"$P"'/be"'
d=$(wait_decision "$sup" "$WAIT_S") || fail "no throttle on the BE pod within $WAIT_S s: $(tail -n 3 "$AGENT_ERR")"
t_first=$(now_s)
assert_eq "$(jget "$d" .outcome)" applied "the first throttle is applied"
assert_eq "$(jget "$d" .related.cgroup)" "/$P/ls" "its victim is the LS pod"
log "first throttle: \"$(jget "$d" .before)\" -> \"$(jget "$d" .after)\" from a measured $(jget "$d" .evidence.rate_bps) B/s"
assert_eq "$(jget "$d" .after | cut -d' ' -f1)" "$DEV" "on the disk the BE pod reads ($DEV)"

# Cut by half the gap to the floor per guilty tick, until the floor or until
# the BE pod is no longer guilty (its share of the bytes under
# culprit_min_share: the LS reader, fast again, does most of the I/O, and
# the bios the throttle holds back count to the kernel's worker): settled
# once no cut came for 3 s (30 s under TCG, whose agent ticks lag).
floor=$((FLOOR_MIB_S * MIB))
first=$(jget "$d" .value)
settle_s=$(($(time_bound_ms 3000) / 1000))
n0=-1
for _ in $(seq 1 30); do
	sleep "$settle_s"
	n=$(decisions "$sup" | jq length)
	[ "$n" = "$n0" ] && break
	n0=$n
	kill -0 "$BE_PID" 2>/dev/null || fail "the BE streamer exited"
done
assert_eq "$n" "$n0" "the BE pod's throttle settles within $((30 * settle_s)) s"
v=$(decisions "$sup" | jq '.[-1].value')
assert_cmp "$v" "<" "$first" "the throttle was cut again after the first cut"
assert_cmp "$v" ">=" "$floor" "and never below the floor ($FLOOR_MIB_S MiB/s)"
log "BE throttle on $KNOB after $n cuts: $(cat "$(io_of "$be_cg")/$KNOB") (floor $floor)"
t_floor=$(now_s)
sleep 1
b0=$(io_read_bytes "$be_cg") d0=$(disk_bytes) t0=$(now_s)
sleep 8
b1=$(io_read_bytes "$be_cg") d1=$(disk_bytes) t1=$(now_s)
rate=$(awk -v a="$b0" -v b="$b1" -v x="$t0" -v y="$t1" 'BEGIN { printf "%.0f", (b - a) / (y - x) }')
log "the kernel's count of the BE pod's reads: $((rate / 1024)) KiB/s under a $((v / 1024)) KiB/s throttle"
assert_cmp "$rate" "<=" $((v * 12 / 10)) "the BE pod reads at most at its throttle (the kernel's counter)"
assert_cmp "$rate" ">" 0 "and still reads"

# Nothing on the LS pod.
w=$(decisions '.target.cgroup == "/'"$P"'/ls" and .kind != "report"')
assert_eq "$(echo "$w" | jq length)" 0 "no write on the LS pod: $w"

agent_stop
assert_eq "$(cat "$(io_of "$be_cg")/$KNOB")" "$be_orig" "on stop the BE pod's $KNOB is the owner's again"
assert_replay "$TMP/rec.jsonl"

# The LS latency, per second of its run: alone, with the BE pod unthrottled
# (from the BE start to the agent's first throttle), throttled. SIGTERM
# ends fileload's run with its report.
kill -TERM "$LS_PID" "$BE_PID" 2>/dev/null || true
wait "$LS_PID" 2>/dev/null || true
jq -e .p99_per_s_us "$LS_OUT" >/dev/null || fail "no report from the LS reader: $(head -c 300 "$LS_OUT")"
t_ls=$(jq '.start_ns / 1e9' "$LS_OUT")
# The median over [from, to) seconds since the reader started of its
# per-second percentile $3 (p50, p99). The BE stream's queue shows most in
# the LS reader's tail (the p99, judged); its p50 must not be worse.
window() {
	jq --argjson a "$1" --argjson b "$2" '[.'"$3"'_per_s_us[$a:$b][] | select(. > 0)] | sort | .[length / 2 | floor]' "$LS_OUT"
}
sec() { awk -v a="$t_ls" -v b="$1" 'BEGIN { printf "%d", b - a }'; }
for p in p50 p99; do
	alone=$(window 1 "$(sec "$t_be")" $p)
	unthrottled=$(window "$(($(sec "$t_be") + 1))" "$(sec "$t_first")" $p)
	throttled=$(window "$(($(sec "$t_floor") + 1))" "$(sec "$t1")" $p)
	log "LS $p read latency, median of its seconds: alone ${alone} us, BE unthrottled ${unthrottled} us, BE throttled ${throttled} us"
done
log "LS reads over the run: $(jq -c .latency_us "$LS_OUT") us"
p50_unthrottled=$(window "$(($(sec "$t_be") + 1))" "$(sec "$t_first")" p50)
p50_throttled=$(window "$(($(sec "$t_floor") + 1))" "$(sec "$t1")" p50)
p99_unthrottled=$(window "$(($(sec "$t_be") + 1))" "$(sec "$t_first")" p99)
p99_throttled=$(window "$(($(sec "$t_floor") + 1))" "$(sec "$t1")" p99)
# The disk's other users while the BE pod was throttled: the disk's bytes
# less the BE pod's (the kernel's counter) and the LS reader's (4 KiB a read).
ls_bytes=$(jq --argjson a "$(sec "$t0")" --argjson b "$(sec "$t1")" '[.reads_per_s[$a:$b][]] | add * 4096' "$LS_OUT")
others=$(awk -v d="$((d1 - d0))" -v b="$((b1 - b0))" -v l="$ls_bytes" -v x="$t0" -v y="$t1" \
	'BEGIN { o = (d - b - l) / (y - x); printf "%.0f", o < 0 ? 0 : o }')
log "the disk's other users while the BE pod was throttled: $((others / 1024)) KiB/s"
if [ "${QOSLET_VM:-}" = tcg ]; then
	skip_part "the LS latency against the BE pod's throttle: under TCG emulation disk latency says nothing about the disk (LS p99 ${p99_throttled} us throttled, ${p99_unthrottled} us unthrottled)"
elif [ "$others" -gt $((2 * v)) ]; then
	skip_part "the LS latency against the BE pod's throttle: other users of $disk moved $((others / MIB)) MiB/s meanwhile, more than the BE pod's throttle twice over (LS p99 ${p99_throttled} us throttled, ${p99_unthrottled} us unthrottled)"
else
	assert_cmp "$p99_throttled" "<" "$p99_unthrottled" "the LS pod's reads are faster once the BE pod is throttled (p99)"
	# The p50 is the disk's own service time on either side (tens of us): a
	# shared disk's other users move it by 10% (77.8 against 74.4 us once).
	assert_cmp "$p50_throttled" "<=" "$(awk -v x="$p50_unthrottled" 'BEGIN { print x * 1.25 }')" \
		"and its p50 is no worse (within 25%)"
fi
test_end
