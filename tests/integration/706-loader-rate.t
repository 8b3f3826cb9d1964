#!/usr/bin/env bash
# engine.load_max_rows_per_sec: a load capped at 1,000 rows a second takes
# at least rows / cap seconds (3,000 rows: 3 s) where the same load without
# the cap takes well under that, reads every row all the same, and its
# summary line names the cap; a supervised load under the cap is paced
# while the stream is not (a change made during the load is indexed long
# before the load ends); 0 is refused with its file:line.
# Fails when: the capped load ends before rows / cap, a row is missing,
# the summary line does not say the cap, the stream waits for the load's
# pace, or 0 is taken.
. "$(dirname "$0")/../lib.sh"

S=p2o_rate
N=3000
CAP=1000
drop_slot $S; os_drop ${S}_lr
psql_q -c "drop table if exists lr; create table lr (id int primary key, v text);
	insert into lr select g, 'r' || g from generate_series(1, $N) g"
mkconfig "$T/free.yaml" $S $S lr
mkconfig "$T/cfg.yaml" $S $S lr
sed -i "s/^engine:$/&\n  load_max_rows_per_sec: $CAP/" "$T/cfg.yaml"

t0=$(date +%s.%N)
P2O_LOG_LEVEL=info loader -c "$T/free.yaml" --table lr > "$T/free.frames" 2> "$T/free.err"
ok $? "the load without a cap runs"
free=$(echo "$(date +%s.%N) - $t0" | bc)
t0=$(date +%s.%N)
P2O_LOG_LEVEL=info loader -c "$T/cfg.yaml" --table lr > "$T/capped.frames" 2> "$T/capped.err"
ok $? "the load capped at $CAP rows/s runs"
capped=$(echo "$(date +%s.%N) - $t0" | bc)
diag "without the cap: $free s; capped: $capped s"
ok $(echo "$capped >= $N / $CAP" | bc | grep -q 1; echo $?) \
	"the capped load takes at least $N / $CAP = $((N / CAP)) s ($capped s)"
ok $(echo "$free < $N / $CAP" | bc | grep -q 1; echo $?) \
	"which the same load without it does not need ($free s)"
rows=$(grep -c '"k":"row"' "$T/capped.frames")
ok $([ "$rows" = $N ]; echo $?) "every row is read all the same ($rows of $N)"
grep "loaded," "$T/capped.err" | sed 's/^/# /'
ok $(grep -q "table 'public.lr': loaded, $N rows read in .*capped at $CAP rows/s (engine.load_max_rows_per_sec)" "$T/capped.err"; echo $?) \
	"its summary line names the cap"
ok $(grep "loaded," "$T/free.err" | grep -vq capped; echo $?) "the uncapped one's does not"

# supervised, at 500 rows/s: the load is paced, the stream beside it is
# not
CAP=500
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S lr
sed -i "s/^engine:$/&\n  load_max_rows_per_sec: $CAP/" "$T/cfg.yaml"
t0=$(date +%s.%N)
pg2osync-supervise -c "$T/cfg.yaml" >> "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "table 'public.lr': about $N rows" "$T/sup.log"
ok $? "the supervised load begins"
psql_q -c "insert into lr values (-1, 'streamed during the load')"
got=''
for _ in $(seq 1 100); do
	got=$(curl -s "$OS_URL/${S}_lr/_doc/-1" | jq -r '._source.v // empty')
	[ -n "$got" ] && break
	sleep 0.05
done
during=$(echo "$(date +%s.%N) - $t0" | bc)
ok $([ "$got" = "streamed during the load" ]; echo $?) "a change made during the load is indexed ($during s after the start)"
ok $(grep -q "'loader' finished" "$T/sup.log"; [ $? = 1 ]; echo $?) "before the paced load ended: the stream is not held to the cap"
wait_for 60 grep -q "'loader' finished" "$T/sup.log"
ok $? "the load ends"
total=$(echo "$(date +%s.%N) - $t0" | bc)
took=$(grep -o "table 'public.lr': loaded, $N rows read in [0-9.]* s" "$T/sup.log" | awk '{print $(NF-1)}')
ok $(echo "${took:-0} >= $N / $CAP" | bc | grep -q 1; echo $?) \
	"supervised, the table's load too took at least $((N / CAP)) s from its start (${took:-?} s; $total s with the start)"
check "the index equals the table" -- wait_equal lr ${S}_lr 30 "json_build_object('id',id,'v',v)"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"

sed -i "s/load_max_rows_per_sec: $CAP/load_max_rows_per_sec: 0/" "$T/cfg.yaml"
loader -c "$T/cfg.yaml" --table lr > /dev/null 2> "$T/zero.err"; st=$?
ok $([ $st = 78 ] && grep -q "cfg.yaml:[0-9]*: .*engine.load_max_rows_per_sec" "$T/zero.err"; echo $?) \
	"a cap of 0 is refused with its file:line, exit 78 ($st: $(head -c 200 "$T/zero.err"))"
[ $_tap_fail = 0 ] || sed 's/^/#   /' "$T/sup.log" | tail -n 30
drop_slot $S
done_testing
