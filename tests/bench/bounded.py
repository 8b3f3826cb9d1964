"""bounded.py - the bench's bounded-memory rows (issue 38): transactions
far larger than any buffer of the pipeline, through a running pipeline, on
PostgreSQL and on MariaDB, and ten thousand tables in one configuration.

  big txn     BENCH_BIG_ROWS rows (default 5,000,000) of about 560 bytes in
              one transaction: several GB of row data
  1 MB values BENCH_BIG_BLOBS rows (default 20,000) in one transaction,
              each with a value of BENCH_BIG_BLOB_BYTES (default 1 MiB)
              stored out of line (PostgreSQL: compressed, in TOAST;
              MariaDB: a LONGTEXT, off the row's page, row_format
              compressed), sent to the capture whole
  10k tables  BENCH_BOUNDED_TABLES tables (default 10,000) of 1 row in one
              configuration: many.py's row at that size (start-up, a
              stream of 1,000 transactions, summed PSS)

Each transaction row: the pipeline is started on an empty table and is
ready (/ready), then the transaction runs from one client. Measured: the
peak PSS summed over the pipeline's processes (sampled 5 times a second;
the bound is BOUND_MB), the time from its COMMIT until every row is
counted, and the index equal afterwards: its count, and sampled rows
compared with what the table holds, field by field. The MariaDB rows run
when run.sh started MariaDB (MYSQL_HOST set), else they say why not.
Run by bench.py (BENCH_ONLY=bounded for these rows alone; BENCH_SKIP=bounded
leaves them out): B is the bench module."""
import hashlib
import json
import os
import random
import subprocess
import time

import many

BOUND_MB = 30
SAMPLE = 200
BLOB_SAMPLE = 20
# the row of the big transaction: a 512-byte body of md5 words (text the
# node tokenises), and the id twice
BODY_REPEAT = 16


def body(i, repeat):
    return hashlib.md5(str(i).encode()).hexdigest() * repeat


def my_args():
    return ["mariadb", "--no-defaults", "-h", os.environ["MYSQL_HOST"],
            "-P", os.environ["MYSQL_TCP_PORT"], "-u", os.environ["MYSQL_USER"],
            "-N", "-B", os.environ["MYSQL_DB"]]


def my_sql(sql):
    # the password reaches the client through MYSQL_PWD, never its argv
    r = subprocess.run(my_args() + ["-e", sql], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"mariadb failed: {r.stderr.strip()[:500]}")
    return r.stdout.strip()


class Source:
    """what differs between the two databases: the tables, the
    transaction, the configuration's source section"""

    def __init__(self, B, kind):
        self.B, self.kind = B, kind

    def unavailable(self):
        if self.kind == "mariadb" and not os.environ.get("MYSQL_HOST"):
            return "MariaDB not started (run.sh starts it unless BENCH_SKIP has bounded)"
        return None

    def make(self, table, blob):
        col = "longtext" if self.kind == "mariadb" else "text"
        sql = (f"drop table if exists {table}; "
               f"create table {table} (id int primary key, v int not null, body {col})")
        # The 1 MiB values are a repeated md5, so the databases may store
        # them compressed: what each stage handles is the value whole, but
        # the disk holds it once compressed rather than three times as it
        # is (table, log, the server's spill or binlog cache until the
        # commit is confirmed), 63 GB at 20,000 values, which the machine
        # lacked. PostgreSQL compresses a value into its TOAST table (still
        # out of line: 12 kB is over the 2 kB threshold, and the capture
        # is sent it whole); MariaDB's binlog holds each row image whole.
        if self.kind == "mariadb":
            if blob:
                sql += " row_format=compressed"
            my_sql(sql)
        else:
            self.B.psql(sql)

    def stored(self, table):
        """how the values are stored: their mean size on disk, and the
        TOAST table's size (PostgreSQL) or the table's (MariaDB)"""
        if self.kind == "mariadb":
            out = my_sql("select data_length + index_length from information_schema.tables "
                         f"where table_schema = database() and table_name = '{table}'")
            return {"table_bytes": int(out.split()[-1])}
        out = self.B.psql(f"select avg(pg_column_size(body))::bigint, "
                          f"pg_total_relation_size(reltoastrelid) from {table}, pg_class "
                          f"where pg_class.oid = '{table}'::regclass group by 2")
        v, toast = out.split("|")
        return {"value_stored_bytes": int(v), "toast_bytes": int(toast)}

    def drop(self, table):
        (my_sql if self.kind == "mariadb" else self.B.psql)(f"drop table if exists {table}")

    def txn(self, table, n, repeat):
        """one transaction of n rows; returns when it committed"""
        if self.kind == "mariadb":
            # one INSERT ... SELECT in autocommit is one transaction; the
            # sequence engine numbers the rows
            my_sql(f"insert into {table} select seq, seq, repeat(md5(seq), {repeat}) "
                   f"from seq_1_to_{n}")
        else:
            self.B.psql(f"insert into {table} select g, g, repeat(md5(g::text), {repeat}) "
                        f"from generate_series(1, {n}) g")

    def tool(self, table):
        B, kind = self.B, self.kind

        class Tool(B.Pg2osync):
            def start(self, _table, index, conc, variant):
                if kind != "mariadb":
                    return super().start(table, index, conc, variant)
                self.drop()
                self.mport = B.free_port()
                cfg = os.path.join(B.T, f"p2o-my-{table}.yaml")
                with open(cfg, "w") as f:
                    f.write(f"""source:
  url_env: P2O_BENCH_MY_URL
  server_id: 4242420038
target:
  url: {os.environ['OS_URL']}
  flavor: {B.TARGET}
sync:
  {table}:
    table: {os.environ['MYSQL_DB']}.{table}
    index: {index}
engine:
  batch_size: {B.BATCH}
metrics:
  bind: 127.0.0.1:{self.mport}
""")
                env = B.p2o_env()
                env["P2O_BENCH_MY_URL"] = ("mysql://{MYSQL_USER}:{MYSQL_PWD}@{MYSQL_HOST}:"
                                           "{MYSQL_TCP_PORT}/{MYSQL_DB}".format(**os.environ))
                self.logpath = os.path.join(B.T, f"p2o-my-{table}.log")
                self.p = B.spawn([os.path.join(B.BIN, "pg2osync-supervise"), "-c", cfg],
                                 stdout=open(self.logpath, "w"), stderr=subprocess.STDOUT,
                                 env=env)
                return {"tool": self.p.pid}
        return Tool()


def sampled_equal(B, index, ids, repeat):
    """ids whose document differs from the row (v and body), at most 3"""
    bad = []
    for i in ids:
        st, data = B.NODE.req("GET", f"/{index}/_doc/{i}")
        src = json.loads(data).get("_source", {}) if st == 200 else {}
        if src.get("id") != i or src.get("v") != i or src.get("body") != body(i, repeat):
            bad.append(i)
            if len(bad) == 3:
                break
    return bad


def txn_row(B, src, name, n, repeat, nsample):
    """one transaction of n rows through a running pipeline"""
    r = {"rows": n, "row_bytes": 32 * repeat + 8}
    why = src.unavailable()
    if why:
        r["unavailable"] = why
        return r
    table, index = f"bnd_{name}", f"bench_bnd_{name}"
    src.make(table, repeat > BODY_REPEAT)
    tool = src.tool(table)
    if tool.available():
        r["unavailable"] = tool.available()
        return r
    B.NODE.req("DELETE", f"/{index}")
    roots = tool.start(table, index, 1, "")
    meter = B.Meter(roots)
    try:
        deadline = time.monotonic() + 300
        while not many.ready(tool.mport):
            if time.monotonic() > deadline or not tool.alive():
                raise RuntimeError(f"not ready: {B.tail(tool.logpath, 5)}")
            time.sleep(0.05)
        c0 = meter.sample()
        t0 = time.monotonic()
        src.txn(table, n, repeat)
        t1 = time.monotonic()
        r["client_s"] = t1 - t0
        # the index's count after a refresh, every second: a count is a
        # request the node answers by counting, not free at millions
        done, got = B.wait_count(tool, index, n, 6 * 3600, every=1.0)
        if done is None:
            raise RuntimeError(f"{got} of {n} rows counted")
        r["commit_to_all_s"] = done - t1
        c1 = meter.sample()
        r["cpu_s"] = {k: c1[k] - c0[k] for k in c1}
        r["count"] = B.NODE.count(index)
        r["stored"] = src.stored(table)
        ids = random.Random(38).sample(range(1, n + 1), min(nsample, n))
        r["sampled"] = len(ids)
        r["differ"] = sampled_equal(B, index, ids, repeat)
    except Exception as e:
        r["error"] = str(e)[:300]
    finally:
        meter.stop()
        r["peak_pss_mb"] = {k: v / 2**20 for k, v in meter.peak_pss.items()}
        r["peak_rss_mb"] = {k: v / 2**20 for k, v in meter.peak.items()}
        # each stage's own peak: which one a sum near the bound is in
        r["peak_pss_each_mb"] = {k: round(v / 2**20, 1)
                                 for k, v in meter.peak_each["tool"].items()}
        r["processes"] = dict(meter.procs)
        tool.stop()
        B.NODE.req("DELETE", f"/{index}")
        src.drop(table)
    pss = r["peak_pss_mb"].get("tool", 0)
    r["ok"] = ("error" not in r and r.get("count") == n and not r.get("differ")
               and pss < BOUND_MB)
    B.log(f"bounded {name}: {json.dumps(r)[:600]}")
    B.log(f"bounded {name}: peak PSS each (MB) {json.dumps(r['peak_pss_each_mb'])}")
    return r


def run(B, res):
    rows = int(os.environ.get("BENCH_BIG_ROWS", 5000000))
    blobs = int(os.environ.get("BENCH_BIG_BLOBS", 20000))
    blob_bytes = int(os.environ.get("BENCH_BIG_BLOB_BYTES", 2**20))
    tables = int(os.environ.get("BENCH_BOUNDED_TABLES", 10000))
    only = [x for x in os.environ.get("BENCH_BOUNDED_ONLY", "").split(",") if x]
    r = res["bounded"] = {"bound_mb": BOUND_MB}
    for kind in ("pg", "mariadb"):
        src = Source(B, "mariadb" if kind == "mariadb" else "pg")
        for what, n, repeat, ns in (("txn", rows, BODY_REPEAT, SAMPLE),
                                    ("blobs", blobs, max(1, blob_bytes // 32), BLOB_SAMPLE)):
            name = f"{what}_{kind}"
            if only and name not in only:
                continue
            B.log(f"bounded: {name}, {n:,} rows in one transaction")
            r[name] = txn_row(B, src, name, n, repeat, ns)
    if not only or "tables" in only:
        # many.py's row, at ten thousand tables of one row
        m = {}
        many.run(B, m, n=tables, rows=1)
        r["tables"] = m.get("many", {})
