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
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require_cmds bpftool jq
require_binaries
test_setup

bpftool btf dump file /sys/kernel/btf/vmlinux >"$TMP/btf" # not piped: grep -q would cut it short
if grep -q "STRUCT 'bpf_mem_alloc' " "$TMP/btf"; then
	allocator=yes percpu=percpu_hash flags=1
else
	allocator=no percpu=hash flags=0
fi
log "the kernel's BTF has struct bpf_mem_alloc: $allocator"

qoslet_bg "$TMP/top.out" "$TMP/top.err" top -j -v --pin-dir "$PIN_DIR" 0.5 6
wait_pinned 60 "$QOSLET_PID"
wait_lines "$TMP/top.out" 1 "$QOSLET_PID" 60

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
said=$(grep -c 'per-cgroup maps are preallocated' "$TMP/top.err" || true)
if [ "$allocator" = yes ]; then
	assert_eq "$said" 0 "no word of preallocation on a kernel with the allocator"
else
	assert_eq "$said" 1 "the view says once that the maps are preallocated"
fi
test_end
