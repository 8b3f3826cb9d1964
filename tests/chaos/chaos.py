#!/usr/bin/env python3
"""chaos.py - trials of a continuous writer against the supervised pipeline
while processes and the database are killed at random moments; after each
trial the index must equal the table by content, every document.

  tests/chaos/chaos.py [--trials N] [--seed S] [--db pg|mariadb|both] [--tap]
                       [--keep DIR]

It runs under tests/servers/run-with.sh (`make chaos` starts the servers):
PGHOST/PGPORT/... for PostgreSQL, MYSQL_* for MariaDB, OS_URL for the
target, P2O_SERVERS_DIR for the servers' directories (a restart of the
database uses tests/servers/pg.sh and mariadb.sh), P2O_BIN for the build.

A trial, all of it decided by its seed:
  - a table filled with a random number of rows, so the pipeline starts
    with an initial load beside the stream; a random engine configuration
    (batch size, write concurrency, load workers);
  - a writer that never stops for the trial's length: inserts, upserts,
    updates of one row and of ranges, large values (TOAST on PostgreSQL)
    and updates that leave them alone, deletes of one row and of ranges,
    primary-key moves, transactions rolled back, truncates followed by a
    refill;
  - two to five faults at random moments, the first often inside the
    load: kill -9 of one stage (the capture, the loader, the shaper, the
    writer, ckpt), kill -9 of every process (then a restart), SIGTERM of
    the supervisor (it must drain and exit 0, then a restart), a restart
    of the database (a clean stop or a crash);
  - then the writer stops, and the index must come to equal the table.

Truncates land at any moment, during the initial load too
(504-truncate-during-load.t), and every 97th row of the fill, loaded or
written by a truncate's refill, holds a large (TOASTed) value the load
copies and the stream updates around (301-toast-replay.t).

Trial i of a run with seed S has seed S + i and runs on database
DBS[i % len(DBS)]; `--trials 1 --seed S+i --db THAT` repeats it: the same
table, configuration, statements and fault schedule (the interleaving of
statements and faults is the clock's). Each failure is printed with that
command. The summary gives the trials run, failures, and the mix of
faults.

Tables are described by TableSpec (DDL, fill, statements, how a document
renders): a child table (nested documents) is one more spec whose
statements touch the parent's keys and whose expected documents nest
its rows.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests"))
import compare  # noqa: E402

BIN = os.environ.get("P2O_BIN") or os.path.join(TOP, "build", "bin")
OS_URL = os.environ.get("OS_URL", "")
SERVERS = os.environ.get("P2O_SERVERS_DIR", "")
STAGES = {"pg": ["capture-pg", "loader", "shaper", "writer", "ckpt"],
          "mariadb": ["capture-mysql", "loader", "shaper", "writer", "ckpt"]}
ID_SPACE = 30000


def sh(*argv, check=False, timeout=180, quiet=True):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])}...: exit {r.returncode}: "
                           f"{r.stdout.decode(errors='replace')[-400:]}")
    return r


def http(method, path, body=None):
    req = urllib.request.Request(OS_URL + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def doc_version(index, doc_id):
    """the external version a document holds, for a failure's report (it
    says which run and which path wrote it); None when it cannot be read"""
    try:
        with urllib.request.urlopen(f"{OS_URL}/{index}/_doc/{doc_id}", timeout=30) as r:
            return json.load(r).get("_version")
    except (OSError, ValueError):
        return None


def free_port():
    import socket
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


# ---------------------------------------------------------------- tables

class ChaosTable:
    """the one table of every trial: (id, v, note, pad); pad is mostly
    null or short, sometimes a value large enough to be stored out of
    line, which updates of the other columns leave unchanged"""
    name = "chaos"

    def __init__(self, db):
        self.db = db

    def ddl(self):
        if self.db.kind == "pg":
            return ("drop table if exists chaos; create table chaos "
                    "(id int primary key, v int not null, note text, pad text)")
        return ("DROP TABLE IF EXISTS chaos; CREATE TABLE chaos (id int PRIMARY KEY, "
                "v int NOT NULL, note varchar(40), pad mediumtext)")

    def big(self, r):
        """a large value that does not compress much: md5s of a seed"""
        if self.db.kind == "pg":
            return (f"(select string_agg(md5('{r}' || g), '') from generate_series(1, "
                    f"{r % 150 + 80}) g)")
        return f"REPEAT(MD5('{r}'), {r % 150 + 80})"

    def fill(self, n):
        """n rows; every 97th holds a large value (out of line on
        PostgreSQL), which the load copies"""
        if self.db.kind == "pg":
            big = "(select string_agg(md5(g::text || x), '') from generate_series(1, 90) x)"
            return (f"insert into chaos select g, 0, 'fill ' || g, case when g % 97 = 0 then "
                    f"{big} when g % 3 = 0 then 'short ' || g end from generate_series(1, {n}) g")
        return (f"INSERT INTO chaos SELECT seq, 0, "
                f"CONCAT('fill ', seq), CASE WHEN seq % 97 = 0 THEN REPEAT(MD5(seq), 90) "
                f"WHEN seq % 3 = 0 THEN CONCAT('short ', seq) END FROM seq_1_to_{n}")

    def render(self):
        if self.db.kind == "pg":
            return "json_build_object('id',id,'v',v,'note',note,'pad',pad)"
        return "JSON_OBJECT('id', id, 'v', v, 'note', note, 'pad', pad)"

    def statement(self, rng):
        """one statement, and the kind it is (for the tally)"""
        pg = self.db.kind == "pg"
        x = rng.randint(1, ID_SPACE)
        k = rng.randint(1, 40)
        note = f"'n{rng.randrange(10**9)}'"
        w = rng.random()
        if w < 0.25:
            pad = self.big(rng.randrange(10**6)) if rng.random() < 0.05 else "null"
            if pg:
                return "insert", (f"insert into chaos values ({x}, 0, {note}, {pad}) on conflict (id) "
                                  f"do update set v = chaos.v + 1, note = excluded.note")
            return "insert", (f"INSERT INTO chaos VALUES ({x}, 0, {note}, {pad}) "
                              f"ON DUPLICATE KEY UPDATE v = v + 1, note = VALUES(note)")
        if w < 0.45:
            return "update", f"update chaos set v = v + 1, note = {note} where id = {x}"
        if w < 0.55:
            return "update-range", f"update chaos set v = v + 1 where id between {x} and {x + k}"
        if w < 0.58:
            return "update-large", f"update chaos set pad = {self.big(rng.randrange(10**6))} where id = {x}"
        if w < 0.72:
            return "delete", f"delete from chaos where id = {x}"
        if w < 0.76:
            return "delete-range", f"delete from chaos where id between {x} and {x + k}"
        if w < 0.90:
            y = rng.randint(1, ID_SPACE)
            return "key-move", f"update chaos set id = {y} where id = {x}"
        if w < 0.95:
            if pg:
                return "insert-range", (f"insert into chaos select g, 1, 'r' || g, null from "
                                        f"generate_series({x}, {x + k * 5}) g on conflict do nothing")
            return "insert-range", (f"INSERT IGNORE INTO chaos SELECT seq, 1, CONCAT('r', seq), NULL "
                                    f"FROM seq_{x}_to_{x + k * 5}")
        return "noop-update", f"update chaos set v = v where id = {x}"


# ------------------------------------------------------------- databases

class Postgres:
    kind = "pg"

    def __init__(self):
        e = os.environ
        self.url = f"postgres://{e['PGUSER']}:{e['PGPASSWORD']}@{e['PGHOST']}:{e['PGPORT']}/{e['PGDATABASE']}"
        self.slot = "p2o_chaos"
        self.index = "chaos_pg"
        self.stream = f"postgres:{self.slot}"

    def client_argv(self):
        return ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=0", "-o", "/dev/null"]

    def sql(self, text, timeout=300):
        return sh("psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", text, timeout=timeout)

    def query_json(self, render, table):
        r = sh("psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c",
               f"select coalesce(json_agg({render}), '[]') from {table} t", check=True)
        return json.loads(r.stdout)

    def begin(self):
        return "begin;"

    def truncate(self, table):
        return f"truncate {table}"

    def fresh_stream(self, tables):
        for _ in range(50):
            r = self.sql(f"select count(*) from pg_replication_slots where slot_name = '{self.slot}' and active")
            if r.stdout.strip() in (b"0", b""):
                break
            time.sleep(0.2)
        self.sql(f"select pg_drop_replication_slot(slot_name) from pg_replication_slots "
                 f"where slot_name = '{self.slot}' and not active")
        self.sql(f"drop publication if exists {self.slot}")
        http("DELETE", f"/.pg2osync_meta/_doc/{self.stream}?refresh=true")
        for t in tables:
            http("DELETE", f"/.pg2osync_meta/_doc/{self.stream}%2Fload%2Fpublic.{t}?refresh=true")

    def config_source(self, rng):
        return [
            "source:", "  url_env: P2O_CHAOS_URL", f"  slot_name: {self.slot}",
            f"  publication: {self.slot}", "  reconnect_max: 1000",
            f"  load_workers: {rng.choice([1, 1, 2, 3])}",
        ], f"public"

    def restart(self, crash, down_s):
        d = os.path.join(SERVERS, "pg")
        sh(os.path.join(TOP, "tests/servers/pg.sh"), "kill" if crash else "stop", d, check=True)
        time.sleep(down_s)
        sh(os.path.join(TOP, "tests/servers/pg.sh"), "start", d, check=True)


class MariaDB:
    kind = "mariadb"

    def __init__(self):
        e = os.environ
        self.url = (f"mysql://{e['MYSQL_USER']}:{e['MYSQL_PWD']}@{e['MYSQL_HOST']}:"
                    f"{e['MYSQL_TCP_PORT']}/{e['MYSQL_DB']}")
        self.dbname = e["MYSQL_DB"]
        self.server_id = 4201201
        self.index = "chaos_my"
        self.stream = f"mysql:{self.server_id}"
        self.base = ["mariadb", "--no-defaults", "-h" + e["MYSQL_HOST"], "-P" + e["MYSQL_TCP_PORT"],
                     "-u" + e["MYSQL_USER"]]

    def client_argv(self):
        return self.base + ["--force", "-N", "-B", self.dbname]

    def sql(self, text, timeout=300):
        return sh(*self.base, "-N", "-B", self.dbname, "-e", text, timeout=timeout)

    def query_json(self, render, table):
        r = sh(*self.base, "--default-character-set=utf8mb4", "-N", "-B", "-r", self.dbname, "-e",
               "SET SESSION group_concat_max_len = 1073741824; "
               f"SELECT COALESCE(JSON_ARRAYAGG({render}), '[]') FROM {table}", check=True)
        return json.loads(r.stdout)

    def begin(self):
        return "BEGIN;"

    def truncate(self, table):
        return f"TRUNCATE TABLE {table}"

    def fresh_stream(self, tables):
        http("DELETE", f"/.pg2osync_meta/_doc/{self.stream}?refresh=true")
        for t in tables:
            http("DELETE", f"/.pg2osync_meta/_doc/{self.stream}%2Fload%2F{self.dbname}.{t}?refresh=true")

    def config_source(self, rng):
        return ["source:", "  url_env: P2O_CHAOS_URL", f"  server_id: {self.server_id}",
                "  reconnect_max: 1000"], self.dbname

    def restart(self, crash, down_s):
        d = os.path.join(SERVERS, "mariadb")
        sh(os.path.join(TOP, "tests/servers/mariadb.sh"), "kill" if crash else "stop", d, check=True)
        time.sleep(down_s)
        sh(os.path.join(TOP, "tests/servers/mariadb.sh"), "start", d, check=True)


# ---------------------------------------------------------------- writer

class Writer(threading.Thread):
    """one client connection fed statements through a pipe; a client that
    died (its server restarted) is started again; statements meant for a
    moment without a client are dropped, the sequence goes on"""

    def __init__(self, db, tables, rng, rate, log):
        super().__init__(daemon=True)
        self.db, self.tables, self.rng, self.rate, self.log = db, tables, rng, rate, log
        self.stop_ev = threading.Event()
        self.proc = None
        self.spawned = 0.0
        self.tally = {}
        self.txns = 0

    def client(self):
        if self.proc is not None and self.proc.poll() is None:
            return self.proc
        if time.monotonic() - self.spawned < 0.5:
            return None
        self.spawned = time.monotonic()
        self.proc = subprocess.Popen(self.db.client_argv(), stdin=subprocess.PIPE,
                                     stdout=self.log, stderr=self.log)
        return self.proc

    def send(self, text):
        p = self.client()
        if p is None:
            return
        try:
            p.stdin.write(text.encode() + b"\n")
            p.stdin.flush()
        except (BrokenPipeError, OSError):
            self.proc = None

    def txn(self):
        rng = self.rng
        t = self.tables[0]
        w = rng.random()
        if w < 0.004:
            self.tally["truncate"] = self.tally.get("truncate", 0) + 1
            return f"{self.db.truncate(t.name)}; {t.fill(rng.randint(10, 3000))};"
        n = rng.choice([1, 1, 1, 2, 3, 5, 8])
        parts = []
        for _ in range(n):
            kind, s = t.statement(rng)
            self.tally[kind] = self.tally.get(kind, 0) + 1
            parts.append(s + ";")
        if n == 1 and rng.random() < 0.5:
            return parts[0]
        end = "commit;"
        if rng.random() < 0.05:
            end = "rollback;"
            self.tally["rolled-back"] = self.tally.get("rolled-back", 0) + 1
        return self.db.begin() + " " + " ".join(parts) + " " + end

    def run(self):
        gap = 1.0 / self.rate
        while not self.stop_ev.is_set():
            self.send(self.txn())
            self.txns += 1
            self.stop_ev.wait(gap)

    def finish(self):
        self.stop_ev.set()
        self.join(10)
        p = self.proc
        if p is not None and p.poll() is None:
            try:
                p.stdin.close()
            except OSError:
                pass
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


# ------------------------------------------------------------- pipeline

class Pipeline:
    def __init__(self, db, cfg, log, port):
        self.db, self.cfg, self.log, self.port = db, cfg, log, port
        self.proc = None
        self.env = dict(os.environ, P2O_CHAOS_URL=db.url,
                        PATH=BIN + ":" + os.environ.get("PATH", ""))

    def start(self):
        self.started = time.monotonic()
        self.proc = subprocess.Popen([os.path.join(BIN, "pg2osync-supervise"), "-c", self.cfg],
                                     stdout=self.log, stderr=self.log, env=self.env)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def healthy(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/ready", timeout=5) as r:
                return r.status == 200
        except OSError:
            return False

    def pids(self, stage):
        r = sh("pgrep", "-f", f"/{stage} -c {self.cfg}")
        return [int(p) for p in r.stdout.split()]

    def kill_all(self):
        sh("pkill", "-KILL", "-f", "--", f"-c {self.cfg}")
        if self.proc:
            self.proc.wait()

    def term(self, timeout=90):
        if not self.alive():
            return self.proc.returncode if self.proc else None
        # a SIGTERM in the first instants after exec lands before the
        # supervisor has its handler: the default action, not a drain
        gap = self.started + 1.0 - time.monotonic()
        if gap > 0:
            time.sleep(gap)
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill_all()
            return "timeout"


# ---------------------------------------------------------------- trial

FAULTS = [("kill-stage", 40), ("kill-all", 20), ("sigterm", 15), ("db-restart", 12), ("db-crash", 8)]


def pick(rng, weighted):
    total = sum(w for _, w in weighted)
    x = rng.uniform(0, total)
    for name, w in weighted:
        x -= w
        if x <= 0:
            return name
    return weighted[-1][0]


def trial(db, seed, dbname, workdir, short):
    rng = random.Random(seed)
    tables = [ChaosTable(db)]
    t = tables[0]
    rows = rng.randint(1000, 6000 if short else 20000)
    length = rng.uniform(6, 10) if short else rng.uniform(10, 22)
    nfaults = rng.randint(2, 3) if short else rng.randint(2, 5)
    times = sorted([rng.uniform(0.3, 2.0)] + [rng.uniform(0.5, length) for _ in range(nfaults - 1)])
    plan = []
    for at in times:
        f = pick(rng, FAULTS)
        arg = None
        if f == "kill-stage":
            arg = rng.choice(STAGES[db.kind])
        elif f in ("db-restart", "db-crash"):
            arg = round(rng.uniform(0.2, 4.0), 1)
        plan.append((at, f, arg))
    rate = rng.choice([15, 30, 60])
    batch = rng.choice([20, 200, 1000])
    conc = rng.choice([1, 1, 2, 4])
    port = free_port()

    # the table, an empty index and a stream with no past
    r = db.sql(t.ddl())
    if r.returncode != 0:
        raise RuntimeError(f"ddl: {r.stdout[-300:]}")
    r = db.sql(t.fill(rows))
    if r.returncode != 0:
        raise RuntimeError(f"fill: {r.stdout[-300:]}")
    http("DELETE", f"/{db.index}")
    db.fresh_stream([x.name for x in tables])
    src, schema = db.config_source(rng)
    cfg = os.path.join(workdir, "cfg.yaml")
    with open(cfg, "w") as f:
        f.write("\n".join(src + [
            "target:", f"  url: {OS_URL}",
            "sync:", f"  {t.name}:", f"    table: {schema}.{t.name}", f"    index: {db.index}",
            "engine:", f"  batch_size: {batch}", f"  write_concurrency: {conc}",
            "  checkpoint_interval_ms: 200",
            "metrics:", f"  bind: 127.0.0.1:{port}", ""]))
    suplog = open(os.path.join(workdir, "sup.log"), "ab")
    wlog = open(os.path.join(workdir, "writer.log"), "ab")
    pl = Pipeline(db, cfg, suplog, port)
    desc = (f"{dbname} seed={seed}: {rows} rows loaded, {length:.0f} s of writes at {rate}/s, "
            f"batch {batch}, concurrency {conc}, faults " +
            ", ".join(f"{f}{':' + str(a) if a is not None else ''}@{at:.1f}s" for at, f, a in plan))
    problems = []
    done = []
    pl.start()
    w = Writer(db, tables, rng, rate, wlog)
    t0 = time.monotonic()
    w.start()
    for at, f, arg in plan:
        delay = t0 + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if not pl.alive():
            problems.append(f"the supervisor exited on its own ({pl.proc.returncode}) before {f}")
            pl.start()
        if f == "kill-stage":
            # the drawn stage, or the next one running (the loader ends
            # with its load; a stage may be between restarts)
            order = STAGES[db.kind]
            i = order.index(arg)
            for st in order[i:] + order[:i]:
                pids = pl.pids(st)
                if pids:
                    os.kill(pids[0], signal.SIGKILL)
                    done.append(f"kill-stage:{st}")
                    break
            else:
                done.append("kill-stage:none-running")
        elif f == "kill-all":
            pl.kill_all()
            pl.start()
            done.append(f)
        elif f == "sigterm":
            rc = pl.term()
            if rc not in (0,):
                problems.append(f"SIGTERM: the supervisor exited {rc}, not 0")
            pl.start()
            done.append(f)
        else:
            db.restart(f == "db-crash", arg)
            done.append(f)
    rest = t0 + length - time.monotonic()
    if rest > 0:
        time.sleep(rest)
    w.finish()
    time.sleep(0.5)
    if not pl.alive():
        problems.append(f"the supervisor exited on its own ({pl.proc.returncode})")
        pl.start()
    # the table is still now: the index must come to equal it
    t1 = time.monotonic()
    deadline = t1 + (240 if not short else 180)
    diff, want = None, {}
    while True:
        try:
            want = {str(r["id"]): r for r in db.query_json(t.render(), t.name)}
            http("POST", f"/{db.index}/_refresh")
            got = compare.fetch_all(OS_URL, db.index)
            diff = [k for k in set(want) | set(got) if want.get(k) != got.get(k)]
        except Exception as e:  # a database still starting, a node busy
            diff = [f"compare failed: {e}"]
        if not diff or time.monotonic() > deadline or not pl.alive():
            break
        time.sleep(1)
    converged = time.monotonic() - t1
    if diff:
        ex = []
        for k in sorted(diff)[:5]:
            if k.startswith("compare failed"):
                ex.append(k)
                continue
            a, b = want.get(k), got.get(k)
            what = "missing from index" if b is None else "resurrected" if a is None else "differs"
            ver = "" if b is None else f" (version {doc_version(db.index, k)})"
            ex.append(f"id {k} {what}: table {json.dumps(a)[:120]} index {json.dumps(b)[:120]}{ver}")
        problems.append(f"{len(diff)} documents differ after {converged:.0f} s: " + "; ".join(ex))
    if not pl.alive():
        problems.append(f"the supervisor exited on its own ({pl.proc.returncode})")
    rc = pl.term()
    if rc not in (0, None):
        problems.append(f"final SIGTERM: the supervisor exited {rc}")
    with open(os.path.join(workdir, "tally.json"), "w") as f:
        json.dump(w.tally, f)
    suplog.close()
    wlog.close()
    return desc, done, problems, converged, len(want), w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=int(os.environ.get("TRIALS", 10)))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--db", default=os.environ.get("DB", "both"), choices=["pg", "mariadb", "both"])
    ap.add_argument("--tap", action="store_true", help="TAP output, for prove")
    ap.add_argument("--short", action="store_true", help="short trials (the test suite's)")
    ap.add_argument("--keep", default=None, help="where the logs of failed trials go")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int(time.time()) % 1000000
    if not OS_URL or not SERVERS:
        print("chaos: needs tests/servers/run-with.sh (OS_URL, P2O_SERVERS_DIR)", file=sys.stderr)
        return 2
    names = ["pg", "mariadb"] if a.db == "both" else [a.db]
    dbs = {}
    for n in names:
        try:
            dbs[n] = Postgres() if n == "pg" else MariaDB()
        except KeyError as e:
            print(f"chaos: no {n} server in the environment ({e})", file=sys.stderr)
            return 2
    keep = a.keep or tempfile.mkdtemp(prefix="p2o-chaos.", dir="/tmp")
    os.makedirs(keep, exist_ok=True)
    out = (lambda s: print(s, flush=True))
    note = (lambda s: out(("# " if a.tap else "") + s))
    note(f"chaos: {a.trials} trials from seed {seed} on {', '.join(names)}")
    fails, mix, ops, ran = [], {}, {}, {n: 0 for n in names}
    start = time.monotonic()
    # SIGTERM or Ctrl-C: stop after the summary of the trials done so far
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    ran_total = 0
    for i in range(a.trials):
        s = seed + i
        n = names[i % len(names)]
        wd = os.path.join(keep, f"{n}-{s}")
        os.makedirs(wd, exist_ok=True)
        t0 = time.monotonic()
        try:
            ran_total += 1
            desc, done, problems, conv, nrows, w = trial(dbs[n], s, n, wd, a.short)
            for d in done:
                mix[d] = mix.get(d, 0) + 1
            for k, v in w.tally.items():
                ops[k] = ops.get(k, 0) + v
        except KeyboardInterrupt:
            note(f"chaos: interrupted in trial {i + 1} (seed {s}); it is not counted")
            sh("pkill", "-KILL", "-f", "--", wd + "/")
            ran_total -= 1
            break
        except Exception as e:  # the harness's own failure is a failure too
            desc, problems, conv, nrows = f"{n} seed={s}", [f"harness error: {e!r}"], 0, 0
        ran[n] += 1
        took = time.monotonic() - t0
        cmd = f"make chaos DB={n} TRIALS=1 SEED={s}"
        if problems:
            fails.append((n, s, cmd, problems, wd))
            out(f"{'not ok' if a.tap else 'FAIL'} {i + 1} - {desc} ({took:.0f} s)")
            for p in problems:
                note(f"  {p}")
            note(f"  reproduce: {cmd}   (logs in {wd})")
        else:
            out(f"{'ok' if a.tap else 'ok  '} {i + 1} - {desc}; {nrows} rows equal after "
                f"{conv:.0f} s ({took:.0f} s)")
            subprocess.run(["rm", "-rf", wd])
    total = time.monotonic() - start
    note(f"chaos: trials run {ran_total} of {a.trials} ({', '.join(f'{k} {v}' for k, v in ran.items())}), "
         f"failures {len(fails)}, {total:.0f} s")
    note("chaos: faults " + ", ".join(f"{k} {v}" for k, v in sorted(mix.items())))
    note("chaos: statements " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    for n, s, cmd, problems, wd in fails:
        note(f"chaos: failed {n} seed {s}: {problems[0][:200]} -- reproduce: {cmd}")
    if not fails:
        subprocess.run(["rmdir", keep], stderr=subprocess.DEVNULL)
    if a.tap:
        out(f"1..{ran_total}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
