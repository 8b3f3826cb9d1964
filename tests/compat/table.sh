#!/usr/bin/env bash
# The compatibility table, written from what the test command ran:
#   tests/compat/table.sh [--readme FILE] TAP-LOG...
# Each TAP-LOG is a phase's `prove -v --timer` output (run-suite.sh's);
# a test file that says which server it ran on in a '# compat: ENGINE
# VERSION' line (tests/compat/*.t, 680) counts toward that server's row,
# any other file is left out. A column per scenario: the checks that
# passed of those run ('-' none ran; a skipped check is not run). The
# scenario is what a check's description starts with (tests/compat/pg.t,
# pg-target.t and mysql.t), or 'failover' for every check of a failover
# test. Words after the version in the '# compat:' line (pg-target.t's
# 'into a pgvector table') are part of the row's name: a row of their own.
# Prints the markdown table; with --readme, exits 1 when FILE's table (the
# lines from '| server |' to the first line not a row) differs from it.
# Exits 1 too when a check failed or no file named its server.
set -u
readme=
if [ "${1:-}" = --readme ]; then readme=$2; shift 2; fi
[ $# -gt 0 ] || { echo "usage: $0 [--readme FILE] TAP-LOG..." >&2; exit 64; }
cols='load|crud|nearest|key change|toast|truncate|kill -9|equal|auth|failover'
heads='load beside writes|CRUD, every type|nearest neighbour|key change|TOAST|truncate|kill -9 under writes|drained, equal|caching_sha2 auth|failover'
st=0
rows=$(awk -v cols="$cols" '
	BEGIN { nc = split(cols, col, "|") }
	# a test file begins: its server is unknown until it says
	/^\[[0-9:]+\] [^ ]+ \.+/ { file = $2; srv = "" }
	FNR == 1 { srv = "" }
	# engine and major version (minor too for MySQL and MariaDB), and
	# what follows them: the target, when not OpenSearch (pg-target.t)
	/^# compat: / {
		split($4, p, /[.-]/)
		srv = $3 " " (($3 == "PostgreSQL") ? p[1] : p[1] "." p[2])
		for (i = 5; i <= NF; i++) srv = srv " " $i
		if (!(srv in seen)) { seen[srv] = 1; order[++ns] = srv }
	}
	srv != "" && /^(not )?ok [0-9]+ - / {
		d = $0; sub(/^(not )?ok [0-9]+ - /, "", d)
		sc = ""
		if (file ~ /failover/) sc = "failover"
		else for (i = 1; i <= nc; i++) if (index(d, col[i] ":") == 1) sc = col[i]
		if (sc == "") next
		run[srv, sc]++
		if ($1 == "ok") pass[srv, sc]++
		else { bad = 1; printf "%s: %s: not ok: %s\n", FILENAME, srv, d > "/dev/stderr" }
	}
	END {
		if (ns == 0) { print "table.sh: no test file named its server" > "/dev/stderr"; exit 1 }
		for (s = 1; s <= ns; s++) {
			printf "| %s |", order[s]
			for (i = 1; i <= nc; i++) {
				k = order[s] SUBSEP col[i]
				if (k in run) printf " %d/%d |", pass[k], run[k]
				else printf " - |"
			}
			printf "\n"
		}
		exit bad
	}' "$@") || st=1
[ -n "$rows" ] || exit 1
table=$(
	IFS='|' read -ra h <<<"$heads"
	printf '| server |'; printf ' %s |' "${h[@]}"; echo
	printf '| --- |'; printf ' %.0s--- |' "${h[@]}"; echo
	# PostgreSQL first, then MariaDB and MySQL, each by version, a
	# server's row into OpenSearch before its rows into other targets
	awk -F'|' '{ nw = split($2, w, " ")
		print (w[1] == "PostgreSQL" ? 0 : w[1] == "MariaDB" ? 1 : 2) "\t" w[2] "\t" (nw > 2) "\t" $0 }' <<<"$rows" |
		sort -t"$(printf '\t')" -k1,1n -k2,2V -k3,3n -s | cut -f4-
)
echo "$table"
if [ -n "$readme" ]; then
	if ! diff <(awk '/^\| server \|/ { on = 1 } on && !/^\|/ { exit } on' "$readme") \
		<(echo "$table") >/dev/null; then
		echo "table.sh: $readme's compatibility table is not what ran; what ran is above" >&2
		diff <(awk '/^\| server \|/ { on = 1 } on && !/^\|/ { exit } on' "$readme") \
			<(echo "$table") | sed 's/^/  /' >&2
		st=1
	fi
fi
exit $st
