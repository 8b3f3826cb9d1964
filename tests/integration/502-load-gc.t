#!/usr/bin/env bash
# A load against an index whose tombstones last one second
# (index.gc_deletes), while a client deletes rows ahead of the copy: a
# delete's tombstone is long gone by the time the copy reaches the row,
# so only the shaper's window stands between the copy and a resurrected
# document. No deleted row may come back.
. "$(dirname "$0")/../lib.sh"

S=p2o_lgc
drop_slot $S
os_drop ${S}_lg
curl -sS -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:$S%2Fload%2Fpublic.lg" >/dev/null 2>&1
psql_q <<'SQL'
drop table if exists lg;
create table lg (id int primary key, title text, pad text);
insert into lg select g, 'row ' || g, repeat('x', 200) from generate_series(1, 120000) g;
SQL
curl -sS -XPUT "$OS_URL/${S}_lg" -H 'Content-Type: application/json' \
	-d '{"settings":{"index":{"gc_deletes":"1s"}}}' >/dev/null
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S lg
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/sup.log"
ok $? "pipeline up, loading"
# deletes ahead of the copy, from the top of the key range down, while
# it runs
(
	for i in $(seq 0 59); do
		psql_q -c "delete from lg where id > 120000 - ($i + 1) * 500 and id <= 120000 - $i * 500 and id % 3 = 0"
		sleep 0.1
	done
) &
DEL=$!
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 300 load_done
ok $? "the load finished"
wait $DEL
check "the index equals the table" -- wait_equal lg ${S}_lg 60 "json_build_object('id',id,'title',title,'pad',pad)"
back=$(curl -s -XPOST "$OS_URL/${S}_lg/_refresh" >/dev/null
	curl -s "$OS_URL/${S}_lg/_count" -H 'Content-Type: application/json' \
	-d '{"query":{"range":{"id":{"gt":90000}}}}' | jq -r .count)
want=$(psql_q -c "select count(*) from lg where id > 90000")
ok $([ "$back" = "$want" ]; echo $?) "no deleted row came back ($back documents, $want rows above 90000)"
dropped=$(metrics_text | awk '$1 == "pg2osync_load_rows_superseded_total" { print $2 }')
diag "copies dropped by the window: $dropped"
kill -TERM $SUP; wait $SUP
drop_slot $S
done_testing
