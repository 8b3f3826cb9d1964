#!/usr/bin/env bash
# The initial load beside the stream, killed: 200,000 rows; kill -9 of every
# process once at least two ranges are recorded; while it is down, rows
# are deleted, inserted and updated; after the restart, changes to rows the
# copy has not reached yet. The index must equal the table by content:
# deleted rows stay absent, updates win over the copy, the load says it
# resumed, and the index's own refresh interval is back once it is done.
. "$(dirname "$0")/../lib.sh"

S=p2o_lcrash
drop_slot $S
os_drop ${S}_lc
for t in lc; do curl -sS -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fload%2Fpublic.$t" >/dev/null 2>&1; done
psql_q <<'SQL'
drop table if exists lc;
create table lc (id int primary key, title text, n numeric(12,2), tags text[], at timestamptz);
insert into lc select g, 'row ' || g, g / 7.0, array['t' || (g % 5)], '2024-01-01'::timestamptz + g * interval '1 minute'
	from generate_series(1, 200000) g;
SQL
# the index exists before the pipeline, with a refresh interval of its own
curl -sS -XPUT "$OS_URL/${S}_lc" -H 'Content-Type: application/json' \
	-d '{"settings":{"index":{"refresh_interval":"3s"}}}' >/dev/null
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S lc
start_sv() {
	pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
	SUP=$!; cleanup_add $SUP
}
metric() {	# metric SERIES -> value or empty
	metrics_text | awk -v s="$1" '$1 == s { print $2 }'
}
start_sv
ranges_done() { [ "$(metric 'pg2osync_load_ranges_done{table="public.lc"}')" -ge 2 ] 2>/dev/null; }
wait_for 120 ranges_done
ok $? "at least two ranges recorded ($(metric 'pg2osync_load_ranges_done{table="public.lc"}') of $(metric 'pg2osync_load_ranges{table="public.lc"}'))"
r=$(curl -s "$OS_URL/${S}_lc/_settings?flat_settings=true" | jq -r '.["'${S}_lc'"].settings["index.refresh_interval"]')
ok $([ "$r" = -1 ]; echo $?) "refresh is suspended during the load ($r)"

# every process at once, as a power cut would
pkill -KILL -f "pg2osync-supervise -c $T/cfg.yaml"
pkill -KILL -f -- "-c $T/cfg.yaml"
sleep 1
ok $(pgrep -f -- "-c $T/cfg.yaml" >/dev/null; [ $? = 1 ]; echo $?) "every process is gone"
psql_q -c "delete from lc where id in (3, 150003); insert into lc values (200001, 'inserted while down', 1, '{}', '2024-06-01');
	update lc set title = 'updated while down' where id = 5"
start_sv
sleep 1
psql_q -c "update lc set title = 'updated after restart' where id = 199990; delete from lc where id = 199999"
SEL="json_build_object('id',id,'title',title,'n',n::text,'tags',tags,'at',to_char(at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))"
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 300 load_done
ok $? "the load finished after the restart"
grep -q "resum" "$T/sup.log"
ok $? "and the log says it resumed: $(grep -m1 -o "[^:]*resum[^\"]*" "$T/sup.log" | head -c 200)"
check "the index equals the table, every document" -- wait_equal lc ${S}_lc 60 "$SEL"
for id in 3 150003 199999; do
	ok $([ "$(os_get /${S}_lc/_doc/$id | jq -r .found)" = false ]; echo $?) "deleted row $id stays absent"
done
ok $([ "$(os_get /${S}_lc/_doc/199990 | jq -r ._source.title)" = "updated after restart" ]; echo $?) \
	"an update the copy had not reached wins over the copy"
ok $([ "$(os_get /${S}_lc/_doc/5 | jq -r ._source.title)" = "updated while down" ]; echo $?) \
	"an update made while everything was down wins"
r=$(curl -s "$OS_URL/${S}_lc/_settings?flat_settings=true" | jq -r '.["'${S}_lc'"].settings["index.refresh_interval"]')
ok $([ "$r" = 3s ]; echo $?) "the index's own refresh interval is back after the interrupted load ($r)"
kill -TERM $SUP; wait $SUP
ok $? "drained"
# the next start loads nothing again
start_sv
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
sleep 2
ok $(tail -n 20 "$T/sup.log" | grep -q "needs its initial load\|resumes its initial load"; [ $? = 1 ]; echo $?) \
	"a finished load is not run again"
kill -TERM $SUP; wait $SUP
drop_slot $S
done_testing
