#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/man/md2man.sh DOC.md PAGE SECTION > PAGE.SECTION
#
# Renders one of the markdown manuals in docs/ as a man page (`make man` calls
# this): docs/*.md stay the one source of each manual, readable on the web,
# and the man pages are built from them with go-md2man. Three passes:
#
# 1. markdown, before go-md2man:
#    - the first line ("# qoslet-top(8)", the title on the web) becomes the
#      title go-md2man turns into .TH: page, section, the date the manual
#      last changed, "qoslet", the manual's name;
#    - in NAME, "qoslet top - ..." becomes "qoslet-top - ...", one per line:
#      the form mandb and apropos index (they skip a page whose NAME has
#      "qoslet top");
#    - links to other manuals become man references (qoslet-runqlat.md ->
#      qoslet-runqlat(8)), links named by their path that path in the source
#      tree (agent-config.md -> docs/agent-config.md, as the manuals name
#      files elsewhere), and other relative links their text: a man page has
#      no use for "agent-config.md <agent-config.md>". Absolute links stay.
# 2. go-md2man.
# 3. roff, after go-md2man (2.0.2, Debian 12), tables only:
#    - it ends a wrapped cell ("T}") with a newline, so the next cell of the
#      row becomes a row of its own: the next line is joined back;
#    - every cell but the first of a row (after the header) becomes a text
#      block in an expanding column ("lx"), so tbl wraps it to the page
#      width instead of running off an 80-column terminal.
set -eu

[ $# -eq 3 ] || {
	echo "usage: $0 DOC.md PAGE SECTION" >&2
	exit 2
}
src=$1 page=$2 section=$3
command -v go-md2man >/dev/null ||
	{
		echo "$0: go-md2man is missing (scripts/deps.sh installs it)" >&2
		exit 1
	}

# The manual's own last change, not the build's: the same sources give the
# same pages. A tree without git history falls back to the file's mtime.
date=$(git log -1 --format=%cs -- "$src" 2>/dev/null || true)
[ -n "$date" ] || date=$(date -r "$src" +%F)

sed -E \
	-e "1s/.*/# $page $section \"$date\" \"qoslet\" \"System Manager's Manual\"/" \
	-e '/^## NAME/,/^## /s/^qoslet ([a-z]+) - (.*)$/qoslet-\1 - \2  /' \
	-e 's/\[(qoslet(-[a-z]+)?)\.md\]\([^):]*\)/\1(8)/g' \
	-e 's/\[([^]]*)\]\(\1\)/docs\/\1/g' \
	-e 's/\[([^]]*)\]\([^):]*\)/\1/g' \
	"$src" |
	go-md2man |
	awk '
	# One row line outside a text block: wrap plain body cells (see above).
	function row(line,    n, i, s, seg, cont, out) {
		if (inblock && line !~ /^T}/) {
			print line
			return
		}
		cont = line ~ /^T}/
		if (!cont)
			rows++
		n = split(line, seg, "\t")
		out = ""
		for (i = 1; i <= n; i++) {
			s = seg[i]
			if (s == "T}")
				inblock = 0
			else if (s == "T{")
				inblock = 1
			else if (rows > 1 && (cont || i > 1))
				s = "T{\n" s "\nT}"
			out = out s (i < n ? "\t" : "")
		}
		print out
	}
	/^\.TS$/ { tbl = 1; fmt = 1; rows = 0; inblock = 0; held = 0; print; next }
	tbl && fmt {
		if ($0 ~ /\.$/) {
			n = split($0, f, " ")
			out = f[1]
			for (i = 2; i <= n; i++)
				out = out " " (f[i] == "l" ? "lx" : f[i])
			fmt = 0
			print out
		} else
			print
		next
	}
	tbl && held {
		held = 0
		if ($0 ~ /^\t/) {
			row("T}" $0)
			next
		}
		row("T}")
	}
	tbl && /^\.TE$/ { tbl = 0; print; next }
	tbl && $0 == "T}" { held = 1; next }
	tbl { row($0); next }
	{ print }
	'
