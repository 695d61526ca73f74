#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Usage errors exit 2 with one line on stderr naming what was wrong; --help
# prints usage on stdout and exits 0, for the tool and every view. An option
# given without its value says so, on every command ("needs a value", not
# "unknown option"); a view refuses, and its --help omits, another view's
# options; each view's --help ends with two examples.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require_binaries
test_setup

OUT=$TMP/out
ERR=$TMP/err

# run_q ARGS...: runs qoslet (bounded in time), sets RC; output in $OUT/$ERR.
run_q() {
	RC=0
	timeout -k 5 20 "$QOSLET" "$@" >"$OUT" 2>"$ERR" </dev/null || RC=$?
	[ "$RC" != 124 ] || fail "qoslet $* did not exit within 20s"
}

# expect_usage_error NEEDLE ARGS...: exit 2, exactly one line on stderr and
# that line contains NEEDLE.
expect_usage_error() {
	local needle=$1 lines
	shift
	run_q "$@"
	[ "$RC" = 2 ] || fail "qoslet $*: expected exit 2, got $RC; stderr: $(cat "$ERR")"
	lines=$(wc -l <"$ERR")
	[ "$lines" = 1 ] || fail "qoslet $*: expected one line on stderr, got $lines: $(cat "$ERR")"
	grep -qF -- "$needle" "$ERR" || fail "qoslet $*: stderr does not name '$needle': $(cat "$ERR")"
	log "ok: qoslet $* -> exit 2: $(cat "$ERR")"
}

# expect_help ARGS...: exit 0, usage on stdout naming the command.
expect_help() {
	local needle=$1
	shift
	run_q "$@"
	[ "$RC" = 0 ] || fail "qoslet $*: expected exit 0, got $RC; stderr: $(cat "$ERR")"
	[ -s "$OUT" ] || fail "qoslet $*: nothing on stdout; stderr: $(cat "$ERR")"
	grep -qi usage "$OUT" || fail "qoslet $*: stdout has no usage text: $(head -c 500 "$OUT")"
	grep -qF -- "$needle" "$OUT" || fail "qoslet $*: usage does not mention '$needle': $(head -c 500 "$OUT")"
	log "ok: qoslet $* -> exit 0, $(wc -l <"$OUT") lines of usage on stdout"
}

expect_help runqlat --help
expect_help runqlat runqlat --help
expect_help blame blame --help
expect_help "--socket PATH" health --help
# The view options appear in each view's help.
run_q runqlat --help
for opt in -c -j --pin-dir --hook; do
	grep -qF -- "$opt" "$OUT" || fail "qoslet runqlat --help does not mention $opt"
done
log "ok: runqlat --help mentions -c -j --pin-dir --hook"

# Each view's --help: its own options, not the others', and two examples
# (each an example command line indented by two spaces).
declare -A OWN=([top]="--wait-source --cpi-events --throttle-source" [runqlat]="--wait-source --top"
	[blame]="--wait-source" [cpi]="--cpi-events" [memstall]="" [throttle]="--throttle-source")
for view in "${!OWN[@]}"; do
	run_q "$view" --help
	[ "$RC" = 0 ] || fail "qoslet $view --help: exit $RC"
	for opt in --wait-source --cpi-events --throttle-source --top; do
		if [[ " ${OWN[$view]} " == *" $opt "* ]]; then
			grep -qF -- "$opt" "$OUT" || fail "qoslet $view --help does not list its $opt"
		else
			! grep -qF -- "$opt " "$OUT" || fail "qoslet $view --help lists $opt, which $view does not take"
		fi
	done
	examples=$(sed -n '/^Examples:$/,$p' "$OUT" | grep -c "^  qoslet $view" || true)
	[ "$examples" = 2 ] || fail "qoslet $view --help: $examples examples, want 2: $(cat "$OUT")"
done
log "ok: every view's --help lists only its options and two examples"

# Unknown flags, on the tool and on each view.
expect_usage_error --bogus-flag --bogus-flag
expect_usage_error --bogus-flag runqlat --bogus-flag
expect_usage_error --bogus-flag blame --pin-dir "$PIN_DIR" --bogus-flag 1 1
# getopt's own message says "invalid option -- 'Z'": accept either spelling.
expect_usage_error Z runqlat -Z

# A missing value, on every command that takes options with values.
expect_usage_error "option '--config' needs a value" agent --config
expect_usage_error "option '--record' needs a value" agent --dry-run --record
expect_usage_error "option '--config' needs a value" agent --check-config --config
expect_usage_error "option '-o' needs a value" record -o
expect_usage_error "option '--output' needs a value" record --output
expect_usage_error "option '--config' needs a value" replay "$TMP/none.jsonl" --config
expect_usage_error "option '--hook' needs a value" runqlat --hook
expect_usage_error "option '-c' needs a value" blame -c
expect_usage_error "option '--cpi-events' needs a value" cpi --cpi-events
expect_usage_error "option '--top' needs a value" runqlat --top
expect_usage_error "option '--socket' needs a value" health --socket
expect_usage_error "--socket health.sock: not an absolute path" health --socket health.sock
expect_usage_error "--timeout 0: not a number of seconds in (0, 60]" health --timeout 0
expect_usage_error "unexpected argument 'now'" health now
# Another command's option is refused by name.
expect_usage_error "option '--cpi-events' is not for 'qoslet runqlat'" runqlat --cpi-events software 1 1
expect_usage_error "option '--top' is not for 'qoslet blame'" blame --top 3 1 1
expect_usage_error "option '--dry-run' is not for 'qoslet record'" record -o "$TMP/r" --dry-run
expect_usage_error "invalid --top '0'" runqlat --top 0 1 1
# A malformed --cpi-events is a usage error (exit 2) on every view that takes it.
expect_usage_error "invalid --cpi-events 'cycles'" cpi --cpi-events cycles 1 1
expect_usage_error "invalid --cpi-events 'a,b,c'" top --cpi-events a,b,c 1 1

# Unknown subcommand.
expect_usage_error no-such-command no-such-command

# Bad option values.
expect_usage_error bogus-hook runqlat --hook bogus-hook 1 1
expect_usage_error x1 runqlat x1 1
expect_usage_error banana runqlat 1 banana

# A cgroup that does not exist, relative and absolute, for both views; the
# parent exists so only the last component is missing.
missing=qoslet-no-such-cgroup-$$
expect_usage_error "$missing" runqlat --pin-dir "$PIN_DIR" -c "$TEST_PARENT_REL/$missing" 1 1
expect_usage_error "$missing" runqlat --pin-dir "$PIN_DIR" -c "$TEST_PARENT/$missing" 1 1
expect_usage_error "$missing" blame --pin-dir "$PIN_DIR" -c "$TEST_PARENT_REL" -c "$TEST_PARENT_REL/$missing" 1 1
# A file that is not a cgroup directory.
expect_usage_error cpu.shares runqlat --pin-dir "$PIN_DIR" -c "$TEST_PARENT_REL/cpu.shares" 1 1

log "all CLI error checks passed"
