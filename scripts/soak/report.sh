#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/soak/report.sh CSV
#
# The soak's table and checks, from the samples of scripts/soak/sample.sh.
# Prints markdown on stdout: min, median and max of every column in the calm
# and the stress phases (the warm-up cycles left out), the median after the
# churn stopped (drain), then the checks. The agent's and the churn's CPU
# are shown as % of one CPU over each second. One line per check goes to
# stderr as well. Exit 1 when a check fails.
#
# The checks compare the first cycle after the warm-up with the last, so
# each side has both phases, mostly by medians, which a busy second on a
# shared machine does not move:
#   rss       the level (a cycle's median) of every cycle within 1 MiB of the
#             first's, and the last cycle's peak at most 1 MiB above the
#             first's: the agent allocates and frees within each tick, so
#             one sample swings by a MiB or two and is no level
#   fds       median after the churn <= min of the first cycle: the
#             collector keeps each live unit's counter files open (which ones
#             depends on what is read, e.g. memory near the eviction
#             threshold), so during the churn fds follow the live units; a
#             leak keeps them up once every churned unit is gone
#   dead_*    median of the last cycle <= max of the first: the entries
#             naming a removed cgroup (sample.sh says how they are told
#             apart) must not pile up; the table shows each map's total
#             (map_*), which follows the live cgroups and the machine's other
#             work, so it is no check
#   loop_ms   median of the last cycle <= 1.5 x median of the first + 5 ms
set -euo pipefail

[ $# = 1 ] || {
	echo "usage: report.sh CSV" >&2
	exit 2
}

awk -F, '
# Heapsort: no recursion (mawk'"'"'s stack is small) and n log n even when
# most values are equal, as a flat column'"'"'s are.
function sift(a, i, n,   c, t) {
	while ((c = 2 * i) <= n) {
		if (c < n && a[c + 1] > a[c])
			c++
		if (a[i] >= a[c])
			return
		t = a[i]; a[i] = a[c]; a[c] = t
		i = c
	}
}
function hsort(a, n,   i, t) {
	for (i = int(n / 2); i >= 1; i--)
		sift(a, i, n)
	for (i = n; i > 1; i--) {
		t = a[1]; a[1] = a[i]; a[i] = t
		sift(a, 1, i - 1)
	}
}
# stat(group, column, what): min, median or max of the column in a group
# ("calm", "stress", "drain", "first" and "last" cycle); "" when empty.
function stat(g, c, what,   n, i, a) {
	n = cnt[g, c]
	if (!n)
		return ""
	for (i = 1; i <= n; i++)
		a[i] = val[g, c, i]
	hsort(a, n)
	if (what == "min") return a[1]
	if (what == "max") return a[n]
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(g, c, v) {
	val[g, c, ++cnt[g, c]] = v + 0
}
function fmt(v) {
	if (v == "") return "-"
	return v == int(v) ? sprintf("%d", v) : sprintf("%.2f", v)
}
function check(name, ok, limit, measured) {
	checks = checks sprintf("| %s | %s | %s | %s |\n", name, limit, measured, ok ? "pass" : "**FAIL**")
	printf "%s: %s: %s (limit %s)\n", ok ? "# ok" : "FAIL", name, measured, limit > "/dev/stderr"
	failed += !ok
}
NR == 1 {
	for (i = 1; i <= NF; i++)
		col[$i] = i
	# The rows of the table, in order: derived columns first, then the maps.
	nrow = split("rss_mib fds loop_ms agent_cpu_pct churn_cpu_pct churn_cgroups", row, " ")
	for (i = 1; i <= NF; i++)
		if ($i ~ /^(map|dead)_/)
			row[++nrow] = $i
	label["rss_mib"] = "agent RSS (MiB)"
	label["fds"] = "agent open fds"
	label["loop_ms"] = "loop duration (ms)"
	label["agent_cpu_pct"] = "agent CPU (% of one CPU)"
	label["churn_cpu_pct"] = "churn driver CPU (% of one CPU)"
	label["churn_cgroups"] = "live churn cgroups"
	next
}
{
	phase = $col["phase"]
	t = $col["t_s"]
	# CPU: the difference to the previous sample, over its seconds.
	v["agent_cpu_pct"] = v["churn_cpu_pct"] = ""
	if (prev_t != "" && t > prev_t) {
		if ($col["agent_cpu_s"] != "" && prev_a != "")
			v["agent_cpu_pct"] = 100 * ($col["agent_cpu_s"] - prev_a) / (t - prev_t)
		if ($col["churn_cpu_s"] != "" && prev_c != "")
			v["churn_cpu_pct"] = 100 * ($col["churn_cpu_s"] - prev_c) / (t - prev_t)
	}
	prev_t = t; prev_a = $col["agent_cpu_s"]; prev_c = $col["churn_cpu_s"]
	v["rss_mib"] = $col["rss_kib"] == "" ? "" : $col["rss_kib"] / 1024
	for (i = 1; i <= nrow; i++)
		if (row[i] ~ /^(fds|loop_ms|churn_cgroups|map_.*|dead_.*)$/)
			v[row[i]] = $col[row[i]]
	if (phase != "calm" && phase != "stress" && phase != "drain")
		next
	cyc = $col["cycle"]
	if (phase != "drain" && cyc != last) {
		# A new cycle: the "last" group starts over.
		for (i = 1; i <= nrow; i++)
			cnt["last", row[i]] = 0
		if (first == "")
			first = cyc
		last = cyc
	}
	for (i = 1; i <= nrow; i++) {
		r = row[i]
		if (v[r] == "")
			continue
		add(phase, r, v[r])
		if (phase == "drain")
			continue
		if (cyc == first)
			add("first", r, v[r])
		add("last", r, v[r])
	}
	if (phase != "drain" && v["rss_mib"] != "") {
		# Every cycle, for its median: kept apart from the table groups.
		add("rss_cycle_" cyc, "rss_mib", v["rss_mib"])
		if (!(cyc in seen_cycle)) {
			seen_cycle[cyc] = 1
			cycles[++ncycles] = cyc
		}
	}
}
END {
	if (first == "" || first == last) {
		print "FAIL: fewer than two cycles after the warm-up in the samples" > "/dev/stderr"
		exit 1
	}
	print "| | calm min | calm median | calm max | stress min | stress median | stress max | after the churn (median) |"
	print "|---|---:|---:|---:|---:|---:|---:|---:|"
	for (i = 1; i <= nrow; i++) {
		r = row[i]
		if (r in label)
			printf "| %s |", label[r]
		else if (r ~ /^dead_/)
			printf "| `%s` entries of removed cgroups |", substr(r, 6)
		else
			printf "| `%s` map entries |", substr(r, 5)
		printf " %s | %s | %s |", fmt(stat("calm", r, "min")), fmt(stat("calm", r, "median")), fmt(stat("calm", r, "max"))
		printf " %s | %s | %s |", fmt(stat("stress", r, "min")), fmt(stat("stress", r, "median")), fmt(stat("stress", r, "max"))
		printf " %s |\n", fmt(stat("drain", r, "median"))
	}

	base = stat("first", "rss_mib", "median")
	lo = hi = base
	for (i = 1; i <= ncycles; i++) {
		m = stat("rss_cycle_" cycles[i], "rss_mib", "median")
		if (m < lo) lo = m
		if (m > hi) hi = m
	}
	check("RSS level within 1 MiB of its post-warm-up level", hi - base <= 1 && base - lo <= 1,
	      sprintf("%.2f MiB +- 1 MiB (median of the first cycle)", base),
	      sprintf("cycle medians %.2f to %.2f MiB", lo, hi))
	f = stat("first", "rss_mib", "max"); l = stat("last", "rss_mib", "max")
	check("RSS peak does not grow", l <= f + 1, sprintf("<= %.2f + 1 MiB (first cycle)", f),
	      sprintf("%.2f MiB (cycle %s)", l, last))
	f = stat("first", "fds", "min"); l = stat("drain", "fds", "median")
	check("open fds come back once the churn stops", l <= f,
	      sprintf("median after the churn <= %s (min of the first cycle)", fmt(f)),
	      sprintf("median %s after the churn", fmt(l)))
	for (i = 1; i <= nrow; i++) {
		if (row[i] !~ /^dead_/)
			continue
		f = stat("first", row[i], "max"); l = stat("last", row[i], "median")
		check("`" substr(row[i], 6) "` entries of removed cgroups do not pile up", l <= f,
		      sprintf("median <= %s (max of the first cycle)", fmt(f)),
		      sprintf("median %s (cycle %s)", fmt(l), last))
	}
	f = stat("first", "loop_ms", "median"); l = stat("last", "loop_ms", "median")
	check("loop duration does not trend up", l <= 1.5 * f + 5,
	      sprintf("median <= 1.5 x %s + 5 ms", fmt(f)), sprintf("median %s ms (cycle %s)", fmt(l), last))

	printf "\nChecks, cycle %s (the first after the warm-up) against cycle %s (the last):\n\n", first, last
	print "| check | limit | measured | result |"
	print "|---|---|---|---|"
	printf "%s", checks
	exit failed > 0
}' "$1"
