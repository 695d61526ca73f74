#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make install DESTDIR=... PREFIX=/usr` into a temporary tree (docs/install.md):
# every file is there with a sane mode; every command `qoslet --help` lists
# has a man page that renders without a warning and names every long option
# of the command's --help; the example config is the embedded defaults; the
# systemd unit passes `systemd-analyze verify` (skipped where that is missing);
# the bash completion completes commands, options and their values from the
# installed binary; `make uninstall` leaves no file behind. The default PREFIX
# (/usr/local) gets its own paths in the unit. Needs no root.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_cmds go-md2man man make jq
[ -x "$QOSLET" ] || fail "$QOSLET is missing: run make first"

TMP=$(mktemp -d /tmp/qoslet-test_install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
ROOT=$TMP/root
MANROOT=$ROOT/usr/share/man

# mk ARGS...: make in the source tree, its output shown only on failure.
mk() {
	make --no-print-directory -C "$QOSLET_ROOT" "$@" >"$TMP/make.log" 2>&1 ||
		fail "make $*: $(tail -n 20 "$TMP/make.log")"
}

# assert_file PATH MODE: a regular file of exactly that mode.
assert_file() {
	[ -f "$1" ] || fail "$1 was not installed"
	assert_eq "$(stat -c %a "$1")" "$2" "mode of ${1#"$ROOT"}"
}

# The unit's ExecStart line for a PREFIX; $QOSLET_OPTS is for systemd to expand.
exec_start() {
	# shellcheck disable=SC2016
	printf 'ExecStart=%s/bin/qoslet agent $QOSLET_OPTS' "$1"
}

mk install DESTDIR="$ROOT" PREFIX=/usr

# ---- files and modes ---------------------------------------------------------
bin=$ROOT/usr/bin/qoslet
assert_file "$bin" 755
assert_eq "$("$bin" --version)" "$("$QOSLET" --version)" "installed binary runs"
assert_file "$ROOT/usr/share/bash-completion/completions/qoslet" 644
unit=$ROOT/usr/lib/systemd/system/qoslet.service
assert_file "$unit" 644
assert_file "$ROOT/usr/share/doc/qoslet/agent-config.md" 644
example=$ROOT/usr/share/doc/qoslet/examples/agent.json
assert_file "$example" 644
[ "$(jq -S . "$example")" = "$("$QOSLET" agent --print-config | jq -S .)" ] ||
	fail "examples/agent.json differs from qoslet agent --print-config"
log "ok: examples/agent.json is the embedded defaults (qoslet agent --print-config)"
bad=$(find "$ROOT" \( -perm /022 -o ! -user "$(id -u)" \) -printf '%m %p\n')
[ -z "$bad" ] || fail "writable by group or others, or not ours: $bad"

grep -qxF "$(exec_start /usr)" "$unit" ||
	fail "unit: ExecStart does not run /usr/bin/qoslet: $(grep ExecStart "$unit")"
grep -qx 'EnvironmentFile=-/etc/default/qoslet' "$unit" || fail "unit: no /etc/default/qoslet"
! grep -n '@[A-Z]*@' "$unit" || fail "unit: placeholders left"
log "ok: unit runs /usr/bin/qoslet agent \$QOSLET_OPTS"

# ---- man pages ------------------------------------------------------------------
# The commands `qoslet --help` lists.
mapfile -t commands < <("$QOSLET" --help | awk '/^Commands:/ { on = 1; next }
	on && /^[^ ]/ { exit } on && /^  [a-z]/ { print $1 }')
[ "${#commands[@]}" -ge 9 ] || fail "qoslet --help lists too few commands: ${commands[*]}"
# The long options of a --help text: qoslet's own are in its usage lines (up
# to the first blank line), a command's in its option lines.
usage_options() {
	awk '/^$/ { exit } { print }' <<<"$1" | grep -oE -- '--[a-z][a-z-]*' | sort -u
}
command_options() {
	awk '/^Options:/ { on = 1; next } on && /^ *(-[a-zA-Z], )?--[a-z]/ { print }' <<<"$1" |
		grep -oE -- '^ *(-[a-zA-Z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' | sort -u
}

# check_page PAGE OPTIONS: renders without warnings, and names each option.
check_page() {
	local page=$1 options=$2 src out opt missing=""
	src=$MANROOT/man8/$page.8
	assert_file "$src" 644
	# .so (qoslet-record) resolves against the top of the manual tree.
	out=$(cd "$MANROOT" && MANWIDTH=80 MANPAGER=cat man --warnings -l "man8/$page.8" 2>"$TMP/man.err")
	[ ! -s "$TMP/man.err" ] || fail "man $page: warnings: $(cat "$TMP/man.err")"
	for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" "SEE ALSO"; do
		grep -qx "$section" <<<"$out" || fail "man $page: no $section section"
	done
	while read -r first rest; do
		[ "$first" = .so ] && src=$MANROOT/$rest
	done < <(head -n 1 "$src")
	for opt in $options; do
		grep -qE -- "$opt([^a-z-]|$)" "$src" || missing="$missing $opt"
	done
	[ -z "$missing" ] || fail "man $page does not describe:$missing"
	log "ok: man $page renders without warnings and names $(echo "$options" | tr '\n' ' ')"
}

check_page qoslet "$(usage_options "$("$QOSLET" --help)")"
for c in "${commands[@]}"; do
	check_page "qoslet-$c" "$(command_options "$("$QOSLET" "$c" --help)")"
done
for page in "$MANROOT"/man8/*; do
	case " qoslet ${commands[*]/#/qoslet-} " in
	*" $(basename "$page" .8) "*) ;;
	*) fail "${page#"$ROOT"} is the page of no command" ;;
	esac
done

# ---- systemd unit ---------------------------------------------------------------
if command -v systemd-analyze >/dev/null; then
	# verify wants ExecStart to exist and man: references to be installed: point
	# it at the tree's binary, and leave the man pages to the checks above.
	mkdir "$TMP/unit"
	sed "s|^ExecStart=/usr/bin/qoslet|ExecStart=$bin|" "$unit" >"$TMP/unit/qoslet.service"
	systemd-analyze verify --man=no "$TMP/unit/qoslet.service" >"$TMP/verify.log" 2>&1 ||
		fail "systemd-analyze verify: $(cat "$TMP/verify.log")"
	! grep -i 'qoslet' "$TMP/verify.log" || fail "systemd-analyze verify warns about the unit"
	log "ok: systemd-analyze verify passes the unit"
else
	log "systemd-analyze is missing: the unit is checked only by the lines above"
fi

# ---- bash completion ----------------------------------------------------------------
# complete WORD...: what _qoslet offers for the last word, driven as readline
# would (COMP_WORDS, COMP_CWORD), with the installed qoslet first in PATH.
complete_words() {
	PATH=$ROOT/usr/bin:$PATH bash --norc --noprofile -c '
		. "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_qoslet
		echo "${COMPREPLY[*]}"' bash "$ROOT/usr/share/bash-completion/completions/qoslet" "$@" \
		2>"$TMP/complete.err" || fail "completion: $(cat "$TMP/complete.err")"
	[ ! -s "$TMP/complete.err" ] || fail "completion: stderr: $(cat "$TMP/complete.err")"
}
assert_eq "$(complete_words qoslet ag)" agent "qoslet ag<TAB>"
assert_eq "$(complete_words qoslet agent --con)" --config "qoslet agent --con<TAB>"
assert_eq "$(complete_words qoslet top --hook '')" "auto tp_btf raw_tp" "qoslet top --hook <TAB>"
assert_eq "$(complete_words qoslet runqlat --wait-source s)" "sched_info stamp" \
	"qoslet runqlat --wait-source s<TAB>"
assert_eq "$(complete_words qoslet throttle --throttle-source = f)" fentry \
	"qoslet throttle --throttle-source=f<TAB>"
assert_eq "$(complete_words qoslet agent --config "$example")" "$example" \
	"qoslet agent --config FILE<TAB>"
assert_eq "$(complete_words qoslet record -o "$ROOT/usr/share/doc/qoslet/ex")" \
	"$ROOT/usr/share/doc/qoslet/examples" "qoslet record -o DIR-PREFIX<TAB>"
assert_eq "$(complete_words qoslet runqlat -j '')" "" "qoslet runqlat -j <TAB> (INTERVAL)"

# ---- uninstall ------------------------------------------------------------------------
mk uninstall DESTDIR="$ROOT" PREFIX=/usr
left=$(find "$ROOT" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
[ ! -e "$ROOT/usr/share/doc/qoslet" ] || fail "make uninstall left share/doc/qoslet"
log "ok: make uninstall removed every file"

# ---- default PREFIX ---------------------------------------------------------------------
mk install DESTDIR="$TMP/local"
grep -qxF "$(exec_start /usr/local)" "$TMP/local/usr/local/lib/systemd/system/qoslet.service" ||
	fail "PREFIX=/usr/local: the unit does not run /usr/local/bin/qoslet"
[ -x "$TMP/local/usr/local/bin/qoslet" ] || fail "PREFIX=/usr/local: no bin/qoslet"
mk uninstall DESTDIR="$TMP/local"
left=$(find "$TMP/local" ! -type d)
[ -z "$left" ] || fail "make uninstall (PREFIX=/usr/local) left: $left"
log "ok: the default PREFIX installs and uninstalls under /usr/local"
