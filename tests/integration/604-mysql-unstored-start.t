#!/usr/bin/env bash
# A MariaDB stream whose start was never stored. The server keeps no
# position for a reader, so a pipeline killed before its first checkpoint
# is stored starts again at the server's position of that later moment,
# and what changed in between is never streamed. Whatever the first run's
# stream had written into the index by then would stay there: a row it
# indexed and that was deleted in between is resurrected, a row whose key
# moved in between keeps its old document.
#
# Deterministic: the first run's ckpt never stores anything (a wrapper
# drops every put), so its stream has all the time it wants. Then the
# supervisor is killed (its stages drain at its death), then every
# other process; rows the first run's stream saw are deleted or moved,
# and a normal run loads the table: the index must equal it by content.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
if [ -z "${OS_URL:-}" ]; then echo "1..0 # skip needs --os"; exit 0; fi

IX=t77_t77
export MY_SERVER_ID=4242077
my_fresh_stream t77
os_drop $IX
my_sql "DROP TABLE IF EXISTS t77; CREATE TABLE t77 (id int PRIMARY KEY, v int NOT NULL, note varchar(40));
	INSERT INTO t77 SELECT seq, 1, CONCAT('fill ', seq) FROM seq_1_to_500"
METRICS_PORT=$(free_port)
RECONNECT_MAX=5 my_config "$T/cfg.yaml" t77 t77
SEL="JSON_OBJECT('id', id, 'v', v, 'note', note)"
stored() { curl -s --max-time 30 "$OS_URL/.pg2osync_meta/_doc/mysql:$MY_SERVER_ID" | jq -e .found >/dev/null; }

# ckpt as the first run has it: every request but put goes through, so
# the pipeline comes up and streams, and nothing is ever stored
cat > "$T/ckpt-nostore" <<SH
#!/usr/bin/env bash
grep --line-buffered -v '"k":"put"' | exec "$P2O_BIN/ckpt" "\$@"
SH
chmod +x "$T/ckpt-nostore"

pg2osync-supervise -c "$T/cfg.yaml" --stage ckpt="$T/ckpt-nostore" >> "$T/sup1.log" 2>&1 &
SUP=$!
cleanup_add $SUP
wait_for 60 healthy
ok $? "the first run is up, with a ckpt that stores nothing"
my_sql "UPDATE t77 SET v = 2, note = 'seen' WHERE id IN (5, 6, 7);
	INSERT INTO t77 VALUES (1000, 2, 'new'), (1001, 2, 'new')"
# long enough for the stream to index them, were it going to
in_index() { curl -s --max-time 30 "$OS_URL/$IX/_doc/$1" | jq -e .found >/dev/null; }
wait_for 8 in_index 1000
n=$(for id in 5 6 7 1000 1001; do in_index $id && echo $id; done | wc -l)
ok $([ "$n" = 0 ]; echo $?) "nothing the stream read past its start reached the index while the start was not stored ($n of 5 documents)"
stored
ok $([ $? != 0 ]; echo $?) "no checkpoint was stored"
# the supervisor alone first: its stages get SIGTERM at its death and
# drain what they hold into the index, which must be nothing past the
# start (the capture saw fd 3 end while held)
kill -KILL $SUP
wait $SUP 2>/dev/null
sleep 3
n=$(for id in 5 6 7 1000 1001; do in_index $id && echo $id; done | wc -l)
ok $([ "$n" = 0 ]; echo $?) "the supervisor killed: its stages drained nothing past the start ($n of 5 documents)"
pkill -KILL -f -- "-c $T/cfg.yaml"

# what the first run's stream saw, changed while nothing runs
my_sql "DELETE FROM t77 WHERE id IN (5, 1000); UPDATE t77 SET id = 2000 WHERE id = 6;
	UPDATE t77 SET id = 2001 WHERE id = 1001"

sv_start "$T/sup2.log"
wait_for 60 healthy
ok $? "the second run is up"
load_done() { grep -q "'loader' finished: every table is loaded" "$T/sup2.log"; }
wait_for 120 load_done
ok $? "the second run loaded the table"
my_sql "UPDATE t77 SET v = 3 WHERE id = 7; DELETE FROM t77 WHERE id = 8"
check "the index equals the table by content: nothing the first run streamed is resurrected" \
	-- my_equal t77 $IX 60 "$SEL"
stored
ok $? "the second run stored its checkpoint"
kill -TERM $SUP; wait $SUP
ok $? "drained, exit 0"
[ $_tap_fail -gt 0 ] && { diag "logs:"; grep -v ' info: ' "$T/sup1.log" "$T/sup2.log" | tail -n 40 | sed 's/^/#   /'; }
done_testing
