#!/usr/bin/env bash
# The initial load of 50 tables writing one index, killed: kill -9 of every
# process once some tables are loaded and others are not; while it is down
# rows of both kinds are deleted, inserted and updated. After the restart
# the index must equal the tables by content, stay suspended while any
# section writing it still loads, and have its own refresh interval back
# once the last one is done - restored once, and not undone by the next
# start.
. "$(dirname "$0")/../lib.sh"

S=p2o_lshared
N=50
IX=${S}_all
tabs=$(seq -f 'c%02g' 1 $N)
drop_slot $S
os_drop $IX
drop_loads $S $tabs
# table k holds the ids k*100000+1.. : one id per row across the tables
psql_q -c "do \$\$ begin for i in 1..$N loop
	execute format('drop table if exists c%s', lpad(i::text, 2, '0'));
	execute format('create table c%s (id int primary key, v int not null, note text)', lpad(i::text, 2, '0'));
	execute format('insert into c%s select %s + g, g, ''row '' || g from generate_series(1, 2000) g',
		lpad(i::text, 2, '0'), i * 100000);
	end loop; end \$\$" || exit 1
ALL="(select * from $(echo $tabs | sed 's/ / union all select * from /g'))"
curl -sS -XPUT "$OS_URL/$IX" -H 'Content-Type: application/json' \
	-d '{"settings":{"index":{"refresh_interval":"3s"}}}' >/dev/null
METRICS_PORT=$(free_port)
mkhead "$T/cfg.yaml" $S
{
	echo "sync:"
	for t in $tabs; do
		printf '  %s:\n    table: public.%s\n    index: %s\n    id: "{id}"\n' $t $t $IX
	done
} >> "$T/cfg.yaml"
setting() {	# the index's own refresh interval, or "null"
	curl -s "$OS_URL/$IX/_settings?flat_settings=true" | jq -r --arg i "$IX" '.[$i].settings["index.refresh_interval"] // "null"'
}
finished="initial load of 'public.c[0-9]+' finished"

sup_start
kill_at_line "$T/sup.log" "$finished" 5 120
ok $? "killed -9 with $(log_count "$T/sup.log" "$finished") of $N tables loaded"
ok $(pgrep -f -- "-c $T/cfg.yaml" >/dev/null; [ $? = 1 ]; echo $?) "every process is gone"
done1=$(log_count "$T/sup.log" "$finished")
ok $([ "$done1" -lt $N ]; echo $?) "some tables were still to load ($done1 of $N done)"
r=$(setting)
ok $([ "$r" = -1 ]; echo $?) "the shared index is suspended ($r)"
# both kinds of table: c01 is loaded, c50 is not
psql_q -c "delete from c01 where id = 100003; update c01 set note = 'updated while down' where id = 100005;
	insert into c50 values (5009999, 1, 'inserted while down'); delete from c50 where id = 5000007;
	update c50 set note = 'updated while down' where id = 5000011"

sup_start
psql_q -c "update c49 set note = 'updated after restart' where id = 4901999; delete from c48 where id = 4801998"
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 300 load_done
ok $? "the load finished after the restart"
check "the index equals the $N tables, every document" -- \
	wait_equal "$ALL" $IX 60 "json_build_object('id',id,'v',v,'note',note)"
for id in 100003 5000007 4801998; do
	ok $([ "$(os_get /$IX/_doc/$id | jq -r .found)" = false ]; echo $?) "deleted row $id stays absent"
done
ok $([ "$(os_get /$IX/_doc/100005 | jq -r ._source.note)" = "updated while down" ] &&
	[ "$(os_get /$IX/_doc/5000011 | jq -r ._source.note)" = "updated while down" ]; echo $?) \
	"updates made while everything was down win, in a loaded table and in one loaded after"
r=$(setting)
ok $([ "$r" = 3s ]; echo $?) "the index's own refresh interval is back after the interrupted load ($r)"
n=$(grep -c "restored the refresh interval and replicas of index '$IX'" "$T/sup.log")
ok $([ "$n" = 1 ]; echo $?) "restored once, by the last section to finish ($n)"
kill -TERM $SUP; wait $SUP
ok $? "drained"
curl -sS -XPUT "$OS_URL/$IX/_settings" -H 'Content-Type: application/json' \
	-d '{"index":{"refresh_interval":"4s"}}' >/dev/null
before=$(log_count "$T/sup.log" "needs its initial load|resumes its initial load")
sup_start
sleep 2
ok $([ "$(log_count "$T/sup.log" "needs its initial load|resumes its initial load")" = "$before" ]; echo $?) \
	"a finished load is not run again"
r=$(setting)
ok $([ "$r" = 4s ]; echo $?) "nor are the settings touched again ($r)"
kill -TERM $SUP; wait $SUP
drop_loads $S $tabs
os_drop $IX
drop_slot $S
done_testing
