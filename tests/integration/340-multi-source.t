#!/usr/bin/env bash
# Three sources in one process: pg2osync-supervise --config-dir with two
# PostgreSQL databases and one MariaDB database, a file each. All three
# load and stream; one source's index blocked (index.blocks.write) holds
# that source alone - its /ready/<name> says it waits, the others' indices
# take every row written meanwhile - and it catches up once the block is
# lifted; pg2osync status names what the supervisor says of each; a file
# added by SIGHUP whose table does not exist halts that source alone
# ('source <name> halted: ...', /ready/<name>, pg2osync_source_state)
# while the three stream, and removing it stops it; kill -9 of one stage
# of each pipeline under writes, and of the whole process, then equal by
# content; SIGTERM drains all three, exit 0.
# Fails when: a source's trouble stops another, a row is lost or left
# behind, a halted source is not said, or the drain leaves one behind.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ] || [ -z "${PGHOST:-}" ]; then
	echo "1..0 # skip needs --pg --mariadb --os"; exit 0
fi

as_super() { psql -X -q -At -h "$P2O_SERVERS_DIR/pg" -U postgres -d postgres "$@"; }
D=$T/conf.d
mkdir -p "$D"
METRICS_PORT=$(free_port)
M="http://127.0.0.1:$METRICS_PORT"
I1=p2o_ms_pg1_items I2=p2o_ms_pg2_items I3=p2o_ms_my_items

# two PostgreSQL databases on one server, each a slot of its own (an
# earlier run's slot in the second database is dropped before it)
for s in p2o_ms1 p2o_ms2 p2o_ms3; do drop_slot $s; done
as_super -c "drop database if exists p2o_ms2" -c "create database p2o_ms2 owner $PGUSER" >/dev/null
export P2O_MS2_URL="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/p2o_ms2"
psql2() { psql -X -q -v ON_ERROR_STOP=1 -At -d p2o_ms2 "$@"; }
export MY_SERVER_ID=4203
my_fresh_stream items_ms
for ix in $I1 $I2 $I3; do os_drop $ix; done
psql_q -c "drop table if exists items_ms; create table items_ms (id int primary key, v text);
	insert into items_ms select g, 'one ' || g from generate_series(1, 500) g"
psql2 -c "create table items_ms (id int primary key, v text);
	insert into items_ms select g, 'two ' || g from generate_series(1, 500) g"
my_sql "DROP TABLE IF EXISTS items_ms; CREATE TABLE items_ms (id int PRIMARY KEY, v varchar(40));
	INSERT INTO items_ms SELECT seq, CONCAT('three ', seq) FROM seq_1_to_500"

pgfile() {	# pgfile FILE NAME SLOT URL-ENV INDEX
	cat > "$1" <<EOF
source:
  url_env: $4
  name: $2
  slot_name: $3
  publication: $3
  reconnect_max: 30
  reconnect_backoff_ms: 500
target:
  url: $OS_URL
$(target_keys)
sync:
  items:
    table: public.items_ms
    index: $5
engine:
  checkpoint_interval_ms: 200
EOF
}
pgfile "$D/pg1.yaml" pg-one p2o_ms1 P2O_TEST_URL $I1
pgfile "$D/pg2.yaml" pg-two p2o_ms2 P2O_MS2_URL $I2
# the one listener, in the file of the source whose index is blocked
# below (ready_stall_s is its own)
printf 'metrics:\n  bind: 127.0.0.1:%s\n  ready_stall_s: 5\n' "$METRICS_PORT" >> "$D/pg2.yaml"
cat > "$D/my.yaml" <<EOF
source:
  url_env: P2O_MYSQL_URL
  name: maria
  server_id: $MY_SERVER_ID
  reconnect_max: 30
  reconnect_backoff_ms: 500
target:
  url: $OS_URL
$(target_keys)
sync:
  items:
    table: $MYSQL_DB.items_ms
    index: $I3
engine:
  checkpoint_interval_ms: 200
EOF

SEL="json_build_object('id',id,'v',v)"
MSEL="JSON_OBJECT('id', id, 'v', v)"
eq1() { wait_equal items_ms $I1 "$1" "$SEL"; }
eq2() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		curl -sS -XPOST "$OS_URL/$I2/_refresh" >/dev/null 2>&1
		psql2 -c "select coalesce(json_agg($SEL),'[]') from items_ms t" > "$T/cmp2.src" &&
			python3 "$TOP/tests/compare.py" "$OS_URL" $I2 "$T/cmp2.src" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	python3 "$TOP/tests/compare.py" "$OS_URL" $I2 "$T/cmp2.src"
}
eq3() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		my_compare items_ms $I3 "$MSEL" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	my_compare items_ms $I3 "$MSEL"
}
all_equal() { eq1 "$1" && eq2 "$1" && eq3 "$1"; }
write_all() {	# write_all FROM TO: inserts, updates and deletes in the three
	psql_q -c "insert into items_ms select g, 'one ' || g from generate_series($1, $2) g;
		update items_ms set v = 'one again ' || id where id % 7 = 0 and id <= $2;
		delete from items_ms where id % 11 = 0 and id <= $2" >/dev/null
	psql2 -c "insert into items_ms select g, 'two ' || g from generate_series($1, $2) g;
		update items_ms set v = 'two again ' || id where id % 5 = 0 and id <= $2;
		delete from items_ms where id % 13 = 0 and id <= $2" >/dev/null
	my_sql "INSERT INTO items_ms SELECT seq, CONCAT('three ', seq) FROM seq_$1_to_$2;
		UPDATE items_ms SET v = CONCAT('three again ', id) WHERE id % 3 = 0 AND id <= $2;
		DELETE FROM items_ms WHERE id % 17 = 0 AND id <= $2"
}
start() {
	pg2osync-supervise --config-dir "$D" >> "$T/sup.log" 2>&1 &
	SUP=$!; cleanup_add $SUP
}
ready() { curl -sf "$M/ready" >/dev/null; }

start
wait_for 120 ready
ok $? "three sources in one process: /ready says every one is up"
if ! kill -0 $SUP 2>/dev/null; then
	sed 's/^/#   /' "$T/sup.log" | tail -n 20; done_testing; exit 1
fi
ok $(grep -q "3 sources in '$D': maria, pg-one, pg-two" "$T/sup.log"; echo $?) "the supervisor names them"
check "each loads its table (by content)" -- all_equal 90
write_all 501 700
check "and streams its changes" -- all_equal 60
ok $([ "$(pgrep -c -f -- "ckpt -c $D/")" = 3 ] && [ "$(pgrep -c -f -- "writer -c $D/")" = 3 ]; echo $?) \
	"each its own stages: $(pgrep -c -f -- "ckpt -c $D/") ckpt, $(pgrep -c -f -- "writer -c $D/") writers"
ok $(grep -q 'capture-mysql\[maria\]: info:' "$T/sup.log" && grep -q 'capture-pg\[pg-two\]: info:' "$T/sup.log"; echo $?) \
	"every stage's lines name their source"
pg2osync status --config-dir "$D" > "$T/status" 2>&1
ok $([ "$(grep -c '^supervisor  ready: streaming$' "$T/status")" = 3 ]; echo $?) \
	"pg2osync status --config-dir shows what the supervisor says of each ($(grep -c '^supervisor  ready' "$T/status") of 3)"
got=$(pg2osync status --config-dir "$D" --source pg-two --json 2>/dev/null | jq -r .checkpoint.instance)
ok $(echo "$got" | grep -q ":$SUP\$"; echo $?) "the checkpoint names the process that wrote it ($got)"

# one source's index blocked: it alone waits
curl -sf -XPUT "$OS_URL/$I2/_settings" -H 'content-type: application/json' \
	-d '{"index.blocks.write": true}' >/dev/null
write_all 701 900
others() { eq1 60 && eq3 60; }
check "the two others take every row meanwhile" -- others
stalled() { curl -s "$M/ready/pg-two" | grep -q '^not ready: stalled: '; }
wait_for 30 stalled
ok $? "the blocked one's /ready/pg-two says it waits: $(curl -s "$M/ready/pg-two" | head -c 120)"
ok $(curl -sf "$M/ready/pg-one" >/dev/null && curl -sf "$M/ready/maria" >/dev/null; echo $?) \
	"while /ready/pg-one and /ready/maria stay ready"
ok $(curl -s "$M/metrics" | grep -q '^pg2osync_stalled{source="pg-two"} 1$'; echo $?) \
	"pg2osync_stalled{source=\"pg-two\"} is 1"
n2=$(os_count $I2); t2=$(psql2 -c "select count(*) from items_ms")
ok $([ "$n2" != "$t2" ]; echo $?) "nothing of its rows landed ($n2 documents, $t2 rows)"
curl -sf -XPUT "$OS_URL/$I2/_settings" -H 'content-type: application/json' \
	-d '{"index.blocks.write": null}' >/dev/null
check "the block lifted, it catches up" -- eq2 90
wait_for 30 ready
ok $? "and /ready is 200 again"

# a source that cannot run: halted, alone
sed -e 's/name: pg-two/name: pg-bad/' -e 's/p2o_ms2/p2o_ms3/g' -e 's/items_ms/no_such_table/' \
	-e "s/index: $I2/index: p2o_ms_bad/" "$D/pg2.yaml" > "$D/pg3.yaml"
sed -i -e 's/P2O_MS2_URL/P2O_TEST_URL/' -e '/^metrics:/,$d' "$D/pg3.yaml"
kill -HUP $SUP
wait_for 60 grep -q "source pg-bad halted: " "$T/sup.log"
ok $? "a file added by SIGHUP whose table is not there: $(grep -o "source pg-bad halted: .*" "$T/sup.log" | head -c 150)"
ok $(curl -s "$M/ready/pg-bad" | grep -q '^not ready: halted: '; echo $?) "/ready/pg-bad says halted"
ok $(curl -s "$M/metrics" | grep -q '^pg2osync_source_state{source="pg-bad",state="halted"} 1$'; echo $?) \
	"pg2osync_source_state{source=\"pg-bad\",state=\"halted\"} 1"
pg2osync status --config-dir "$D" --source pg-bad > "$T/status" 2>&1
ok $(grep -q '^supervisor  not ready: halted: ' "$T/status"; echo $?) "pg2osync status says it: $(grep '^supervisor' "$T/status" | head -c 120)"
write_all 901 1000
check "the three others stream on" -- all_equal 60
rm "$D/pg3.yaml"
kill -HUP $SUP
wait_for 30 grep -q "source pg-bad stopped: its file" "$T/sup.log"
ok $? "its file removed, SIGHUP: it is gone"
ok $([ "$(curl -s -o /dev/null -w '%{http_code}' "$M/ready/pg-bad")" = 404 ] && ready; echo $?) \
	"/ready/pg-bad 404, /ready 200"
drop_slot p2o_ms3

# kill -9 of a stage of each pipeline, under writes
( for i in $(seq 0 19); do write_all $((1001 + i * 20)) $((1020 + i * 20)); sleep 0.2; done ) &
W=$!; cleanup_add $W
sleep 1
pkill -KILL -f -- "capture-pg -c $D/pg1.yaml"
pkill -KILL -f -- "writer -c $D/pg2.yaml"
pkill -KILL -f -- "shaper -c $D/my.yaml"
sleep 1
pkill -KILL -f -- "ckpt -c $D/pg2.yaml"
wait $W
wait_for 60 ready
ok $? "a stage of each killed -9: each restarts"
ok $([ "$(grep -c 'restarting the pipeline' "$T/sup.log")" -ge 3 ]; echo $?) \
	"each on its own ($(grep -c 'restarting the pipeline' "$T/sup.log") restarts)"
check "equal by content" -- all_equal 90

# kill -9 of the whole process, under writes
( for i in $(seq 0 9); do write_all $((1401 + i * 20)) $((1420 + i * 20)); sleep 0.2; done ) &
W=$!; cleanup_add $W
sleep 1
for p in $(pgrep -f -- "$D"); do kill -KILL "$p" 2>/dev/null; done
wait $SUP 2>/dev/null
wait $W
start
wait_for 120 ready
ok $? "the whole process killed -9 and started again"
check "equal by content" -- all_equal 90

kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains all three: exit 0"
ok $([ "$(grep -c 'info: stopped after draining' "$T/sup.log")" -ge 3 ]; echo $?) \
	"each stopped after draining ($(grep -c 'info: stopped after draining' "$T/sup.log"))"
ok $([ -z "$(pgrep -f -- "-c $D/")" ]; echo $?) "nothing of theirs runs"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | grep -v ' debug: ' | tail -n 60
for s in p2o_ms1 p2o_ms2; do drop_slot $s; done
as_super -c "drop database if exists p2o_ms2" >/dev/null 2>&1
done_testing
