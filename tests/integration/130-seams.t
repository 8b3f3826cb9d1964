#!/usr/bin/env bash
# The seams between programs: code two programs share lives in lib, so no
# program folder includes a header of another program folder, the
# Makefile links no program's archive into another program, and no two
# program archives define the same global name (a module's globals carry
# its own prefix); the source servers' contract is lib/pg's and
# lib/mysql's, kinds of source are data (lib/source.h) no other file
# compares, and the supervisor parses no position. Reads the tree and the
# build; needs no server.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
P2O_BIN=${P2O_BIN:-$TOP/build/bin}
B=$(cd "$P2O_BIN/.." && pwd)
cd "$TOP" || exit 1
n=0 fail=0
ok() {	# ok STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"
	else echo "not ok $n - $2"; fail=$((fail + 1)); fi
}

# the program folders: each has a main.c
progs=()
for d in */; do
	d=${d%/}
	[ -f "$d/main.c" ] && progs+=("$d")
done
ok $([ ${#progs[@]} -ge 7 ]; echo $?) "program folders found: ${progs[*]}"

# an include that leaves the folder, or names another program's folder
bad=$(for p in "${progs[@]}"; do
	grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$p"/*.[ch] |
	    while IFS= read -r line; do
		file=${line#*\"}; file=${file%%\"*}
		case $file in
		../*|*/../*) echo "$line"; continue ;;
		esac
		for q in "${progs[@]}"; do
			[ "$q" != "$p" ] && case $file in "$q"/*) echo "$line" ;; esac
		done
	done
done)
ok $([ -z "$bad" ]; echo $?) "no program folder includes another program folder's header"
[ -n "$bad" ] && echo "$bad" | sed 's/^/#   /'

# a header name another program folder owns, reached through -I
bad=$(for p in "${progs[@]}"; do
	for q in "${progs[@]}"; do
		[ "$q" = "$p" ] && continue
		for h in "$q"/*.h; do
			[ -e "$h" ] || continue
			[ -e "$p/$(basename "$h")" ] && continue
			grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$(basename "$h")\"" \
			    "$p"/*.[ch]
		done
	done
done)
ok $([ -z "$bad" ]; echo $?) "no program folder includes another's header by its bare name"
[ -n "$bad" ] && echo "$bad" | sed 's/^/#   /'

ok $(! grep -qE '^deps_' Makefile; echo $?) "the Makefile declares no dependency of one program on another's archive"

# each program's link line: its own archive and lib's, nothing else
for p in "${progs[@]}"; do
	prog=$(make -s -p -n -f Makefile 2>/dev/null | sed -n "s/^prog_$p[[:space:]]*:= *//p" | head -n 1)
	[ -n "$prog" ] || prog=$p
	line=$(make -n -B "build/bin/$prog" 2>/dev/null | grep -E -- "-o build/bin/$prog( |$)")
	archives=$(echo "$line" | grep -oE 'build/[a-zA-Z0-9_./-]*lib[a-zA-Z0-9_-]*\.a' | sort -u | tr '\n' ' ')
	want="build/$p/lib$p.a build/lib/libp2o.a "
	want=$(echo "$want" | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')
	ok $([ -n "$line" ] && [ "$archives" = "$want" ]; echo $?) \
	    "$prog links only its own archive and lib's: $archives"
done

# every global a program archive defines is defined once across all of
# them and lib (a unit test links them all together)
if command -v nm >/dev/null && [ -f "$B/lib/libp2o.a" ]; then
	dups=$(for a in "$B"/*/lib*.a; do
		nm -g --defined-only "$a" 2>/dev/null |
		    awk -v a="${a#"$B"/}" 'NF == 3 && $2 ~ /[TDBRC]/ { print $3, a }'
	done | sort | awk '{ n[$1]++; w[$1] = w[$1] " " $2 }
	    END { for (s in n) if (n[s] > 1) print s ":" w[s] }')
	ok $([ -z "$dups" ]; echo $?) "no global name is defined by two archives"
	[ -n "$dups" ] && echo "$dups" | head -n 20 | sed 's/^/#   /'
else
	n=$((n + 1)); echo "ok $n # skip no build in $B to read"
fi

# integration tests are numbered by family (tests/integration/README.md):
# three digits, no number used twice
bad=$(cd tests/integration && ls *.t | grep -vE '^[1-9][0-9]{2}-[a-z0-9-]+\.t$')
dup=$(cd tests/integration && ls *.t | cut -d- -f1 | sort | uniq -d)
ok $([ -z "$bad$dup" ]; echo $?) "integration tests: three-digit family numbers, each used once"
[ -n "$bad$dup" ] && echo "$bad $dup" | sed 's/^/#   /'

# a header's index ("/* walstream.c */" then what that file defines) says
# where each declaration is defined: a reader who follows it lands on
# the code
out=$(python3 "$TOP/tests/helper/header-index.py" "$TOP" 2>&1)
ok $? "every header files its declarations under the file that defines them (${out##*$'\n'})"
echo "$out" | grep -v 'declarations checked' | head -n 20 | sed 's/^/#   /'

# A source server's contract has one owner per kind, lib/pg and lib/mysql
# (pgcontract.c, pgserver.c, myserver.c): what the server must provide is judged, created
# and dropped there, and every program asks them. So no program folder
# spells a statement that makes, changes or drops a publication or a
# slot, reads the binlog settings or position, or reads a catalogue
# (pg_catalog's relations - its functions and types are not catalogue
# reads - information_schema, performance_schema). CREATE_REPLICATION_SLOT
# is a slot made like any other (lib/pg makes it); capture-pg keeps
# START_REPLICATION and the standby status updates, which are the stream
# itself rather than a question about the server, and no other program
# speaks the replication protocol. Comments do not count (the compiler's
# -fpreprocessed strips them) and adjacent string literals are joined
# first, so a statement split across two literals is found too.
contract='CREATE\s+PUBLICATION|ALTER\s+PUBLICATION|DROP\s+PUBLICATION'
contract+='|pg_create_logical_replication_slot|pg_drop_replication_slot'
contract+='|CREATE_REPLICATION_SLOT|DROP_REPLICATION_SLOT'
contract+='|SHOW\s+GLOBAL\s+VARIABLES|SHOW\s+MASTER\s+STATUS'
contract+='|SHOW\s+BINARY\s+LOG\s+STATUS|SHOW\s+BINARY\s+LOGS'
contract+='|information_schema|performance_schema'
contract+='|pg_catalog\.pg_\w++(?!\s*\()'
contract+='|(?:FROM|JOIN)\s+(?!pg_catalog\.)pg_\w++(?!\s*\()'
bad=$(for p in "${progs[@]}"; do
	for f in "$p"/*.[ch]; do
		[ -e "$f" ] || continue
		cc -fpreprocessed -dD -E -P "$f" 2>/dev/null |
		    F=$f RE=$contract perl -0777 -ne 's/"\s*"//g;
			while (/(.{0,30}?)($ENV{RE})/gi) {
				print "$ENV{F}: ...$1$2\n";
			}'
	done
done)
ok $([ -z "$bad" ]; echo $?) "no program folder spells the source servers' contract (publications, slots, binlog settings, catalogue reads): lib/pg and lib/mysql own it"
[ -n "$bad" ] && echo "$bad" | tr -s ' \t' ' ' | head -n 40 | sed 's/^/#   /'

# the kinds of source are data (lib/source.h): no file outside the source
# table and the kinds' own modules tests which kind it runs with - it asks
# the module for the fact it needs. Forbidden: the old enum, a kind
# compared with a name, a kind's module compared by address.
kindfiles=$(git ls-files '*.c' '*.h' | grep -vE '^(tests/|lib/source[^/]*\.[ch]$|lib/pg/pgkind\.c$|lib/mysql/mykind\.c$)')
bad=$(grep -nE 'SOURCE_(POSTGRES|MYSQL)|enum source_kind|source_kind|kind, *"(postgres|mysql)"|"(postgres|mysql)", *[a-z_.>-]*kind\)|[=!]= *&source_(postgres|mysql)|&source_(postgres|mysql) *[=!]=' $kindfiles)
ok $([ -z "$bad" ]; echo $?) "no file outside lib/source* and the kinds' modules compares a kind of source"
[ -n "$bad" ] && echo "$bad" | head -n 20 | sed 's/^/#   /'

# positions are opaque text to the supervisor: only the source orders
# them (lib/source.h pos_coord)
bad=$(grep -nE '#[[:space:]]*include[[:space:]]*"(lsn\.h|mysql/mygtid\.h|mygtid\.h)"|lsn_(parse|format)|mypos_|binlog_file_index' supervisor/*.[ch])
ok $([ -z "$bad" ]; echo $?) "supervisor/ parses no position"
[ -n "$bad" ] && echo "$bad" | head -n 20 | sed 's/^/#   /'

echo "1..$n"
[ "$fail" -eq 0 ]
