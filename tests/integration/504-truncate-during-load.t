#!/usr/bin/env bash
# A truncate that the stream delivers after the load has already copied
# the rows written after it (found by make chaos, seed 103 on MariaDB).
# The capture lags (its output goes through tests/helper/delay-frames.py),
# the loader starts late (a wrapper sleeps first); meanwhile the table is
# truncated and filled again. The loader copies the new rows, with a
# version newer than the truncate; the stream's truncate then clears the
# index, and the stream's inserts of the same rows, older than the copies,
# lost to the tombstones a clear by _delete_by_query left at the copies'
# versions. The clear deletes at the truncate's version instead: the
# copies, newer, stay (the log says how many), and nothing may be missing:
# the index must equal the table. Runs on PostgreSQL and, when it is
# there, MariaDB.
. "$(dirname "$0")/../lib.sh"

CAPDELAY=${CAPDELAY:-10}
mkwrap() {	# mkwrap NAME REAL: the stage REAL with its stdout delayed
	cat > "$T/$1" <<EOF
#!/usr/bin/env bash
exec "$P2O_BIN/$2" "\$@" > >(exec 3>&-; exec python3 "$TOP/tests/helper/delay-frames.py" $CAPDELAY)
EOF
	chmod +x "$T/$1"
}
cat > "$T/lateloader" <<EOF
#!/usr/bin/env bash
sleep 2
exec "$P2O_BIN/loader" "\$@"
EOF
chmod +x "$T/lateloader"
mkwrap slowcap-pg capture-pg
mkwrap slowcap-my capture-mysql

# --- PostgreSQL
S=p2o_trload
drop_slot $S; drop_loads $S tl; os_drop ${S}_tl
psql_q -c "drop table if exists tl; create table tl (id int primary key, note text);
	insert into tl select g, 'before ' || g from generate_series(1, 300) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S tl
pg2osync-supervise -c "$T/cfg.yaml" --stage capture="$T/slowcap-pg" --stage loader="$T/lateloader" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 slot_active $S; ok $? "PostgreSQL: the capture streams, the loader has not started"
psql_q -c "truncate tl; insert into tl select g, 'after ' || g from generate_series(1, 200) g"
wait_for 60 grep -q "cleared index '${S}_tl'" "$T/sup.log"
ok $? "PostgreSQL: the stream's truncate reaches the writer after the copies"
check "PostgreSQL: the index equals the table after a truncate the load copied past" -- \
	wait_equal tl ${S}_tl 40 "json_build_object('id',id,'note',note)"
grep -q "cleared index '${S}_tl': [0-9]* deleted, [1-9][0-9]* written after the truncate kept" "$T/sup.log"
ok $? "PostgreSQL: the clear kept the copies newer than the truncate: $(grep -o "cleared index '${S}_tl'.*" "$T/sup.log" | head -n 1)"
pkill -KILL -f -- "-c $T/cfg.yaml"; wait $SUP 2>/dev/null; sleep 1
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 20 | sed 's/^/#   /'; }
drop_slot $S

# --- MariaDB
if [ -n "${MYSQL_HOST:-}" ] && command -v mariadb >/dev/null; then
	_n=$_tap_n _f=$_tap_fail T0=$T
	. "$TOP/tests/mysql-lib.sh"
	rm -rf "$T"; T=$T0 _tap_n=$_n _tap_fail=$_f
	MY_SERVER_ID=4258 my_fresh_stream tl
	os_drop tl58_tl
	my_sql "DROP TABLE IF EXISTS tl; CREATE TABLE tl (id int PRIMARY KEY, note varchar(40));
		INSERT INTO tl SELECT seq, CONCAT('before ', seq) FROM seq_1_to_300"
	METRICS_PORT=$(free_port)
	MY_SERVER_ID=4258 my_config "$T/mcfg.yaml" tl58 tl
	pg2osync-supervise -c "$T/mcfg.yaml" --stage capture="$T/slowcap-my" --stage loader="$T/lateloader" > "$T/msup.log" 2>&1 &
	SUP=$!; cleanup_add $SUP
	wait_for 60 grep -q "binlog dump" "$T/msup.log"; ok $? "MariaDB: the capture streams, the loader has not started"
	my_sql "TRUNCATE TABLE tl; INSERT INTO tl SELECT seq, CONCAT('after ', seq) FROM seq_1_to_200"
	wait_for 60 grep -q "cleared index 'tl58_tl'" "$T/msup.log"
	ok $? "MariaDB: the stream's truncate reaches the writer after the copies"
	check "MariaDB: the index equals the table after a truncate the load copied past" -- \
		my_equal tl tl58_tl 40 "JSON_OBJECT('id', id, 'note', note)"
	diag "MariaDB: $(grep -o "cleared index 'tl58_tl'.*" "$T/msup.log" | head -n 1)"
	pkill -KILL -f -- "-c $T/mcfg.yaml"; wait $SUP 2>/dev/null
	[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/msup.log" | tail -n 20 | sed 's/^/#   /'; }
else
	skip "MariaDB: no server"
fi
done_testing
