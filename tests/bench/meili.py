#!/usr/bin/env python3
"""meili.py [ROWS] - make bench with BENCH_TARGET=meilisearch: pg2osync
beside a minimal client's ceiling on a real Meilisearch server and a
PostgreSQL of their own (run.sh starts them: PG*, MEILI_URL and
MEILI_MASTER_KEY in the environment). Rows:

  1. ceiling   the documents pg2osync writes (the shaper's, our id as the
               index's primary key) sent by a minimal client as tasks of
               BATCH documents, one after another without waiting, then
               every task waited for: documents per second from its first
               request to the end of its last task, into a fresh index
  2. load      ROWS narrow rows and ROWS/5 wide rows loaded by pg2osync
               (engine.batch_size BATCH): documents per second from the
               supervisor's start until the index holds every row, twice,
               alternating with the ceiling's two runs, each side's best
               kept; then `pg2osync verify` compares the index with the
               table by content
  3. streaming TXNS transactions of one insert, one update and one delete,
               committed back to back by one client into the loaded narrow
               table: seconds from the first commit and from the last until
               the last one's changes are all in the index (tasks are
               applied in the order sent: the earlier ones are in too),
               then `pg2osync verify` again

Prints one table and writes OUT/bench-meili.json. Measures and reports; it
must never change what pg2osync does beyond the settings it names.
Environment: BENCH_BATCH (1,000), BENCH_TXNS (1,000), BENCH_OUT, P2O_BIN."""
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("P2O_BIN", os.path.join(TOP, "build", "bin"))
OUT = os.environ.get("BENCH_OUT", os.path.join(TOP, "build", "bench"))
ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
WIDE = ROWS // 5
BATCH = int(os.environ.get("BENCH_BATCH", 1000))
TXNS = int(os.environ.get("BENCH_TXNS", 1000))
URL = urllib.parse.urlparse(os.environ["MEILI_URL"])
KEY = os.environ["MEILI_MASTER_KEY"]
T = tempfile.mkdtemp(prefix="bench-meili.", dir=os.environ.get("P2O_SERVERS_DIR", "/tmp"))
os.environ.setdefault("PGOPTIONS", "-c client_min_messages=warning")

# the same tables as the OpenSearch bench (bench.py)
NARROW_SQL = ("select g, 'item ' || g, g % 1000, (g % 10000) / 100.0, g % 3 = 0, "
              "'n' || (g % 7) from generate_series({a}, {b}) g")
WIDE_SQL = ("select g, 'title ' || g, (g % 10000) / 100.0, "
            "substr(repeat(md5(g::text) || ' ' || md5((g + 1)::text) || ' ', 32), 1, 1000 + g % 1000), "
            "substr(repeat(md5((g * 3)::text) || ' ' || md5((g * 5)::text) || ' ', 128), 1, 1000 + g * 7 % 7000) "
            "from generate_series({a}, {b}) g")
COLS = {"narrow": "id int primary key, name text, qty int, price numeric(12,2), flag boolean, note text",
        "wide": "id int primary key, title text, price numeric(12,2), body1 text, body2 text"}


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def psql(sql, path=None):
    argv = ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"]
    argv += ["-f", path] if path else ["-c", sql]
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"psql failed: {r.stderr.strip()[:500]}")
    return r.stdout.strip()


class Meili:
    """one keep-alive connection to the server, the key in a header"""

    def __init__(self):
        self.c = http.client.HTTPConnection(URL.hostname, URL.port, timeout=120)

    def req(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
        for attempt in range(3):
            try:
                self.c.request(method, path, body=data, headers={
                    "Authorization": "Bearer " + KEY, "Content-Type": "application/json"})
                r = self.c.getresponse()
                return r.status, json.loads(r.read() or b"null")
            except (OSError, http.client.HTTPException):
                self.c.close()
                if attempt == 2:
                    raise
        return None

    def wait(self, uid):
        """a task to its end: its status"""
        while True:
            st, t = self.req("GET", f"/tasks/{uid}")
            if t["status"] in ("succeeded", "failed", "canceled"):
                return t["status"]
            time.sleep(0.01)

    def drop(self, index):
        st, t = self.req("DELETE", f"/indexes/{index}")
        if st == 202:
            self.wait(t["taskUid"])

    def count(self, index):
        st, s = self.req("GET", f"/indexes/{index}/stats")
        return s["numberOfDocuments"] if st == 200 else 0

    def doc(self, index, id_):
        st, d = self.req("GET", f"/indexes/{index}/documents/{id_}")
        return d if st == 200 else None


M = Meili()


def env():
    e = dict(os.environ)
    e["P2O_BENCH_URL"] = ("postgres://{PGUSER}:{PGPASSWORD}@{PGHOST}:{PGPORT}/{PGDATABASE}"
                          .format(**os.environ))
    e["P2O_BENCH_MEILI_KEY"] = KEY
    return e


def config(path, slot, table, index):
    with open(path, "w") as f:
        f.write(f"""source:
  url_env: P2O_BENCH_URL
  slot_name: {slot}
  publication: {slot}
target:
  url: {os.environ['MEILI_URL']}
  flavor: meilisearch
  api_key_env: P2O_BENCH_MEILI_KEY
  state_dir: {T}/state-{slot}
sync:
  {table}:
    table: public.{table}
    index: {index}
engine:
  batch_size: {BATCH}
""")


def drop_slot(slot):
    psql(f"select pg_drop_replication_slot(slot_name) from pg_replication_slots "
         f"where slot_name = '{slot}' and not active")
    psql(f"drop publication if exists {slot}")


def make_table(name, kind, n):
    psql(f"drop table if exists {name}; create table {name} ({COLS[kind]})")
    sql = NARROW_SQL if kind == "narrow" else WIDE_SQL
    psql(f"insert into {name} {sql.format(a=1, b=n)}; analyze {name}")


def documents(table):
    """the documents pg2osync writes for the table, as the shaper renders
    them: loader | shaper, as a load does"""
    cfg = os.path.join(T, f"ceil-{table}.yaml")
    config(cfg, "p2o_bench_ceiling", table, "ceiling")
    copy = os.path.join(T, f"{table}.copy")
    with open(copy, "wb") as out:
        subprocess.run([os.path.join(BIN, "loader"), "-c", cfg], stdout=out,
                       stderr=subprocess.DEVNULL, env=env(), check=True)
    r = subprocess.run(["sh", "-c", 'exec "$0" -c "$1" --load-fd 4 4<"$2" </dev/null',
                        os.path.join(BIN, "shaper"), cfg, copy], capture_output=True,
                       env=env(), check=True)
    os.unlink(copy)
    docs = []
    for raw in r.stdout.splitlines():
        op = json.loads(raw.split(b" ", 1)[1])
        if op.get("k") == "index":
            d = {"pg2osync_id": op["id"]}
            d.update(op["doc"])
            docs.append(d)
    return docs


def ceiling(docs):
    """the docs as tasks of BATCH, sent back to back, then all waited for"""
    index = "bench_ceiling"
    M.drop(index)
    st, t = M.req("POST", "/indexes", {"uid": index, "primaryKey": "pg2osync_id"})
    M.wait(t["taskUid"])
    bodies = [json.dumps(docs[i:i + BATCH], separators=(",", ":")).encode()
              for i in range(0, len(docs), BATCH)]
    t0 = time.monotonic()
    uids = []
    for b in bodies:
        st, t = M.req("POST", f"/indexes/{index}/documents", b)
        if st != 202:
            raise RuntimeError(f"the ceiling's task was refused: {st} {t}")
        uids.append(t["taskUid"])
    for u in uids:
        if M.wait(u) != "succeeded":
            raise RuntimeError(f"the ceiling's task {u} did not succeed")
    dt = time.monotonic() - t0
    M.drop(index)
    return len(docs) / dt


class Pipeline:
    def __init__(self, table, index, slot="p2o_bench_meili"):
        self.table, self.index, self.slot = table, index, slot
        self.cfg = os.path.join(T, f"p2o-{table}.yaml")
        self.logpath = os.path.join(T, f"p2o-{table}.log")

    def start(self, fresh=True):
        if fresh:
            drop_slot(self.slot)
            subprocess.run(["rm", "-rf", f"{T}/state-{self.slot}"], check=True)
            M.drop(self.index)
            config(self.cfg, self.slot, self.table, self.index)
        self.p = subprocess.Popen([os.path.join(BIN, "pg2osync-supervise"), "-c", self.cfg],
                                  stdout=open(self.logpath, "a"), stderr=subprocess.STDOUT,
                                  env=env(), start_new_session=True)

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()

    def verify(self):
        r = subprocess.run([os.path.join(BIN, "pg2osync"), "verify", "-c", self.cfg],
                           capture_output=True, text=True, env=env())
        last = (r.stdout.strip().splitlines() or [""])[-1]
        return r.returncode == 0, last


def load(table, kind, n):
    p = Pipeline(table, f"bench_p2o_{kind}")
    t0 = time.monotonic()
    p.start()
    deadline = t0 + 180 + n / 500
    while True:
        # the clock first, then the count: rows that are all in by the
        # deadline are a load that finished, not one that failed (counted
        # before the clock was read, the last of them could land in
        # between and be reported as 'n of n rows' missing the deadline)
        past = time.monotonic() > deadline
        count = M.count(p.index)
        if count >= n:
            break
        if not p.alive():
            raise RuntimeError(f"pg2osync exited: {open(p.logpath).read()[-500:]}")
        if past:
            raise RuntimeError(f"{count} of {n} rows after {deadline - t0:.0f} s")
        time.sleep(0.05)
    dt = time.monotonic() - t0
    return p, n / dt


def streaming(p, n):
    """TXNS transactions into the loaded narrow table, from one client"""
    path = os.path.join(T, "txns.sql")
    with open(path, "w") as f:
        for i in range(1, TXNS + 1):
            f.write(f"begin; insert into {p.table} values ({n + i}, 'new {i}', {i}, 1.50, true, 'x');\n"
                    f"update {p.table} set qty = -{i}, note = 'upd {i}' where id = {i};\n"
                    f"delete from {p.table} where id = {n // 2 + i}; commit;\n")
    t0 = time.monotonic()
    psql(None, path)
    t1 = time.monotonic()
    last = TXNS

    def landed():
        ins = M.doc(p.index, str(n + last))
        upd = M.doc(p.index, str(last))
        return (ins is not None and upd is not None and upd.get("qty") == -last and
                M.doc(p.index, str(n // 2 + last)) is None)
    while True:
        # the clock before the look, as in load()
        past = time.monotonic() - t1 > 600
        if landed():
            break
        if past:
            raise RuntimeError("the last transaction not in the index after 600 s")
        time.sleep(0.02)
    t2 = time.monotonic()
    return {"client_s": t1 - t0, "first_commit_to_all_s": t2 - t0, "last_commit_to_all_s": t2 - t1}


def main():
    os.makedirs(OUT, exist_ok=True)
    st, v = M.req("GET", "/version")
    res = {"rows": ROWS, "wide_rows": WIDE, "batch": BATCH, "server": v.get("pkgVersion"),
           "load_average_start": open("/proc/loadavg").read().split()[:3]}
    for kind, n in (("narrow", ROWS), ("wide", WIDE)):
        table = f"bench_meili_{kind}"
        log(f"{kind}: {n} rows")
        make_table(table, kind, n)
        docs = documents(table)
        runs = {"ceiling": [], "pg2osync": []}
        keep = None
        for i in range(2):
            runs["ceiling"].append(ceiling(docs))
            log(f"{kind}: ceiling {runs['ceiling'][-1]:.0f} docs/s")
            p, rate = load(table, kind, n)
            runs["pg2osync"].append(rate)
            log(f"{kind}: pg2osync {rate:.0f} rows/s")
            # the last run's pipeline stays up for the checks after
            if i == 1:
                keep = p
            else:
                p.stop()
        del docs
        row = {"ceiling": max(runs["ceiling"]), "pg2osync": max(runs["pg2osync"]), "runs": runs}
        row["ratio"] = row["pg2osync"] / row["ceiling"]
        row["verify_equal"], row["verify"] = keep.verify()
        if kind == "narrow":
            log("narrow: streaming")
            row["streaming"] = streaming(keep, n)
            row["verify_after_streaming_equal"], row["verify_after_streaming"] = keep.verify()
        keep.stop()
        drop_slot(keep.slot)
        M.drop(keep.index)
        res[kind] = row
    res["load_average_end"] = open("/proc/loadavg").read().split()[:3]
    with open(os.path.join(OUT, "bench-meili.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"Meilisearch {res['server']}, batches of {BATCH} documents, "
          f"load average {' '.join(res['load_average_start'])} -> {' '.join(res['load_average_end'])}")
    print(f"{'':28} {'ceiling':>12} {'pg2osync':>12} {'of ceiling':>11}  content")
    for kind in ("narrow", "wide"):
        r = res[kind]
        print(f"load {kind:7} {res['rows'] if kind == 'narrow' else res['wide_rows']:>9,} rows "
              f"{r['ceiling']:>9,.0f}/s {r['pg2osync']:>9,.0f}/s {100 * r['ratio']:>10.0f}%  "
              f"{'equal' if r['verify_equal'] else 'DIFFERS'}: {r['verify']}")
        print(f"{'':28} runs: ceiling {', '.join(f'{x:,.0f}' for x in r['runs']['ceiling'])}; "
              f"pg2osync {', '.join(f'{x:,.0f}' for x in r['runs']['pg2osync'])}")
    s = res["narrow"]["streaming"]
    print(f"streaming {TXNS:,} transactions (insert, update, delete) from one client: client "
          f"{s['client_s']:.1f} s, all in the index {s['first_commit_to_all_s']:.1f} s after "
          f"the first commit, {s['last_commit_to_all_s']:.1f} s after the last; content "
          f"{'equal' if res['narrow']['verify_after_streaming_equal'] else 'DIFFERS'}")
    ok = all(res[k]["verify_equal"] for k in ("narrow", "wide")) and \
        res["narrow"]["verify_after_streaming_equal"]
    subprocess.run(["rm", "-rf", T])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
