"""sources.py - the bench's sources row: what a source costs in one process.
pg2osync-supervise --config-dir runs 1, 3 and 10 sources (a file each, its
own table of BENCH_SOURCES_ROWS rows, default 1,000, its own slot,
publication and index), one count after the other: once every table is
loaded and the process tree has settled (the loaders gone), the PSS summed
over the tree (the supervisor and every stage of every source; a shared
library's pages counted once), the process count, and the PSS each source
past the first adds: (PSS(n) - PSS(1)) / (n - 1). The aim is under 5 MB a
source.

pg2osync only. Run by bench.py (BENCH_ONLY=sources for this row alone;
BENCH_SKIP=sources leaves it out): B is the bench module."""
import http.client
import json
import os
import statistics
import subprocess
import time

COUNTS = (1, 3, 10)
SETTLE_S = 3
SAMPLES = 10


def name(i):
    return f"src{i:02d}"


def ready(port):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/ready")
        return c.getresponse().status == 200
    except OSError:
        return False


def count(B, index):
    B.NODE.req("POST", f"/{index}/_refresh")
    st, data = B.NODE.req("GET", f"/{index}/_count")
    try:
        return json.loads(data).get("count", 0) if st == 200 else 0
    except (ValueError, AttributeError):
        return 0


def by_program(B, root):
    """PSS in bytes summed by program name over root's tree: where a
    source's share goes"""
    t = B.proc_table()
    kids = {}
    for pid, (ppid, _, _) in t.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = {}, [root]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        out[comm] = out.get(comm, 0) + B.pss(p)
        todo.extend(kids.get(p, []))
    return out


def configs(B, d, n, port):
    for i in range(1, n + 1):
        with open(os.path.join(d, f"{name(i)}.yaml"), "w") as f:
            f.write(f"""source:
  url_env: P2O_BENCH_URL
  name: {name(i)}
  slot_name: p2o_{name(i)}
  publication: p2o_{name(i)}
target:
  url: {os.environ['OS_URL']}
  flavor: {B.TARGET}
sync:
  t:
    table: public.{name(i)}
    index: bench_{name(i)}
""")
            if i == 1:
                f.write(f"metrics:\n  bind: 127.0.0.1:{port}\n")


def one(B, n, rows):
    d = os.path.join(B.T, f"sources-{n}")
    os.makedirs(d, exist_ok=True)
    for i in range(1, n + 1):
        B.drop_slot(f"p2o_{name(i)}")
        B.NODE.req("DELETE", f"/bench_{name(i)}")
    port = B.free_port()
    configs(B, d, n, port)
    logpath = os.path.join(B.T, f"sources-{n}.log")
    p = B.spawn([os.path.join(B.BIN, "pg2osync-supervise"), "--config-dir", d],
                stdout=open(logpath, "w"), stderr=subprocess.STDOUT, env=B.p2o_env())
    r = {"sources": n}
    try:
        deadline = time.monotonic() + 600
        while not ready(port) or any(count(B, f"bench_{name(i)}") < rows
                                     for i in range(1, n + 1)):
            if time.monotonic() > deadline or p.poll() is not None:
                raise RuntimeError(f"{n} sources not loaded: {B.tail(logpath, 5)}")
            time.sleep(0.5)
        time.sleep(SETTLE_S)
        pss, procs = [], 0
        for _ in range(SAMPLES):
            _, _, np, ps = B.tree_usage(p.pid)
            pss.append(ps)
            procs = max(procs, np)
            time.sleep(0.2)
        r["pss_mb"] = statistics.median(pss) / 2**20
        r["processes"] = procs
        r["pss_mb_by_program"] = {k: round(v / 2**20, 2)
                                  for k, v in sorted(by_program(B, p.pid).items())}
    except Exception as e:
        r["error"] = str(e)[:300]
    finally:
        p.terminate()
        try:
            p.wait(60)
        except Exception:
            p.kill()
        for i in range(1, n + 1):
            B.drop_slot(f"p2o_{name(i)}")
            B.NODE.req("DELETE", f"/bench_{name(i)}")
    return r


def run(B, res):
    rows = int(os.environ.get("BENCH_SOURCES_ROWS", 1000))
    top = max(COUNTS)
    B.log(f"sources: {COUNTS} sources in one process, {rows} rows each")
    for i in range(1, top + 1):
        B.psql(f"drop table if exists {name(i)}; "
               f"create table {name(i)} (id int primary key, v int not null, note text); "
               f"insert into {name(i)} select g, g, 'row ' || g from generate_series(1, {rows}) g")
    out = res["sources"] = {"rows_per_source": rows, "runs": []}
    for n in COUNTS:
        r = one(B, n, rows)
        out["runs"].append(r)
        B.log(f"sources: {json.dumps(r)}")
    base = out["runs"][0].get("pss_mb")
    for r in out["runs"][1:]:
        if base is not None and r.get("pss_mb") is not None:
            r["pss_per_added_mb"] = (r["pss_mb"] - base) / (r["sources"] - 1)
    for i in range(1, top + 1):
        B.psql(f"drop table if exists {name(i)}")
    for r in out["runs"]:
        line = (f"sources {r['sources']:2d}: PSS {r['pss_mb']:.1f} MB, {r['processes']} processes"
                if "pss_mb" in r else f"sources {r['sources']:2d}: {r.get('error')}")
        if "pss_per_added_mb" in r:
            line += f", {r['pss_per_added_mb']:.2f} MB per source added"
        if "pss_mb_by_program" in r:
            line += " (" + ", ".join(f"{k} {v:.1f}" for k, v in
                                     r["pss_mb_by_program"].items()) + ")"
        print(line, flush=True)
