#!/usr/bin/env bash
# A frame truncated mid-write on each pipe: the stage that writes it dies
# (SIGKILL) after half a frame (tests/helper/cut-frames.py behind it, put
# in place with --stage NAME=PROG), once, while the initial load runs and
# a client writes. Pipes: events (capture -> shaper), loads (loader ->
# shaper, fd 4), ops (shaper -> writer), ckpt's answers (ckpt ->
# supervisor). Each time the reader logs "truncated frame: EOF after N of
# M bytes", the supervisor takes the writer's death as the cause (a
# temporary failure), restarts the pipeline, and the index equals the
# table. A stand-alone reader of a truncated file stops with exit 65
# (data), the documented code, naming the offset.
# Fails when: a fragment is acted on, the reader's 65 is taken as
# permanent (the pipeline stops), or a row is lost.
. "$(dirname "$0")/../lib.sh"

S=p2o_cut
SEL="json_build_object('id',id,'v',v)"
cat > "$T/load.sql" <<'SQL'
\set id random(1, 6000)
insert into cut values (:id, 1) on conflict (id) do update set v = cut.v + 1;
\set d random(1, 6000)
delete from cut where id = :d and v % 3 = 0;
SQL
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -n 1)
# stage program (in build/bin), frames passed before the cut, reader
SPECS=("capture:capture-pg:3:shaper: error: stdin" "loader:loader:40:shaper: error: load fd 4"
	"shaper:shaper:30:writer: error: stdin" "ckpt:ckpt:1:ckpt stdout")
for spec in "${SPECS[@]}"; do
	IFS=: read -r stage prog n reader <<< "$spec"
	drop_slot $S; drop_loads $S cut; os_drop ${S}_cut
	psql_q -c "drop table if exists cut; create table cut (id int primary key, v int);
		insert into cut select g, 0 from generate_series(1, 5000) g"
	cat > "$T/cut-$stage" <<EOF
#!/usr/bin/env bash
exec "$P2O_BIN/$prog" "\$@" > >(exec 3>&-; exec python3 "$TOP/tests/helper/cut-frames.py" $n "$T/cut-$stage.done")
EOF
	chmod +x "$T/cut-$stage"
	rm -f "$T/cut-$stage.done"
	METRICS_PORT=$(free_port)
	RECONNECT_MAX=20 BATCH_SIZE=100 mkconfig "$T/cfg.yaml" $S $S cut
	: > "$T/sup.log"
	pg2osync-supervise -c "$T/cfg.yaml" --stage "$stage=$T/cut-$stage" > "$T/sup.log" 2>&1 &
	SUP=$!; cleanup_add $SUP
	wait_for 30 slot_active $S
	"$PGBENCH" -n -c 1 -R 100 -T 8 -f "$T/load.sql" > "$T/load.log" 2>&1 &
	LOAD=$!; cleanup_add $LOAD
	wait_for 60 test -e "$T/cut-$stage.done"
	ok $? "$stage: its output is cut in the middle of a frame"
	wait_for 30 grep -q "truncated frame: EOF after" "$T/sup.log"
	ok $? "$stage: the reader says so: $(grep -m1 'truncated frame' "$T/sup.log" | cut -c1-150)"
	ok $(grep 'truncated frame' "$T/sup.log" | grep -q "$reader"; echo $?) "$stage: the message names the stream ($reader)"
	wait_for 60 grep -q "restarting the pipeline" "$T/sup.log"
	ok $? "$stage: the pipeline restarts: $(grep -m1 'restarting the pipeline' "$T/sup.log" | cut -c1-150)"
	grep -m1 'restarting the pipeline' "$T/sup.log" | grep -q "cut-$stage"
	ok $? "$stage: the restart names the stage that died, not the ones its death stopped"
	wait $LOAD
	wait_for 120 grep -q "finished: every table is loaded" "$T/sup.log"
	check "$stage: the index equals the table" -- wait_equal cut ${S}_cut 120 "$SEL"
	kill -0 $SUP 2>/dev/null; ok $? "$stage: the supervisor is still running"
	kill -TERM $SUP; wait $SUP; ok $? "$stage: drains and exits 0"
	[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 20 | sed 's/^/#   /'; }
done
drop_slot $S

# stand-alone: a reader of a file cut inside a frame stops with exit 65
good='{"k":"pos","pos":1,"text":"0/1"}'
printf '%d %s\n' $((${#good} + 1)) "$good" > "$T/cut.frames"
printf '%d %s' $((${#good} + 1)) "${good:0:10}" >> "$T/cut.frames"
for prog in shaper writer; do
	"$P2O_BIN/$prog" -c "$T/cfg.yaml" < "$T/cut.frames" > /dev/null 2> "$T/$prog.err"
	st=$?
	ok $([ $st = 65 ]; echo $?) "$prog reading a truncated file exits 65 (got $st)"
	grep -q "stdin: offset $((${#good} + 4)): truncated frame: EOF after" "$T/$prog.err"
	ok $? "$prog names the stream and the frame's offset: $(head -c 150 "$T/$prog.err")"
done
done_testing
