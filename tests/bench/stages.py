#!/usr/bin/env python3
"""stages.py [WIDE_ROWS] - where the bench's CPU seconds are, per process:
pg2osync's wide load (write concurrency 4, bench.py's wide rows) and its
streaming row (one transaction, then transactions of 100, of narrow rows),
each process's user and kernel seconds, minor faults and context switches,
from /proc/PID/stat and status sampled every 20 ms (a stage that exits, the
loader, keeps its last sample; the supervisor's reaped-children time is
printed beside it). Run it like bench.py, inside the servers:
  tests/servers/run-with.sh --pg --os -- python3 tests/bench/stages.py 200000
Environment: STAGES_CONC (4), STAGES_STREAM (100000, 0 skips the streaming
rows), STAGES_RUNS (1: runs of the load, each printed), STAGES_BINS
(name=dir,name=dir: builds to compare, their loads alternating)."""
import json
import os
import sys
import threading
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
CONC = int(os.environ.get("STAGES_CONC", 4))
STREAM = int(os.environ.get("STAGES_STREAM", 100000))
RUNS = int(os.environ.get("STAGES_RUNS", 1))
BINS = [b.split("=", 1) for b in os.environ.get("STAGES_BINS", "").split(",") if b]
# bench.py reads its ROWS from argv at import
sys.argv = [sys.argv[0], str(N * 5)]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")


def stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        with open(f"/proc/{pid}/status") as f:
            st = f.read()
    except OSError:
        return None
    name = s[s.index("(") + 1:s.rindex(")")]
    f = s[s.rindex(")") + 2:].split()
    ctx = [int(line.split()[1]) for line in st.splitlines() if line.endswith("ctxt_switches") or
           "ctxt_switches:" in line]
    return {"ppid": int(f[1]), "name": name, "minflt": int(f[7]), "utime": int(f[11]),
            "stime": int(f[12]), "cutime": int(f[13]), "cstime": int(f[14]),
            "vcs": ctx[0] if ctx else 0, "ivcs": ctx[1] if len(ctx) > 1 else 0}


def tree(root):
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    s = f.read()
            except OSError:
                continue
            kids.setdefault(int(s[s.rindex(")") + 2:].split()[1]), []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


class Sampler:
    def __init__(self, root):
        self.root, self.last, self.ev = root, {}, threading.Event()
        self.sample()
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    def sample(self):
        for p in tree(self.root):
            s = stat(p)
            if s:
                self.last[p] = s
        return {p: dict(v) for p, v in self.last.items()}

    def run(self):
        while not self.ev.wait(0.02):
            self.sample()

    def stop(self):
        self.ev.set()
        self.th.join()
        return self.sample()


def diff(a, b, rows):
    """per name: b - a (a process new since a counts from zero)"""
    out = {}
    for p, s in b.items():
        z = a.get(p, {k: 0 for k in s})
        name = s["name"]
        if p == self_root:
            name = "supervisor"
        o = out.setdefault(name, {"user": 0, "sys": 0, "minflt": 0, "vcs": 0, "ivcs": 0, "n": 0})
        o["user"] += (s["utime"] - z["utime"]) / CLK
        o["sys"] += (s["stime"] - z["stime"]) / CLK
        o["minflt"] += s["minflt"] - z["minflt"]
        o["vcs"] += s["vcs"] - z["vcs"]
        o["ivcs"] += s["ivcs"] - z["ivcs"]
        o["n"] += 1
    r = b[self_root]
    z = a.get(self_root, {})
    reaped = ((r["cutime"] - z.get("cutime", 0)) / CLK, (r["cstime"] - z.get("cstime", 0)) / CLK)
    lines = [f"  {'process':<22} {'user':>6} {'sys':>6} {'total':>6} {'/100k':>6} "
             f"{'minflt':>8} {'vcsw':>8} {'ivcsw':>7}"]
    tu = ts = 0
    for name, o in sorted(out.items(), key=lambda kv: -(kv[1]["user"] + kv[1]["sys"])):
        tu, ts = tu + o["user"], ts + o["sys"]
        lines.append(f"  {name:<22} {o['user']:6.2f} {o['sys']:6.2f} {o['user'] + o['sys']:6.2f} "
                     f"{(o['user'] + o['sys']) * 100000 / rows:6.3f} {o['minflt']:8d} "
                     f"{o['vcs']:8d} {o['ivcs']:7d}")
    lines.append(f"  {'all':<22} {tu:6.2f} {ts:6.2f} {tu + ts:6.2f} {(tu + ts) * 100000 / rows:6.3f}"
                 f"   (reaped by the supervisor: user {reaped[0]:.2f} sys {reaped[1]:.2f})")
    return "\n".join(lines), out


self_root = None


def main():
    global self_root
    ours = bench.Pg2osync()
    bench.log(f"stages: wide table of {N} rows")
    bench.make_table("wide", "wide", N)
    res = {}
    bins = BINS or [("", bench.BIN)]
    for i in range(RUNS * len(bins)):
        name, bench.BIN = bins[i % len(bins)]
        index = "bench_pg2osync_wide"
        bench.NODE.fresh(index, "wide")
        t0 = time.monotonic()
        roots = ours.start("wide", index, CONC, "")
        self_root = roots["tool"]
        smp = Sampler(self_root)
        a = {}
        t1, got = bench.wait_indexed(ours, index, N, 180 + N / 800)
        b = smp.stop()
        text, out = diff(a, b, N)
        print(f"{name} wide load, {N} rows, concurrency {CONC}: {t1 - t0:.1f} s "
              f"(load average {os.getloadavg()[0]:.1f})\n{text}", flush=True)
        res[f"wide_{name}{i}"] = out
        if i + 1 < RUNS * len(bins) or not STREAM:
            ours.stop()
            bench.NODE.req("DELETE", f"/{index}")
    if STREAM:
        # the streaming rows with the last build named
        bench.BIN = bins[-1][1]
        if hasattr(ours, "p"):
            ours.stop()
            bench.NODE.req("DELETE", "/bench_pg2osync_wide")
        bench.make_table("narrow", "narrow", 1000)
        index = "bench_pg2osync_narrow"
        bench.NODE.fresh(index, "narrow")
        roots = ours.start("narrow", index, CONC, "")
        self_root = roots["tool"]
        smp = Sampler(self_root)
        bench.wait_indexed(ours, index, 1000, 120)
        time.sleep(2)
        a = smp.sample()
        r = bench.stream_big(ours, "narrow", index, 1000, STREAM)
        b = smp.sample()
        text, out = diff(a, b, STREAM)
        print(f"{bins[-1][0]} streaming, one transaction of {STREAM}: {json.dumps(r)}\n{text}", flush=True)
        res["big"] = out
        r = bench.stream_many(ours, "narrow", index, 1000 + STREAM, STREAM)
        c = smp.stop()
        text, out = diff(b, c, STREAM)
        print(f"{bins[-1][0]} streaming, {STREAM // bench.TXN} transactions of {bench.TXN}: {json.dumps(r)}\n{text}",
              flush=True)
        res["many"] = out
        ours.stop()
        bench.NODE.req("DELETE", f"/{index}")
    os.makedirs(bench.OUT, exist_ok=True)
    with open(os.path.join(bench.OUT, "stages.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    try:
        main()
    finally:
        bench.kill_started()
