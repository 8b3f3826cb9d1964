#!/usr/bin/env bash
# Record the PostgreSQL inputs of the loader's golden tests from a real
# server: each table of tests/golden/capture-pg/NAME.sql that the list
# below names is created and filled by that file, then read as the loader
# reads it (COPY's text format, in the session every value is read in,
# lib/pg/pgtypes.h) into NAME.rows, with its columns and key into
# NAME.table. NAME.out is then what copy-decode makes of them: review it
# before committing, it is the expectation from then on. The same rows
# are in the capture's golden NAME.out, so the two must agree (loader.sh
# compares them).
#
#   tests/servers/run-with.sh --pg -- tests/golden/loader/record.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
decode=${P2O_BIN:-$top/build/bin}/../tests/copy-decode
export PGOPTIONS="-c client_min_messages=warning -c DateStyle=ISO -c TimeZone=UTC -c extra_float_digits=3 -c IntervalStyle=iso_8601 -c bytea_output=hex"
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
for case in types:typed crud:items; do
	name=${case%%:*} t=${case#*:}
	psql_q < "$top/tests/golden/capture-pg/$name.sql" >/dev/null
	{
		echo "# recorded by record.sh from capture-pg/$name.sql on PostgreSQL $(psql_q -c 'show server_version')"
		echo "source postgres"
		echo "table public.$t 1000"
		psql_q -c "select 'key ' || coalesce(string_agg(a.attname, ' '
			order by array_position(i.indkey::int2[], a.attnum)), '')
			from pg_index i join pg_attribute a on a.attrelid = i.indrelid
			and a.attnum = any(i.indkey)
			where i.indisprimary and i.indrelid = 'public.$t'::regclass"
		psql_q -c "select 'column ' || attname || ' ' || atttypid::int
			from pg_attribute where attrelid = 'public.$t'::regclass
			and attnum > 0 and not attisdropped order by attnum"
	} > "$here/$name.table"
	psql_q -c "copy (select * from public.$t order by 1) to stdout" > "$here/$name.rows"
	"$decode" "$here/$name.table" < "$here/$name.rows" > "$here/$name.out" || true
	echo "recorded $name: $(wc -l < "$here/$name.rows") rows, $(wc -l < "$here/$name.out") frames"
done
