#!/usr/bin/env bash
# source.load_workers: 2 - ranges read two at a time, on two connections,
# one mark per wave of two, written only once the previous mark is
# confirmed; every row exactly once, a wave's rows sharing one version.
. "$(dirname "$0")/../lib.sh"

S=ld_wave
SUP=(python3 "$TOP/tests/helper/loader-supervisor.py")
drop_slot $S
psql_q <<'SQL'
drop table if exists ld_wave;
create table ld_wave (id int primary key, v text);
insert into ld_wave select g, repeat('w', 50) from generate_series(1, 33000) g;
analyze ld_wave;
SQL
mkconfig "$T/cfg.yaml" $S $S ld_wave
sed -i 's/^source:$/source:\n  load_workers: 2/' "$T/cfg.yaml"
psql_q -c "select pg_create_logical_replication_slot('$S', 'pgoutput')" > /dev/null
loaders() { psql_q -c "select count(*) from pg_stat_activity where application_name = 'loader' and datname = current_database()"; }

"${SUP[@]}" --table public.ld_wave --frames "$T/a.frames" --marks "$T/a.marks" \
	--hold 1 -- loader -c "$T/cfg.yaml" --range-rows 3000 2> "$T/a.err" &
sup=$!
wait_for 30 test -s "$T/a.marks"
n=$(loaders)
ok $([ "$n" = 2 ]; echo $?) "two connections read ($n)"
wait $sup
ok $? "the load ends with exit 0, no mark written before the last one was confirmed"

of=$(head -n 1 "$T/a.marks" | jq .progress.of)
want=$(seq 2 2 "$of"; [ $((of % 2)) = 1 ] && echo "$of")
ok $([ "$(jq .progress.done "$T/a.marks")" = "$(echo "$want")" ]; echo $?) \
	"$of ranges in waves of two: marks after $(jq .progress.done "$T/a.marks" | paste -sd, -)"
sed -E 's/^[0-9]+ //' "$T/a.frames" | jq -r 'select(.k == "row") | .new.id' | sort -n > "$T/ids"
ok $(seq 33000 | cmp -s - "$T/ids"; echo $?) "every row exactly once ($(wc -l < "$T/ids"))"
# the versions between two marks: one per wave, rising
sed -E 's/^[0-9]+ //' "$T/a.frames" | jq -r 'if .k == "mark" then "mark" else .v end' |
	awk '$1 == "mark" { if (n != 1) bad = 1; n = 0; delete seen; next }
	     !($1 in seen) { seen[$1] = 1; n++; if ($1 + 0 < last) bad = 1; last = $1 + 0 }
	     END { exit bad }'
ok $? "one version per wave, never lower than the wave before"
grep -q "range $of of $of read" "$T/a.err"
ok $? "a log line per range"

[ $_tap_fail -gt 0 ] && { diag "a.err:"; tail -n 15 "$T/a.err" | sed 's/^/#   /'; }
psql_q -c "select pg_drop_replication_slot('$S')" > /dev/null
done_testing
