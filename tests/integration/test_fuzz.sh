#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Fuzzing in CI (docs/fuzzing.md). Builds the libFuzzer targets (make fuzz-build),
# then for each target in tests/fuzz/:
#   1. replays every committed input, the seed corpus (tests/fuzz/corpus/T/)
#      and the crash reproducers (tests/fuzz/crashes/T/), as regression tests;
#   2. fuzzes it for FUZZ_SECONDS (default 2: CI; make test-long: 120)
#      starting from those inputs.
# A crash, a sanitizer finding (ASan, UBSan, LeakSanitizer), a failed
# FUZZ_CHECK or one input taking over FUZZ_TIMEOUT seconds (default 5) fails
# the test, which prints the input (libFuzzer's Base64 line) and keeps it in
# the kept temp dir with QOSLET_TEST_KEEP=1. New inputs a run finds are
# thrown away: CI never changes the tree.
#
# Environment: FUZZ_SECONDS, FUZZ_TIMEOUT, FUZZ_TARGETS (space-separated
# names such as "http kube", default all).
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

FUZZ_SECONDS=${FUZZ_SECONDS:-2}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-5}
FUZZ_DIR=$QOSLET_ROOT/tests/fuzz
BIN_DIR=$QOSLET_ROOT/build/fuzz

require_cmds clang make

TMP=$(mktemp -d "/tmp/qoslet-$TEST_NAME.XXXXXX")
cleanup() {
	local rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "${QOSLET_TEST_KEEP:-}" ]; then
		echo "# kept $TMP" >&2
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap cleanup EXIT

# libFuzzer comes with clang's runtime libraries (Debian: libclang-rt-14-dev).
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' >"$TMP/probe.c"
clang -fsanitize=fuzzer "$TMP/probe.c" -o "$TMP/probe" 2>"$TMP/probe.err" ||
	skip "clang cannot link libFuzzer (-fsanitize=fuzzer; scripts/deps.sh installs libclang-rt-14-dev): $(head -n 1 "$TMP/probe.err")"

# A make of its own: not a sub-make of `make test`'s jobserver.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$QOSLET_ROOT" -j"$(nproc)" fuzz-build >"$TMP/build.log" 2>&1 ||
	fail "make fuzz-build failed: $(tail -n 20 "$TMP/build.log")"

if [ -n "${FUZZ_TARGETS:-}" ]; then
	read -r -a targets <<<"$FUZZ_TARGETS"
else
	targets=()
	for src in "$FUZZ_DIR"/fuzz_*.c; do
		name=$(basename "$src" .c)
		targets+=("${name#fuzz_}")
	done
fi
[ "${#targets[@]}" -gt 0 ] || fail "no fuzz targets in $FUZZ_DIR"

# Input size bound per target: past the HTTP server's 16 KiB header limit, and
# room for a recording's config header and a few ticks.
max_len() {
	case $1 in
	http) echo 20000 ;;
	record) echo 16384 ;;
	*) echo 8192 ;;
	esac
}

# The end of a failed run's report: the finding, its stack and the input.
report() {
	grep -aE -A 14 'ERROR: |runtime error|fuzz check failed|SUMMARY' "$1" | head -n 40
	grep -a -m 1 '^Base64: ' "$1" || true
}

for t in "${targets[@]}"; do
	bin=$BIN_DIR/fuzz_$t
	[ -x "$bin" ] || fail "$bin was not built (is there a tests/fuzz/fuzz_$t.c?)"
	[ -d "$FUZZ_DIR/corpus/$t" ] || fail "fuzz_$t has no seed corpus ($FUZZ_DIR/corpus/$t)"
	seeds=("$FUZZ_DIR/corpus/$t")
	[ -d "$FUZZ_DIR/crashes/$t" ] && seeds+=("$FUZZ_DIR/crashes/$t")

	# Files, not directories: libFuzzer then runs each input whole and once.
	mapfile -t inputs < <(find "${seeds[@]}" -type f | sort)
	"$bin" -timeout="$FUZZ_TIMEOUT" "${inputs[@]}" >"$TMP/$t.replay.log" 2>&1 ||
		fail "fuzz_$t fails on a committed input:
$(grep -a '^Running: ' "$TMP/$t.replay.log" | tail -n 1)
$(report "$TMP/$t.replay.log")"
	log "ok: fuzz_$t passes its ${#inputs[@]} committed inputs"

	mkdir "$TMP/$t"
	"$bin" -max_total_time="$FUZZ_SECONDS" -max_len="$(max_len "$t")" -timeout="$FUZZ_TIMEOUT" \
		-print_final_stats=1 -artifact_prefix="$TMP/$t-" "$TMP/$t" "${seeds[@]}" \
		>"$TMP/$t.log" 2>&1 ||
		fail "fuzz_$t found a failing input (docs/fuzzing.md: add it to tests/fuzz/crashes/$t/):
$(report "$TMP/$t.log")"
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/$t.log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$TMP/$t.log")
	found=$(sed -n 's/^stat::new_units_added: *//p' "$TMP/$t.log")
	log "ok: fuzz_$t ran ${FUZZ_SECONDS}s: $runs inputs ($rate/s), $found new coverage inputs, no failure"
done
