#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/vm/matrix.sh [NAME...]: runs the test suite in a VM for each kernel
# of scripts/vm/matrix (all, or the entries named), one VM at a time, and
# prints each kernel's summary line ("N passed, N failed, N skipped"), the
# reasons of its skips (UNEXPECTED before a skip that neither the skip files,
# TCG timing nor tests/vm-expected.skip account for), then one line for the
# whole matrix. Exits 1 when a
# kernel failed a test or its VM did not finish. Results: build/vm/NAME/
# (log: the runner's output; console.log: the serial console).
# The environment of scripts/vm/run.sh applies (VM_ACCEL, VM_TIMEOUT, ...).
set -uo pipefail
cd "$(dirname "$0")/../.."

entries=()
while read -r name pkg cgroup layout extra; do
	case $name in '' | '#'*) continue ;; esac
	if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	entries+=("$name|$pkg|$cgroup|$layout|$extra")
done <scripts/vm/matrix
if [ ${#entries[@]} = 0 ]; then
	echo "scripts/vm/matrix.sh: no entry named '$*' in scripts/vm/matrix" >&2
	exit 2
fi

bad=0
tp=0 tf=0 ts=0
summary=()
mstart=$(date +%s)
for e in "${entries[@]}"; do
	IFS='|' read -r name pkg cgroup layout extra <<<"$e"
	out=build/vm/$name
	rm -rf "$out"
	mkdir -p "$out"
	start=$(date +%s)
	echo "==== kernel $name: $pkg, cgroup $cgroup, $layout layout"
	# shellcheck disable=SC2086 # extra: kernel arguments
	scripts/vm/run.sh -c "$cgroup" -l "$layout" -o "$out" "$pkg" -- $extra
	rc=$?
	secs=$(($(date +%s) - start))
	release=$(cat "$(scripts/vm/kernel.sh "$pkg" 2>/dev/null)/release" 2>/dev/null || echo "?")
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out/log" 2>/dev/null | tail -n 1)
	if [ -z "$line" ]; then
		line="did not finish (rc $rc; see $out/console.log)"
		bad=1
	else
		read -r p _ f _ s _ <<<"$line"
		tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
		[ "$rc" = 0 ] && [ "$f" = 0 ] || bad=1
	fi
	summary+=("kernel $name ($release, cgroup $cgroup, ${VM_ACCEL:-tcg}, ${secs}s): $line")
	echo "kernel $name: $line"
done

# Whether kernel $1 is expected to skip test $2 (tests/vm-expected.skip),
# or the skip line $3 says why by itself (a test vm.skip names, TCG timing).
expected_skip() {
	local t=${2#integration/}
	[ -n "$(run_skip_files "$t")" ] && return 0
	[[ $3 == *"under TCG emulation"* ]] && return 0
	awk -v k="$1" -v t="$t" '!/^#/ && NF >= 2 && $2 == t {
		n = split($1, ks, ","); for (i = 1; i <= n; i++) if (ks[i] == k || ks[i] == "all") f = 1 }
		END { exit !f }' tests/vm-expected.skip
}
# The reason the skip files the VM ran with give for test $1, if any.
run_skip_files() {
	# shellcheck disable=SC2086 # a list of files
	awk -v t="$1" '$1 == t { print; exit }' ${VM_SKIP_FILES-tests/vm.skip} 2>/dev/null
}

echo "==== kernel matrix"
unexpected=0
for i in "${!summary[@]}"; do
	IFS='|' read -r name _ <<<"${entries[$i]}"
	echo "${summary[$i]}"
	while read -r line; do
		t=$(awk '{ sub(/:$/, "", $2); print $2 }' <<<"$line")
		if expected_skip "$name" "$t" "$line"; then
			echo "    $line"
		else
			echo "    UNEXPECTED $line"
			unexpected=$((unexpected + 1))
		fi
	done < <(grep -E '^SKIP  ' "build/vm/$name/log" 2>/dev/null)
	grep -E '^FAIL  ' "build/vm/$name/log" 2>/dev/null | sed 's/^/    /'
done
echo "matrix: ${#entries[@]} kernel(s), $tp passed, $tf failed, $ts skipped ($unexpected not in tests/vm-expected.skip), $(($(date +%s) - mstart))s$([ "$bad" = 0 ] || echo ", FAILED")"
exit "$bad"
