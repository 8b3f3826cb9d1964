#!/usr/bin/env bash
# Poll mode (source.mode: poll): a table read again a page at a time in
# the order of its poll column and key, by a role without REPLICATION and
# without a slot or a publication. validate asks for neither; the first
# round takes every row; inserts, updates and soft deletes (a row the
# section's soft_delete matches becomes a delete) follow; the whole process
# killed -9 mid-page resumes from the cursor the checkpoint stores (not
# from the first row), the capture killed -9 alone under writes too; the
# index then equals the table's live rows by content, and nothing was
# created on the server. pg2osync status shows each table's cursor, the
# rows behind it and the last round, and no slot, WAL or load; --caught-up
# judges by the rows; status changes nothing.
# Fails when: a polled change is lost, a soft delete leaves its document,
# a restart reads the table from its first row again, the mode asks
# for replication, or status shows a slot's facts (WAL, lag in bytes,
# slots, loads) for a poll or misjudges its cursor, rows or rounds.
. "$(dirname "$0")/../lib.sh"

S=p2o_poll IX=p2o_poll_items
as_super() { psql -X -q -At -h "$P2O_SERVERS_DIR/pg" -U postgres -d postgres "$@"; }
drop_slot $S; os_drop $IX
# an earlier run's cursors would be resumed from
curl -sS --max-time 30 -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres-poll:$S?refresh=true" >/dev/null 2>&1
psql_q -c "drop publication if exists $S" >/dev/null
psql_q <<'SQL'
drop view if exists poll_live;
drop table if exists poll_items;
drop sequence if exists poll_rev;
create sequence poll_rev;
create table poll_items (id int primary key, v text, deleted bool not null default false,
	rev bigint not null default nextval('poll_rev'));
create index on poll_items (rev, id);
create or replace function poll_bump() returns trigger language plpgsql as
	$$ begin new.rev := nextval('poll_rev'); return new; end $$;
create trigger poll_bump before update on poll_items for each row execute function poll_bump();
insert into poll_items (id, v) select g, 'row ' || g from generate_series(1, 20000) g;
create view poll_live as select * from poll_items where not deleted;
SQL
# a role that may read the table and nothing more: no REPLICATION
as_super -c "drop role if exists p2o_poll_ro" -c "create role p2o_poll_ro login password 'pollpw'" >/dev/null
psql_q -c "grant select on poll_items to p2o_poll_ro" >/dev/null
export P2O_POLL_URL="postgres://p2o_poll_ro:pollpw@$PGHOST:$PGPORT/$PGDATABASE"

METRICS_PORT=$(free_port)
cat > "$T/cfg.yaml" <<EOF
source:
  url_env: P2O_POLL_URL
  mode: poll
  poll_column: rev
  poll_interval_secs: 1
  poll_page_size: 50
  slot_name: $S
  publication: $S
  reconnect_max: 50
  reconnect_backoff_ms: 200
target:
  url: $OS_URL
$(target_keys)
sync:
  items:
    table: public.poll_items
    index: $IX
    soft_delete: "deleted = true"
engine:
  checkpoint_interval_ms: 100
metrics:
  bind: 127.0.0.1:$METRICS_PORT
EOF
SEL="json_build_object('id',id,'v',v,'deleted',deleted,'rev',rev)"

pg2osync validate -c "$T/cfg.yaml" > "$T/validate.out" 2>&1
ok $? "validate passes for a role without REPLICATION"
ok $(grep -qiE 'slot|publication|replication|wal_level' "$T/validate.out"; [ $? -ne 0 ]; echo $?) \
	"validate asks for no slot, publication or replication"
ok $(grep -q "table 'public.poll_items'.*polled in the order of 'rev'" "$T/validate.out"; echo $?) \
	"validate checks the table and its poll column"
[ $_tap_fail -gt 0 ] && sed 's/^/#   /' "$T/validate.out"
pg2osync bootstrap -c "$T/cfg.yaml" > "$T/boot.out" 2>&1
ok $(grep -q "poll mode (source.mode: poll): nothing to create" "$T/boot.out"; echo $?) \
	"bootstrap creates nothing"
pg2osync setup-sql -c "$T/cfg.yaml" --role p2o_poll_ro > "$T/setup.sql" 2>&1
ok $(grep -q 'GRANT SELECT ON TABLE "public"."poll_items"' "$T/setup.sql" &&
	! grep -qE 'CREATE PUBLICATION|LOGIN REPLICATION|ALTER SYSTEM|REPLICA IDENTITY' "$T/setup.sql"; echo $?) \
	"setup-sql grants SELECT and asks for no replication"

ckpt_pos() { ckpt -c "$T/cfg.yaml" get 2>/dev/null | jq -r '.pos // 0'; }
st_json() { pg2osync status -c "$T/cfg.yaml" --json 2>/dev/null; }

# status before the first start: no slot, WAL or load line for a poll
pg2osync status -c "$T/cfg.yaml" > "$T/st.out" 2>&1
st=$?
ok $([ $st = 0 ] && grep -q '^source .*poll mode' "$T/st.out" &&
	! grep -qE '^(slots|load) |WAL at|behind|does not exist' "$T/st.out"; echo $?) \
	"status before the first start: poll mode, no slot, WAL or load line (exit $st)"
ok $(grep -qE '^table +public.poll_items: cursor \(rev, id\) none yet \(read from its first row\)$' "$T/st.out"; echo $?) \
	"status before the first checkpoint lists the configured table, its cursor none yet"
[ $_tap_fail -gt 0 ] && sed 's/^/#   /' "$T/st.out"
st_json > "$T/st.json"
ok $(jq -e '.checkpoint == null and .rounds == null and (.tables | length) == 1 and
	.tables[0].table == "public.poll_items" and .tables[0].by == ["rev","id"] and
	.tables[0].cursor == null and .tables[0].rows_behind == null' "$T/st.json" >/dev/null; echo $?) \
	"status --json before the first checkpoint: the table, its cursor's columns, cursor null"
[ $_tap_fail -gt 0 ] && sed 's/^/#   /' "$T/st.json"
pg2osync status -c "$T/cfg.yaml" --max-retained-mb 10 > /dev/null 2> "$T/st.err"
st=$?
ok $([ $st = 64 ] && grep -q 'poll mode has no slot' "$T/st.err"; echo $?) \
	"status --max-retained-mb on a poll: a usage error, no slot (exit $st)"

# the whole process killed -9 in the middle of the first round
sup_start; ok $? "the poll pipeline comes up"
wait_for 120 sh -c "[ \$(ckpt -c '$T/cfg.yaml' get 2>/dev/null | jq -r '.pos // 0') -ge 20 ]"
kill_pipeline
p1=$(ckpt_pos)
ok $([ "$p1" -ge 20 ] && [ "$p1" -lt 400 ]; echo $?) "killed -9 mid-round, at page $p1 of 400"
ok $(ckpt -c "$T/cfg.yaml" get | jq -e '.text | fromjson | .at["public.poll_items"] | (.by == ["rev","id"] and (.v | length) == 2)' >/dev/null; echo $?) \
	"the checkpoint holds the table's cursor (its poll column and key)"
sup_start; ok $? "restarted"
ok $(grep -q "resuming the poll of 1 table(s) from the stored cursors (position $p1)" "$T/sup.log"; echo $?) \
	"the restart resumes from the stored cursor"
check "the first round ends equal by content" -- wait_equal poll_live $IX 120 "$SEL"

# status of a poll caught up: the cursor is the table's last row
wait_for 30 sh -c "pg2osync status -c '$T/cfg.yaml' --json 2>/dev/null | jq -e '.rounds != null' >/dev/null"
st_json > "$T/st.json"
last=$(psql_q -c "select rev || ',' || id from poll_items order by rev desc, id desc limit 1")
ok $(jq -e --arg last "$last" '.mode == "poll" and (has("slots") | not) and (has("loads") | not) and
	(has("position") | not) and (.checkpoint | has("lag_bytes") | not) and
	(.tables | length) == 1 and .tables[0].table == "public.poll_items" and
	.tables[0].by == ["rev","id"] and (.tables[0].cursor | join(",")) == $last and
	.tables[0].rows_behind == 0 and .tables[0].caught_up and
	.rounds.late == false and .rounds.interval_seconds == 1 and .rounds.age_seconds < 10' "$T/st.json" >/dev/null; echo $?) \
	"status --json: the table's cursor is its last row ($last), 0 rows behind, rounds keeping up, no slot, load or lag"
[ $_tap_fail -gt 0 ] && sed 's/^/#   /' "$T/st.json"
pg2osync status -c "$T/cfg.yaml" > "$T/st.out" 2>&1
ok $(grep -qE "^table +public.poll_items: cursor \(rev, id\) = \(${last/,/, }\), 0 row\(s\) behind" "$T/st.out" &&
	grep -qE '^rounds +the last ended .*: keeping up' "$T/st.out" &&
	! grep -qE '^(slots|load) |WAL at|MB behind|does not exist' "$T/st.out"; echo $?) \
	"status: the cursor, 0 rows behind, the rounds keeping up, no slot, WAL or load line"
[ $_tap_fail -gt 0 ] && sed 's/^/#   /' "$T/st.out"

# inserts, updates, soft deletes
psql_q -c "insert into poll_items (id, v) select g, 'new ' || g from generate_series(20001, 20100) g;
	update poll_items set v = v || ' changed' where id % 7 = 0;
	update poll_items set deleted = true where id % 11 = 0"
check "inserts, updates and soft deletes are indexed" -- wait_equal poll_live $IX 60 "$SEL"
c=$(os_count $IX); l=$(psql_q -c "select count(*) from poll_live")
ok $([ "$c" = "$l" ]; echo $?) "soft-deleted rows have no document ($c documents, $l live rows)"
psql_q -c "update poll_items set deleted = false where id = 11"
pg2osync status -c "$T/cfg.yaml" --caught-up --timeout 30 > "$T/st.out" 2>&1
st=$?
ok $([ $st = 0 ] && grep -qE '^caught up: checkpoint position [0-9]+$' "$T/st.out"; echo $?) \
	"status --caught-up after an update, the pipeline running: 0 (exit $st)"
[ $_tap_fail -gt 0 ] && sed 's/^/#   /' "$T/st.out"
check "a row no longer soft-deleted comes back" -- wait_equal poll_live $IX 30 "$SEL"

# one writer (the mode's documented limit: a second would commit a value
# below a cursor already past it) while the capture, then everything, dies
( i=0; while :; do i=$((i + 1)); id=$((RANDOM % 20100 + 1))
	psql_q -c "update poll_items set v = 'w$i', deleted = ($i % 5 = 0) where id = $id;
		insert into poll_items (id, v) values (30000 + $i, 'i$i')" >/dev/null 2>&1
	sleep 0.02; done ) &
W=$!; cleanup_add $W
for r in 1 2 3; do
	sleep 1.$((RANDOM % 10))
	pid=$(pgrep -f "/capture-pg -c $T/cfg.yaml" | head -n 1)
	[ -n "$pid" ] && kill -KILL "$pid"
	wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready" || diag "capture kill $r: not ready again"
done
sleep 1.$((RANDOM % 10))
kill_pipeline
sup_start; ok $? "restarted after kill -9 under writes"
sleep 2
kill $W; wait $W 2>/dev/null
check "equal by content after the kills under writes" -- wait_equal poll_live $IX 120 "$SEL"

ok $(psql_q -c "select count(*) from pg_replication_slots where slot_name = '$S'" | grep -qx 0; echo $?) \
	"no slot was created"
ok $(psql_q -c "select count(*) from pg_publication where pubname like '$S%'" | grep -qx 0; echo $?) \
	"no publication was created"

kill -TERM $SUP; wait $SUP; ok $? "SIGTERM drains, exit 0"

# the pipeline stopped: rows changed since are behind the cursor, and
# status, which reads only, changes neither the table nor the checkpoint
psql_q -c "update poll_items set v = v || ' late' where id in (1, 2, 3, 20050)"
sum() { psql_q -c "select md5(string_agg(id || ':' || v || ':' || deleted || ':' || rev, ',' order by id)) from poll_items"; }
before="$(sum) $(ckpt -c "$T/cfg.yaml" get 2>/dev/null)"
pg2osync status -c "$T/cfg.yaml" > "$T/st.out" 2>&1
ok $(grep -qE '^table +public.poll_items: cursor .*, 4 row\(s\) behind$' "$T/st.out"; echo $?) \
	"status with the pipeline stopped: the 4 rows updated since are behind the cursor"
[ $_tap_fail -gt 0 ] && sed 's/^/#   /' "$T/st.out"
pg2osync status -c "$T/cfg.yaml" --caught-up --timeout 3 > "$T/st.out" 2>&1
st=$?
ok $([ $st = 1 ] && grep -q '^not caught up after 3 s: checkpoint position' "$T/st.out"; echo $?) \
	"status --caught-up --timeout 3 with the pipeline stopped: 1 (exit $st)"
# a round is late past twice (interval + its length) and 10 s
wait_for 40 sh -c "pg2osync status -c '$T/cfg.yaml' --json 2>/dev/null | jq -e '.rounds.late' >/dev/null"
ok $? "the rounds are late once the pipeline has been stopped a while"
pg2osync status -c "$T/cfg.yaml" > "$T/st.out" 2>&1
ok $(grep -qE '^rounds +the last ended .*: LATE' "$T/st.out"; echo $?) "... and the lines say so"
after="$(sum) $(ckpt -c "$T/cfg.yaml" get 2>/dev/null)"
ok $([ "$before" = "$after" ]; echo $?) "status changed neither the table nor the checkpoint"
[ $_tap_fail -gt 0 ] && { diag "supervisor log:"; grep -v ' info: ' "$T/sup.log" | tail -n 40 | sed 's/^/#   /'; }
done_testing
