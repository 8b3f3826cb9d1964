#!/usr/bin/env bash
# The initial load into a cluster of three nodes (run-with.sh --os-cluster),
# target.urls naming all three, into an index of 3 shards and 1 replica:
# once two of the load's ranges are recorded, the first node listed - a
# data node, the one every program asks first - is killed -9, and started
# again 20 s later; meanwhile rows change beside the load. The load
# suspends the replicas, so the shard that node held is missing while it
# is away and its writes wait; the pipeline must ride it out and finish:
# the index equal to the table, the index's replica restored, and the
# pipeline never exiting for good (the supervisor running throughout).
# Fails when: a request that found the node gone is not moved to another
# node (the pipeline stops while the cluster serves), a write the missing
# shard refused is taken as written (documents missing), or the load ends
# without restoring the replica.
. "$(dirname "$0")/../lib.sh"
needs_cluster

# the helpers read the cluster through the node that is never killed
OS_URL=$OSC_URL3
check "the cluster has its three nodes" -- cluster_whole
S=p2o_cload
drop_slot $S; os_drop ${S}_cl; drop_loads $S cl
psql_q <<'SQL'
drop table if exists cl;
create table cl (id int primary key, title text, n numeric(12,2), pad text);
insert into cl select g, 'row ' || g, g / 7.0, repeat(md5(g::text), 4)
	from generate_series(1, 160000) g;
SQL
curl -sS -XPUT "$OS_URL/${S}_cl" -H 'Content-Type: application/json' \
	-d '{"settings":{"index":{"number_of_shards":3,"number_of_replicas":1}}}' >/dev/null
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S cl
set_urls "$T/cfg.yaml" $OSC_URLS
sed -i "s/^engine:\$/engine:\n  write_concurrency: 2/" "$T/cfg.yaml"
metric() { metrics_text | awk -v s="$1" '$1 == s { print $2 }'; }
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
ranges_done() { [ "$(metric 'pg2osync_load_ranges_done{table="public.cl"}')" -ge 2 ] 2>/dev/null; }
wait_for 300 ranges_done
ok $? "two ranges of the load recorded ($(metric 'pg2osync_load_ranges_done{table="public.cl"}') of $(metric 'pg2osync_load_ranges{table="public.cl"}'))"
r=$(curl -s "$OS_URL/${S}_cl/_settings?flat_settings=true" | jq -r '.["'${S}_cl'"].settings["index.number_of_replicas"]')
ok $([ "$r" = 0 ]; echo $?) "the load suspended the replica ($r)"

cluster_node kill 1
t0=$SECONDS
diag "node 1 ($OSC_URL1) killed at range $(metric 'pg2osync_load_ranges_done{table="public.cl"}')"
psql_q -c "delete from cl where id in (7, 150007); insert into cl values (160001, 'inserted while a node was down', 1, 'x');
	update cl set title = 'updated while a node was down' where id in (9, 159990)"
sleep 20
ok $(kill -0 $SUP 2>/dev/null; echo $?) "the pipeline runs on while the node is away"
# a program's first request goes to the first node listed
pg2osync status -c "$T/cfg.yaml" --json > "$T/status.json" 2> "$T/status.err"; st=$?
ok $([ $st = 0 ] && jq -e '.loads[0].state == "loading"' "$T/status.json" >/dev/null; echo $?) \
	"pg2osync status reads the load's progress through the nodes left (exit $st)"
[ $st = 0 ] || sed 's/^/#   /' "$T/status.err"
cluster_node start 1 > "$T/node1.log" 2>&1
ok $? "node 1 is back after $((SECONDS - t0)) s"
psql_q -c "update cl set title = 'updated after the node came back' where id = 11; delete from cl where id = 13"

load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 600 load_done
ok $? "the load finished"
SEL="json_build_object('id',id,'title',title,'n',n::text,'pad',pad)"
check "the index equals the table, every document" -- wait_equal cl ${S}_cl 120 "$SEL"
for id in 7 13 150007; do
	ok $([ "$(os_get /${S}_cl/_doc/$id | jq -r .found)" = false ]; echo $?) "deleted row $id stays absent"
done
ok $([ "$(os_get /${S}_cl/_doc/159990 | jq -r ._source.title)" = "updated while a node was down" ]; echo $?) \
	"an update made while the node was down wins over the copy"
r=$(curl -s "$OS_URL/${S}_cl/_settings?flat_settings=true" | jq -r '.["'${S}_cl'"].settings["index.number_of_replicas"]')
ok $([ "$r" = 1 ]; echo $?) "the replica is restored once the load is done ($r)"
h=$(curl -s -m 200 "$OS_URL/_cluster/health/${S}_cl?wait_for_status=green&timeout=180s" | jq -r .status)
ok $([ "$h" = green ]; echo $?) "and the index is whole again, every copy assigned ($h)"
diag "nodes left and back: $(grep -cE "target node '[^']*' left" "$T/sup.log") and $(grep -cE "target node '[^']*' answers again" "$T/sup.log") lines; failed requests the writer saw: $(metric pg2osync_sink_errors_total)"
r=$(metric pg2osync_reconnects_total)
ok $(kill -0 $SUP 2>/dev/null && [ "${r%.*}" = 0 ]; echo $?) "the pipeline never exited, not even to restart ($r restarts)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 40 | sed 's/^/#   /'; tail -n 5 "$T/node1.log" | sed 's/^/#   /'; }
drop_slot $S; os_drop ${S}_cl
done_testing
