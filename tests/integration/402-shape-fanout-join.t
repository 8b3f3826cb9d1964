#!/usr/bin/env bash
# Rows that are more than one document, and documents that belong to
# another: a fan_out column writes one document per array element, an
# update adds and deletes elements, a delete removes them all; a join
# child lands on its parent's shard (routed by the parent's id), moves
# with its parent column, and a parent's delete takes its children along.
# Without parent-join (the Elasticsearch test node) the fan-out runs alone.
. "$(dirname "$0")/../lib.sh"
JOIN=
has_module parent-join && JOIN=1

S=p2o_shape_fj
drop_slot $S; drop_loads $S shp_products shp_questions shp_answers
os_drop shp_tags; os_drop shp_qa
psql_q <<'SQL'
drop table if exists shp_products, shp_questions, shp_answers;
create table shp_products (id int primary key, name text, tags text[]);
alter table shp_products replica identity full;
create table shp_questions (id int primary key, title text);
create table shp_answers (id int primary key, question_id int, body text);
alter table shp_answers replica identity full;
SQL
METRICS_PORT=$(free_port)
mkhead "$T/cfg.yaml" $S
cat >> "$T/cfg.yaml" <<'YAML'
sync:
  products:
    table: shp_products
    index: shp_tags
    fan_out:
      column: tags
      id: "{id}-{tag}"
      element: tag
YAML
[ -n "$JOIN" ] && cat >> "$T/cfg.yaml" <<'YAML'
  questions:
    table: shp_questions
    index: shp_qa
    id: "q{id}"
    join: {field: qa, name: question}
  answers:
    table: shp_answers
    index: shp_qa
    id: "a{id}"
    join: {field: qa, name: answer, parent: questions, column: question_id}
YAML
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "supervisor reports healthy"

# the ids in an index, sorted, one line
ids() {
	curl -sS -XPOST "$OS_URL/$1/_refresh" >/dev/null
	curl -sS "$OS_URL/$1/_search?size=100" | jq -r '[.hits.hits[]._id] | sort | join(" ")'
}
has_ids() { [ "$(ids "$1")" = "$2" ]; }

psql_q -c "insert into shp_products values (1, 'lamp', '{red,blue}'), (2, 'desk', '{oak}')"
wait_for 30 has_ids shp_tags "1-blue 1-red 2-oak"
ok $? "one document per element: $(ids shp_tags)"
doc=$(curl -sS "$OS_URL/shp_tags/_doc/1-red" | jq -c ._source)
ok $([ "$doc" = '{"id":1,"name":"lamp","tag":"red"}' ]; echo $?) "the row without the array, and the element: $doc"

psql_q -c "update shp_products set tags = '{blue,green}', name = 'lamp 2' where id = 1"
wait_for 30 has_ids shp_tags "1-blue 1-green 2-oak"
ok $? "an update adds and deletes elements: $(ids shp_tags)"
ok $(curl -sS "$OS_URL/shp_tags/_doc/1-blue" | jq -e '._source.name == "lamp 2"' >/dev/null; echo $?) \
	"an element that stays carries the row's new values"
psql_q -c "delete from shp_products where id = 1"
wait_for 30 has_ids shp_tags "2-oak"
ok $? "a delete removes every element: $(ids shp_tags)"
psql_q -c "update shp_products set tags = null where id = 2"
wait_for 30 has_ids shp_tags ""
ok $? "no array, no document"

if [ -z "$JOIN" ]; then
	for d in "parents and children in one index" "a child is routed to its parent" \
		"the join answers has_parent" "a moved child is routed to the new parent" \
		"and is one document" "a parent's delete cascades to its children" \
		"cascades are counted" "a truncate of the child table clears its relation only"; do
		skip "$d (no parent-join on this node)"
	done
else

psql_q -c "insert into shp_questions values (1, 'why?'), (2, 'how?'); insert into shp_answers values (10, 1, 'because'), (11, 1, 'just so'), (20, 2, 'like this')"
wait_for 30 has_ids shp_qa "a10 a11 a20 q1 q2"
ok $? "parents and children in one index: $(ids shp_qa)"
a=$(curl -sS "$OS_URL/shp_qa/_doc/a10?routing=q1")
ok $(echo "$a" | jq -e '._routing == "q1" and ._source.qa == {"name":"answer","parent":"q1"}' >/dev/null; echo $?) \
	"a child is routed to its parent: $(echo "$a" | jq -c '{_routing, qa: ._source.qa}')"
n=$(curl -sS "$OS_URL/shp_qa/_search" -H 'content-type: application/json' \
	-d '{"query":{"has_parent":{"parent_type":"question","query":{"ids":{"values":["q1"]}}}}}' | jq '.hits.total.value')
ok $([ "$n" = 2 ]; echo $?) "the join answers has_parent: q1 has $n children"

psql_q -c "update shp_answers set question_id = 2 where id = 11"
moved() { curl -sS "$OS_URL/shp_qa/_doc/a11?routing=q2" | jq -e '._source.qa.parent == "q2"' >/dev/null; }
wait_for 30 moved
ok $? "a child whose parent changed is routed to the new parent"
ok $([ "$(curl -sS "$OS_URL/shp_qa/_count?q=_id:a11" | jq .count)" = 1 ]; echo $?) "and is one document"

# the parent goes; its children in the source stay (no foreign key), the
# index takes them along: a join child has no meaning without its parent
psql_q -c "delete from shp_questions where id = 2"
wait_for 30 has_ids shp_qa "a10 q1"
ok $? "a parent's delete cascades to its children: $(ids shp_qa)"
cascaded() {
	c=$(metrics_text |
	    awk '/^pg2osync_join_cascades_total/ {print $2}')
	[ "${c:-0}" -ge 1 ]
}
wait_for 10 cascaded
ok $? "cascades are counted"

psql_q -c "truncate shp_answers"
wait_for 30 has_ids shp_qa "q1"
ok $? "a truncate of the child table clears its relation only: $(ids shp_qa)"
fi

kill -TERM $SUP; wait $SUP
ok $? "drains and exits 0"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
drop_slot $S
done_testing
