#!/usr/bin/env bash
# Unchanged TOAST values and the documents that must keep them.
#  1. a primary-key move of a row with an out-of-line value: the moved
#     document is completed from the old one; then kill -9 of everything
#     and a restart: the moved document still has its value.
#  2. found by make chaos (seed 1002 on PostgreSQL: two documents lacked
#     "pad" for good): updates during the initial load of rows whose copies
#     were read before the updates but reach the shaper after them (the
#     loader's output is late, tests/helper/delay-frames.py). An update
#     has nothing to complete its unchanged value from and is written
#     without it; the copy, older, loses to it by version. The shaper
#     follows the late copy with a fill of the document the update wrote
#     (framing.md §5), which the writer applies where the value is still
#     missing. Three rows: one updated twice (the fill completes the
#     second update's document), one whose key moves (the copy of the old
#     key fills the new one), one untouched; then the index must equal the
#     table.
. "$(dirname "$0")/../lib.sh"

SEL="json_build_object('id',id,'v',v,'pad',pad)"
BIG="(select string_agg(md5(g::text), '') from generate_series(1, 200) g)"

# --- 1. a key move replayed after kill -9
S=p2o_toastmv
drop_slot $S; os_drop ${S}_tmv
# storage external: a large value goes out of line uncompressed, always
psql_q -c "drop table if exists tmv; create table tmv (id int primary key, v int, pad text);
	alter table tmv alter column pad set storage external"
METRICS_PORT=$(free_port)
# checkpoints seldom: what is written after the first one is replayed
CKPT_MS=600000 mkconfig "$T/cfg.yaml" $S $S tmv
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "pipeline up"
psql_q -c "insert into tmv values (1, 0, $BIG)"
check "the row with its large value lands" -- wait_equal tmv ${S}_tmv 30 "$SEL"
psql_q -c "update tmv set id = 2 where id = 1"
check "the moved document keeps the value" -- wait_equal tmv ${S}_tmv 30 "$SEL"
pkill -KILL -f -- "-c $T/cfg.yaml"; wait $SUP 2>/dev/null
pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "pipeline up again, replaying the move"
sleep 3
check "after the replay the moved document still has its value" -- wait_equal tmv ${S}_tmv 20 "$SEL"
kill -TERM $SUP; wait $SUP
drop_slot $S

# --- 2. updates the load's late copies cannot complete
S=p2o_toastld
drop_slot $S; drop_loads $S tld; os_drop ${S}_tld
psql_q -c "drop table if exists tld; create table tld (id int primary key, v int, pad text);
	alter table tld alter column pad set storage external;
	insert into tld select g, 0, $BIG || g from generate_series(1, 3) g"
cat > "$T/lateload" <<EOF
#!/usr/bin/env bash
exec "$P2O_BIN/loader" "\$@" > >(exec 3>&-; exec python3 "$TOP/tests/helper/delay-frames.py" 8)
EOF
chmod +x "$T/lateload"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg2.yaml" $S $S tld
pg2osync-supervise -c "$T/cfg2.yaml" --stage loader="$T/lateload" > "$T/sup2.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "read as one range\|range 1 of 1 read" "$T/sup2.log"
ok $? "the loader has read the rows (its output is late)"
psql_q -c "update tld set v = 1 where id = 1"
psql_q -c "update tld set v = 2 where id = 1"
psql_q -c "update tld set id = 12 where id = 2"
wait_for 60 grep -q "finished: every table is loaded" "$T/sup2.log"; ok $? "the load finishes"
check "the updated documents have the values their late copies held" -- wait_equal tld ${S}_tld 20 "$SEL"
n=$(grep -c "filled from a late copy" "$T/sup2.log")
[ "$n" -eq 2 ]; ok $? "two documents were filled from late copies (log lines: $n)"
pkill -KILL -f -- "-c $T/cfg2.yaml"; wait $SUP 2>/dev/null; sleep 1
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" "$T/sup2.log" | tail -n 20 | sed 's/^/#   /'; }
drop_slot $S
done_testing
