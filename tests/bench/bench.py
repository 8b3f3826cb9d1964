#!/usr/bin/env python3
"""bench.py [ROWS] - pg2osync beside the target's limit and beside PGSync and
Debezium, on the PostgreSQL and OpenSearch node run.sh started (PG*, OS_URL
in the environment). Each tool runs alone against a fresh index created with
the same explicit mapping, on the same tables:

  1. ceiling     our documents fired at _bulk by raw_bulk.py (same batch,
                 same number of requests open at once, refresh off)
  2. load        ROWS narrow rows and ROWS/5 wide rows, write concurrency 1
                 and 4 (pg2osync's twice, alternating with the ceiling's
                 two runs of the row, each side's best kept; the peers'
                 once, after): seconds from the tool's start until the index has
                 indexed every row (its indexing stats, read without a
                 refresh, as the ceiling's clock stops at its last answer),
                 confirmed by _count after _refresh
  3. big txn     STREAM rows in one transaction: seconds from its COMMIT
                 returning until _count (after _refresh) holds them all
                 (wait_settled: the last document by realtime GET first,
                 then the count every 10 ms)
  4. many txns   STREAM rows as transactions of 100 from one client: seconds
                 from the first COMMIT until all are counted, and from the
                 last (the client's end) until all are: the tool's own lag.
                 Beside 3 and 4 the node's floor (stream_floor): the same
                 count of our documents sent by a minimal client, as bulk
                 requests of BATCH on as many connections as the tool has
                 requests open, then one request of 100 at a time, into an
                 index with its default refresh, seen by the same poller
  5. latency     single-row updates every 50 ms from one psql session;
                 commit -> the new value seen by a realtime GET by id,
                 p50/p99; beside it the node's floor, measured just before:
                 the same updates as single-document _bulk requests from a
                 minimal client, timed from the send, seen by the same
                 poller; and the pipeline's own histograms, commit ->
                 received by the capture -> read by the writer -> sent ->
                 answered
  6. cost        peak RSS summed over the tool's process tree (helpers apart),
                 CPU seconds per 100k rows from /proc/<pid>/stat
  7. content     the count, and a sample of documents compared with the table
                 field by field (numerics as written: 12.50 is not 12.5)

Prints one table, writes OUT/bench.json and, with gnuplot, OUT/bench.png.
Owns measuring and reporting; it must never change what a tool does beyond
the settings it names in the table's notes.
Environment: BENCH_TOOLS (pg2osync,pgsync,debezium), BENCH_PEER_ROWS,
BENCH_PEER_WIDE_ROWS, BENCH_PEER_STREAM_ROWS (smaller counts for the peers'
slow rows, to shorten a run; by default every tool gets the same rows),
BENCH_STREAM_ROWS, BENCH_UPDATES, BENCH_BATCH, BENCH_OUT,
P2O_BIN, P2O_CACHE; BENCH_ONLY=latency runs the latency row alone, for
pg2osync, and prints it; BENCH_ONLY=nested the nested rows alone (nested.py,
BENCH_NESTED_PARENTS parents, default 100,000), for every tool; BENCH_ONLY=many
the many-tables row alone (many.py: BENCH_MANY_TABLES, BENCH_MANY_ROWS);
BENCH_ONLY=sources the PSS of 1, 3 and 10 sources in one process (sources.py,
BENCH_SOURCES_ROWS); BENCH_ONLY=bounded the bounded-memory rows alone
(bounded.py: BENCH_BIG_ROWS, BENCH_BIG_BLOBS, BENCH_BIG_BLOB_BYTES,
BENCH_BOUNDED_TABLES, and BENCH_BOUNDED_ONLY=txn_pg,blobs_pg,txn_mariadb,
blobs_mariadb,tables to run some of them); BENCH_SKIP=nested,many,sources,bounded
leaves any out of a full run."""
import http.client
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bounded  # noqa: E402  (the bounded-memory rows,
import many  # noqa: E402  the many-tables row, and
import nested  # noqa: E402   the nested rows: they use this module's parts)
import raw_bulk  # noqa: E402  (the ceiling's client, and the streaming floor's)
import sources  # noqa: E402  (the sources row: PSS of 1, 3, 10 in one process)

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("P2O_BIN", os.path.join(TOP, "build", "bin"))
CACHE = os.environ.get("P2O_CACHE",
                       os.path.join(os.path.expanduser("~"), ".cache", "pg2osync"))
OUT = os.environ.get("BENCH_OUT", os.path.join(TOP, "build", "bench"))
ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
WIDE = ROWS // 5
STREAM = int(os.environ.get("BENCH_STREAM_ROWS", min(100000, max(1000, ROWS // 10))))
TXN = 100
UPDATES = int(os.environ.get("BENCH_UPDATES", 300))
EVERY = 0.05
BATCH = int(os.environ.get("BENCH_BATCH", 1000))
CONCS = (1, 4)
# the peers load half as many rows by default: at their pace the full
# counts would take the run past 20 minutes on 2 cores
PEER_ROWS = int(os.environ.get("BENCH_PEER_ROWS", ROWS))
PEER_WIDE = int(os.environ.get("BENCH_PEER_WIDE_ROWS", WIDE))
PEER_STREAM = int(os.environ.get("BENCH_PEER_STREAM_ROWS", STREAM))
# run.sh --es (BENCH_TARGET=elasticsearch): the node is Elasticsearch; the
# peers' setups here are OpenSearch's, so by default only pg2osync runs
TARGET = os.environ.get("P2O_TARGET", "opensearch")
TOOLS = os.environ.get("BENCH_TOOLS", "pg2osync,pgsync,debezium" if TARGET == "opensearch"
                       else "pg2osync").split(",")
DBZ_VERSION = "3.6.1.Final"
SAMPLE = 200
CLK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
os.environ.setdefault("PGOPTIONS", "-c client_min_messages=warning")
T = tempfile.mkdtemp(prefix="bench.", dir=os.environ.get("P2O_SERVERS_DIR", "/tmp"))

SETTINGS = {"number_of_shards": 1, "number_of_replicas": 0}
MAPPINGS = {
    "narrow": {"properties": {
        "id": {"type": "long"}, "name": {"type": "text"},
        "qty": {"type": "integer"},
        "price": {"type": "scaled_float", "scaling_factor": 100},
        "flag": {"type": "boolean"}, "note": {"type": "keyword"}}},
    "wide": {"properties": {
        "id": {"type": "long"}, "title": {"type": "text"},
        "price": {"type": "scaled_float", "scaling_factor": 100},
        "body1": {"type": "text"}, "body2": {"type": "text"}}},
}
if TARGET == "elasticsearch":
    # scaled_float is the mapper-extras module's, which the Elasticsearch
    # test node lacks: both the ceiling and pg2osync get double instead
    for m in MAPPINGS.values():
        m["properties"]["price"] = {"type": "double"}
COLUMNS = {
    "narrow": ["id", "name", "qty", "price", "flag", "note"],
    "wide": ["id", "title", "price", "body1", "body2"],
}


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def psql(sql, check=True):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"psql failed: {r.stderr.strip()[:500]}")
    return r.stdout.strip()


def psql_file(path):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-f", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"psql failed: {r.stderr.strip()[:500]}")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Node:
    """One keep-alive connection to the node, reopened when it drops."""

    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.host, self.port, self.c = u.hostname, u.port, None

    def req(self, method, path, body=None, ctype="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        for attempt in (0, 1):
            try:
                if self.c is None:
                    self.c = http.client.HTTPConnection(self.host, self.port, timeout=120)
                    self.c.connect()
                    self.c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.c.request(method, path, body=body, headers={"Content-Type": ctype})
                r = self.c.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, OSError):
                if self.c:
                    self.c.close()
                self.c = None
                if attempt:
                    raise

    def count(self, index):
        self.req("POST", f"/{index}/_refresh")
        st, data = self.req("GET", f"/{index}/_count")
        return json.loads(data).get("count", 0) if st == 200 else 0

    def fresh(self, index, kind):
        self.req("DELETE", f"/{index}")
        st, data = self.req("PUT", f"/{index}",
                            {"settings": SETTINGS, "mappings": MAPPINGS[kind]})
        if st != 200:
            raise RuntimeError(f"creating index {index}: {st} {data[:300]}")


NODE = Node(os.environ["OS_URL"])


# --- cost: the process tree of a tool, sampled ------------------------------

def proc_table():
    t = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        f = s[s.rindex(")") + 2:].split()
        # after the name: state ppid ... utime(11) stime cutime cstime ... rss(21)
        t[int(d)] = (int(f[1]), sum(int(x) for x in f[11:15]), int(f[21]) * PAGE)
    return t


def pss(pid):
    """proportional set size in bytes: a shared library's pages divided
    among the processes mapping them, so a sum over a tree counts them once"""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def tree_usage(root, each=None):
    """(cpu seconds, rss bytes, processes, pss bytes) of root and its
    descendants: every live process's own time plus what it reaped from
    children, so a stage that ended (the loader) still counts, once.
    each, a dict, gets each process's PSS under its name (its comm)."""
    t = proc_table()
    kids = {}
    for pid, (ppid, _, _) in t.items():
        kids.setdefault(ppid, []).append(pid)
    todo, cpu, rss, n, ps = [root], 0, 0, 0, 0
    while todo:
        p = todo.pop()
        if p not in t:
            continue
        cpu += t[p][1]
        rss += t[p][2]
        mine = pss(p)
        ps += mine
        if each is not None:
            each[comm(p)] = each.get(comm(p), 0) + mine
        n += 1
        todo.extend(kids.get(p, []))
    return cpu / CLK, rss, n, ps


class Meter:
    """Peak summed RSS and CPU of each named process tree, sampled 5 times
    a second on a thread of its own."""

    def __init__(self, roots):
        self.roots = roots
        self.peak = {k: 0 for k in roots}
        self.peak_pss = {k: 0 for k in roots}
        # each process's own peak PSS, by name: which stage a sum's
        # growth is in (issue 38)
        self.peak_each = {k: {} for k in roots}
        self.procs = {k: 0 for k in roots}
        self.stop_ev = threading.Event()
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    def sample(self):
        out = {}
        for k, pid in self.roots.items():
            each = {}
            cpu, rss, n, ps = tree_usage(pid, each)
            for name, v in each.items():
                self.peak_each[k][name] = max(self.peak_each[k].get(name, 0), v)
            self.peak[k] = max(self.peak[k], rss)
            self.peak_pss[k] = max(self.peak_pss[k], ps)
            self.procs[k] = max(self.procs[k], n)
            out[k] = cpu
        return out

    def run(self):
        while not self.stop_ev.wait(0.2):
            self.sample()

    def stop(self):
        self.stop_ev.set()
        self.th.join()


def server_pids():
    """the node's and PostgreSQL's own pids (the servers run-with.sh
    started): their CPU beside the tool's says whether a load is held back
    by the pipeline or by a machine whose cores the node, the database and
    the stages share"""
    d = os.environ.get("P2O_SERVERS_DIR", "")
    files = {"node": os.path.join(d, "es" if TARGET == "elasticsearch" else "os", "os.pid"),
             "postgres": os.path.join(os.environ.get("PG_DATA", ""), "postmaster.pid")}
    out = {}
    for k, path in files.items():
        try:
            with open(path) as f:
                out[k] = int(f.readline())
        except (OSError, ValueError):
            pass
    return out


def machine_cpu():
    """(busy, total) CPU seconds of the whole machine since boot, every core:
    busy is all but idle and iowait"""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / CLK, sum(v) / CLK


class CpuSplit:
    """CPU seconds of the node, PostgreSQL, the measured tool (its roots)
    and the machine over one interval; what the machine spent beyond those
    is "others" (the bench itself, a neighbour)"""

    def __init__(self, roots=None):
        self.pids = dict(server_pids(), **(roots or {}))
        self.t0 = time.monotonic()
        self.m0 = machine_cpu()
        self.r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.c0 = self.cpu()

    def cpu(self):
        return {k: tree_usage(p)[0] for k, p in self.pids.items()}

    def done(self, client=False):
        """the interval's split; client=True counts the children this
        process reaped meanwhile (raw_bulk.py) as the client"""
        c1, m1 = self.cpu(), machine_cpu()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.monotonic() - self.t0
        out = {"seconds": round(wall, 2),
               "busy_pct": round(100 * (m1[0] - self.m0[0]) / max(m1[1] - self.m0[1], 1e-9), 1),
               "cores": os.cpu_count()}
        known = 0.0
        for k in self.pids:
            out[k] = round(c1[k] - self.c0.get(k, 0), 2)
            known += out[k]
        if client:
            out["client"] = round(r1.ru_utime + r1.ru_stime - self.r0.ru_utime - self.r0.ru_stime, 2)
            known += out["client"]
        out["others"] = round(max(m1[0] - self.m0[0] - known, 0), 2)
        return out


# --- the tools ---------------------------------------------------------------

STARTED = []


def spawn(argv, **kw):
    """Popen, remembered: the bench leaves no process behind, even failing"""
    p = subprocess.Popen(argv, **kw)
    STARTED.append(p)
    return p


def kill_started():
    for p in STARTED:
        if p.poll() is None:
            p.kill()
            p.wait()


def wait_proc(p, secs):
    try:
        p.wait(secs)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def p2o_env():
    """the source url, password included, goes through the environment"""
    env = dict(os.environ)
    env["P2O_BENCH_URL"] = ("postgres://{PGUSER}:{PGPASSWORD}@{PGHOST}:{PGPORT}/{PGDATABASE}"
                            .format(**os.environ))
    return env


def p2o_config(path, slot, table, index, engine, section=None):
    """section: the sync section's text for index, when not one plain table"""
    sync = section(index) if section else f"""  {table}:
    table: public.{table}
    index: {index}
"""
    with open(path, "w") as f:
        f.write(f"""source:
  url_env: P2O_BENCH_URL
  slot_name: {slot}
  publication: {slot}
target:
  url: {os.environ['OS_URL']}
  flavor: {TARGET}
sync:
{sync}engine:
  batch_size: {BATCH}
{engine}""")


def drop_slot(slot):
    psql(f"select pg_drop_replication_slot(slot_name) from pg_replication_slots "
         f"where slot_name = '{slot}' and not active")
    psql(f"drop publication if exists {slot}")


class Tool:
    """what every tool's runner does alike: one main process, stopped by
    TERM, then its slot dropped"""
    stop_secs = 60

    def alive(self):
        return self.p.poll() is None

    def terminate(self):
        self.p.send_signal(signal.SIGTERM)
        wait_proc(self.p, self.stop_secs)

    def drop(self):
        drop_slot(self.slot)

    def stop(self):
        self.terminate()
        self.drop()

    def restart(self, variant):
        """the same index, offsets and slot, other settings: it resumes"""
        self.terminate()
        self.launch(variant)
        return self.roots()


class Pg2osync(Tool):
    key = "pg2osync"
    label = "pg2osync"
    slot = "p2o_bench"
    variants = [("", {})]

    def available(self):
        ok = os.access(os.path.join(BIN, "pg2osync-supervise"), os.X_OK)
        return None if ok else f"not built in {BIN}"

    def settings(self, conc):
        return f"write_concurrency {conc}, batch_size {BATCH}"

    def drop(self):
        drop_slot(self.slot)
        NODE.req("DELETE", "/.pg2osync_meta")

    def start(self, table, index, conc, variant):
        self.drop()
        self.mport = free_port()
        cfg = os.path.join(T, f"p2o-{table}-{conc}.yaml")
        p2o_config(cfg, self.slot, table, index,
                   f"  write_concurrency: {conc}\nmetrics:\n  bind: 127.0.0.1:{self.mport}\n",
                   getattr(self, "section", None))
        self.logpath = os.path.join(T, f"p2o-{table}-{conc}.log")
        self.p = spawn([os.path.join(BIN, "pg2osync-supervise"), "-c", cfg],
                       stdout=open(self.logpath, "w"), stderr=subprocess.STDOUT, env=p2o_env())
        return {"tool": self.p.pid}

    def metrics(self):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.mport, timeout=10)
            c.request("GET", "/metrics")
            return c.getresponse().read().decode()
        except OSError:
            return ""


class PGSync(Tool):
    key = "pgsync"
    label = "PGSync"
    # its load does not poll; only its streaming rows differ between these
    variants = [("defaults", {}),
                ("poll lowered", {"POLL_TIMEOUT": "0.01", "REDIS_POLL_INTERVAL": "0.001"})]

    def __init__(self):
        self.venv = os.path.join(CACHE, "pgsync-venv")

    def available(self):
        if not os.access(os.path.join(self.venv, "bin", "pgsync"), os.X_OK):
            return "not installed (tests/bench/install.sh: pip install pgsync failed)"
        if not shutil.which("redis-server"):
            return "redis-server not installed (tests/bench/install.sh)"
        return None

    def version(self):
        r = subprocess.run([os.path.join(self.venv, "bin", "pgsync"), "--version"],
                           capture_output=True, text=True)
        return r.stdout.strip().replace("Version: ", "")

    def settings(self, conc):
        return (f"ELASTICSEARCH_THREAD_COUNT={conc} (parallel_bulk threads), "
                f"ELASTICSEARCH_CHUNK_SIZE={BATCH}")

    def env(self, conc, variant):
        # PG_URL, exported for the tests, would be read by PGSync as its own
        e = {k: v for k, v in os.environ.items() if k != "PG_URL"}
        e.update({
            "PG_HOST": os.environ["PGHOST"], "PG_PORT": os.environ["PGPORT"],
            "PG_USER": os.environ["PGUSER"], "PG_PASSWORD": os.environ["PGPASSWORD"],
            "PG_DATABASE": os.environ["PGDATABASE"],
            "ELASTICSEARCH_SCHEME": "http", "ELASTICSEARCH_HOST": NODE.host,
            "ELASTICSEARCH_PORT": str(NODE.port), "OPENSEARCH": "true",
            "ELASTICSEARCH": "false",
            "REDIS_HOST": "127.0.0.1", "REDIS_PORT": str(self.rport),
            "CHECKPOINT_PATH": self.dir,
            "ELASTICSEARCH_CHUNK_SIZE": str(BATCH),
            "ELASTICSEARCH_THREAD_COUNT": str(conc),
            "CONSOLE_LOGGING_HANDLER_MIN_LEVEL": "WARNING",
        })
        e.update(dict(self.variants)[variant] if variant else {})
        return e

    def start(self, table, index, conc, variant):
        self.dir = tempfile.mkdtemp(prefix="pgsync.", dir=T)
        self.rport = free_port()
        self.redis = spawn(
            ["redis-server", "--port", str(self.rport), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", self.dir],
            stdout=open(os.path.join(self.dir, "redis.log"), "w"), stderr=subprocess.STDOUT)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.rport), 1).close()
                break
            except OSError:
                time.sleep(0.1)
        self.schema = os.path.join(self.dir, "schema.json")
        doc = getattr(self, "schema_doc", None)
        with open(self.schema, "w") as f:
            json.dump(doc(index) if doc else
                      [{"database": os.environ["PGDATABASE"], "index": index,
                        "nodes": {"table": table, "schema": "public"}}], f)
        self.conc, self.logpath = conc, os.path.join(self.dir, "pgsync.log")
        # bootstrap (triggers, slot) is part of its start, as our slot is
        r = subprocess.run([os.path.join(self.venv, "bin", "bootstrap"), "-c", self.schema],
                           env=self.env(conc, variant), capture_output=True, text=True)
        if r.returncode != 0:
            self.redis.terminate()
            wait_proc(self.redis, 10)
            raise RuntimeError(f"pgsync bootstrap failed: {r.stderr[-500:]}")
        self.launch(variant)
        return self.roots()

    def launch(self, variant):
        self.p = spawn([os.path.join(self.venv, "bin", "pgsync"), "-c", self.schema, "-d"],
                       stdout=open(self.logpath, "a"), stderr=subprocess.STDOUT,
                       env=self.env(self.conc, variant))

    def roots(self):
        return {"tool": self.p.pid, "redis": self.redis.pid}

    def stop(self):
        self.terminate()
        subprocess.run([os.path.join(self.venv, "bin", "bootstrap"), "--teardown", "-c", self.schema],
                       env=self.env(self.conc, ""), capture_output=True, timeout=120)
        self.redis.terminate()
        wait_proc(self.redis, 10)


class Debezium(Tool):
    key = "debezium"
    label = "Debezium " + DBZ_VERSION
    slot = "dbz_bench"
    # poll.interval.ms: Debezium's default (500), then lowered
    variants = [("defaults", {}), ("poll lowered", {"DBZ_POLL_MS": "10"})]

    def __init__(self):
        self.dir = os.path.join(CACHE, f"debezium-{DBZ_VERSION}")

    def available(self):
        if not os.path.exists(os.path.join(self.dir, "harness.jar")):
            return "not built (tests/bench/install.sh: mvn could not build the harness)"
        return None

    def version(self):
        return DBZ_VERSION

    def settings(self, conc):
        return (f"{conc} bulk request(s) of {BATCH} per engine batch "
                f"(max.batch.size={BATCH * conc}), decimal.handling.mode=string, "
                f"ExtractNewRecordState, -Xmx1g")

    def start(self, table, index, conc, variant):
        self.drop()
        self.offsets = os.path.join(T, f"dbz-{table}-{conc}.offsets")
        if os.path.exists(self.offsets):
            os.unlink(self.offsets)
        self.logpath = os.path.join(T, f"dbz-{table}-{conc}.log")
        self.table, self.index, self.conc = table, index, conc
        self.launch(variant)
        return self.roots()

    def launch(self, variant):
        e = dict(os.environ)
        e.update({"DBZ_TABLE": f"public.{self.table}", "DBZ_INDEX": self.index,
                  "DBZ_SLOT": self.slot, "DBZ_OFFSETS": self.offsets,
                  "DBZ_BATCH": str(BATCH), "DBZ_CONCURRENCY": str(self.conc)})
        e.update(dict(self.variants)[variant] if variant else {})
        cp = os.path.join(self.dir, "harness.jar") + ":" + os.path.join(self.dir, "lib", "*")
        self.p = spawn(["java", "-Xmx1g", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                        "-cp", cp, "DebeziumBulk"],
                       stdout=open(self.logpath, "a"), stderr=subprocess.STDOUT, env=e)

    def roots(self):
        return {"tool": self.p.pid}


# --- the data ----------------------------------------------------------------

NARROW_SQL = ("select g, 'item ' || g, g % 1000, (g % 10000) / 100.0, g % 3 = 0, "
              "'n' || (g % 7) from generate_series({a}, {b}) g")
# two text columns, of 1-2 kB and 1-8 kB, of md5 words: text the node
# has to tokenise, not one long run of a single letter
WIDE_SQL = ("select g, 'title ' || g, (g % 10000) / 100.0, "
            "substr(repeat(md5(g::text) || ' ' || md5((g + 1)::text) || ' ', 32), 1, 1000 + g % 1000), "
            "substr(repeat(md5((g * 3)::text) || ' ' || md5((g * 5)::text) || ' ', 128), 1, 1000 + g * 7 % 7000) "
            "from generate_series({a}, {b}) g")


def make_table(name, kind, n):
    cols = ("id int primary key, name text, qty int, price numeric(12,2), flag boolean, note text"
            if kind == "narrow" else
            "id int primary key, title text, price numeric(12,2), body1 text, body2 text")
    psql(f"drop table if exists {name}; create table {name} ({cols})")
    sql = NARROW_SQL if kind == "narrow" else WIDE_SQL
    psql(f"insert into {name} {sql.format(a=1, b=n)}; analyze {name}")


def ops_frames(table, kind):
    """our documents for the table, as the shaper writes them: the ceiling's input"""
    cfg = os.path.join(T, f"ceil-{table}.yaml")
    p2o_config(cfg, "p2o_ceiling", table, "ceiling", "")
    env = p2o_env()
    copy, ops = os.path.join(T, f"{table}.copy"), os.path.join(T, f"{table}.ops")
    with open(copy, "wb") as out:
        subprocess.run([os.path.join(BIN, "loader"), "-c", cfg], stdout=out,
                       stderr=subprocess.DEVNULL, env=env, check=True)
    with open(ops, "wb") as out:
        subprocess.run(["sh", "-c", 'exec "$0" -c "$1" --load-fd 4 4<"$2" </dev/null',
                        os.path.join(BIN, "shaper"), cfg, copy], stdout=out, env=env, check=True)
    os.unlink(copy)
    return ops


def ceiling(ops, kind, conc):
    # refresh off, as pg2osync's load turns it off: the node's best, not a
    # minimal client's worst
    create = json.dumps({"settings": dict(SETTINGS, refresh_interval="-1"),
                         "mappings": MAPPINGS[kind]})
    split = CpuSplit()
    r = subprocess.run([sys.executable, os.path.join(TOP, "tests", "bench", "raw_bulk.py"),
                        os.environ["OS_URL"], "bench_raw", ops, str(BATCH), str(conc), create],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"raw_bulk failed: {r.stderr.strip()[:300]}")
    # raw_bulk.py builds its bodies before it sends: that part of the
    # interval is the client's alone, and it is in the split as such
    return int(r.stdout.strip()), split.done(client=True)



FLOOR_STREAM_INDEX = "bench_floor_stream"


class FloorClient:
    """the floor's senders seen as a tool by the waits: alive until one of
    its requests is refused"""
    key, logpath = "the floor's client", os.devnull

    def __init__(self, send):
        self.send = send

    def alive(self):
        return not self.send.failed


def stream_floor(ops, s, conc):
    """the streaming rows' floor: what the node itself allows for s of our
    documents (external versions, as every tool's writes are compared
    with) into an index with its default refresh, seen by the same poller
    the tools are timed with. big: s documents as bulk requests of BATCH
    on conc connections at once, from the first send; many: s documents
    as s/TXN requests of TXN from one connection, one after another (one
    request a transaction), from the first send and from the last answer:
    the node's part of the tools' lag after the last commit"""
    lines = raw_bulk.bulk_lines(ops, FLOOR_STREAM_INDEX, s)
    last_id = json.loads(lines[-1].split("\n", 1)[0])["index"]["_id"]
    out = {"rows": len(lines)}
    for part, batch, nconn in (("big", BATCH, conc), ("many", TXN, 1)):
        NODE.fresh(FLOOR_STREAM_INDEX, "narrow")
        t0 = time.monotonic()
        send = raw_bulk.Senders(os.environ["OS_URL"], raw_bulk.bodies_of(lines, batch), nconn)
        try:
            t1, got = wait_settled(FloorClient(send), FLOOR_STREAM_INDEX, len(lines), last_id,
                                   300)
        except RuntimeError:
            t1, got = None, 0
        send.join()
        if send.failed or t1 is None:
            out[part] = {"error": (f"{send.failed[0][0]} {send.failed[0][1]}" if send.failed
                                   else f"{got} of {len(lines)} after 300 s")}
        else:
            out[part] = {"seconds": t1 - t0, "after_last_s": max(0.0, t1 - send.last)}
    NODE.req("DELETE", f"/{FLOOR_STREAM_INDEX}")
    return out

# --- the content check ---------------------------------------------------------

def content(table, kind, index, expect):
    """the count, and SAMPLE rows compared field by field with their
    documents. Numbers are compared as written (parse_float=str): a numeric
    12.50 must come back as "12.50" or 12.50, never 12.5."""
    n = NODE.count(index)
    rows = psql(f"select coalesce(json_agg(row_to_json(t)), '[]') from "
                f"(select * from {table} order by random() limit {SAMPLE}) t")
    rows = json.loads(rows, parse_float=str)
    ids = [str(r["id"]) for r in rows]
    st, data = NODE.req("POST", f"/{index}/_mget", {"ids": ids})
    docs = {d["_id"]: d.get("_source") for d in json.loads(data, parse_float=str).get("docs", [])}
    bad, example, extra = 0, "", set()
    for r in rows:
        d = docs.get(str(r["id"]))
        if d is None:
            bad += 1
            example = example or f"id {r['id']} missing"
            continue
        extra |= set(d) - set(COLUMNS[kind])
        for c in COLUMNS[kind]:
            want, got = r[c], d.get(c, "<missing>")
            if want != got:
                bad += 1
                example = example or (f"id {r['id']} {c}: table {json.dumps(want)[:40]}, "
                                      f"index {json.dumps(got)[:40]}")
                break
    return {"count": n, "expected": expect, "sampled": len(rows), "differ": bad,
            "example": example, "extra_fields": sorted(extra),
            "ok": n == expect and bad == 0}


# --- the scenarios ---------------------------------------------------------------

def wait_count(tool, index, want, timeout, every=0.1):
    deadline = time.monotonic() + timeout
    n = 0
    while time.monotonic() < deadline:
        n = NODE.count(index)
        if n >= want:
            return time.monotonic(), n
        if not tool.alive():
            raise RuntimeError(f"{tool.key} exited: {tail(tool.logpath, 5)}")
        time.sleep(every)
    return None, n


def wait_settled(tool, index, want, last_id, timeout):
    """the time all want documents are searchable, looked for the way a
    stopwatch would: the last document written is first looked for by a
    realtime GET, which costs the node no refresh, at an interval of 5 %
    of the time waited so far (2 ms to 20 ms), then _count after _refresh
    every 10 ms until all are there. wait_count's 0.1 s would be the whole
    lag of a tool that keeps up, and a _refresh every few ms while a slow
    tool still writes would slow the node for it"""
    t0 = time.monotonic()
    deadline = t0 + timeout
    while time.monotonic() < deadline:
        st, _ = NODE.req("GET", f"/{index}/_doc/{last_id}?_source=false")
        if st == 200:
            break
        if not tool.alive():
            raise RuntimeError(f"{tool.key} exited: {tail(tool.logpath, 5)}")
        time.sleep(min(0.02, max(0.002, (time.monotonic() - t0) / 20)))
    else:
        # never seen: the count, for the error the caller reports
        return None, NODE.count(index)
    return wait_count(tool, index, want, max(0.0, deadline - time.monotonic()), every=0.01)


def indexed(index):
    st, data = NODE.req("GET", f"/{index}/_stats/indexing")
    if st != 200:
        return 0
    return json.loads(data)["_all"]["primaries"]["indexing"]["index_total"]


def wait_indexed(tool, index, want, timeout):
    """the time the index had indexed want documents. Read from its
    indexing stats, not _count: a _refresh every poll would cut a segment
    every poll in the middle of a load that turned refresh off, slowing the
    node for the tool measured and not for the ceiling. A tool that indexed
    some documents twice (a retry) overshoots the stat: then _count decides."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if indexed(index) >= want:
            t = time.monotonic()
            if NODE.count(index) >= want:
                return t, want
            return wait_count(tool, index, want, deadline - time.monotonic(), every=0.5)
        if not tool.alive():
            raise RuntimeError(f"{tool.key} exited: {tail(tool.logpath, 5)}")
        time.sleep(0.05)
    return None, NODE.count(index)


def load(tool, table, kind, n, conc, keep=False):
    index = f"bench_{tool.key}_{kind}"
    NODE.fresh(index, kind)
    res = {"rows": n, "conc": conc, "settings": tool.settings(conc), "index": index}
    t0 = time.monotonic()
    try:
        roots = tool.start(table, index, conc, tool.variants[0][0])
    except Exception as e:
        res["error"] = str(e)[:300]
        return res, None
    meter = Meter(roots)
    split = CpuSplit(roots)
    c0 = {k: 0.0 for k in roots}
    try:
        # at least 800 rows/s, or the load counts as failed
        t1, got = wait_indexed(tool, index, n, 180 + n / 800)
        cpu = meter.sample()
        if t1 is None:
            res["error"] = f"{got} of {n} rows after {time.monotonic() - t0:.0f} s"
        else:
            res.update(seconds=t1 - t0, rate=n / (t1 - t0),
                       cpu_per_100k={k: (cpu[k] - c0[k]) * 100000 / n for k in cpu},
                       cpu_split=split.done())
        res["content"] = content(table, kind, index, n)
    except Exception as e:
        res["error"] = str(e)[:300]
        keep = False
    res["peak_rss_mb"] = {k: v / 2**20 for k, v in meter.peak.items()}
    res["peak_pss_mb"] = {k: v / 2**20 for k, v in meter.peak_pss.items()}
    res["processes"] = dict(meter.procs)
    if keep:
        return res, meter
    meter.stop()
    tool.stop()
    NODE.req("DELETE", f"/{index}")
    return res, None


def hist(text, name):
    b = {}
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket{{"):
            le = line.split('le="')[1].split('"')[0]
            b[float("inf") if le == "+Inf" else float(le)] = float(line.split()[-1])
    return b


def hist_quantiles(before, after):
    d = sorted((le, after[le] - before.get(le, 0)) for le in after)
    if not d or not d[-1][1]:
        return None
    total = d[-1][1]
    q = lambda p: next(le for le, c in d if c >= p * total)
    return {"n": int(total), "p50_le_ms": q(0.5) * 1000, "p99_le_ms": q(0.99) * 1000}


def stream_big(tool, table, index, base, s):
    t = os.path.join(T, "big.sql")
    with open(t, "w") as f:
        f.write(f"insert into {table} {NARROW_SQL.format(a=base + 1, b=base + s)};\n")
    c0 = time.monotonic()
    psql_file(t)
    t0 = time.monotonic()
    t1, got = wait_settled(tool, index, base + s, base + s, 300)
    r = {"rows": s, "commit_s": t0 - c0}
    if t1 is None:
        r["error"] = f"{got - base} of {s} rows after 300 s"
    else:
        r["seconds"] = t1 - t0
    return r


def stream_many(tool, table, index, base, s):
    t, stamp = os.path.join(T, "many.sql"), os.path.join(T, "first-commit")
    with open(t, "w") as f:
        for i in range(s // TXN):
            a = base + i * TXN
            f.write(f"insert into {table} {NARROW_SQL.format(a=a + 1, b=a + TXN)};\n")
            if i == 0:
                f.write(f"\\! date +%s.%N > {stamp}\n")
    c0 = time.time()
    psql_file(t)
    c1 = time.time()
    with open(stamp) as f:
        first = float(f.read())
    t1, got = wait_settled(tool, index, base + s, base + s, 300)
    r = {"rows": s, "transactions": s // TXN, "commit_s": c1 - c0}
    if t1 is None:
        r["error"] = f"{got - base} of {s} rows after 300 s"
    else:
        done = time.time() - (time.monotonic() - t1)
        r["seconds"] = done - first
        # the pipeline's own lag: the client is done at its last commit
        r["after_last_s"] = done - c1
    return r


class Session:
    """one psql session for the whole latency row: a psql per update would
    put a process start on the machine at the moment each change travels,
    in every tool's numbers alike"""

    def __init__(self):
        self.p = subprocess.Popen(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  bufsize=1)

    def run(self, sql):
        """sql committed when this returns (autocommit)"""
        self.p.stdin.write(f"{sql};\n\\echo .\n")
        if self.p.stdout.readline().strip() != ".":
            raise RuntimeError(f"psql session ended: {sql[:80]}")

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def visible(index, write):
    """UPDATES single-row changes, one every EVERY seconds, each to a document
    of its own, made by write(i, want, watch); a poller GETs (realtime)
    every watched id until the new name is there. The clock of each starts
    at watch() and stops at the GET that sees it."""
    pending, lat, lock = {}, [], threading.Lock()
    done = threading.Event()

    def poll():
        n = Node(os.environ["OS_URL"])
        while not (done.is_set() and not pending):
            with lock:
                items = list(pending.items())
            for i, (want, t0) in items:
                st, data = n.req("GET", f"/{index}/_doc/{i}?_source_includes=name")
                now = time.monotonic()
                if st == 200 and json.loads(data).get("_source", {}).get("name") == want:
                    with lock:
                        lat.append(now - t0)
                        del pending[i]
                elif now - t0 > 30:
                    with lock:
                        del pending[i]
            time.sleep(0.001)

    th = threading.Thread(target=poll)
    th.start()
    start = time.monotonic()
    try:
        for k in range(UPDATES):
            i = k + 1
            want = f"upd {i} {random.random()}"
            nxt = start + k * EVERY
            time.sleep(max(0, nxt - time.monotonic()))

            def watch():
                with lock:
                    pending[i] = (want, time.monotonic())
            write(i, want, watch)
    finally:
        done.set()
        th.join()
    return quantiles(lat, UPDATES)


def quantiles(lat, n):
    lat = sorted(lat)
    r = {"updates": n, "seen": len(lat)}
    if lat:
        r.update(p50_ms=lat[len(lat) // 2] * 1000,
                 p99_ms=lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000,
                 max_ms=lat[-1] * 1000)
    return r


def latency(tool, table, index, tag):
    """the tool: an UPDATE committed -> its document seen"""
    s = Session()

    def write(i, want, watch):
        s.run(f"update {table} set name = '{want}' where id = {i}")
        watch()

    try:
        return visible(index, write)
    finally:
        s.close()


FLOOR_INDEX = "bench_floor"


def floor():
    """the node's own latency, what a minimal client gets for the work the
    pipeline does per change: one single-document _bulk (the same entry
    form: an external version) on a keep-alive connection, watched by the
    same poller from the moment the _bulk is sent."""
    NODE.fresh(FLOOR_INDEX, "narrow")
    c = Node(os.environ["OS_URL"])
    body = "".join(f'{{"index":{{"_index":"{FLOOR_INDEX}","_id":"{i}","version":1,'
                   f'"version_type":"external_gte"}}}}\n{{"id":{i},"name":"row {i}"}}\n'
                   for i in range(1, UPDATES + 1))
    c.req("POST", "/_bulk?refresh=true", body, "application/x-ndjson")
    version = [1]

    def write(i, want, watch):
        version[0] += 1
        entry = (f'{{"index":{{"_index":"{FLOOR_INDEX}","_id":"{i}","version":{version[0]},'
                 f'"version_type":"external_gte"}}}}\n{{"id":{i},"name":"{want}"}}\n')
        # watched from before the request: the node may show the change
        # before it answers (the answer waits for the translog's fsync)
        watch()
        st, data = c.req("POST", "/_bulk?filter_path=errors", entry, "application/x-ndjson")
        if st != 200 or json.loads(data).get("errors"):
            raise RuntimeError(f"floor _bulk: {st} {data[:200]}")

    try:
        return visible(FLOOR_INDEX, write)
    finally:
        NODE.req("DELETE", f"/{FLOOR_INDEX}")


def latency_row(tool, table, index, tag):
    """the tool's latency beside the node's floor, measured right before it,
    and the pipeline's own breakdown of the same updates"""
    f = floor()
    m0 = tool.metrics() if hasattr(tool, "metrics") else ""
    r = latency(tool, table, index, tag)
    r["floor"] = f
    if m0:
        m1 = tool.metrics()
        r["own_metric"] = {h: hist_quantiles(hist(m0, f"pg2osync_{h}_seconds"),
                                             hist(m1, f"pg2osync_{h}_seconds"))
                           for h in OWN_HISTS}
    return r


# the pipeline's histograms (metrics.c), commit -> each stage
OWN_HISTS = ("commit_to_streamed", "commit_to_received", "commit_to_writer", "commit_to_sent", "commit_to_indexed")


def latency_only():
    """BENCH_ONLY=latency: the latency row alone, pg2osync on a table of
    ROWS narrow rows, for working on the latency without the whole run"""
    make_table("narrow", "narrow", max(ROWS, UPDATES))
    tool = Pg2osync()
    # the streaming rows of the whole run use the tool the last load left
    # running: CONCS[-1] requests open
    r, meter = load(tool, "narrow", "narrow", max(ROWS, UPDATES), CONCS[-1], keep=True)
    if meter is None:
        raise RuntimeError(f"load: {r}")
    try:
        out = latency_row(tool, "narrow", r["index"], "p2o")
    finally:
        meter.stop()
        tool.stop()
        NODE.req("DELETE", f"/{r['index']}")
    print(json.dumps(out, indent=1))


def streaming(tool, meter, table, index, base, s, variant):
    out = {"variant": variant}
    c0 = meter.sample()
    out["big"] = stream_big(tool, table, index, base, s)
    out["many"] = stream_many(tool, table, index, base + s, s)
    c1 = meter.sample()
    out["cpu_per_100k"] = {k: (c1[k] - c0[k]) * 100000 / (2 * s) for k in c1}
    out["latency"] = latency_row(tool, table, index, variant or "p2o")
    time.sleep(1)
    out["content"] = content(table, "narrow", index, base + 2 * s)
    return out


# --- the run -------------------------------------------------------------------

def main():
    os.makedirs(OUT, exist_ok=True)
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), "?")
    res = {"rows": ROWS, "wide_rows": WIDE, "stream_rows": STREAM, "batch": BATCH,
           "updates": UPDATES, "machine": f"{os.cpu_count()} cores ({model})", "tools": {},
           "ceiling": {}, "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if TARGET == "elasticsearch":
        # GET / is the rest-root module's, which the integ-test node lacks
        st, data = NODE.req("GET", "/_nodes/_local?filter_path=nodes.*.version")
        version = "Elasticsearch " + next(iter(json.loads(data)["nodes"].values()))["version"]
    else:
        st, data = NODE.req("GET", "/")
        version = "OpenSearch " + json.loads(data)["version"]["number"]
    res["servers"] = (f"PostgreSQL {psql('show server_version')}, {version} "
                      f"({os.environ.get('P2O_OS_JAVA_OPTS', 'default heap')})")
    log(f"tables: {ROWS} narrow rows, {WIDE} wide rows")
    make_table("narrow", "narrow", ROWS)
    make_table("wide", "wide", WIDE)
    for kind, n, full in (("narrow", PEER_ROWS, ROWS), ("wide", PEER_WIDE, WIDE)):
        if n < full:
            psql(f"drop table if exists {kind}_peer; create table {kind}_peer "
                 f"(like {kind} including all); insert into {kind}_peer "
                 f"select * from {kind} where id <= {n}; analyze {kind}_peer")
    tools = {"pg2osync": Pg2osync, "pgsync": PGSync, "debezium": Debezium}
    # pg2osync's loads alternate with the ceiling's, each twice, and each
    # side keeps its best: ratios of runs minutes apart carried the host's
    # drift (the node once spent a quarter more CPU per document for two
    # minutes), and the best of two against one run is not a like for like
    ours = None
    if "pg2osync" in TOOLS:
        ours = Pg2osync()
        tr = res["tools"]["pg2osync"] = {"label": ours.label, "load": {}}
        why = ours.available()
        if why:
            tr["unavailable"] = why
            log(f"pg2osync: {why}")
            ours = None
    kept = None
    # narrow last: its last load stays up for the streaming rows
    for kind, n in (("wide", WIDE), ("narrow", ROWS)):
        ops = ops_frames(kind, kind)
        res["ceiling"][kind] = {}
        if kind == "narrow":
            # the streaming rows write narrow rows with the last load's
            # tool, CONCS[-1] requests open
            res["stream_floor"] = stream_floor(ops, STREAM, CONCS[-1])
            log(f"streaming floor: {json.dumps(res['stream_floor'])}")
        for c in CONCS:
            ceil_runs, runs = [], []
            for i in range(2):
                ceil_runs.append(ceiling(ops, kind, c))
                log(f"ceiling {kind} c={c}: {ceil_runs[-1][0]} docs/s")
                if ours is None:
                    continue
                keep = kind == "narrow" and c == CONCS[-1] and i == 1
                log(f"pg2osync: load {n} {kind} rows, concurrency {c}")
                r, meter = load(ours, kind, kind, n, c, keep)
                log(f"pg2osync: {json.dumps(r)[:400]}")
                runs.append(r)
                if keep:
                    kept = meter
            best = max(ceil_runs, key=lambda x: x[0])
            res["ceiling"][kind][str(c)] = best[0]
            res.setdefault("ceiling_cpu", {}).setdefault(kind, {})[str(c)] = best[1]
            res.setdefault("ceiling_runs", {}).setdefault(kind, {})[str(c)] = [
                x[0] for x in ceil_runs]
            if runs:
                r = max(runs, key=lambda x: x.get("rate", 0))
                r["runs"] = [x.get("rate") for x in runs]
                res["tools"]["pg2osync"]["load"][f"{kind}_{c}"] = r
        os.unlink(ops)
    for name in TOOLS:
        if name == "pg2osync":
            if ours is None:
                continue
            tool, tr, meter = ours, res["tools"][name], kept
            table, n, s = "narrow", ROWS, STREAM
            if meter is None:
                continue
            r = tr["load"][f"narrow_{CONCS[-1]}"]
        else:
            tool = tools[name]()
            tr = res["tools"][name] = {"label": tool.label}
            why = tool.available()
            if why:
                tr["unavailable"] = why
                log(f"{name}: {why}")
                continue
            if hasattr(tool, "version"):
                tr["version"] = tool.version()
            nrows, wrows = PEER_ROWS, PEER_WIDE
            ntab = "narrow" if nrows == ROWS else "narrow_peer"
            wtab = "wide" if wrows == WIDE else "wide_peer"
            s = PEER_STREAM
            tr["load"] = {}
            for kind, table, n in (("wide", wtab, wrows), ("narrow", ntab, nrows)):
                for c in CONCS:
                    keep = kind == "narrow" and c == CONCS[-1]
                    log(f"{name}: load {n} {kind} rows, concurrency {c}")
                    r, meter = load(tool, table, kind, n, c, keep)
                    tr["load"][f"{kind}_{c}"] = r
                    log(f"{name}: {json.dumps(r)[:400]}")
        if meter is None:
            continue
        index, base = r["index"], n
        tr["stream"] = []
        for i, (variant, _) in enumerate(tool.variants):
            if i:
                meter.stop()
                meter = Meter(tool.restart(variant))
                time.sleep(5)
            log(f"{name}: streaming {variant or ''}")
            try:
                st = streaming(tool, meter, table, index, base, s, variant)
            except Exception as e:
                st = {"variant": variant, "error": str(e)[:300]}
            base += 2 * s
            st["peak_rss_mb"] = {k: v / 2**20 for k, v in meter.peak.items()}
            st["peak_pss_mb"] = {k: v / 2**20 for k, v in meter.peak_pss.items()}
            tr["stream"].append(st)
            log(f"{name}: {json.dumps(st)[:600]}")
        meter.stop()
        tool.stop()
        NODE.req("DELETE", f"/{index}")
        psql(f"delete from {table} where id > {n}")
        psql(f"vacuum {table}")
    skip = os.environ.get("BENCH_SKIP", "").split(",")
    for part in (nested, many, sources, bounded):
        if part.__name__ not in skip:
            part.run(sys.modules[__name__], res)
    finish(res)


def finish(res):
    res["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with open(os.path.join(OUT, "bench.json"), "w") as f:
        json.dump(res, f, indent=1)
    subprocess.run([sys.executable, os.path.join(TOP, "tests", "bench", "report.py"),
                    os.path.join(OUT, "bench.json"), OUT], check=False)
    shutil.rmtree(T, ignore_errors=True)


if __name__ == "__main__":
    try:
        if os.environ.get("BENCH_ONLY") == "latency":
            latency_only()
        elif os.environ.get("BENCH_ONLY") in ("nested", "many", "sources", "bounded"):
            os.makedirs(OUT, exist_ok=True)
            only = {"tools": {}, "ceiling": {}, "servers": "", "machine": "",
                    "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
            {"nested": nested, "many": many, "sources": sources, "bounded": bounded}[os.environ["BENCH_ONLY"]].run(
                sys.modules[__name__], only)
            finish(only)
        else:
            main()
    finally:
        kill_started()
