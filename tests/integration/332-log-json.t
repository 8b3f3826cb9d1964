#!/usr/bin/env bash
# log.format json on real servers: every line every program of the
# pipeline writes (the supervisor, its helper, the captures, the loader,
# the shaper, the writer, ckpt), through a load, a stream, a TOAST
# read-back, a stage killed and restarted, a SIGHUP and a drain, parses as
# one JSON object with time (UTC, ISO 8601 with milliseconds and Z),
# stage, level and message; log.level debug lets debug lines through; the
# TOAST read-back, the reload and the drain each say so in one line; and
# the source's password appears in no line. Then log.format text: every
# line starts with the UTC time, then "stage: level: ".
# Fails when: a line is not such an object, a field is missing or of the
# wrong form, a program's lines are missing, or the password is logged.
. "$(dirname "$0")/../lib.sh"

S=p2o_logjson
drop_slot $S; os_drop ${S}_lj
psql_q -c "drop table if exists lj; create table lj (id int primary key, n int, big text)"
psql_q -c "insert into lj select g, g, 'small' from generate_series(1, 300) g"
METRICS_PORT=$(free_port)
APORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S lj
cat >> "$T/cfg.yaml" <<EOF
api:
  bind: 127.0.0.1:$APORT
log:
  format: json
  level: debug
EOF
pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "every table is loaded" "$T/sup.log"
ok $? "the table is loaded"
SEL="json_build_object('id',id,'n',n,'big',big)"
check "loaded" -- wait_equal lj ${S}_lj 30 "$SEL"
# out of line, then an update that leaves it unchanged: the writer reads
# the stored document back
psql_q -c "update lj set big = (select string_agg(md5(random()::text || g), '') from generate_series(1, 400) g) where id = 1"
check "the large value is written" -- wait_equal lj ${S}_lj 30 "$SEL"
psql_q -c "update lj set n = n + 1000 where id = 1"
check "the update leaving it unchanged is written" -- wait_equal lj ${S}_lj 30 "$SEL"
curl -s -o /dev/null "http://127.0.0.1:$APORT/synced?timeout=20000"
pkill -KILL -f "shaper -c $T/cfg.yaml"
wait_for 30 grep -q "restarting the pipeline" "$T/sup.log"
wait_for 60 bash -c "[ \$(grep -c 'pipeline up' '$T/sup.log') -ge 2 ]"
ok $? "a stage killed: the pipeline restarts"
psql_q -c "insert into lj values (1000, 1, 'after the restart')"
check "rows stream after it" -- wait_equal lj ${S}_lj 60 "$SEL"
kill -HUP $SUP
wait_for 10 grep -q "SIGHUP" "$T/sup.log"
kill -TERM $SUP; wait $SUP
ok $? "SIGTERM drains: exit 0"

n=$(wc -l < "$T/sup.log")
bad=$(python3 - "$T/sup.log" <<'PY'
import json, re, sys
bad = 0
for i, line in enumerate(open(sys.argv[1], encoding="utf-8", errors="replace"), 1):
    try:
        o = json.loads(line)
        ok = (isinstance(o, dict) and set(o) == {"time", "stage", "level", "message"}
              and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"])
              and o["level"] in ("error", "warn", "info", "debug")
              and isinstance(o["stage"], str) and o["stage"]
              and isinstance(o["message"], str))
    except ValueError:
        ok = False
    if not ok:
        bad += 1
        if bad <= 5:
            print(f"line {i}: {line.rstrip()[:300]}", file=sys.stderr)
print(bad)
PY
)
ok $([ "$n" -gt 50 ] && [ "$bad" = 0 ]; echo $?) "every one of $n lines is a JSON object with time, stage, level, message ($bad not)"
stages=$(jq -r .stage "$T/sup.log" 2>/dev/null | sort -u | tr '\n' ' ')
diag "stages: $stages"
for s in pg2osync-supervise capture-pg loader shaper writer ckpt; do
	ok $(jq -r .stage "$T/sup.log" | grep -qx "$s"; echo $?) "lines of '$s'"
done
ok $(jq -r .level "$T/sup.log" | grep -qx debug; echo $?) "log.level debug: debug lines are written"
ok $(jq -r .message "$T/sup.log" | grep -q "^TOAST read-back: "; echo $?) \
	"the TOAST read-back logs one line: $(jq -r .message "$T/sup.log" | grep -m1 '^TOAST read-back')"
ok $(jq -r .message "$T/sup.log" | grep -q "^SIGHUP: "; echo $?) "the reload logs one line"
ok $(jq -r .message "$T/sup.log" | grep -q "^draining: "; echo $?) "the drain logs one line"
ok $(! grep -qF "$PGPASSWORD" "$T/sup.log"; echo $?) "the source's password is in no line"

# text: the time first, then the stage and the level
sed -i 's/  format: json/  format: text/; s/  level: debug/  level: info/' "$T/cfg.yaml"
pg2osync-supervise -c "$T/cfg.yaml" > "$T/text.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 grep -q "pipeline up" "$T/text.log"
kill -TERM $SUP; wait $SUP
n=$(wc -l < "$T/text.log")
bad=$(grep -cvE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z [a-z0-9-]+: (error|warn|info|debug): ' "$T/text.log")
ok $([ "$n" -gt 5 ] && [ "$bad" = 0 ]; echo $?) "log.format text: every one of $n lines is 'TIME stage: level: message' ($bad not)"
grep -vE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z [a-z0-9-]+: (error|warn|info|debug): ' "$T/text.log" | head -n 5 | sed 's/^/# not: /' 
ok $(! grep -q ': debug: ' "$T/text.log"; echo $?) "log.level info: no debug line"
ok $(! grep -qF "$PGPASSWORD" "$T/text.log"; echo $?) "nor the password"
[ $_tap_fail = 0 ] || tail -n 30 "$T/sup.log" | sed 's/^/#   /'
drop_slot $S
done_testing
