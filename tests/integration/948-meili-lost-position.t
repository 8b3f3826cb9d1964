#!/usr/bin/env bash
# Recovery when the position is gone, on Meilisearch (a real server): a
# slot the server invalidated (max_slot_wal_keep_size) while the pipeline
# was down, with inserts, updates and deletes made meanwhile. On restart
# the tables are loaded again beside a new stream, and the sweep ('pg2osync
# verify --repair', which reads Meilisearch's documents back) removes the
# documents of the rows deleted while down: the index equals the table by
# content, and the sweep's marker in the state directory is cleared - so
# the next start does not sweep again.
OS_URL=${OS_URL:-http://127.0.0.1:9}	# no OpenSearch needed
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/meili-lib.sh"

S=p2o_meili_lost
IX=${S}_mlp
drop_slot $S
as_super() { psql -X -q -At -h "$P2O_SERVERS_DIR/pg" -U postgres -d postgres "$@"; }
restore() { as_super -c "alter system reset max_slot_wal_keep_size" -c "select pg_reload_conf()" > /dev/null 2>&1; }
trap 'restore; _cleanup' EXIT
psql_q <<'SQL'
drop table if exists mlp, mlp_fill;
create table mlp (id int primary key, v int not null, note text);
insert into mlp select g, 0, 'n' || g from generate_series(1, 300) g;
create table mlp_fill (id int, pad text);
SQL
meili_start; ok $? "$MEILI_KIND up"
meili_drop $IX
METRICS_PORT=$(free_port)
mkmeili "$T/cfg.yaml" $S $S mlp
stop_sup() { kill -TERM "$SUP" 2>/dev/null; wait "$SUP" 2>/dev/null; }
marker() { jq -r '.doc.pending' "$T/state/postgres%3A$S%2Fsweep" 2>/dev/null; }

sup_start; ok $? "pipeline up"
check "loaded: the index equals the table" -- meili_wait_equal mlp $IX 120
psql_q -c "update mlp set v = 1 where id <= 10"
check "streaming" -- meili_wait_equal mlp $IX 60
stop_sup
ck0=$(ckpt_lsn "$T/cfg.yaml")
ok $([ -n "$ck0" ]; echo $?) "a checkpoint is stored ($ck0)"

# while down: changes, then the server drops the WAL the slot needs
psql_q <<'SQL'
insert into mlp select g, 2, 'new' || g from generate_series(301, 350) g;
update mlp set v = 3, note = 'upd' where id between 20 and 49;
delete from mlp where id between 100 and 139;
SQL
as_super -c "alter system set max_slot_wal_keep_size = '16MB'" -c "select pg_reload_conf()" > /dev/null
psql_q -c "insert into mlp_fill select g, repeat(md5(g::text), 30) from generate_series(1, 20000) g"
for i in 1 2 3; do as_super -c "select pg_switch_wal()" -c "checkpoint" > /dev/null; done
is_lost() { [ "$(psql_q -c "select wal_status from pg_replication_slots where slot_name = '$S'")" = lost ]; }
wait_for 30 is_lost
ok $? "the server invalidated slot '$S' (wal_status lost)"
restore

sup_start; ok $? "pipeline up again"
grep -q "the stream's position is gone (capture-pg exited with 67" "$T/sup.log"
ok $? "the reload is said"
# beside the reload, the new stream carries changes
psql_q -c "delete from mlp where id between 200 and 204; insert into mlp values (1000, 9, 'during')"
swept() { grep -q "sweep: the documents of rows deleted while the position was gone are removed" "$T/sup.log"; }
wait_for 180 swept
ok $? "the sweep ran and was recorded"
ok $([ "$(marker)" = false ]; echo $?) "the marker of the sweep owed is cleared (pending: $(marker))"
check "the index equals the table by content: the rows deleted while down are gone" -- meili_wait_equal mlp $IX 60
meili_get "/indexes/$IX/documents/120" | jq -e '.code == "document_not_found"' >/dev/null
ok $? "a row deleted while down has no document"
! grep -q "sweep: 'pg2osync verify --repair' ended with" "$T/sup.log"
ok $? "the sweep never ended in failure"

# a restart now resumes: no second reload, no second sweep
stop_sup; sup_start; ok $? "restarted"
psql_q -c "update mlp set v = 5 where id = 1"
check "resumed from the new stream" -- meili_wait_equal mlp $IX 60
ok $([ "$(grep -c "the stream.s position is gone (capture-pg exited with 67" "$T/sup.log")" = 1 ] &&
	[ "$(grep -c "sweep: every table is loaded again" "$T/sup.log")" = 1 ]; echo $?) "no second reload and no second sweep"
stop_sup
[ "$_tap_fail" -eq 0 ] || { diag "supervisor log:"; grep -v ' info: ' "$T/sup.log" | tail -40 | sed 's/^/# /'; }
drop_slot $S
done_testing
