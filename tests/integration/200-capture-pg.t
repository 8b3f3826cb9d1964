#!/usr/bin/env bash
# capture-pg against a real PostgreSQL 15, stand-alone (no fd 3).
# Run under tests/servers/run-with.sh --pg, which exports PGHOST, PGPORT,
# PGUSER, PGDATABASE, PGPASSWORD and P2O_SERVERS_DIR. Prints TAP.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CAP=${P2O_BIN:-$ROOT/build/bin}/capture-pg
n=0
failed=0

ok() { # status description
    n=$((n + 1))
    if [ "$1" = 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=$((failed + 1))
    fi
}
skip() { n=$((n + 1)); echo "ok $n # skip $1"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
is() { # got expected description
    if [ "$1" = "$2" ]; then
        ok 0 "$3"
    else
        ok 1 "$3"
        diag "got:      '$1'" "expected: '$2'"
    fi
}

if [ -z "${PGHOST:-}" ] || [ -z "${PGPASSWORD:-}" ] || ! command -v jq >/dev/null; then
    echo "1..0 # skip needs tests/servers/run-with.sh --pg and jq"
    exit 0
fi
if [ ! -x "$CAP" ]; then
    echo "1..0 # skip $CAP is not built"
    exit 0
fi

T=$(mktemp -d "${P2O_SERVERS_DIR:-/tmp}/capture-pg.XXXXXX")
PASSWORD=$PGPASSWORD
cap_pid=
cleanup() {
    if [ -n "$cap_pid" ] && kill -0 "$cap_pid" 2>/dev/null; then
        kill -KILL "$cap_pid" 2>/dev/null
        wait "$cap_pid" 2>/dev/null
    fi
    rm -rf "$T"
}
trap cleanup EXIT

sql() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
frames() { sed -E 's/^[0-9]+ //' "$T/frames"; }
slot_lsn() { sql "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'cpg_t'"; }

# the password travels only in this variable, never on argv
export CPG_T_URL="postgresql://$PGUSER:$PASSWORD@$PGHOST:$PGPORT/$PGDATABASE"
export CPG_T_BAD_URL="postgresql://$PGUSER:not-the-password@$PGHOST:$PGPORT/$PGDATABASE"
config() { # file url_env table
    cat >"$1" <<EOF
source:
  url_env: $2
  slot_name: cpg_t
  publication: cpg_t
target:
  url: http://127.0.0.1:9
sync:
  things:
    table: $3
EOF
}
config "$T/ok.yaml" CPG_T_URL public.cpg_items
config "$T/badpw.yaml" CPG_T_BAD_URL public.cpg_items
config "$T/nokey.yaml" CPG_T_URL public.cpg_nokey

# run capture-pg in the background without PGPASSWORD: the url must do
start_capture() { # log [args...]
    local log=$1 i
    shift
    env -u PGPASSWORD "$CAP" -c "$T/ok.yaml" "$@" >"$T/frames" 2>"$log" &
    cap_pid=$!
    for i in $(seq 1 200); do
        grep -q 'streaming slot' "$log" && return 0
        kill -0 "$cap_pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# wait up to $2 seconds for pid $1 to exit; its status in $rc
wait_exit() {
    local i
    rc=
    for i in $(seq 1 $(($2 * 10))); do
        if ! kill -0 "$1" 2>/dev/null; then
            wait "$1"
            rc=$?
            return 0
        fi
        sleep 0.1
    done
    return 1
}

sql "DROP TABLE IF EXISTS cpg_items, cpg_nokey;
     CREATE TABLE cpg_items (id int PRIMARY KEY, title text, price numeric,
                             n int, body text);
     ALTER TABLE cpg_items ALTER COLUMN body SET STORAGE EXTERNAL;
     CREATE TABLE cpg_nokey (a int);" >/dev/null

# --- stand-alone streaming ---------------------------------------------

start_capture "$T/log1"
ok $? "capture-pg connects, creates publication and slot, starts streaming"
grep -q "created publication 'cpg_t'" "$T/log1"
ok $? "publication created"
t_start=$SECONDS
start_lsn=$(slot_lsn)
[ -n "$start_lsn" ]
ok $? "slot cpg_t exists (confirmed $start_lsn)"

if tr '\0' ' ' <"/proc/$cap_pid/cmdline" | grep -qF -- "$PASSWORD"; then
    ok 1 "/proc/<pid>/cmdline has no password"
else
    ok 0 "/proc/<pid>/cmdline has no password"
fi

sql "INSERT INTO cpg_items (id, title, price, n) VALUES (1, 'lamp', 12.50, 1), (2, 'desk', 99, 1)"
sql "UPDATE cpg_items SET title = 'big lamp' WHERE id = 1"
sql "DELETE FROM cpg_items WHERE id = 2"
# 12 kB stored out of line; the update leaves it unchanged
sql "INSERT INTO cpg_items (id, title, n, body)
     SELECT 3, 'toasty', 1, string_agg(md5(i::text), '') FROM generate_series(1, 375) i"
sql "UPDATE cpg_items SET n = n + 1 WHERE id = 3"
sql "TRUNCATE cpg_items"

for i in $(seq 1 150); do
    [ "$(frames 2>/dev/null | jq -c 'select(.k == "commit")' 2>/dev/null | wc -l)" -ge 6 ] && break
    sleep 0.1
done

bad=$(LC_ALL=C awk '{ p = index($0, " "); if (substr($0, 1, p - 1) + 0 != length($0) - p + 1) print NR }' "$T/frames")
is "$bad" "" "every frame's length prefix counts its JSON and newline"
frames | jq -e . >/dev/null 2>&1
ok $? "stripping the prefixes leaves valid NDJSON"
is "$(frames | jq -c 'select(.k == "commit")' | wc -l | tr -d ' ')" 6 "six commit frames"
is "$(frames | jq -c 'select(.k == "row" and .op == "i") | .new.id' | tr '\n' ' ')" "1 2 3 " \
    "inserted rows 1, 2, 3"
is "$(frames | jq -c 'select(.k == "row" and .op == "i" and .new.id == 1) | [.rel, .key, .new.title, .new.price]')" \
    '["public.cpg_items",["id"],"lamp","12.50"]' "insert carries rel, key, text and numeric as a string"
is "$(frames | jq -c 'select(.k == "row" and .op == "u" and .new.id == 1) | .new.title')" '"big lamp"' \
    "update carries the new image"
is "$(frames | jq -c 'select(.k == "row" and .op == "d") | .old')" '{"id":2}' \
    "delete carries the old key"
is "$(frames | jq -c 'select(.k == "row" and .op == "i" and .new.id == 3) | .new.body | length')" 12000 \
    "the 12 kB value arrives whole on insert"
is "$(frames | jq -c 'select(.k == "row" and .op == "u" and .new.id == 3) | [.toast, .new.n, (.new | has("body"))]')" \
    '[["body"],2,false]' "unchanged TOAST column is listed in toast and absent from new"
is "$(frames | jq -c 'select(.k == "truncate") | .rels')" '["public.cpg_items"]' "truncate frame"
is "$(frames | jq -c 'select(.k == "commit") | .n' | tr '\n' ' ')" "2 1 1 1 1 1 " \
    "commit frames count the rows of each transaction"
v_ok=$(frames | jq -s '[.[] | select(.k == "row" or .k == "truncate" or .k == "commit")] as $f
    | reduce $f[] as $x ({ok: true, v: null, last: 0};
        if $x.k != "commit" then (if .v == null then .v = $x.v elif .v != $x.v then .ok = false else . end)
        else (if .v == null or .v >= $x.pos or $x.pos <= .last then .ok = false else . end) | .last = $x.pos | .v = null end)
    | .ok')
is "$v_ok" true "rows of a transaction share one v, below its commit pos; commit positions increase"

# The server sends a transaction's rows one message at a time: a capture
# that wrote each as it came would wake the stages below once a row. 200
# transactions of 100 rows: at most a few writes each (64 KiB or 5 ms
# split one), not one a row (about 50 a transaction before)
syscw() { awk '/^syscw:/ { print $2 }' "/proc/$cap_pid/io"; }
wakes() { awk '/^voluntary_ctxt_switches:/ { print $2 }' "/proc/$cap_pid/status"; }
w0=$(syscw)
v0=$(wakes)
for i in $(seq 0 199); do
    echo "INSERT INTO cpg_items (id, title, n) SELECT g, 'w' || g, 0 FROM generate_series($((1000 + i * 100)), $((1099 + i * 100))) g;"
done | PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 >/dev/null
for i in $(seq 1 300); do
    [ "$(grep -c '"k":"commit"' "$T/frames")" -ge 206 ] && break
    sleep 0.1
done
is "$(frames | jq -c 'select(.k == "commit" and .n == 100)' | wc -l | tr -d ' ')" 200 \
    "200 transactions of 100 rows captured"
writes=$(($(syscw) - w0))
woke=$(($(wakes) - v0))
[ "$writes" -le 600 ]
ok $? "a transaction's frames are written together: $writes writes for 200 transactions"
# and read together: a nap after a read that found part of one lets the
# rest arrive (350-540 wakeups here, naps included; 2,000-2,400 without)
[ "$woke" -le 800 ]
ok $? "the capture woke $woke times for 200 transactions (at most 800)"
sql "DELETE FROM cpg_items WHERE id >= 1000" >/dev/null

# stand-alone never confirms past where it started; status updates go out
# every 10 s, so wait for at least one after the traffic
while [ $((SECONDS - t_start)) -lt 12 ]; do sleep 0.5; done
is "$(slot_lsn)" "$start_lsn" "stand-alone: the slot's confirmed_flush_lsn did not move"

kill -TERM "$cap_pid"
if wait_exit "$cap_pid" 15; then
    is "$rc" 0 "SIGTERM: exit 0"
else
    ok 1 "SIGTERM: exit 0 (still running after 15 s)"
fi
cap_pid=
[ -z "$(tail -c 1 "$T/frames" | tr -d '\n')" ]
ok $? "stdout ends with a whole frame"

# --- refusals ---------------------------------------------------------------

env -u PGPASSWORD "$CAP" -c "$T/badpw.yaml" >/dev/null 2>"$T/log2"
is "$?" 77 "wrong password: exit 77"
grep -q 'authentication failed' "$T/log2"
ok $? "wrong password: says authentication failed"
if grep -qF -- "not-the-password" "$T/log2"; then
    ok 1 "wrong password: the password is not logged"
else
    ok 0 "wrong password: the password is not logged"
fi

skip "wal_level: this server runs with wal_level = logical"

env -u PGPASSWORD "$CAP" -c "$T/nokey.yaml" >/dev/null 2>"$T/log3"
is "$?" 69 "table without a primary key: exit 69"
grep -q "table 'public.cpg_nokey' has no primary key" "$T/log3"
ok $? "table without a primary key: named in the message"

env -u PGPASSWORD "$CAP" -c "$T/ok.yaml" --start-pos 0/1 >/dev/null 2>"$T/log4"
is "$?" 67 "a checkpoint behind the slot: exit 67 (the position is gone)"
grep -q "checkpoint 0/1 is behind slot 'cpg_t'" "$T/log4"
ok $? "a checkpoint behind the slot: says so"

# --- a terminated walsender ---------------------------------------------

start_capture "$T/log5"
ok $? "capture-pg streams again"
ws=$(sql "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'cpg_t'")
sql "SELECT pg_terminate_backend($ws)" >/dev/null
ok $? "walsender $ws terminated"
if wait_exit "$cap_pid" 5; then
    is "$rc" 75 "walsender terminated: exit 75 within 5 s"
else
    ok 1 "walsender terminated: exit 75 within 5 s (still running)"
fi
cap_pid=
grep -q 'replication connection lost' "$T/log5"
ok $? "walsender terminated: says the connection was lost"

sql "SELECT pg_drop_replication_slot('cpg_t')" >/dev/null
sql "DROP PUBLICATION cpg_t; DROP TABLE cpg_items, cpg_nokey" >/dev/null

echo "1..$n"
if [ "$failed" -gt 0 ]; then
    for f in "$T"/log*; do
        diag "--- $f" "$(cat "$f")"
    done
fi
[ "$failed" = 0 ]
