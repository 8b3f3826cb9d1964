#!/usr/bin/env bash
# capture-mysql against a real MariaDB 10.11, stand-alone (no fd 3): the
# frames of every column type, insert/update/delete/key change/truncate,
# versions and commit texts, pos frames for other tables, ALTER (drift),
# DROP (warned), and resuming from a commit text with and without its GTID
# set. Run under tests/servers/run-with.sh --mariadb.
. "$(dirname "$0")/../mysql-lib.sh"

my_sql "DROP TABLE IF EXISTS t61_every, t61_other, t61_drop;
CREATE TABLE t61_every (id int PRIMARY KEY, big bigint unsigned,
	tiny tinyint, price decimal(12,3), f float, d double,
	e enum('a','b''c'), s set('x','y','z'), b bit(12), vb varbinary(8),
	bn binary(3), vc varchar(20) CHARACTER SET utf8mb4,
	l1 varchar(10) CHARACTER SET latin1, tx text CHARACTER SET utf8mb4,
	bl blob, dt date, dtm datetime(3), ts timestamp(6) NULL, tm time(2),
	y year, j json, g geometry NULL, n varchar(5));
CREATE TABLE t61_other (id int PRIMARY KEY);
CREATE TABLE t61_drop (id int PRIMARY KEY)"
ok $? "tables created"
my_config "$T/cfg.yaml" t61 t61_every t61_drop
cap_start "$T/cap.log" "$T/f1" -c "$T/cfg.yaml"
ok $? "capture-mysql starts the dump"

my_sql "INSERT INTO t61_every VALUES (1, 18446744073709551615, -128,
	-1234.500, 1.5, 0.1, 'b''c', 'x,z', b'101010101010', x'00ff',
	x'616263', 'héllo', 'café', 'long text', x'010203',
	'2024-02-29', '2024-02-29 13:14:15.123', '2024-02-29 13:14:15.000042',
	'-12:34:56.78', 2024, '{\"a\": [1, 2.5, \"x\"], \"b\": null}',
	ST_GeomFromText('POINT(1 2)'), NULL)"
wait_frames 20 "$T/f1" '.k=="commit"' 1
ok $? "the insert arrives with its commit"

want='{"id":1,"big":18446744073709551615,"tiny":-128,"price":"-1234.500","f":1.5,"d":0.1,"e":"b'"'"'c","s":["x","z"],"b":2730,"vb":"AP8=","bn":"YWJj","vc":"héllo","l1":"café","tx":"long text","bl":"AQID","dt":"2024-02-29","dtm":"2024-02-29T13:14:15.123","ts":"2024-02-29T13:14:15.000042Z","tm":"-12:34:56.78","y":2024,"j":{"a":[1,2.5,"x"],"b":null},"g":"AAAAAAEBAAAAAAAAAAAA8D8AAAAAAAAAQA==","n":null}'
got=$(frames "$T/f1" | grep '"k":"row"' | head -1 | sed -E 's/.*"new"://; s/}$//')
if [ "$got" = "$want" ]; then ok 0 "every column type has its document form"
else ok 1 "every column type has its document form"; diag "got:  $got"; diag "want: $want"; fi
row1=$(frames "$T/f1" | grep '"k":"row"' | head -1)
ok $(echo "$row1" | jq -e '.op=="i" and .rel=="p2o.t61_every" and .key==["id"]' >/dev/null; echo $?) \
	"the row frame: op i, rel p2o.t61_every, key [id]"
commit1=$(frames "$T/f1" | grep '"k":"commit"' | head -1)
text1=$(echo "$commit1" | jq -r .text)
pos1=$(echo "$commit1" | jq -r .pos)
ok $(echo "$text1" | grep -qE '^binlog\.[0-9]+:[0-9]+;gtid=0-1-[0-9]+$'; echo $?) "the commit text is file:offset;gtid=domain-server-seq ($text1)"
v1=$(echo "$row1" | jq -r .v)
ok $([ "$v1" -lt "$pos1" ]; echo $?) "the row's version ($v1) is before its commit ($pos1)"

my_sql "UPDATE t61_every SET vc = 'changed' WHERE id = 1;
	UPDATE t61_every SET id = 2 WHERE id = 1;
	BEGIN; INSERT INTO t61_every (id) VALUES (10), (11), (12); COMMIT;
	DELETE FROM t61_every WHERE id = 2;
	INSERT INTO t61_other VALUES (1);
	TRUNCATE TABLE t61_every"
wait_frames 20 "$T/f1" '.k=="truncate"' 1
ok $? "the truncate arrives"
frames "$T/f1" > "$T/f1.json"
ok $(jq -se '[.[] | select(.k=="row" and .op=="u")][0] | .new.vc=="changed" and .old.vc=="héllo" and .new.id==1' "$T/f1.json" >/dev/null; echo $?) \
	"an update carries its before and after images"
ok $(jq -se '[.[] | select(.k=="row" and .op=="u")][1] | .new.id==2 and .old.id==1' "$T/f1.json" >/dev/null; echo $?) \
	"a key change: new id 2, old id 1"
ok $(jq -se '[.[] | select(.k=="row" and .op=="d")][0] | .old.id==2 and (has("new") | not)' "$T/f1.json" >/dev/null; echo $?) \
	"a delete carries the old row"
ok $(jq -se '[.[] | select(.k=="truncate")][0] | .rels==["p2o.t61_every"]' "$T/f1.json" >/dev/null; echo $?) \
	"a truncate frame names the table"
ok $(jq -se '[.[] | select(.k=="row" and .op=="i" and .new.id>=10) | .v] | length==3 and (unique | length)==1' "$T/f1.json" >/dev/null; echo $?) \
	"every row of a transaction has the same version"
ok $(jq -se '[.[] | select(.k=="row" or .k=="truncate") | .v] as $v | [range(1; $v|length) | $v[.] >= $v[.-1]] | all' "$T/f1.json" >/dev/null; echo $?) \
	"versions never go down"
ok $(jq -se '[.[] | select(.k=="commit") | .pos] as $p | [range(1; $p|length) | $p[.] > $p[.-1]] | all and ($p|length)==6' "$T/f1.json" >/dev/null; echo $?) \
	"six commits, positions strictly increasing"
ok $(jq -se '[.[] | select(.k=="row" and (.rel | test("other")))] | length==0' "$T/f1.json" >/dev/null; echo $?) \
	"another table's rows are not sent"

# a transaction on another table only: its position comes as a pos frame
npos=$(frame_count "$T/f1" '.k=="pos"')
my_sql "INSERT INTO t61_other VALUES (2)"
wait_frames 10 "$T/f1" '.k=="pos"' $((npos + 1))
ok $? "a transaction on another table moves the position with a pos frame"
last_commit=$(frames "$T/f1" | jq -s '[.[] | select(.k=="commit") | .pos] | max')
last_pos=$(frames "$T/f1" | jq -s '[.[] | select(.k=="pos") | .pos] | max')
ok $([ "$last_pos" -gt "$last_commit" ]; echo $?) "the pos frame is past the last commit"

cap_stop
ok $? "SIGTERM: exit 0"
ok $(! grep -qF "$MYSQL_PWD" "$T/cap.log"; echo $?) "no password in the log"

# resume from the first commit: nothing before it comes again, everything
# after it does, with the same versions; by file and offset, then by GTID
frames "$T/f1" | jq -c 'select(.k=="row" or .k=="truncate")' > "$T/all_rows"
jq -c --argjson p "$pos1" 'select(.v > $p)' "$T/all_rows" > "$T/after_rows"
for how in offset gtid; do
	t=$text1
	[ $how = offset ] && t=${text1%%;gtid=*}
	cap_start "$T/cap2.log" "$T/f2" -c "$T/cfg.yaml" --start-pos "$t" --start-token "$pos1"
	ok $? "resume by $how from $t"
	wait_frames 20 "$T/f2" '.k=="truncate"' 1
	ok $? "... reaches the truncate"
	cap_stop >/dev/null
	frames "$T/f2" | jq -c 'select(.k=="row" or .k=="truncate")' > "$T/resumed_rows"
	ok $(jq -se --argjson p "$pos1" '[.[] | .v] | min > $p' "$T/resumed_rows" >/dev/null; echo $?) \
		"... replays nothing at or before the resume point"
	if cmp -s "$T/resumed_rows" "$T/after_rows"; then ok 0 "... and replays everything after it, identically"
	else ok 1 "... and replays everything after it, identically"; diff "$T/resumed_rows" "$T/after_rows" | head -5 | sed 's/^/#   /'; fi
	grep -q "binlog dump after the GTID" "$T/cap2.log"; gs=$?
	ok $([ $how = gtid ] && [ $gs = 0 ] || { [ $how = offset ] && [ $gs != 0 ]; }; echo $?) "... asked the server by $how"
done
# DDL, on a capture started after the resumes (a replay of rows from
# before an ALTER would meet the new shape, and skip them)
cap_start "$T/cap.log" "$T/f1" -c "$T/cfg.yaml"
# ALTER: drift; later rows carry the new column
my_sql "ALTER TABLE t61_every ADD COLUMN added int"
wait_frames 10 "$T/f1" '.k=="drift"' 1
ok $? "ALTER ADD COLUMN makes a drift frame"
ok $(frames "$T/f1" | jq -se '[.[] | select(.k=="drift")][0] | .rel=="p2o.t61_every" and .added==["added"] and .removed==[] and .retyped==[]' >/dev/null; echo $?) \
	"the drift frame names the added column"
my_sql "INSERT INTO t61_every (id, added) VALUES (20, 7)"
wait_frames 10 "$T/f1" '.k=="row" and .new.added==7' 1
ok $? "a row after the ALTER carries the new column"

my_sql "DROP TABLE t61_drop"
wait_for 10 grep -q "'p2o.t61_drop' was dropped" "$T/cap.log"
ok $? "DROP TABLE of a configured table is warned about"

cap_stop
ok $? "SIGTERM: exit 0"

# fd 3, as the supervisor hands it over: hello once streaming; a fresh
# start's first frame is its start, and nothing past it is read until
# that is acked (stored); stats with the counters, an ack recorded as
# confirmed_pos, SIGTERM waits for fd 3
cat > "$T/fd3.py" <<'PY'
import json, os, signal, socket, subprocess, sys, time
cap, cfg, out = sys.argv[1:4]
os.open("/dev/null", os.O_RDONLY)   # fd 3 if free: not one of the pair
a, b = socket.socketpair()
os.dup2(b.fileno(), 3)
p = subprocess.Popen([cap, "-c", cfg], stdout=open(out, "wb"),
    stderr=open(out + ".log", "wb"), pass_fds=(3,))
os.close(3); b.close()
buf = b""
def frame(timeout):
    global buf
    a.settimeout(timeout)
    while b"\n" not in buf:
        d = a.recv(65536)
        if not d:
            return None
        buf += d
    line, buf = buf.split(b"\n", 1)
    return json.loads(line.split(b" ", 1)[1])
def say(*m):
    print(*m, flush=True)
def sent():
    with open(out, "rb") as f:
        return [json.loads(l.split(b" ", 1)[1]) for l in f.read().splitlines()]
def send(m):
    b = json.dumps(m).encode()
    a.sendall(str(len(b) + 1).encode() + b" " + b + b"\n")
hello = frame(30)
say("hello", hello["tool"], hello["proto"])
end = time.time() + 20
while time.time() < end and not sent():
    time.sleep(0.1)
first = sent()
say("start", [f["k"] for f in first] == ["pos"])
subprocess.run(["mariadb", "--no-defaults", "-h" + os.environ["MYSQL_HOST"],
    "-P" + os.environ["MYSQL_TCP_PORT"], "-u" + os.environ["MYSQL_USER"],
    os.environ["MYSQL_DB"], "-e", "INSERT INTO t61_every (id) VALUES (300)"],
    check=True)
time.sleep(2)
say("held", len(sent()) == 1)
send({"k": "ack", "pos": first[0]["pos"]})
seen = None
end = time.time() + 20
while time.time() < end:
    f = frame(20)
    if f and f["k"] == "stats" and f["counters"].get("events_insert", 0) >= 1:
        seen = f["counters"]
        break
say("stats", seen is not None and seen.get("received_pos", 0) > 0 and
    any(f["k"] == "row" and f["new"]["id"] == 300 for f in sent()))
send({"k": "ack", "pos": seen["received_pos"]})
conf = None
end = time.time() + 20
while time.time() < end:
    f = frame(20)
    if f and f["k"] == "stats" and \
            f["counters"].get("confirmed_pos") == seen["received_pos"]:
        conf = True
        break
say("confirmed", conf)
p.send_signal(signal.SIGTERM)
time.sleep(1)
say("waits", p.poll() is None)
a.close()
t = time.time()
p.wait(timeout=30)
say("exit", p.returncode, time.time() - t < 10)
PY
my_config "$T/cfg3.yaml" t61 t61_every
python3 "$T/fd3.py" "$P2O_BIN/capture-mysql" "$T/cfg3.yaml" "$T/f3" > "$T/fd3.out" 2>&1
sed 's/^/# /' "$T/fd3.out"
proto=$(awk '$2 == "P2O_PROTO" { print $3 }' "$TOP/lib/p2o.h")
ok $(grep -qx "hello capture-mysql $proto" "$T/fd3.out"; echo $?) "fd 3: hello once streaming, protocol $proto"
ok $(grep -qx "start True" "$T/fd3.out"; echo $?) "fd 3: a fresh start's first frame is the pos frame of its start"
ok $(grep -qx "held True" "$T/fd3.out"; echo $?) "fd 3: a row written then is not streamed while the start is not acked"
ok $(grep -qx "stats True" "$T/fd3.out"; echo $?) "fd 3: once it is, the row streams; stats carry events_insert and received_pos"
ok $(grep -qx "confirmed True" "$T/fd3.out"; echo $?) "fd 3: an ack is recorded as confirmed_pos"
ok $(grep -qx "waits True" "$T/fd3.out"; echo $?) "fd 3: SIGTERM waits for fd 3 to close"
ok $(grep -qx "exit 0 True" "$T/fd3.out"; echo $?) "fd 3: closing it ends the capture, exit 0"

# fd 3 ends (the supervisor was killed) while a fresh start is held: the
# start was never stored, so nothing past it may be read - the stages
# below drain whatever they are handed, into the index, and a restart
# begins at a later position that would never correct it
cat > "$T/fd3eof.py" <<'PY'
import json, os, socket, subprocess, sys, time
cap, cfg, out = sys.argv[1:4]
os.open("/dev/null", os.O_RDONLY)
a, b = socket.socketpair()
os.dup2(b.fileno(), 3)
p = subprocess.Popen([cap, "-c", cfg], stdout=open(out, "wb"),
    stderr=open(out + ".log", "wb"), pass_fds=(3,))
os.close(3); b.close()
def sent():
    with open(out, "rb") as f:
        return [json.loads(l.split(b" ", 1)[1]) for l in f.read().splitlines()]
end = time.time() + 20
while time.time() < end and not sent():
    time.sleep(0.1)
print("start", [f["k"] for f in sent()] == ["pos"], flush=True)
subprocess.run(["mariadb", "--no-defaults", "-h" + os.environ["MYSQL_HOST"],
    "-P" + os.environ["MYSQL_TCP_PORT"], "-u" + os.environ["MYSQL_USER"],
    os.environ["MYSQL_DB"], "-e", "INSERT INTO t61_every (id) VALUES (301)"],
    check=True)
time.sleep(1)       # the row waits in the dump socket
a.close()
try:
    p.wait(timeout=10)
    print("exit", p.returncode, flush=True)
except subprocess.TimeoutExpired:
    p.kill(); p.wait()
    print("exit none", flush=True)
print("past", [f["k"] for f in sent()] == ["pos"], flush=True)
PY
python3 "$T/fd3eof.py" "$P2O_BIN/capture-mysql" "$T/cfg3.yaml" "$T/f4" > "$T/fd3eof.out" 2>&1
sed 's/^/# /' "$T/fd3eof.out"
ok $(grep -qx "start True" "$T/fd3eof.out" && grep -qx "exit 0" "$T/fd3eof.out"; echo $?) \
	"fd 3 ends while the start is held: the capture stops, exit 0"
ok $(grep -qx "past True" "$T/fd3eof.out"; echo $?) \
	"fd 3 ends while the start is held: nothing past the start is written"
[ $_tap_fail -gt 0 ] && { diag "capture log:"; tail -n 20 "$T/cap.log" "$T/f4.log" | sed 's/^/#   /'; }
done_testing
