#!/usr/bin/env bash
# Several bulk requests open at once (engine.write_concurrency 4) through a
# proxy that fails some of them (503, dropped connections, one item
# refused for now, a request answered late so later ones finish first):
# a stream of 20,000 operations goes through `writer -c cfg < ops.frames`
# with a control channel on fd 3, the index ends equal to what the stream
# says, and every durable position the writer reports is larger than the
# one before and comes after the node accepted every operation before it.
. "$(dirname "$0")/../lib.sh"

IDX=${NAME}_c4
os_drop $IDX
python3 "$TOP/tests/helper/genops.py" "$T/ops.frames" "$T/expected.json" $IDX 20000
PPORT=$(free_port)
python3 "$TOP/tests/helper/faultproxy.py" $PPORT "$OS_URL" \
	"3:503,5:reset,6:slow,9:item429,13:503,14:slow,17:reset,22:503,23:503,30:item429,31:slow" \
	"$T/accepted.log" 2> "$T/proxy.log" &
cleanup_add $!
wait_for 10 curl -sf "http://127.0.0.1:$PPORT/"; ok $? "proxy up"
cat > "$T/cfg.yaml" <<CFG
source:
  url: postgres://unused@127.0.0.1/unused
target:
  url: http://127.0.0.1:$PPORT
sync:
  c:
    table: public.c
    index: $IDX
engine:
  batch_size: 200
  write_concurrency: 4
CFG

python3 "$TOP/tests/helper/ctlrec.py" "$T/ctl.log" -- writer -c "$T/cfg.yaml" \
	< "$T/ops.frames" 2> "$T/writer.log"
ok $? "the writer wrote the stream and exited 0"
os_get "/$IDX/_refresh" >/dev/null
check "the index holds exactly what the stream says" -- \
	python3 "$TOP/tests/compare.py" "$OS_URL" $IDX "$T/expected.json"
n=$(grep -c 'faultproxy: bulk' "$T/proxy.log")
ok $([ "$n" -eq 11 ]; echo $?) "the proxy injected its faults ($n of 11)"
check "four requests were open at once, never more" -- \
	bash -c "grep -q '4 bulk requests open at once' '$T/proxy.log' && ! grep -q '5 bulk requests open' '$T/proxy.log'"

# every durable and marked report against what the node had accepted when
# it arrived (faultproxy logs an answer before the writer can read it)
check "reports in order, each after everything before it was accepted" -- \
	python3 - "$T/ops.frames" "$T/accepted.log" "$T/ctl.log" <<'PY'
import json, sys
ops_path, acc_path, ctl_path = sys.argv[1:4]
# per document, each write the node accepted and when (first time)
acc = {}
for line in open(acc_path):
    t, items = line.split(" ", 1)
    for a, idx, i, v in json.loads(items):
        acc.setdefault((idx, i), {}).setdefault((a, v), float(t))
inf = float("inf")
def accepted(a, idx, i, v):
    # when the node accepted this write, or a newer one of its document: a
    # request sent again leaves out a write that a later request's newer
    # write of the document has already put in (writer/window.c,
    # drop_superseded)
    return min((t for (a2, v2), t in acc.get((idx, i), {}).items()
                if v2 > v or (v2 == v and a2 == a)), default=inf)
# for each boundary in stream order: when its last operation was accepted
need, latest, marks = {}, 0.0, {}
for line in open(ops_path):
    op = json.loads(line.split(" ", 1)[1])
    k = op["k"]
    if k in ("index", "delete"):
        latest = max(latest, accepted(k, op["index"], op["id"], op["v"]))
    elif k in ("commit", "pos"):
        need.setdefault(op["pos"], latest)
    elif k == "mark":
        marks[op["id"]] = latest
last_pos, bad, ndurable, nmarked = -1, 0, 0, 0
for line in open(ctl_path):
    t, frame = line.split(" ", 1)
    t, f = float(t), json.loads(frame)
    if f["k"] == "durable":
        ndurable += 1
        if f["pos"] <= last_pos:
            print(f"durable {f['pos']} after {last_pos}: not increasing"); bad += 1
        last_pos = f["pos"]
        if f["pos"] not in need:
            print(f"durable {f['pos']} is no boundary of the stream"); bad += 1
        elif need[f["pos"]] > t:
            print(f"durable {f['pos']} reported at {t} before its operations were accepted ({need[f['pos']]})"); bad += 1
    elif f["k"] == "marked":
        nmarked += 1
        if marks.get(f["id"], inf) > t:
            print(f"marked {f['id']} at {t} before its operations were accepted"); bad += 1
want = max(need)
if last_pos != want:
    print(f"last durable {last_pos}, the stream ends at {want}"); bad += 1
if nmarked != len(marks):
    print(f"{nmarked} marked reported for {len(marks)} marks"); bad += 1
print(f"{ndurable} durable, {nmarked} marked checked")
sys.exit(1 if bad else 0)
PY
errs=$(grep '"k":"stats"' "$T/ctl.log" | tail -n 1 | sed -E 's/.*"sink_errors":([0-9]+).*/\1/')
# at least the four 503s: curl itself may resend a request whose reused
# connection was dropped before any answer, and an item refused for now is
# not resent (nor counted) when its request writes the document again
ok $([ "${errs:-0}" -ge 4 ]; echo $?) "failed requests counted as sink errors (${errs:-none})"
[ $_tap_fail -gt 0 ] && { sed 's/^/#   /' "$T/proxy.log"; grep -v ' info: ' "$T/writer.log" | tail -n 20 | sed 's/^/#   /'; }
os_drop $IDX
done_testing
