#!/usr/bin/env python3
"""soak.py - hours of a fixed-rate real workload through the supervised
pipeline, with faults on a schedule, sampled every 10 s; pass criteria at
the end.

  tests/soak/soak.py [--minutes M] [--db pg|mariadb|both] [--out DIR]

It runs under tests/servers/run-with.sh --pg --mariadb --os (`make soak`
starts the servers and says so): PG*, MYSQL_*, OS_URL, P2O_SERVERS_DIR,
P2O_BIN for the build. With --db both (the default) the two sources run at
once, each through a pipeline of its own, into one OpenSearch node.

The workload is the real clients', at a fixed rate for the whole run:
  - PostgreSQL: pgbench's built-in TPC-B-like script (-R SOAK_PG_TPS, two
    clients) on a scale-1 database (100,000 accounts); pgbench_history gets
    a bigserial primary key so that it can be indexed (pgbench names the
    columns it inserts, so its script is unchanged);
  - MariaDB: sysbench's oltp_write_only (--rate SOAK_MY_TPS, two threads)
    on two tables of 20,000 rows (an indexed and a plain update, a delete
    and an insert of the same id per transaction);
  - a heartbeat per source: one row's `at` set to the clock every second;
    the index's copy of it says how far the index is behind (lag).
A client that a database restart ends is started again for the time left.

The clock starts once the initial load of every table is done. The run is
cut into quarters: the first and the last are quiet (the criteria compare
them); the faults start in the middle half, up to a margin before the last
quarter (a quarter of the middle half, at most 5 minutes) so that the
pipelines have caught up when it begins, evenly spaced in cycles (two in an
hour) of: a restart of the target (a clean stop and a start, the data
kept; first, being the longest to recover from), kill -9 of a random stage
of each pipeline, kill -9 of each whole pipeline (the supervisor and every
stage, then a new supervisor), a restart of each database (a clean stop in
the first cycle, a crash in the second, and so on). Faults run one after
another: one that could not start before the margin is skipped and said so.

Every 10 s, one CSV row (OUT/soak.csv): for each source and each role
(supervisor, capture, loader, shaper, writer, ckpt) the process's pid, RSS
and PSS (/proc/PID/smaps_rollup), open descriptors and CPU (percent of one
core over the interval); the commit -> indexed p50 and p99 of the interval
from the supervisor's pg2osync_commit_to_indexed_seconds histogram (one
observation per batch the writer reports durable: from its last
transaction's commit to the target's answer) and how many; the lag;
the WAL the slot retains (PostgreSQL; a binlog is not held back by its
readers); the fault begun in the interval. A stage a fault restarted is a
new process under the same role: the criteria compare roles, not pids.

Pass criteria (printed at the end, with every number):
  - PSS: no role's PSS, averaged over the samples of the last quarter, is
    more than 2 MB above its average over the first quarter;
  - descriptors: no role's highest count in the last quarter is above its
    highest in the first;
  - latency: the commit -> indexed p99 of the last quarter (the histogram's
    counts summed over the quarter) is within 1.5x the first quarter's;
  - content: after the workload stops, every table equals its index,
    document by document (tests/compare.py), within 300 s;
  - and no supervisor exited on its own.
Writes OUT/soak.csv, OUT/summary.txt, OUT/summary.json and, with gnuplot,
OUT/soak.png. Exit status 0 when every criterion holds.
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests"))
import compare  # noqa: E402

BIN = os.environ.get("P2O_BIN") or os.path.join(TOP, "build", "bin")
OS_URL = os.environ.get("OS_URL", "")
SERVERS = os.environ.get("P2O_SERVERS_DIR", "")
PAGE = os.sysconf("SC_PAGE_SIZE")
CLK = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 10
ROLES = ["supervisor", "capture", "loader", "shaper", "writer", "ckpt"]
PSS_GROWTH_KB = 2048
P99_RATIO = 1.5
CONVERGE_S = 300


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


def sh(*argv, timeout=300, env=None):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout, env=env)


def http_json(path, method="GET", body=None, timeout=30):
    req = urllib.request.Request(OS_URL + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def free_port():
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


# ------------------------------------------------------------- processes

def proc_children():
    """ppid -> [pid] of every process now"""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        ppid = int(s[s.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def descendants(root):
    kids = proc_children()
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def role_of(pid):
    """the pipeline role of a process, from its program's name"""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv0 = os.path.basename(f.read().split(b"\0")[0].decode(errors="replace"))
    except OSError:
        return None
    if argv0 == "pg2osync-supervise":
        return "supervisor"
    if argv0 in ("capture-pg", "capture-mysql"):
        return "capture"
    return argv0 if argv0 in ROLES else None


def proc_usage(pid):
    """(rss kB, pss kB, open descriptors, cpu ticks) or None when it is gone"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        fl = s[s.rindex(")") + 2:].split()
        ticks = int(fl[11]) + int(fl[12])
        rss = int(fl[21]) * PAGE // 1024
        pss = 0
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                    break
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return rss, pss, fds, ticks
    except (OSError, ValueError, IndexError):
        return None


# ------------------------------------------------------------- histograms

def hist(text, name):
    """cumulative bucket counts by upper bound of one histogram"""
    b = {}
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket{{"):
            le = line.split('le="')[1].split('"')[0]
            b[float("inf") if le == "+Inf" else float(le)] = float(line.split()[-1])
    return b


def hist_delta(before, after):
    """what after counted since before; a supervisor started anew (kill -9
    of the whole pipeline) counts from zero again"""
    if not after:
        return {}
    if not before or after.get(float("inf"), 0) < before.get(float("inf"), 0):
        return dict(after)
    return {le: after[le] - before.get(le, 0) for le in after}


def hist_add(a, b):
    return {le: a.get(le, 0) + b.get(le, 0) for le in set(a) | set(b)}


def quantile_ms(d, q):
    """quantile q in ms, interpolated linearly inside the bucket that holds
    it as Prometheus's histogram_quantile does (the buckets are 1.5x to
    2.5x apart: their bounds alone could not tell a 1.5x drift); None with
    no counts; the last finite bound (10 s) when it lies past it"""
    pts = sorted(d.items())
    if not pts or not pts[-1][1]:
        return None
    total = pts[-1][1]
    lo_le, lo_c = 0.0, 0.0
    for le, c in pts:
        if c >= q * total:
            if le == float("inf"):
                return round(lo_le * 1000, 2)
            if c == lo_c:
                return round(le * 1000, 2)
            return round((lo_le + (le - lo_le) * (q * total - lo_c) / (c - lo_c)) * 1000, 2)
        lo_le, lo_c = le, c
    return round(lo_le * 1000, 2)


# ------------------------------------------------------------- sources

class Client(threading.Thread):
    """a workload client run again and again until the run's end: a
    database restart ends pgbench and sysbench, they start again for the
    time left"""

    def __init__(self, name, argv_for, env, logf, stop_ev, end_at):
        super().__init__(daemon=True)
        self.name_, self.argv_for, self.env, self.logf = name, argv_for, env, logf
        self.stop_ev, self.end_at = stop_ev, end_at
        self.proc = None
        self.starts = 0

    def run(self):
        while not self.stop_ev.is_set():
            left = int(self.end_at() - time.monotonic())
            if left < 2:
                break
            self.starts += 1
            self.proc = subprocess.Popen(self.argv_for(left), stdout=self.logf,
                                         stderr=subprocess.STDOUT, env=self.env)
            self.proc.wait()
            if self.stop_ev.wait(1):
                break

    def stop(self):
        self.stop_ev.set()
        p = self.proc
        if p is not None and p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.join(40)


class Beat(threading.Thread):
    """the heartbeat row: one client connection fed an update a second; a
    client that exited (its server went away: psql exits then, and so does
    the mariadb client without --force) is started again"""

    def __init__(self, src, stop_ev):
        super().__init__(daemon=True)
        self.src, self.stop_ev = src, stop_ev
        self.proc = None

    def run(self):
        while not self.stop_ev.wait(1):
            if self.proc is None or self.proc.poll() is not None:
                self.proc = subprocess.Popen(self.src.client_argv(), stdin=subprocess.PIPE,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                             env=self.src.env)
            ms = int(time.time() * 1000)
            try:
                self.proc.stdin.write(f"update soak_beat set at = {ms} where id = 1;\n".encode())
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                self.proc = None

    def stop(self):
        self.stop_ev.set()
        self.join(5)
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


class Postgres:
    key = "pg"
    stage = "capture-pg"

    def __init__(self, tps):
        e = os.environ
        self.url = (f"postgres://{e['PGUSER']}:{e['PGPASSWORD']}@{e['PGHOST']}:{e['PGPORT']}/"
                    f"{e['PGDATABASE']}")
        self.env = dict(os.environ, PGOPTIONS="-c client_min_messages=warning")
        self.tps = tps
        self.slot = "p2o_soak"
        self.tables = {"pgbench_accounts": "aid", "pgbench_branches": "bid",
                       "pgbench_tellers": "tid", "pgbench_history": "id", "soak_beat": "id"}

    def sql(self, text, timeout=600):
        return sh("psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", text,
                  timeout=timeout, env=self.env)

    def client_argv(self):
        return ["psql", "-X", "-q", "-At", "-o", "/dev/null"]

    def prepare(self, logf):
        r = sh("pgbench", "-i", "-q", "-s", "1", timeout=600, env=self.env)
        logf.write(r.stdout)
        if r.returncode != 0:
            raise RuntimeError(f"pgbench -i: {r.stdout[-400:]}")
        for s in ("alter table pgbench_history add column id bigserial primary key",
                  "drop table if exists soak_beat",
                  "create table soak_beat (id int primary key, at bigint not null)",
                  "insert into soak_beat values (1, 0)",
                  f"select pg_drop_replication_slot(slot_name) from pg_replication_slots "
                  f"where slot_name = '{self.slot}'",
                  f"drop publication if exists {self.slot}"):
            r = self.sql(s)
            if r.returncode != 0:
                raise RuntimeError(f"{s}: {r.stdout[-300:]}")

    def source_config(self):
        return ["source:", "  url_env: P2O_SOAK_URL", f"  slot_name: {self.slot}",
                f"  publication: {self.slot}", "  reconnect_max: 1000"], "public"

    def workload(self, left):
        return ["pgbench", "-n", "-R", str(self.tps), "-T", str(left), "-c", "2", "-j", "1"]

    def expected(self, table):
        r = sh("psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c",
               f"select coalesce(json_agg(row_to_json(x)), '[]') from {table} x",
               env=self.env)
        if r.returncode != 0:
            raise RuntimeError(r.stdout.decode(errors="replace")[-300:])
        return {str(x[self.tables[table]]): x for x in json.loads(r.stdout)}

    def wal_retained(self):
        r = self.sql(f"select pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn) "
                     f"from pg_replication_slots where slot_name = '{self.slot}'", timeout=20)
        try:
            return int(float(r.stdout.strip())) if r.returncode == 0 else ""
        except ValueError:
            return ""

    def restart(self, crash):
        d = os.path.join(SERVERS, "pg")
        sh(os.path.join(TOP, "tests/servers/pg.sh"), "kill" if crash else "stop", d)
        time.sleep(2)
        r = sh(os.path.join(TOP, "tests/servers/pg.sh"), "start", d)
        if r.returncode != 0:
            raise RuntimeError(f"pg.sh start: {r.stdout[-300:]}")


class MariaDB:
    key = "my"
    stage = "capture-mysql"

    def __init__(self, tps):
        e = os.environ
        self.url = (f"mysql://{e['MYSQL_USER']}:{e['MYSQL_PWD']}@{e['MYSQL_HOST']}:"
                    f"{e['MYSQL_TCP_PORT']}/{e['MYSQL_DB']}")
        self.env = dict(os.environ)
        self.db = e["MYSQL_DB"]
        self.tps = tps
        self.server_id = 4201301
        self.base = ["mariadb", "--no-defaults", "-h" + e["MYSQL_HOST"], "-P" + e["MYSQL_TCP_PORT"],
                     "-u" + e["MYSQL_USER"]]
        self.tables = {"sbtest1": "id", "sbtest2": "id", "soak_beat": "id"}
        self.cols = {"sbtest1": ["id", "k", "c", "pad"], "sbtest2": ["id", "k", "c", "pad"],
                     "soak_beat": ["id", "at"]}
        # sysbench takes a password only on its command line: it connects
        # as root through the server's socket instead, where no password
        # is asked
        self.sysbench = ["sysbench", "oltp_write_only", "--db-driver=mysql",
                         f"--mysql-socket={os.path.join(SERVERS, 'mariadb', 'mysqld.sock')}",
                         "--mysql-user=root", f"--mysql-db={self.db}", "--tables=2",
                         "--table-size=20000"]

    def sql(self, text, timeout=600):
        return sh(*self.base, "-N", "-B", self.db, "-e", text, timeout=timeout, env=self.env)

    def client_argv(self):
        # no --force: a client whose server went away must exit on the
        # next statement's error and be started again by its caller; with
        # --force it stayed, its connection gone, and the heartbeat stopped
        return self.base + ["-N", "-B", self.db]

    def prepare(self, logf):
        for t in ("sbtest1", "sbtest2", "soak_beat"):
            self.sql(f"DROP TABLE IF EXISTS {t}")
        r = sh(*self.sysbench, "prepare", timeout=600)
        logf.write(r.stdout)
        if r.returncode != 0:
            raise RuntimeError(f"sysbench prepare: {r.stdout[-400:]}")
        r = self.sql("CREATE TABLE soak_beat (id int PRIMARY KEY, at bigint NOT NULL); "
                     "INSERT INTO soak_beat VALUES (1, 0)")
        if r.returncode != 0:
            raise RuntimeError(f"soak_beat: {r.stdout[-300:]}")
        try:
            http_json(f"/.pg2osync_meta/_doc/mysql:{self.server_id}", method="DELETE")
        except (OSError, urllib.error.HTTPError):
            pass
        for t in self.tables:
            try:
                http_json(f"/.pg2osync_meta/_doc/mysql:{self.server_id}%2Fload%2F{self.db}.{t}",
                          method="DELETE")
            except (OSError, urllib.error.HTTPError):
                pass

    def source_config(self):
        return ["source:", "  url_env: P2O_SOAK_URL", f"  server_id: {self.server_id}",
                "  reconnect_max: 1000"], self.db

    def workload(self, left):
        return self.sysbench + ["--threads=2", f"--rate={self.tps}", f"--time={left}",
                                "--report-interval=0", "run"]

    def expected(self, table):
        obj = ", ".join(f"'{c}', {c}" for c in self.cols[table])
        r = sh(*self.base, "--default-character-set=utf8mb4", "-N", "-B", "-r", self.db, "-e",
               "SET SESSION group_concat_max_len = 1073741824; "
               f"SELECT COALESCE(JSON_ARRAYAGG(JSON_OBJECT({obj})), '[]') FROM {table}",
               env=self.env)
        if r.returncode != 0:
            raise RuntimeError(r.stdout.decode(errors="replace")[-300:])
        return {str(x["id"]): x for x in json.loads(r.stdout)}

    def wal_retained(self):
        return ""

    def restart(self, crash):
        d = os.path.join(SERVERS, "mariadb")
        sh(os.path.join(TOP, "tests/servers/mariadb.sh"), "kill" if crash else "stop", d)
        time.sleep(2)
        r = sh(os.path.join(TOP, "tests/servers/mariadb.sh"), "start", d)
        if r.returncode != 0:
            raise RuntimeError(f"mariadb.sh start: {r.stdout[-300:]}")


def index_of(src, table):
    return f"soak_{src.key}_{table}"


# ------------------------------------------------------------- pipeline

class Pipeline:
    def __init__(self, src, out):
        self.src = src
        self.port = free_port()
        self.cfg = os.path.join(out, f"{src.key}.yaml")
        self.log = open(os.path.join(out, f"{src.key}-pipeline.log"), "ab")
        self.proc = None
        self.exits = []	# (when, status) of a supervisor that ended on its own
        # a kill of the whole pipeline is not a supervisor that exited on
        # its own: the fault thread holds this from its kill to the new start
        self.lock = threading.Lock()
        self.env = dict(src.env, P2O_SOAK_URL=src.url, PATH=BIN + ":" + os.environ.get("PATH", ""))
        lines, schema = src.source_config()
        lines += ["target:", f"  url: {OS_URL}", "sync:"]
        for t in src.tables:
            lines += [f"  {t}:", f"    table: {schema}.{t}", f"    index: {index_of(src, t)}"]
        lines += ["metrics:", f"  bind: 127.0.0.1:{self.port}", ""]
        with open(self.cfg, "w") as f:
            f.write("\n".join(lines))

    def start(self):
        self.started = time.monotonic()
        self.proc = subprocess.Popen([os.path.join(BIN, "pg2osync-supervise"), "-c", self.cfg],
                                     stdout=self.log, stderr=self.log, env=self.env)

    def check_alive(self, t):
        """a supervisor that exited on its own is a failure: noted, and a
        new one started so that the run goes on"""
        with self.lock:
            if self.proc is not None and self.proc.poll() is not None:
                self.exits.append((round(t), self.proc.returncode))
                log(f"{self.src.key}: the supervisor exited on its own ({self.proc.returncode})")
                self.start()

    def pids(self):
        """role -> [pid] of the supervisor and its stages"""
        out = {}
        if self.proc is None:
            return out
        for p in descendants(self.proc.pid):
            r = role_of(p)
            if r:
                out.setdefault(r, []).append(p)
        return out

    def metrics(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
                return r.read().decode()
        except OSError:
            return ""

    def state(self):
        m = self.metrics()
        for line in m.splitlines():
            if line.startswith("pg2osync_source_state{") and line.endswith(" 1"):
                return line.split('state="')[1].split('"')[0]
        return None

    def kill_stage(self, rng):
        running = [(r, p) for r, ps in self.pids().items() if r != "supervisor" for p in ps]
        if not running:
            return "none running"
        role, pid = rng.choice(sorted(running))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return f"{role} (ended before the kill)"
        return role

    def kill_all(self):
        """kill -9 of the supervisor and every stage at once, then a new
        supervisor"""
        with self.lock:
            for p in descendants(self.proc.pid):
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait()
            time.sleep(1)
            self.start()

    def term(self, timeout=120):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            for p in descendants(self.proc.pid):
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait()
            return "timeout"


def restart_target():
    d = os.path.join(SERVERS, "os")
    sh(os.path.join(TOP, "tests/servers/opensearch.sh"), "stop", d)
    time.sleep(2)
    r = sh(os.path.join(TOP, "tests/servers/opensearch.sh"), "start", d, timeout=400)
    if r.returncode != 0:
        raise RuntimeError(f"opensearch.sh start: {r.stdout[-300:]}")


# ------------------------------------------------------------- sampler

class Sampler:
    def __init__(self, pipes, out):
        self.pipes = pipes
        self.rows = []
        self.hists = {k: {} for k in pipes}	# last cumulative histogram per source
        self.deltas = []			# per sample: source -> histogram delta
        self.ticks = {}				# pid -> cpu ticks at the last sample
        self.faults_now = []
        self.cols = ["t_s"]
        for k in pipes:
            for r in ROLES:
                self.cols += [f"{k}.{r}.{x}" for x in ("pid", "rss_kb", "pss_kb", "fds", "cpu_pct")]
            self.cols += [f"{k}.batches", f"{k}.p50_ms", f"{k}.p99_ms", f"{k}.lag_s",
                          f"{k}.wal_bytes"]
        self.cols += ["fault"]
        self.csv = open(os.path.join(out, "soak.csv"), "w")
        self.csv.write(",".join(self.cols) + "\n")
        self.last = time.monotonic()

    def fault(self, text):
        self.faults_now.append(text)

    def sample(self, t):
        now = time.monotonic()
        dt = max(now - self.last, 1e-3)
        self.last = now
        row = {"t_s": round(t, 1)}
        # /proc first, before any client this sampler runs maps a library
        for k, pl in self.pipes.items():
            for r, ps in pl.pids().items():
                p = max(ps)
                u = proc_usage(p)
                if u is None:
                    continue
                rss, pss, fds, ticks = u
                cpu = 100.0 * (ticks - self.ticks.get(p, 0)) / CLK / dt
                self.ticks[p] = ticks
                row.update({f"{k}.{r}.pid": p, f"{k}.{r}.rss_kb": rss, f"{k}.{r}.pss_kb": pss,
                            f"{k}.{r}.fds": fds, f"{k}.{r}.cpu_pct": round(cpu, 1)})
        deltas = {}
        for k, pl in self.pipes.items():
            h = hist(pl.metrics(), "pg2osync_commit_to_indexed_seconds")
            d = hist_delta(self.hists[k], h) if h else {}
            if h:
                self.hists[k] = h
            deltas[k] = d
            if d and d.get(float("inf")):
                row[f"{k}.batches"] = int(d[float("inf")])
                row[f"{k}.p50_ms"] = quantile_ms(d, 0.5)
                row[f"{k}.p99_ms"] = quantile_ms(d, 0.99)
            try:
                doc = http_json(f"/{index_of(pl.src, 'soak_beat')}/_doc/1", timeout=5)
                at = doc["_source"]["at"]
                row[f"{k}.lag_s"] = round(max(time.time() - int(at) / 1000, 0), 1) if int(at) else ""
            except (OSError, KeyError, ValueError, urllib.error.HTTPError):
                pass
            row[f"{k}.wal_bytes"] = pl.src.wal_retained()
        row["fault"] = "; ".join(self.faults_now)
        self.faults_now = []
        self.rows.append(row)
        self.deltas.append(deltas)
        self.csv.write(",".join(str(row.get(c, "")).replace(",", ";") for c in self.cols) + "\n")
        self.csv.flush()


# ------------------------------------------------------------- faults

def fault_window(t_total):
    """when faults may start: from the first quarter's end to a margin
    before the last quarter, so that the pipelines have caught up when it
    begins (a target restart took 220 to 355 s on a busy 2-core machine,
    and its backlog as long again)"""
    return t_total / 4, 3 * t_total / 4 - min(300, t_total / 8)


def schedule(keys, t_total):
    """(at, kind, source, crash) in the fault window: cycles of every
    fault, evenly spaced, the target's restart first in each cycle (the
    longest to recover from: the cycle's other faults come after it)"""
    cycle = [("target-restart", None)]
    for k in keys:
        cycle.append(("kill-stage", k))
    for k in keys:
        cycle += [("kill-all", k), ("db-restart", k)]
    mid0, mid1 = fault_window(t_total)
    cycles = max(1, int((3 * t_total / 4 - mid0) // 900))
    n = cycles * len(cycle)
    gap = (mid1 - mid0) / n
    out = []
    for i in range(n):
        kind, k = cycle[i % len(cycle)]
        # odd cycles stop the database cleanly, even ones crash it
        crash = (i // len(cycle)) % 2 == 1
        out.append((mid0 + gap * (i + 0.5), kind, k, crash))
    return out


class Faults(threading.Thread):
    def __init__(self, plan, pipes, sampler, t0, t_total, seed):
        super().__init__(daemon=True)
        self.plan, self.pipes, self.sampler, self.t0 = plan, pipes, sampler, t0
        self.t_total = t_total
        self.rng = random.Random(seed)
        self.done = []
        self.skipped = []
        self.errors = []
        self.stop_ev = threading.Event()

    def run(self):
        for i, (at, kind, k, crash) in enumerate(self.plan):
            if self.stop_ev.wait(max(self.t0 + at - time.monotonic(), 0)):
                self.skipped += [f"{f} {x or ''}".strip() for _, f, x, _ in self.plan[i:]]
                return
            t = time.monotonic() - self.t0
            if t >= fault_window(self.t_total)[1]:
                self.skipped.append(f"{kind} {k or ''}".strip())
                continue
            name = f"{kind} {k}" if k else kind
            try:
                if kind == "kill-stage":
                    name += ":" + self.pipes[k].kill_stage(self.rng)
                    self.sampler.fault(name)
                elif kind == "kill-all":
                    self.sampler.fault(name)
                    self.pipes[k].kill_all()
                elif kind == "target-restart":
                    self.sampler.fault(name)
                    restart_target()
                else:
                    name += " (crash)" if crash else " (clean stop)"
                    self.sampler.fault(name)
                    self.pipes[k].src.restart(crash)
            except Exception as e:  # a fault that failed is reported, the run goes on
                self.errors.append(f"{name}: {e}")
            took = time.monotonic() - self.t0 - t
            self.done.append((round(t), name, round(took)))
            log(f"fault at {t:.0f} s: {name} ({took:.0f} s)")


# ------------------------------------------------------------- the end

def converge(pipes):
    """every table equal to its index, or what differs after CONVERGE_S"""
    t1 = time.monotonic()
    result = {}
    while True:
        result = {}
        for k, pl in pipes.items():
            for t in pl.src.tables:
                idx = index_of(pl.src, t)
                try:
                    want = pl.src.expected(t)
                    http_json(f"/{idx}/_refresh", method="POST")
                    got = compare.fetch_all(OS_URL, idx)
                    bad = [i for i in set(want) | set(got) if want.get(i) != got.get(i)]
                    result[f"{k}.{t}"] = {"rows": len(want), "docs": len(got),
                                          "differences": len(bad), "examples": sorted(bad)[:5]}
                except Exception as e:  # a server still coming back
                    result[f"{k}.{t}"] = {"error": str(e)[:200], "differences": -1}
        if all(v["differences"] == 0 for v in result.values()):
            break
        if time.monotonic() - t1 > CONVERGE_S:
            break
        time.sleep(5)
    return result, time.monotonic() - t1


def quarter_rows(sampler, t_total, q):
    lo, hi = t_total * q / 4, t_total * (q + 1) / 4
    return [i for i, r in enumerate(sampler.rows) if lo <= r["t_s"] < hi + (1 if q == 3 else 0)]


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def criteria(sampler, pipes, t_total, content, faults):
    q1, q4 = quarter_rows(sampler, t_total, 0), quarter_rows(sampler, t_total, 3)
    rows = sampler.rows
    out = {"pss": {}, "fds": {}, "p99": {}, "content": content, "failures": []}
    for k in pipes:
        for r in ROLES:
            a = [rows[i][f"{k}.{r}.pss_kb"] for i in q1 if f"{k}.{r}.pss_kb" in rows[i]]
            b = [rows[i][f"{k}.{r}.pss_kb"] for i in q4 if f"{k}.{r}.pss_kb" in rows[i]]
            if not a or not b:
                continue	# the loader: done before the clock starts
            fa = [rows[i][f"{k}.{r}.fds"] for i in q1 if f"{k}.{r}.fds" in rows[i]]
            fb = [rows[i][f"{k}.{r}.fds"] for i in q4 if f"{k}.{r}.fds" in rows[i]]
            pids = sorted({rows[i][f"{k}.{r}.pid"] for i in q1 + q4 if f"{k}.{r}.pid" in rows[i]})
            g = mean(b) - mean(a)
            out["pss"][f"{k}.{r}"] = {"q1_mean_kb": round(mean(a)), "q4_mean_kb": round(mean(b)),
                                      "q1_max_kb": max(a), "q4_max_kb": max(b),
                                      "growth_kb": round(g), "pids": pids}
            if g > PSS_GROWTH_KB:
                out["failures"].append(f"PSS of {k}.{r} grew {g / 1024:.1f} MB "
                                       f"({mean(a) / 1024:.1f} -> {mean(b) / 1024:.1f} MB)")
            out["fds"][f"{k}.{r}"] = {"q1_max": max(fa), "q4_max": max(fb)}
            if max(fb) > max(fa):
                out["failures"].append(f"descriptors of {k}.{r}: {max(fa)} -> {max(fb)}")
        ha, hb = {}, {}
        for i in q1:
            ha = hist_add(ha, sampler.deltas[i].get(k, {}))
        for i in q4:
            hb = hist_add(hb, sampler.deltas[i].get(k, {}))
        pa, pb = quantile_ms(ha, 0.99), quantile_ms(hb, 0.99)
        out["p99"][k] = {"q1_ms": pa, "q4_ms": pb, "q1_p50_ms": quantile_ms(ha, 0.5),
                         "q4_p50_ms": quantile_ms(hb, 0.5),
                         "q1_batches": int(ha.get(float("inf"), 0)),
                         "q4_batches": int(hb.get(float("inf"), 0))}
        if pa is None or pb is None:
            out["failures"].append(f"p99 of {k}: no batch reported in a quarter")
        elif pb > P99_RATIO * pa:
            out["failures"].append(f"p99 of {k}: {pa:g} ms -> {pb:g} ms (over {P99_RATIO}x)")
        if pipes[k].exits:
            out["failures"].append(f"{k}: the supervisor exited on its own {pipes[k].exits}")
    for name, v in content.items():
        if v["differences"] != 0:
            out["failures"].append(f"content of {name}: {v}")
    if faults.errors:
        out["failures"] += [f"fault failed: {e}" for e in faults.errors]
    return out


def plot(out, keys, faults):
    if not shutil.which("gnuplot"):
        return "(no gnuplot: no plot)"
    png = os.path.join(out, "soak.png")
    csv = os.path.join(out, "soak.csv")
    arrows = "\n".join(f"set arrow from {t / 60:.2f}, graph 0 to {t / 60:.2f}, graph 1 nohead "
                       f"lc rgb '#bbbbbb' dt 2" for t, _, _ in faults.done)
    roles = ["supervisor", "capture", "shaper", "writer", "ckpt"]

    def col(name):
        # an empty field (nothing sampled: a process between restarts, a
        # target down) is NaN, so that the line breaks there instead of
        # joining the samples either side
        return f"(strcol('{name}') eq '' ? NaN : column('{name}'))"

    def lines(metric, scale=""):
        ls = []
        for k in keys:
            for r in roles:
                ls.append(f"'{csv}' using ($1/60):({col(f'{k}.{r}.{metric}')}{scale}) "
                          f"with lines title '{k} {r}'")
        return ", ".join(ls)
    lat = ", ".join(f"'{csv}' using ($1/60):{col(f'{k}.{q}_ms')} with lines title '{k} {q}'"
                    for k in keys for q in ("p50", "p99"))
    lag = ", ".join(f"'{csv}' using ($1/60):{col(f'{k}.lag_s')} with lines title '{k} lag (s)'"
                    for k in keys)
    wal = ", ".join(f"'{csv}' using ($1/60):({col(f'{k}.wal_bytes')}/1048576) with lines "
                    f"title '{k} WAL retained (MB, right)'" for k in keys if k == "pg") or "NaN notitle"
    gp = f"""set terminal pngcairo size 1600,1100 font ",10" noenhanced
set output "{png}"
set datafile separator ","
set key autotitle columnhead
set key top left font ",8" maxrows 5
set grid
set xlabel "minutes (dashed: a fault)"
{arrows}
set multiplot layout 3,2
set title "PSS per process (MB)"
plot {lines('pss_kb', '/1024')}
set title "RSS per process (MB)"
plot {lines('rss_kb', '/1024')}
set title "open descriptors per process"
plot {lines('fds')}
set title "CPU per process (% of a core)"
plot {lines('cpu_pct')}
set title "commit -> indexed p50 and p99 of each 10 s (ms, log scale)"
set logscale y
plot {lat}
unset logscale y
set title "lag (s, heartbeat) and WAL retained by the slot (MB)"
set y2tics
plot {lag}, {wal.replace("with lines", "axes x1y2 with lines")}
unset multiplot
"""
    with open(os.path.join(out, "soak.gp"), "w") as f:
        f.write(gp)
    r = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True)
    if r.returncode != 0:
        return "gnuplot failed: " + r.stderr[-400:]
    return f"plot: {png}"


def report(out, args, t_total, crit, faults, clients, conv_s, pipes, started):
    L = []
    L.append(f"soak: {args.minutes} min ({', '.join(pipes)} at once), "
             f"started {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, "
             f"{len(faults.done)} faults, {len(faults.skipped)} skipped")
    for k, c in clients.items():
        L.append(f"  workload {k}: {c.starts} client start(s)")
    for t, name, took in faults.done:
        L.append(f"  fault at {t / 60:5.1f} min: {name} ({took} s)")
    for s in faults.skipped:
        L.append(f"  fault skipped (it would have started too near the last quarter): {s}")
    L.append("PSS per role, mean of the first quarter -> mean of the last (max), growth:")
    for name, v in crit["pss"].items():
        L.append(f"  {name:16} {v['q1_mean_kb'] / 1024:6.1f} MB -> {v['q4_mean_kb'] / 1024:6.1f} MB "
                 f"(max {v['q1_max_kb'] / 1024:.1f} -> {v['q4_max_kb'] / 1024:.1f})  "
                 f"{v['growth_kb']:+6d} kB  processes {len(v['pids'])}")
    L.append("descriptors per role, highest in the first quarter -> the last:")
    L.append("  " + ", ".join(f"{n} {v['q1_max']}->{v['q4_max']}" for n, v in crit["fds"].items()))
    L.append("commit -> indexed p50 and p99 (interpolated in the histogram's buckets), first quarter -> last:")
    for k, v in crit["p99"].items():
        L.append(f"  {k}: p50 {v['q1_p50_ms']} -> {v['q4_p50_ms']} ms, p99 {v['q1_ms']} -> "
                 f"{v['q4_ms']} ms ({v['q1_batches']} / {v['q4_batches']} batches)")
    L.append(f"content, {conv_s:.0f} s after the workload stopped:")
    for name, v in crit["content"].items():
        L.append(f"  {name}: " + (f"rows {v['rows']} docs {v['docs']} differences {v['differences']}"
                                 if "rows" in v else v.get("error", "")))
    L.append("RESULT: " + ("PASS" if not crit["failures"] else "FAIL"))
    for f in crit["failures"]:
        L.append(f"  failed: {f}")
    text = "\n".join(L)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"minutes": args.minutes, "sources": list(pipes), "criteria": crit,
                   "faults": faults.done, "skipped": faults.skipped,
                   "converge_s": round(conv_s)}, f, indent=1, default=str)
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=float(os.environ.get("SOAK_MINUTES", 60)))
    ap.add_argument("--db", default=os.environ.get("SOAK_DB", "both"),
                    choices=["pg", "mariadb", "both"])
    ap.add_argument("--out", default=os.environ.get("SOAK_OUT", os.path.join(TOP, "build", "soak")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", 1)))
    ap.add_argument("--replot", action="store_true",
                    help="only draw OUT/soak.png again from OUT/soak.csv and OUT/summary.json")
    a = ap.parse_args()
    if a.replot:
        with open(os.path.join(a.out, "summary.json")) as f:
            s = json.load(f)
        done = argparse.Namespace(done=s["faults"])
        print(plot(a.out, s["sources"], done))
        return 0
    if not OS_URL or not SERVERS:
        print("soak: needs tests/servers/run-with.sh (OS_URL, P2O_SERVERS_DIR)", file=sys.stderr)
        return 2
    for tool in ("pgbench", "sysbench"):
        if not shutil.which(tool):
            print(f"soak: {tool} is missing (tests/soak/install.sh)", file=sys.stderr)
            return 2
    os.makedirs(a.out, exist_ok=True)
    srcs = []
    if a.db in ("pg", "both"):
        srcs.append(Postgres(int(os.environ.get("SOAK_PG_TPS", 20))))
    if a.db in ("mariadb", "both"):
        srcs.append(MariaDB(int(os.environ.get("SOAK_MY_TPS", 20))))
    t_total = a.minutes * 60
    started = time.time()
    wlog = open(os.path.join(a.out, "workload.log"), "ab")
    for s in srcs:
        log(f"{s.key}: preparing")
        s.prepare(wlog)
        for t in s.tables:
            try:
                http_json(f"/{index_of(s, t)}", method="DELETE")
            except (OSError, urllib.error.HTTPError):
                pass
    pipes = {s.key: Pipeline(s, a.out) for s in srcs}
    stop_ev = threading.Event()
    beats = [Beat(s, stop_ev) for s in srcs]
    for pl in pipes.values():
        pl.start()
    # the clock starts once every initial load is done and both stream
    t_ready = time.monotonic()
    while True:
        states = {k: pl.state() for k, pl in pipes.items()}
        if all(v == "streaming" for v in states.values()):
            break
        if time.monotonic() - t_ready > 900:
            log(f"soak: not streaming after 900 s: {states}")
            return 1
        for pl in pipes.values():
            pl.check_alive(0)
        time.sleep(2)
    log(f"streaming after {time.monotonic() - t_ready:.0f} s; the clock starts: "
        f"{a.minutes:g} min")
    t0 = time.monotonic()
    end_at = (lambda: t0 + t_total)
    clients = {s.key: Client(s.key, s.workload, s.env, wlog, stop_ev, end_at) for s in srcs}
    for c in clients.values():
        c.start()
    for b in beats:
        b.start()
    sampler = Sampler(pipes, a.out)
    plan = schedule(list(pipes), t_total)
    faults = Faults(plan, pipes, sampler, t0, t_total, a.seed)
    faults.start()
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        nxt = t0
        while True:
            nxt += SAMPLE_S
            time.sleep(max(nxt - time.monotonic(), 0))
            t = time.monotonic() - t0
            for pl in pipes.values():
                pl.check_alive(t)
            sampler.sample(t)
            if len(sampler.rows) % 30 == 0:
                log(f"{t / 60:.0f} min: " + ", ".join(
                    f"{k} lag {sampler.rows[-1].get(k + '.lag_s', '?')} s" for k in pipes))
            if t >= t_total:
                break
    except KeyboardInterrupt:
        log("soak: interrupted; the end comes now")
    faults.stop_ev.set()
    faults.join(600)
    for c in clients.values():
        c.stop()
    for b in beats:
        b.stop()
    log("workload stopped; comparing every table with its index")
    content, conv_s = converge(pipes)
    crit = criteria(sampler, pipes, t_total, content, faults)
    for k, pl in pipes.items():
        rc = pl.term()
        if rc not in (0, None):
            crit["failures"].append(f"{k}: the final SIGTERM ended the supervisor with {rc}, not 0")
    text = report(a.out, a, t_total, crit, faults, clients, conv_s, pipes, started)
    print(text, flush=True)
    print(plot(a.out, list(pipes), faults), flush=True)
    return 0 if not crit["failures"] else 1


if __name__ == "__main__":
    sys.exit(main())
