#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The cut-down kernel BTF the CLI views load through (user/probes/btf_small.h,
# docs/qoslet-cli.md, KERNEL BTF):
#  1. With no copy, `qoslet top -j` writes one for this boot and these objects
#     (mode 0600, in a directory of mode 0700) and loads tp_btf programs
#     through it: the copy carries their attach ids (btf_attach.h), so no
#     process parses the full BTF for them.
#  2. Every raw_tp and tp_btf program of every BPF object relocates to the
#     same instructions against the copy as against the kernel's full BTF,
#     and the attach id the copy gives each tp_btf, fentry and fexit target
#     is the kernel's (the btfcheck helper: libbpf's own relocations and the
#     kernel's BTF, compared one by one).
#  3. The probes come out as with the full BTF: where no copy can be written,
#     `top -j` reports the same path for every probe.
#  4. A copy others could have written (mode 0666) is not used but made again.
#  5. --hook raw_tp still loads raw_tp programs.
# shellcheck disable=SC2016 # jq filters are single-quoted
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

BTFCHECK=${BTFCHECK:-$QOSLET_ROOT/build/tests/helpers/btfcheck}

require_root
require_cmds jq
require_binaries
[ -x "$BTFCHECK" ] || fail "$BTFCHECK is missing: run make $BTFCHECK"
[ -r /sys/kernel/btf/vmlinux ] || skip "no kernel BTF (/sys/kernel/btf/vmlinux)"
test_setup # QOSLET_BTF_DIR=$TMP/btf

# top_probes OUT ARGS...: one `top -j` report's probes, as {name: detail}.
top_probes() {
	local out=$1 rc=0
	shift
	timeout -k 5 60 "$QOSLET" top -j --pin-dir "$PIN_DIR" "$@" 1 1 >"$TMP/$out.json" 2>"$TMP/$out.err" || rc=$?
	[ "$rc" = 0 ] || fail "top -j $* exited $rc: $(tail -n 3 "$TMP/$out.err")"
	jq -c '.probes | map_values(.detail)' "$TMP/$out.json"
}

# ---- 1: written, then used ----
first=$(top_probes first)
copies=("$QOSLET_BTF_DIR"/vmlinux-*.btf)
assert_eq "${#copies[@]}" 1 "one cut-down copy written"
copy=${copies[0]}
[ -f "$copy" ] || fail "no cut-down copy in $QOSLET_BTF_DIR: $(tail -n 3 "$TMP/first.err")"
assert_eq "$(stat -c %a "$QOSLET_BTF_DIR")" 700 "the directory is the owner's alone"
assert_eq "$(stat -c %a "$copy")" 600 "the copy is the owner's alone"
log "copy: $copy, $(stat -c %s "$copy") bytes (the kernel's: $(stat -c %s /sys/kernel/btf/vmlinux))"
assert_cmp "$(stat -c %s "$copy")" "<" "$(($(stat -c %s /sys/kernel/btf/vmlinux) / 10))" \
	"the copy is under a tenth of the kernel's BTF (bytes)"
assert_json "$first" '.sched | startswith("tp_btf")' "the first view loads tp_btf programs"
grep -q 'attach ids\|did not load' "$TMP/first.err" &&
	fail "the copy's attach ids did not serve: $(grep 'attach ids\|did not load' "$TMP/first.err" | head -n 2)"
second=$(top_probes second)
assert_eq "$second" "$first" "a second view loads the same probes through the copy"

# ---- 2: the same relocations ----
"$BTFCHECK" "$copy" "$QOSLET_ROOT"/build/bpf/*.bpf.o >"$TMP/btfcheck.out" 2>&1 ||
	fail "relocations differ: $(grep -v '^same' "$TMP/btfcheck.out" | head -n 5)"
log "$(tail -n 1 "$TMP/btfcheck.out")"
assert_cmp "$(grep -c '^same.*instructions' "$TMP/btfcheck.out")" ">=" 10 "raw_tp and tp_btf programs compared"
assert_cmp "$(grep -c '^same.*attach id' "$TMP/btfcheck.out")" ">=" 10 "attach ids compared"

# ---- 3: the probes as with the full BTF ----
touch "$TMP/not-a-dir"
full=$(QOSLET_BTF_DIR=$TMP/not-a-dir/btf top_probes full)
assert_eq "$first" "$full" "every probe's path as with the full kernel BTF"

# ---- 4: a copy others could have written ----
chmod 666 "$copy"
top_probes again >/dev/null
assert_eq "$(stat -c %a "$copy")" 600 "a copy of mode 0666 is made again, 0600"

# ---- 5: raw_tp when asked ----
raw=$(top_probes raw_tp --hook raw_tp)
assert_json "$raw" '.sched | startswith("raw_tp")' "--hook raw_tp loads raw_tp programs"
test_end
