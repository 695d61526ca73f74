#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/soak/plot.sh CSV PNG
#
# The soak's plot (gnuplot, package gnuplot-nox): from the samples of
# scripts/soak/sample.sh, four panels over time: the agent's RSS, its open
# fds, the entries of each pinned map with the live churn cgroups, and the
# loop duration. The warm-up is shaded dark, the stress phases light.
set -euo pipefail

[ $# = 2 ] || {
	echo "usage: plot.sh CSV PNG" >&2
	exit 2
}
csv=$1 png=$2

# One "set object" per warm-up or stress stretch: from its first sample to
# the first sample after it.
shading=$(awk -F, '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{
		p = $col["phase"]; t = $col["t_s"]
		if (p != cur) {
			if (cur == "warmup" || cur == "stress")
				printf "set object rect from %s, graph 0 to %s, graph 1 fc rgb \"%s\" fs solid 1 noborder behind\n", t0, t, cur == "warmup" ? "#d0d0d0" : "#fbe3c8"
			cur = p; t0 = t
		}
	}' "$csv")

maps=""
IFS=, read -ra header <"$csv"
for h in "${header[@]}"; do
	case $h in
	map_*) maps="$maps, '$csv' using 't_s':'$h' with lines title '${h#map_}'" ;;
	esac
done

gnuplot <<EOF
set terminal pngcairo size 1200,1400 font ",10"
set output '$png'
set datafile separator ","
set datafile missing ""
set termoption noenhanced
set key outside right top
set grid
set lmargin 12
set rmargin 28
$shading
set multiplot layout 4,1 title "qoslet agent under cgroup churn (grey: warm-up, orange: BE stress)"
set ylabel "RSS (MiB)"
plot '$csv' using 't_s':(column('rss_kib') / 1024) with lines lw 2 title 'RSS'
set ylabel "open fds"
plot '$csv' using 't_s':'fds' with lines lw 2 title 'fds'
set ylabel "entries"
plot '$csv' using 't_s':'churn_cgroups' with lines dt 2 title 'live churn cgroups'$maps
set ylabel "loop (ms)"
set xlabel "seconds since start"
plot '$csv' using 't_s':'loop_ms' with lines title 'loop duration'
unset multiplot
EOF
