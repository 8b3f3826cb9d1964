"""many.py - the bench's many-tables row: BENCH_MANY_TABLES small tables
(default 1,000) of BENCH_MANY_ROWS rows each in one configuration, every
section writing one shared index under an id of its own, so the fixed cost
of a table shows:

  start-up  from the supervisor's start until /ready answers 200, and until
            every table's rows are counted (the initial load of all of them)
  stream    1,000 transactions of 10 rows, each into a random table of the
            set, from one client: first commit -> all counted, and from the
            last commit (the pipeline's own lag)
  cost      peak RSS and PSS summed over the process tree, its processes,
            CPU seconds of the start-up and of the stream

pg2osync only: the peers' configuration for a thousand tables is a study of
its own. Run by bench.py (BENCH_ONLY=many for this row alone; BENCH_SKIP=many
leaves it out): B is the bench module."""
import http.client
import json
import os
import random
import shutil
import subprocess
import time

TXNS = 1000
PER_TXN = 10


# the digits of a table's number: four, or as many as the largest has
# (bounded.py's ten thousand tables)
WIDTH = 4


def name(i):
    return f"m{i:0{WIDTH}d}"


# tables a transaction creates or drops: each holds a lock to its end, and
# ten thousand overflow the lock table (max_locks_per_transaction)
CHUNK = 500


def make_tables(B, n, rows):
    for a in range(1, n + 1, CHUNK):
        make_chunk(B, a, min(n, a + CHUNK - 1), rows)


def make_chunk(B, a, b, rows):
    B.psql(f"""do $$ begin
  for i in {a}..{b} loop
    execute format('drop table if exists m%s', lpad(i::text, {WIDTH}, '0'));
    execute format('create table m%s (id int primary key, v int not null, note text)',
                   lpad(i::text, {WIDTH}, '0'));
    execute format('insert into m%s select g, g, ''row '' || g from generate_series(1, {rows}) g',
                   lpad(i::text, {WIDTH}, '0'));
  end loop; end $$""")


def drop_tables(B, n):
    for a in range(1, n + 1, CHUNK):
        drop_chunk(B, a, min(n, a + CHUNK - 1))


def drop_chunk(B, a, b):
    B.psql(f"""do $$ begin
  for i in {a}..{b} loop
    execute format('drop table if exists m%s', lpad(i::text, {WIDTH}, '0'));
  end loop; end $$""")


def ready(port):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/ready")
        return c.getresponse().status == 200
    except OSError:
        return False


def run(B, res, n=None, rows=None):
    """n tables of rows rows: BENCH_MANY_TABLES and BENCH_MANY_ROWS unless
    given (bounded.py's ten thousand tables)"""
    global WIDTH
    n = n or int(os.environ.get("BENCH_MANY_TABLES", 1000))
    rows = rows or int(os.environ.get("BENCH_MANY_ROWS", 10))
    WIDTH = max(4, len(str(n)))
    index = "bench_many"
    B.log(f"many: {n} tables of {rows} rows")
    make_tables(B, n, rows)
    r = res["many"] = {"tables": n, "rows_per_table": rows}
    tool = B.Pg2osync()
    if tool.available():
        r["unavailable"] = tool.available()
        return
    B.NODE.req("DELETE", f"/{index}")
    st, data = B.NODE.req("PUT", f"/{index}", {"settings": B.SETTINGS})
    tool.section = lambda idx: "".join(
        f"  {name(i)}:\n    table: public.{name(i)}\n    index: {idx}\n"
        f"    id: \"{name(i)}-{{id}}\"\n" for i in range(1, n + 1))
    t0 = time.monotonic()
    roots = tool.start("many", index, 1, "")
    meter = B.Meter(roots)
    try:
        deadline = t0 + 600
        while not ready(tool.mport):
            if time.monotonic() > deadline or not tool.alive():
                raise RuntimeError(f"not ready: {B.tail(tool.logpath, 5)}")
            time.sleep(0.05)
        r["ready_s"] = time.monotonic() - t0
        t1, got = B.wait_count(tool, index, n * rows, max(1.0, deadline - time.monotonic()))
        if t1 is None:
            raise RuntimeError(f"{got} of {n * rows} rows loaded")
        r["loaded_s"] = t1 - t0
        c1 = meter.sample()
        r["startup_cpu"] = dict(c1)
        r["startup_rss_mb"] = {k: v / 2**20 for k, v in meter.peak.items()}
        r["startup_pss_mb"] = {k: v / 2**20 for k, v in meter.peak_pss.items()}
        # the stream: each transaction into a random table of the set
        rnd = random.Random(5)
        script = os.path.join(B.T, "many-txns.sql")
        stamp = os.path.join(B.T, "many-first")
        nxt = {}
        with open(script, "w") as f:
            for i in range(TXNS):
                t = rnd.randint(1, n)
                a = nxt.get(t, rows) + 1
                nxt[t] = a + PER_TXN - 1
                f.write(f"insert into {name(t)} select g, g, 'new ' || g "
                        f"from generate_series({a}, {a + PER_TXN - 1}) g;\n")
                if i == 0:
                    f.write(f"\\! date +%s.%N > {stamp}\n")
        want = n * rows + TXNS * PER_TXN
        s0 = time.time()
        B.psql_file(script)
        s1 = time.time()
        with open(stamp) as f:
            first = float(f.read())
        t2, got = B.wait_count(tool, index, want, 300)
        if t2 is None:
            raise RuntimeError(f"stream: {got - n * rows} of {TXNS * PER_TXN} rows")
        done = time.time() - (time.monotonic() - t2)
        c2 = meter.sample()
        r.update(stream_first_s=done - first, stream_last_s=done - s1,
                 stream_client_s=s1 - s0,
                 stream_rate=TXNS * PER_TXN / (done - first),
                 stream_cpu={k: c2[k] - c1[k] for k in c2})
        out = subprocess.run(["grep", "-c", "", tool.logpath], capture_output=True, text=True)
        r["log_lines"] = int(out.stdout.strip() or 0)
        # kept: where a start-up's time goes is read off its timestamps
        shutil.copy(tool.logpath, os.path.join(B.OUT, "many-pg2osync.log"))
    except Exception as e:
        r["error"] = str(e)[:300]
    finally:
        meter.stop()
        r["peak_rss_mb"] = {k: v / 2**20 for k, v in meter.peak.items()}
        r["peak_pss_mb"] = {k: v / 2**20 for k, v in meter.peak_pss.items()}
        r["peak_pss_each_mb"] = {k: round(v / 2**20, 1)
                                 for k, v in meter.peak_each["tool"].items()}
        r["processes"] = dict(meter.procs)
        tool.stop()
        B.NODE.req("DELETE", f"/{index}")
        drop_tables(B, n)
    B.log(f"many: {json.dumps(r)[:600]}")
