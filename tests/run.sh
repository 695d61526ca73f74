#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/run.sh MODE [UNIT-BINARY...]
#
# MODE is unit, integration or all. Runs every given cmocka unit binary
# (unit, all), then every tests/integration/test_*.sh (integration, all).
# Prints one line per test and ends with exactly one summary line
# "N passed, N failed, N skipped"; exits 1 when anything failed.
#
# Unit binaries: counts come from cmocka's summary lines; a binary that
# crashes, times out or prints no summary counts as one more failure.
# Integration scripts: exit 0 = pass, 77 = skip (the script's "SKIP: reason"
# line is repeated), anything else = fail (the script's output is shown). A
# script during which the kernel took a new taint flag (a warning, an oops, a
# lockup: /proc/sys/kernel/tainted) fails whatever its status, with the kernel
# log's tail.
#
# Environment: UNIT_TIMEOUT (s, default 60), INTEGRATION_TIMEOUT (s, default
# 300), TESTS (space-separated integration test names to run, default all),
# VERBOSE=1 (show every script's output), SKIP_FILES (space-separated files of
# lines "test_name reason": those integration tests are skipped, the reason
# printed; lines starting with # are comments), SANITIZER_LOGS=DIR
# (the binaries are built with ASan and UBSan, `make asan`: each test runs
# with the sanitizers' options and writes its reports below DIR/<test>/; any
# report fails the test, whatever its exit status).
set -uo pipefail

# Absolute before the cd: the tests' processes run in other directories.
[ -z "${SANITIZER_LOGS:-}" ] || SANITIZER_LOGS=$(realpath -m "$SANITIZER_LOGS")
cd "$(dirname "$0")/.." || exit 2

UNIT_TIMEOUT=${UNIT_TIMEOUT:-60}
INTEGRATION_TIMEOUT=${INTEGRATION_TIMEOUT:-300}
passed=0
failed=0
skipped=0

usage() {
	echo "usage: tests/run.sh unit|integration|all [UNIT-BINARY...]" >&2
	exit 2
}

[ $# -ge 1 ] || usage
mode=$1
shift
case $mode in
unit | integration | all) ;;
*) usage ;;
esac

indent() {
	sed 's/^/    /'
}

# ---- sanitizers ---------------------------------------------------------------

# The caller's own options come after ours, so they win (the last one set
# counts); log_path comes last, so reports always land where we look.
ASAN_OPTIONS_CALLER=${ASAN_OPTIONS:-}
UBSAN_OPTIONS_CALLER=${UBSAN_OPTIONS:-}

# Each process writes its reports to a file of its own (log_path gets
# ".<pid>" appended), not to a stderr the test may discard: an agent run in
# the background, whose exit status no test looks at, is caught as well.
sanitizer_setup() {
	local dir=$SANITIZER_LOGS/$1
	rm -rf "$dir"
	mkdir -p "$dir"
	export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1${ASAN_OPTIONS_CALLER:+:$ASAN_OPTIONS_CALLER}:log_path=$dir/san"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS_CALLER:+:$UBSAN_OPTIONS_CALLER}:log_path=$dir/san"
}

# Prints the head of every report test $1 left; true when there was one.
sanitizer_reports() {
	local f found=1
	for f in "$SANITIZER_LOGS/$1"/*; do
		[ -s "$f" ] || continue
		echo "sanitizer report $f:"
		head -n 40 "$f"
		found=0
	done
	return "$found"
}

# The reason SKIP_FILES give for skipping integration test $1, if any.
skip_reason() {
	[ -n "${SKIP_FILES:-}" ] || return 0
	# shellcheck disable=SC2086 # a list of files
	awk -v t="$1" '$1 == t { sub(/^[^ \t]+[ \t]+/, ""); print; exit }' $SKIP_FILES
}

# ---- unit ---------------------------------------------------------------------

run_unit() {
	local bin=$1 name out res rc p f s crashed=0
	name=${bin#build/}
	out=$(mktemp)
	res=$(mktemp)
	[ -z "${SANITIZER_LOGS:-}" ] || sanitizer_setup "$(basename "$bin")"
	# Plain-text output whatever the environment says; line-buffered so that a
	# crash loses nothing. The braces keep bash's "Aborted" notice quiet.
	{ CMOCKA_MESSAGE_OUTPUT=stdout timeout -k 5 "$UNIT_TIMEOUT" \
		stdbuf -oL -eL "$bin" >"$out" 2>&1; } 2>/dev/null
	rc=$?

	# Per-test results: the status line that follows each "[ RUN      ] X".
	awk -v bin="$name" '
		/^\[ RUN      \] / { cur = substr($0, 14); next }
		cur != "" && /^\[       OK \] / && substr($0, 14) == cur {
			printf "PASS  %s: %s\n", bin, cur; cur = ""; next }
		cur != "" && /^\[  FAILED  \] / && substr($0, 14) == cur {
			printf "FAIL  %s: %s\n", bin, cur; cur = ""; next }
		cur != "" && /^\[  SKIPPED \] / && substr($0, 14) == cur {
			printf "SKIP  %s: %s\n", bin, cur; cur = ""; next }
		END { if (cur != "") printf "FAIL  %s: %s (did not finish)\n", bin, cur }
	' "$out" | tee "$res"

	# Totals: the summary lines of every group in the binary.
	p=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) test\(s\)\..*/\1/p' "$out" | awk '{ n += $1 } END { print n + 0 }')
	f=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) test\(s\), listed below:.*/\1/p' "$out" | awk '{ n += $1 } END { print n + 0 }')
	s=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) test\(s\).*/\1/p' "$out" | awk '{ n += $1 } END { print n + 0 }')

	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "FAIL  $name: timed out after ${UNIT_TIMEOUT}s"
		crashed=1
	elif [ "$rc" -ge 128 ]; then
		echo "FAIL  $name: killed by signal $((rc - 128))"
		crashed=1
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAIL  $name: exit status $rc without a failed test"
		crashed=1
	elif [ "$(grep -cE '^\[==========\] Running [0-9]+ test' "$out")" != \
		"$(grep -cE '^\[==========\] [0-9]+ test\(s\) run\.' "$out")" ] ||
		! grep -qE '^\[==========\] [0-9]+ test\(s\) run\.' "$out"; then
		echo "FAIL  $name: no cmocka summary (exit status $rc)"
		crashed=1
	fi
	if [ "$crashed" = 1 ]; then
		# The summary may be missing: count the tests that did report, and
		# the crash as one failure unless a test is already failed for it.
		p=$(grep -c '^PASS ' "$res")
		s=$(grep -c '^SKIP ' "$res")
		f=$(grep -c '^FAIL ' "$res")
		grep -q '(did not finish)$' "$res" || f=$((f + 1))
	fi
	if [ "$crashed" = 1 ] || [ "$f" != 0 ]; then
		tail -n 40 "$out" | indent
	fi
	# A report after the last test (a leak at exit) fails the binary, once.
	if [ -n "${SANITIZER_LOGS:-}" ] && sanitizer_reports "$(basename "$bin")" >"$res"; then
		echo "FAIL  $name: sanitizer report"
		indent <"$res"
		[ "$f" != 0 ] || f=1
	fi
	echo "      $name: $p passed, $f failed, $s skipped"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	rm -f "$out" "$res"
}

# ---- integration ----------------------------------------------------------------

# The kernel's taint flags, a bit each (Documentation/admin-guide/tainted-kernels.rst).
taint_flags() {
	cat /proc/sys/kernel/tainted 2>/dev/null || echo 0
}

# The letters the kernel's own reports use for the bits of $1 (W: a warning).
taint_letters() {
	local letters=PFSRMBUDAWCIOELKXTNJ bits=$1 i out=""
	for ((i = 0; i < ${#letters}; i++)); do
		((bits >> i & 1)) && out+=${letters:i:1}
	done
	echo "${out:-?}"
}

# Removes what a killed script may have left: only names carrying our tag.
cleanup_leftovers() {
	local tag=$1 d
	# shellcheck source=tests/integration/lib.sh
	(
		. tests/integration/lib.sh
		root=$(detect_cgroup_root) || exit 0
		for d in "$root"/qoslet-test-"$tag"-*; do
			[ -d "$d" ] || continue
			echo "      removing leftover $d"
			cgroup_destroy "$d"
		done
		for d in /sys/fs/bpf/qoslet-test-"$tag"-*; do
			[ -e "$d" ] && rm -rf "$d"
		done
	)
}

run_integration() {
	local script=$1 name out rc start secs reason taint
	name=$(basename "$script" .sh)
	out=$(mktemp)
	[ -z "${SANITIZER_LOGS:-}" ] || sanitizer_setup "$name"
	taint=$(taint_flags)
	start=$(date +%s.%N)
	# timeout runs the script in its own process group, out of reach of the
	# terminal's ^C: run it in the background so the trap below can pass a
	# signal on (timeout forwards it to the script, whose trap cleans up).
	QOSLET_TEST_TAG=r$$-$name timeout -k 15 "$INTEGRATION_TIMEOUT" bash "$script" >"$out" 2>&1 </dev/null &
	child=$!
	rc=0
	wait "$child" || rc=$?
	while [ "$interrupted" = 1 ] && kill -0 "$child" 2>/dev/null; do
		rc=0
		wait "$child" || rc=$?
	done
	child=""
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	# A report fails the test even when it passed or skipped.
	if [ -n "${SANITIZER_LOGS:-}" ] && sanitizer_reports "$name" >>"$out"; then
		rc=sanitizer
	fi
	# fail() says FAIL and exits 1; a test that said it and still exited 0
	# lost the status in an exit trap of its own (test_agent_journal's did: a
	# VM run's failed part came out PASS): a failure all the same.
	if [ "$rc" = 0 ] && grep -q '^FAIL: ' "$out"; then
		rc=lost
	fi
	# A kernel warning is a bug even when every check passed (5.10's verifier
	# warns on a tracing program with an on-demand hash map and runs it).
	taint=$(($(taint_flags) & ~taint))
	if [ "$taint" != 0 ]; then
		{
			echo "FAIL: the kernel was tainted ($(taint_letters "$taint")) during the test; its log's tail:"
			dmesg 2>&1 | tail -n 40
		} >>"$out"
		case $rc in 0 | 77) rc=tainted ;; esac
	fi
	case $rc in
	0)
		echo "PASS  integration/$name (${secs}s)"
		passed=$((passed + 1))
		[ -n "${VERBOSE:-}" ] && indent <"$out"
		;;
	77)
		reason=$(sed -n 's/^SKIP: //p' "$out" | tail -n 1)
		echo "SKIP  integration/$name: ${reason:-no reason given}"
		skipped=$((skipped + 1))
		;;
	*)
		if [ "$rc" = sanitizer ]; then
			echo "FAIL  integration/$name: sanitizer report (${secs}s)"
		elif [ "$rc" = lost ]; then
			echo "FAIL  integration/$name: said FAIL but exited 0 (${secs}s)"
		elif [ "$rc" = tainted ]; then
			echo "FAIL  integration/$name: the kernel was tainted ($(taint_letters "$taint")) during the test (${secs}s)"
		elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			echo "FAIL  integration/$name: timed out after ${INTEGRATION_TIMEOUT}s"
		else
			echo "FAIL  integration/$name (exit status $rc, ${secs}s)"
		fi
		# The reason first: a reader shown only the first lines of a long
		# log (a CI excerpt) still sees why.
		grep -m 3 '^FAIL: ' "$out" | indent
		tail -n 60 "$out" | indent
		failed=$((failed + 1))
		;;
	esac
	cleanup_leftovers "r$$-$name"
	rm -f "$out"
}

if [ "$mode" != integration ]; then
	for bin in "$@"; do
		run_unit "$bin"
	done
fi

child=""
interrupted=0
on_signal() {
	interrupted=1
	[ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap on_signal INT TERM HUP

if [ "$mode" != unit ]; then
	# A flag already set cannot be seen set again.
	taint=$(taint_flags)
	[ "$taint" = 0 ] ||
		echo "note: the kernel is tainted already ($(taint_letters "$taint")): a test that sets those flags again is not caught"
	for script in tests/integration/test_*.sh; do
		[ "$interrupted" = 0 ] || break
		[ -e "$script" ] || continue
		name=$(basename "$script" .sh)
		if [ -n "${TESTS:-}" ] && [[ " $TESTS " != *" $name "* ]]; then
			continue
		fi
		reason=$(skip_reason "$name")
		if [ -n "$reason" ]; then
			echo "SKIP  integration/$name: $reason"
			skipped=$((skipped + 1))
			continue
		fi
		if [ "$(id -u)" != 0 ]; then
			echo "SKIP  integration/$name: needs root (loads BPF programs, creates cgroups)"
			skipped=$((skipped + 1))
			continue
		fi
		run_integration "$script"
	done
fi

[ "$interrupted" = 0 ] || echo "interrupted: remaining tests not run"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$interrupted" = 0 ]
