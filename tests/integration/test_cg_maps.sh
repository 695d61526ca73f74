#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The per-cgroup maps take the layout the kernel is safe with
# (bpf/cg_maps.bpf.h): where the kernel has BPF's memory allocator (struct
# bpf_mem_alloc in its BTF, 6.1 on), rq_hist, cpi_usage and memstall_cg are
# per-CPU hashes that grow on demand and throttle_tg a hash that does;
# without it (5.10 in make test-kernels) all four are preallocated hashes
# shared by the CPUs, and the view says so once under -v. Before this, a
# 5.10 guest deadlocked with both CPUs on one run queue's lock while cgroups
# came and went. The answer is read from the kernel's BTF with bpftool, not
# from qoslet. What the shared maps count is held to the kernel's counters
# by the probes' own tests (test_pinning, test_blame_handover, test_memstall,
# test_cpi) on the same kernel.
#
# The stamps the shared sched_switch program makes likewise
# (bpf/task_storage.bpf.h): where the kernel makes task storage with BPF's
# allocator (struct bpf_local_storage_map has storage_ma, 6.4 on), the
# memstall step keeps its I/O-wait stamps in task storage on tp_btf, and
# its thread-id hash stays empty; before (5.10, 6.1 and 6.1-rt in make
# test-kernels), task storage made under the run-queue lock could deadlock,
# so the stamps go in that hash, on either hook. An O_DIRECT writer on a
# disk makes the I/O-wait sleeps while the view runs.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require_cmds bpftool jq dd
require_binaries
test_setup
disk_tmp

if kernel_has_struct bpf_mem_alloc; then
	allocator=yes percpu=percpu_hash flags=1
else
	allocator=no percpu=hash flags=0
fi
log "the kernel's BTF has struct bpf_mem_alloc: $allocator"
bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$TMP/btf.h"
storage=$(awk '/^struct bpf_local_storage_map \{/, /^\};/' "$TMP/btf.h" | grep -c 'storage_ma;' || true)
log "the kernel's struct bpf_local_storage_map has storage_ma: $storage"

# I/O-wait sleeps: direct writes wait for the disk in io_schedule().
# shellcheck disable=SC2016 # $1 is the inner shell's
timeout "$(load_lifetime_s)" sh -c 'while dd if=/dev/zero of="$1/f" bs=64k count=32 oflag=direct status=none; do :; done' \
	sh "$DISK_TMP" &
BG_PIDS+=("$!")
# Long enough for every reading below under TCG too; stopped at the end.
qoslet_bg "$TMP/top.out" "$TMP/top.err" top -j -v --pin-dir "$PIN_DIR" 0.5 $(($(time_bound_ms 60000) / 500))
wait_pinned 60 "$QOSLET_PID"
wait_lines "$TMP/top.out" 2 "$QOSLET_PID" 60

# map_layout NAME: "type flags" of the pinned map NAME.
map_layout() {
	bpftool -j map show pinned "$PIN_DIR/$1" | jq -r '"\(.type) \(.flags)"'
}
for m in rq_hist cpi_usage memstall_cg; do
	[ -e "$PIN_DIR/$m" ] || fail "$m is not pinned: $(tail -n 5 "$TMP/top.err")"
	assert_eq "$(map_layout "$m")" "$percpu $flags" "$m's type and flags"
done
if [ -e "$PIN_DIR/throttle_tg" ]; then
	assert_eq "$(map_layout throttle_tg)" "hash $flags" "throttle_tg's type and flags"
else
	skip_part "throttle_tg: the throttle probe took no map here: $(grep -m1 'throttle' "$TMP/top.err" || echo '(said nothing)')"
fi
# The memstall step's thread-id hash, among the maps the view holds (it is
# not pinned; each BPF map fd's fdinfo names its map id).
memstall=$(jq -r -s '.[-1].probes.memstall.detail' "$TMP/top.out")
kill -0 "$QOSLET_PID" 2>/dev/null || fail "the view exited before its maps were read: $(tail -n 3 "$TMP/top.err")"
held=$(for f in /proc/"$QOSLET_PID"/fdinfo/*; do sed -n 's/^map_id:[[:space:]]*//p' "$f" 2>/dev/null || true; done | jq -s -c .)
tid_map=$(bpftool -j map show | jq --argjson held "$held" \
	'[.[] | select(.name == "stall_stamp_tid" and (.id | IN($held[])))][0].id // empty')
if [[ $memstall != *"PSI inputs"* ]]; then
	skip_part "the stamps' home: the memstall probe traces no PSI inputs here ($memstall)"
elif [ -z "$tid_map" ]; then
	fail "no stall_stamp_tid map held by the view (pid $QOSLET_PID, map ids $held)"
else
	n=$(bpftool -j map dump id "$tid_map" | jq length)
	log "memstall: $memstall; stall_stamp_tid holds $n threads"
	if [ "$storage" = 1 ] && [[ $memstall == tp_btf* ]]; then
		assert_eq "$n" 0 "tp_btf with task storage made safely: the thread-id hash unused"
	elif [ "$storage" = 1 ]; then
		skip_part "the stamps' home: memstall fell back to $memstall, which keeps its stamps in the hash anyway"
	else
		[ "$n" -gt 0 ] || fail "no thread in stall_stamp_tid: the I/O-wait stamps went elsewhere ($memstall)"
		log "ok: the I/O-wait stamps are in the thread-id hash ($n threads)"
	fi
fi
said=$(grep -c 'per-cgroup maps are preallocated' "$TMP/top.err" || true)
if [ "$allocator" = yes ]; then
	assert_eq "$said" 0 "no word of preallocation on a kernel with the allocator"
else
	assert_eq "$said" 1 "the view says once that the maps are preallocated"
fi
test_end
