#!/usr/bin/env bash
# Record the golden inputs of capture-pg's decoder from a real PostgreSQL:
# each NAME.sql runs against a fresh publication and slot, and the pgoutput
# messages it produced are written to NAME.msgs as hex, one per line, with
# the primary keys the capture reads from the catalogue as "key" lines.
# NAME.out is then what pgo-decode makes of them: review it before
# committing, it is the expectation from then on.
#
#   tests/servers/run-with.sh --pg -- tests/golden/capture-pg/record.sh [NAME...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
decode=${P2O_BIN:-$top/build/bin}/../tests/pgo-decode
export PGOPTIONS="-c client_min_messages=warning"
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
names=("$@")
[ ${#names[@]} -gt 0 ] || names=($(cd "$here" && ls *.sql | sed 's/\.sql$//'))
for name in "${names[@]}"; do
	sql=$here/$name.sql
	tables=$(sed -n 's/^-- tables: //p' "$sql")
	pub=g_$name
	psql_q -c "drop publication if exists $pub" >/dev/null
	psql_q -c "select pg_drop_replication_slot('$pub') from pg_replication_slots where slot_name = '$pub'" >/dev/null
	# the setup, then a publication of its tables and a slot, then the
	# changes the slot records
	sed '/^-- changes/,$d' "$sql" | psql_q >/dev/null
	psql_q -c "create publication $pub for table $(echo $tables | sed 's/ /, /g')" \
		-c "select pg_create_logical_replication_slot('$pub', 'pgoutput')" >/dev/null
	sed -n '/^-- changes/,$p' "$sql" | psql_q >/dev/null
	{
		echo "# recorded by record.sh from $name.sql on PostgreSQL $(psql_q -c 'show server_version')"
		for t in $tables; do
			psql_q -c "select 'key public.$t ' || string_agg(a.attname, ' '
				order by array_position(i.indkey::int2[], a.attnum))
				from pg_index i join pg_attribute a on a.attrelid = i.indrelid
				and a.attnum = any(i.indkey)
				where i.indisprimary and i.indrelid = 'public.$t'::regclass"
		done
		# the session settings every value is read in (lib/pg/pgtypes.h)
		psql_q -c "set DateStyle = ISO" -c "set TimeZone = UTC" \
			-c "set extra_float_digits = 3" -c "set IntervalStyle = iso_8601" \
			-c "set bytea_output = hex" \
			-c "select encode(data, 'hex') from pg_logical_slot_get_binary_changes('$pub', NULL, NULL, 'proto_version', '1', 'publication_names', '$pub')"
	} > "$here/$name.msgs"
	psql_q -c "select pg_drop_replication_slot('$pub')" -c "drop publication $pub" >/dev/null
	"$decode" < "$here/$name.msgs" > "$here/$name.out" || true
	echo "recorded $name: $(grep -vc '^#\|^key' "$here/$name.msgs") messages, $(wc -l < "$here/$name.out") frames"
done
