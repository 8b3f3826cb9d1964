#!/usr/bin/env bash
# Nested documents on MariaDB, killed: a load of 250,000 parents with
# their children (5 chunks) is killed -9 (every process) once a chunk is
# recorded and before the last; children change while it is down; after the restart a stream
# of child-change transactions (inserts, updates, moves to another
# parent, deletes) is killed -9 again in the middle. Afterwards every
# parent document equals its source rows by content: a child change whose
# parent was not yet rewritten when the pipeline died is replayed, never
# lost. Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

my_fresh_stream nc_parents
os_drop nc_parents
my_raw "DROP TABLE IF EXISTS nc_parents, nc_items;
CREATE TABLE nc_parents (id int PRIMARY KEY, name varchar(20));
CREATE TABLE nc_items (id int PRIMARY KEY, parent_id int, v int, note varchar(20), KEY (parent_id));
INSERT INTO nc_parents SELECT seq, CONCAT('p', seq) FROM seq_1_to_250000;
INSERT INTO nc_items SELECT seq, 1 + seq % 250000, seq, CONCAT('n', seq) FROM seq_1_to_500000"
ok $? "250,000 parents, 500,000 children"
METRICS_PORT=$(free_port)
my_config "$T/cfg.yaml" x
sed -i '/^sync:/,$d' "$T/cfg.yaml"
cat >> "$T/cfg.yaml" <<YAML
sync:
  parents:
    table: $MYSQL_DB.nc_parents
    index: nc_parents
    children:
      - {table: $MYSQL_DB.nc_items, field: items, foreign_key: parent_id, columns: [id, v]}
engine:
  checkpoint_interval_ms: 200
metrics:
  bind: 127.0.0.1:$METRICS_PORT
YAML
cat > "$T/spec" <<EOF
{"parents": "$T/p.jsonl", "collections": [{"field": "items", "kind": "array", "rows": "$T/i.jsonl"}]}
EOF
equal_once() {
	curl -sS --max-time 30 -XPOST "$OS_URL/nc_parents/_refresh" >/dev/null 2>&1
	my_raw "SELECT JSON_OBJECT('id', id, 'name', name) FROM nc_parents" > "$T/p.jsonl" &&
	my_raw "SELECT JSON_OBJECT('_fk', parent_id, '_k', id, 'id', id, 'v', v) FROM nc_items" > "$T/i.jsonl" &&
	python3 "$TOP/tests/helper/nest-expect.py" "$OS_URL" nc_parents "$T/spec"
}
wait_same() {
	local i
	for ((i = 0; i < $1 / 5; i++)); do
		equal_once > "$T/cmp.out" 2>&1 && return 0
		sleep 5
	done
	sed 's/^/# /' "$T/cmp.out" | tail -n 8
	return 1
}
kill_all() {	# every process at once, as a power cut would
	pkill -KILL -f "pg2osync-supervise -c $T/cfg.yaml"
	pkill -KILL -f -- "-c $T/cfg.yaml"
	sleep 1
	! pgrep -f -- "-c $T/cfg.yaml" >/dev/null
}

sv_start "$T/sup.log"
chunks_done() { [ "$(metric 'pg2osync_load_ranges_done{table="p2o.nc_parents"}')" -ge 1 ] 2>/dev/null; }
wait_for 300 chunks_done
done=$(metric 'pg2osync_load_ranges_done{table="p2o.nc_parents"}'); of=$(metric 'pg2osync_load_ranges{table="p2o.nc_parents"}')
ok $([ "${done:-0}" -ge 1 ] && [ "${done:-0}" -lt "${of:-0}" ]; echo $?) "the load recorded a chunk and not the last ($done of $of)"
kill_all
ok $? "kill -9 of every process during the load"
my_raw "INSERT INTO nc_items VALUES (900001, 3, 1, 'down'); UPDATE nc_items SET parent_id = 240000 WHERE id = 5;
	DELETE FROM nc_items WHERE id = 8; UPDATE nc_items SET v = -1 WHERE id = 119999"
sv_start "$T/sup.log"
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup.log"; }
wait_for 600 load_done
ok $? "the load finished after the restart"
grep -q "loader: info: resuming 'p2o.nc_parents' after chunk [1-9]" "$T/sup.log"
ok $? "and resumed after a recorded chunk"

# a stream of child changes, killed in the middle
changes() {
	local n=0 a b i end=$((SECONDS + 12))
	while [ $SECONDS -lt $end ]; do
		a=$((RANDOM * 8 % 250000 + 1)); b=$((RANDOM * 8 % 250000 + 1)); i=$((RANDOM * 16 % 500000 + 1))
		my_raw "START TRANSACTION;
		INSERT INTO nc_items VALUES ($i + 1000000 * ($b % 7 + 1), $a, $b, 'x') ON DUPLICATE KEY UPDATE v = v + 1;
		UPDATE nc_items SET parent_id = $b WHERE id = $i;
		DELETE FROM nc_items WHERE id = $i + 1 AND v % 5 = 0;
		COMMIT" && n=$((n + 1))
	done
	echo "$n" > "$T/changes.n"
}
changes &
CH=$!
sleep 5
kill_all
ok $? "kill -9 of every process during a stream of child changes"
sv_start "$T/sup.log"
wait $CH; n=$(cat "$T/changes.n")
ok $([ "${n:-0}" -gt 20 ]; echo $?) "the child changes ran on throughout: ${n:-0} transactions"
wait_same 240
ok $? "every parent equals its source rows after both crashes"
kill -TERM $SUP; wait $SUP
ok $? "drained"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; tail -n 40 "$T/sup.log" | sed 's/^/#   /'; }
done_testing
