#!/usr/bin/env python3
"""report.py BENCH.json OUTDIR - the bench's one table (printed, and written
to OUTDIR/bench.txt) and its chart (OUTDIR/bench.png, when gnuplot is
there). Owns presentation only: every number comes from BENCH.json, and a
tool that failed a row or indexed wrong content says so in its cell."""
import json
import os
import shutil
import subprocess
import sys

res = json.load(open(sys.argv[1]))
out = sys.argv[2]
tools = [k for k in ("pg2osync", "pgsync", "debezium") if k in res["tools"]]
ceil = res["ceiling"]


def k(n):
    if n % 1000000 == 0:
        return f"{n // 1000000}M"
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def head(name):
    t = res["tools"][name]
    return t["label"] + (f" {t['version']}" if t.get("version") and name == "pgsync" else "")


def flag(r):
    c = r.get("content")
    if not c:
        return ""
    if c["ok"]:
        return ""
    return " WRONG*"


def load_cell(name, key):
    t = res["tools"][name]
    if "unavailable" in t:
        return "n/a*"
    r = t.get("load", {}).get(key)
    if not r:
        return "not run"
    if "rate" not in r:
        return "FAILED*"
    kind, c = key.split("_")
    s = f"{r['rate']:,.0f} ({100 * r['rate'] / ceil[kind][c]:.0f}%)"
    full = res["rows"] if kind == "narrow" else res["wide_rows"]
    if r["rows"] != full:
        s += f" @{k(r['rows'])}"
    return s + flag(r)


def variants(name, f):
    t = res["tools"][name]
    if "unavailable" in t:
        return "n/a*"
    st = t.get("stream")
    if not st:
        return "not run"
    return " / ".join(f(v) for v in st)


def secs(part):
    def f(v):
        r = v.get(part)
        if not r:
            return "FAILED*"
        if "seconds" not in r:
            return "FAILED*"
        s = f"{r['seconds']:.1f} s"
        if r["rows"] != res["stream_rows"]:
            s += f" @{k(r['rows'])}"
        return s + flag(v)
    return f


def lag(v):
    """the many row from the client's last commit: the pipeline's own lag"""
    m = v.get("many", {})
    if "after_last_s" not in m:
        return "-"
    return f"{m['after_last_s']:.2f} s"


def client(v):
    """what the tool costs the application: triggers make inserts slower"""
    b, m = v.get("big", {}), v.get("many", {})
    if "commit_s" not in b or "commit_s" not in m:
        return "-"
    return f"{b['commit_s']:.1f}/{m['commit_s']:.1f} s"


def lat(v, floor=False):
    r = v.get("latency")
    if r and floor:
        r = r.get("floor")
    if not r or "p50_ms" not in r:
        return "FAILED*"
    s = f"{r['p50_ms']:.0f}/{r['p99_ms']:.0f} ms"
    if r["seen"] < r["updates"]:
        s += f" ({r['updates'] - r['seen']} lost)"
    return s


def own(seg):
    """one segment of the pipeline's breakdown: bucket bounds, not values"""
    def cell(v):
        m = ((v.get("latency") or {}).get("own_metric") or {}).get(seg)
        if not m:
            return "-"
        return f"<={m['p50_le_ms']:g}/<={m['p99_le_ms']:g} ms"
    return cell


def rss(name, key="peak_rss_mb"):
    t = res["tools"][name]
    if "unavailable" in t:
        return "n/a*"
    peak, helper = 0, {}
    for r in list(t.get("load", {}).values()) + t.get("stream", []):
        for g, mb in r.get(key, {}).items():
            if g == "tool":
                peak = max(peak, mb)
            else:
                helper[g] = max(helper.get(g, 0), mb)
    s = f"{peak:.0f} MB"
    for g, mb in helper.items():
        s += f" +{g} {mb:.0f}"
    return s


def cpu(c):
    if not c:
        return "-"
    s = f"{c['tool']:.1f} s"
    for g, x in c.items():
        if g != "tool":
            s += f" +{g} {x:.1f}"
    return s


def cpu_load(key):
    def f(name):
        t = res["tools"][name]
        if "unavailable" in t:
            return "n/a*"
        return cpu(t.get("load", {}).get(key, {}).get("cpu_per_100k"))
    return f


def cpu_stream(v):
    return cpu(v.get("cpu_per_100k"))


def content(name):
    t = res["tools"][name]
    if "unavailable" in t:
        return "n/a*"
    runs = [r for r in t.get("load", {}).values()] + t.get("stream", [])
    bad = [r["content"] for r in runs if r.get("content") and not r["content"]["ok"]]
    if not runs:
        return "-"
    if not bad:
        return f"ok ({len(runs)} runs)"
    return f"WRONG* in {len(bad)} of {len(runs)}"


def nested_text():
    """the nested rows (nested.py): a table of their own, one column a tool"""
    nt = res.get("nested")
    if not nt:
        return ""
    names = [n for n in ("pg2osync", "pgsync", "debezium") if n in nt["tools"]]
    label = {"pg2osync": "pg2osync", "pgsync": "PGSync", "debezium": "Debezium"}
    for n in names:
        if n in res.get("tools", {}):
            label[n] = head(n)
        elif n == "pgsync" and nt["tools"][n].get("version"):
            label[n] = "PGSync " + nt["tools"][n]["version"]

    def cell(n, f):
        t = nt["tools"][n]
        if "unavailable" in t:
            return "n/a*"
        if "error" in t:
            return "FAILED*"
        try:
            return f(t)
        except (KeyError, TypeError, ZeroDivisionError):
            return "-"

    def bad(t, part):
        c = t.get(part) or {}
        return " WRONG*" if c.get("differ") else ""

    def cpu_of(d, per=None):
        main = d.get("tool", 0)
        helpers = sum(v for k2, v in d.items() if k2 != "tool")
        return f"{main:.1f} s" + (f" +redis {helpers:.1f}" if helpers else "")

    def mem(t, key):
        d = t[key]
        helpers = sum(v for k2, v in d.items() if k2 != "tool")
        return f"{d['tool']:.0f} MB" + (f" +redis {helpers:.0f}" if helpers else "")
    P = k(nt["parents"])
    rows = [
        (f"load {P} parents x {nt['kids']}, parents/s",
         lambda t: ("FAILED*" if "load_error" in t else
                    f"{t['load_rate']:,.0f} ({t['load_s']:.1f} s)" + bad(t, "load_content"))),
        (f"{nt['txns']} child txns, 1st->all current",
         lambda t: "FAILED*" if "txn_error" in t else f"{t['txn_first_s']:.2f} s"),
        ("  last COMMIT->all current",
         lambda t: "FAILED*" if "txn_error" in t else f"{t['txn_last_s']:.2f} s"),
        ("  client's updates", lambda t: f"{t['txn_client_s']:.1f} s"),
        ("CPU/100k parents load", lambda t: cpu_of(t["load_cpu_per_100k"])),
        (f"CPU, {nt['txns']} child txns", lambda t: cpu_of(t["txn_cpu"])),
        ("peak RSS", lambda t: mem(t, "peak_rss_mb")),
        ("  peak PSS", lambda t: mem(t, "peak_pss_mb")),
        ("content check", lambda t: "ok" if t["content"]["ok"] else "WRONG*"),
    ]
    tab = [["nested documents"] + [label[n] for n in names]]
    tab += [[r[0]] + [cell(n, r[1]) for n in names] for r in rows]
    wd = [max(len(r[i]) for r in tab) for i in range(len(tab[0]))]
    out_lines = []
    for i, r in enumerate(tab):
        out_lines.append("  ".join(c.ljust(wd[j]) if j == 0 else c.rjust(wd[j])
                                   for j, c in enumerate(r)).rstrip())
        if i == 0:
            out_lines.append("  ".join("-" * x for x in wd))
    out_lines.append("")
    out_lines.append(f"nested: {nt['parents']:,} parents with {nt['kids']} children each, "
                     "every document carrying its children as an array in the child's key "
                     "order; each tool in its best streaming configuration (PGSync: poll "
                     f"lowered); {nt['txns']} transactions each change one child of a random "
                     "parent; 'current' = every touched parent's document equals the SQL query "
                     "of its children by value (numbers as numbers, the array sorted by key; "
                     "realtime _mget, polled every 50 ms); content: those "
                     "parents and 200 more compared by content, array order and numerics as "
                     "written.")
    for n in names:
        t = nt["tools"][n]
        why = t.get("unavailable") or t.get("error")
        if why:
            out_lines.append(f"{label[n]}: n/a* - {why}")
        for part in ("load_error", "txn_error"):
            if part in t:
                out_lines.append(f"{label[n]}: FAILED* {t[part]}")
        for part in ("load_content", "content"):
            c = t.get(part) or {}
            if c.get("differ"):
                out_lines.append(f"{label[n]}: WRONG* {c['differ']} of {c['sampled']} "
                                 f"differ ({part.replace('_', ' ')}): {c['example']}")
    return "\n".join(out_lines) + "\n"


def many_text():
    """the many-tables row (many.py)"""
    m = res.get("many")
    if not m:
        return ""
    head_ = f"many tables: {m['tables']:,} tables of {m['rows_per_table']} rows, pg2osync"
    if "unavailable" in m:
        return f"{head_}: n/a* - {m['unavailable']}\n"
    lines_ = [head_]
    if "ready_s" in m:
        lines_.append(f"  start-up: /ready after {m['ready_s']:.1f} s, every table loaded "
                      f"after {m.get('loaded_s', float('nan')):.1f} s")
    if "stream_first_s" in m:
        lines_.append(f"  {1000} txns x 10 rows over random tables: 1st->all "
                      f"{m['stream_first_s']:.2f} s ({m['stream_rate']:,.0f} rows/s), last "
                      f"COMMIT->all {m['stream_last_s']:.2f} s (client {m['stream_client_s']:.1f} s)")
    pk = m.get("peak_pss_mb", {}).get("tool")
    if pk is not None:
        lines_.append(f"  peak RSS {m['peak_rss_mb']['tool']:.0f} MB, PSS {pk:.0f} MB, "
                      f"{m['processes'].get('tool', 0)} processes; CPU start-up "
                      f"{m.get('startup_cpu', {}).get('tool', 0):.1f} s, stream "
                      f"{m.get('stream_cpu', {}).get('tool', 0):.1f} s")
    if "error" in m:
        lines_.append(f"  FAILED* {m['error']}")
    return "\n".join(lines_) + "\n"


def bounded_text():
    """the bounded-memory rows (bounded.py)"""
    global res
    b = res.get("bounded")
    if not b:
        return ""
    bound = b.get("bound_mb", 30)
    lines_ = [f"bounded memory: one transaction through a running pipeline, summed PSS "
              f"bound {bound} MB, pg2osync"]
    names = {"txn": "rows of ~{0} B", "blobs": "rows, each a {0:,} B value out of line"}
    for key in ("txn_pg", "blobs_pg", "txn_mariadb", "blobs_mariadb"):
        r = b.get(key)
        if not r:
            continue
        what, src = key.split("_")
        head_ = (f"  {'PostgreSQL' if src == 'pg' else 'MariaDB':10}  {r['rows']:>10,} "
                 + names[what].format(r["row_bytes"]))
        if "unavailable" in r:
            lines_.append(f"{head_}: n/a* - {r['unavailable']}")
            continue
        pk = r.get("peak_pss_mb", {}).get("tool", 0)
        if "error" in r and "commit_to_all_s" not in r:
            # a row that never carried its transaction says nothing of the bound
            lines_.append(f"{head_}: FAILED* {r['error']}")
            continue
        cell = (f"{head_}: peak PSS {pk:.1f} MB ({'within' if pk < bound else 'OVER'} the "
                f"bound), RSS {r.get('peak_rss_mb', {}).get('tool', 0):.0f} MB")
        if "stored" in r:
            st = r["stored"]
            cell += (f"; stored {st['value_stored_bytes']:,} B a value compressed, TOAST "
                     f"{st['toast_bytes'] / 2**20:,.0f} MB" if "value_stored_bytes" in st
                     else f"; table {st['table_bytes'] / 2**20:,.0f} MB compressed")
        if "commit_to_all_s" in r:
            cell += (f"; COMMIT->all {r['commit_to_all_s']:.1f} s (client "
                     f"{r['client_s']:.1f} s), CPU {r.get('cpu_s', {}).get('tool', 0):.1f} s; "
                     f"index {r.get('count', 0):,} of {r['rows']:,}, "
                     f"{len(r.get('differ', []))} of {r.get('sampled', 0)} sampled differ")
        if "error" in r:
            cell += f"; FAILED* {r['error']}"
        lines_.append(cell)
    m = b.get("tables")
    if m:
        saved, res = res, {"many": m}
        try:
            lines_.append(many_text().rstrip("\n").replace("many tables:", "  many tables:", 1))
        finally:
            res = saved
    return "\n".join(lines_) + "\n"


def runs_text():
    """both runs of each alternated load row, so the spread is seen"""
    cr = res.get("ceiling_runs")
    ours = res["tools"].get("pg2osync", {}).get("load", {})
    if not cr:
        return ""
    parts = []
    for kind in ("narrow", "wide"):
        for c in ("1", "4"):
            r = ours.get(f"{kind}_{c}", {}).get("runs")
            if not r or c not in cr.get(kind, {}):
                continue
            fmt = lambda v: "-" if v is None else f"{v:,.0f}"
            parts.append(f"{kind} {c} req: raw {', '.join(fmt(v) for v in cr[kind][c])}, "
                         f"pg2osync {', '.join(fmt(v) for v in r)}")
    return " (" + "; ".join(parts) + ")" if parts else ""


def cpu_split_text():
    """where the machine's CPU went during each load row: the node, the
    database, the tool (or raw _bulk's client) and everything else, over
    the row's own wall time; busy is of every core (100 % = all of them),
    so a row near 100 % was held by the machine, not by its tool"""
    cc = res.get("ceiling_cpu")
    if not cc:
        return ""
    cols = ["load row", "who", "wall s", "busy", "node s", "postgres s", "tool s", "others s",
            "node s/100k docs"]
    table = [cols]
    for kind, full in (("narrow", res["rows"]), ("wide", res["wide_rows"])):
        for c in ("1", "4"):
            name = f"{kind} {k(full)}, {c} req"
            x = cc.get(kind, {}).get(c)
            if x:
                table.append([name, "raw _bulk", f"{x['seconds']:.1f}", f"{x['busy_pct']:.0f} %",
                              f"{x.get('node', 0):.1f}", "-", f"client {x.get('client', 0):.1f}",
                              f"{x['others']:.1f}",
                              f"{100000 * x.get('node', 0) / full:.2f}"])
            for n in tools:
                r = res["tools"][n].get("load", {}).get(f"{kind}_{c}", {})
                y = r.get("cpu_split")
                if not y:
                    continue
                tool_s = sum(v for g, v in y.items()
                             if g not in ("seconds", "busy_pct", "cores", "node", "postgres",
                                          "others"))
                table.append([name, head(n), f"{y['seconds']:.1f}", f"{y['busy_pct']:.0f} %",
                              f"{y.get('node', 0):.1f}", f"{y.get('postgres', 0):.1f}",
                              f"{tool_s:.1f}", f"{y['others']:.1f}",
                              f"{100000 * y.get('node', 0) / r['rows']:.2f}"])
    w = [max(len(r[i]) for r in table) for i in range(len(cols))]
    lines_ = ["CPU during the load rows (utime+stime over the row's wall time; busy = the whole "
              f"machine, {res.get('machine', '')}):"]
    for i, r in enumerate(table):
        lines_.append("  " + "  ".join(c.ljust(w[j]) if j < 2 else c.rjust(w[j])
                                      for j, c in enumerate(r)).rstrip())
        if i == 0:
            lines_.append("  " + "  ".join("-" * x for x in w))
    return "\n".join(lines_) + "\n"


if not ceil:
    # BENCH_ONLY=nested or many: its table alone
    text = nested_text() + many_text() + bounded_text()
    print(text, end="")
    with open(os.path.join(out, "bench.txt"), "w") as f:
        f.write(text)
    sys.exit(0)


def floor_cell(part, key="seconds"):
    """the streaming rows' raw _bulk cell: the node's own floor"""
    r = (res.get("stream_floor") or {}).get(part)
    if not r:
        return ""
    if key not in r:
        return "FAILED*"
    return f"{r[key]:.2f} s" if key == "after_last_s" else f"{r[key]:.1f} s"


N, W, S = k(res["rows"]), k(res["wide_rows"]), k(res["stream_rows"])
rows = [
    ("load narrow %s, 1 req" % N, f"{ceil['narrow']['1']:,}", lambda n: load_cell(n, "narrow_1")),
    ("load narrow %s, 4 req" % N, f"{ceil['narrow']['4']:,}", lambda n: load_cell(n, "narrow_4")),
    ("load wide %s, 1 req" % W, f"{ceil['wide']['1']:,}", lambda n: load_cell(n, "wide_1")),
    ("load wide %s, 4 req" % W, f"{ceil['wide']['4']:,}", lambda n: load_cell(n, "wide_4")),
    ("%s in 1 txn, COMMIT->all" % S, floor_cell("big"), lambda n: variants(n, secs("big"))),
    ("%s as %d txns, 1st->all" % (S, res["stream_rows"] // 100), floor_cell("many"),
     lambda n: variants(n, secs("many"))),
    ("  last COMMIT->all", floor_cell("many", "after_last_s"), lambda n: variants(n, lag)),
    ("  client's insert, 1/%d txns" % (res["stream_rows"] // 100), "",
     lambda n: variants(n, client)),
    ("update->GET p50/p99", "", lambda n: variants(n, lat)),
    ("  node's floor, just before", "", lambda n: variants(n, lambda v: lat(v, True))),
    ("  own: commit->source sent", "", lambda n: variants(n, own("commit_to_streamed"))),
    ("  own: commit->received", "", lambda n: variants(n, own("commit_to_received"))),
    ("  own: commit->writer", "", lambda n: variants(n, own("commit_to_writer"))),
    ("  own: commit->sent", "", lambda n: variants(n, own("commit_to_sent"))),
    ("  own: commit->answered", "", lambda n: variants(n, own("commit_to_indexed"))),
    ("peak RSS", "", rss),
    ("  peak PSS (shared pages once)", "", lambda n: rss(n, "peak_pss_mb")),
    ("CPU/100k load narrow 4", "", cpu_load("narrow_4")),
    ("CPU/100k load wide 4", "", cpu_load("wide_4")),
    ("CPU/100k streaming", "", lambda n: variants(n, cpu_stream)),
    ("content check", "", content),
]
cols = ["", "raw _bulk"] + [head(n) for n in tools]
table = [cols] + [[r[0], r[1]] + [r[2](n) for n in tools] for r in rows]
w = [max(len(r[i]) for r in table) for i in range(len(cols))]
lines = []
for i, r in enumerate(table):
    lines.append("  ".join(c.ljust(w[j]) if j == 0 else c.rjust(w[j]) for j, c in enumerate(r)).rstrip())
    if i == 0:
        lines.append("  ".join("-" * x for x in w))

notes = [f"{res['machine']}; {res.get('servers', '')}; batch {res['batch']} documents; "
         f"{res['started']} - {res['finished']}.",
         "load: rows/s from the tool's start until the index's indexing stats (read without a refresh) count every row, "
         "confirmed by _count; "
         "(%) = of raw _bulk of our documents at the same batch and requests open at once; "
         "pg2osync and raw _bulk ran each load row twice, alternately, and the best of each is shown"
         + runs_text() + "; the peers ran once, after.",
         "streaming: the last document looked for by realtime GET (every 5 % of the time waited, "
         "2-20 ms), then _count after _refresh every 10 ms until all; raw _bulk: the node's floor, the same documents from a minimal "
         f"client, {res['batch']} a request on as many connections as the tools' 4 req rows "
         "(1 txn) and 100 a request one at a time (txns), timed from the first send and from the "
         "last answer. latency: "
         f"{res['updates']} single-row updates 50 ms apart from one psql session, realtime GET by id polled every ms; "
         "the floor: the same documents as single-document _bulk requests from a minimal client, "
         "timed from the send; own: the pipeline's histograms from the source's commit time "
         "(which precedes the commit's WAL flush), bucket bounds.",
         "CPU: utime+stime of the tool's process tree (children included) per 100k rows; "
         "RSS: peak of the tree's sum; helpers (Redis) after '+'."]
for n in tools:
    t = res["tools"][n]
    if "unavailable" in t:
        notes.append(f"{head(n)}: n/a* - {t['unavailable']}")
        continue
    ld = t.get("load", {})
    sets = "; ".join(f"{c} req = {ld[f'narrow_{c}']['settings']}" for c in ("1", "4")
                     if f"narrow_{c}" in ld)
    var = " / ".join(v.get("variant") or "" for v in t.get("stream", []))
    notes.append(f"{head(n)}: {sets}" + (f"; streaming cells: {var}" if "/" in var else ""))
    runs = [(key, r) for key, r in ld.items()]
    runs += [(f"{v['variant'] or ''} streaming".strip(), v) for v in t.get("stream", [])]
    for key, r in runs:
        for part in ("big", "many"):
            if "error" in r.get(part, {}):
                notes.append(f"  {key} {part}: FAILED* {r[part]['error']}")
        if "error" in r:
            notes.append(f"  {key}: FAILED* {r['error']}")
        c = r.get("content")
        if c and not c["ok"]:
            notes.append(f"  {key}: WRONG* count {c['count']} of {c['expected']}, "
                         f"{c['differ']} of {c['sampled']} sampled differ: {c['example']}")
    extra = sorted({f for r in list(ld.values()) + t.get("stream", [])
                    for f in (r.get("content") or {}).get("extra_fields", [])})
    if extra:
        notes.append(f"  fields beyond the table's columns (not compared): {', '.join(extra)}")
text = "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n"
for part in (cpu_split_text(), nested_text(), many_text(), bounded_text()):
    if part:
        text += "\n" + part
print(text, end="")
with open(os.path.join(out, "bench.txt"), "w") as f:
    f.write(text)

# the chart: load rows/s beside the ceiling, streaming seconds, latency
if not shutil.which("gnuplot"):
    print("(no gnuplot: no chart)")
    sys.exit(0)
dat = os.path.join(out, "bench.dat")
with open(dat, "w") as f:
    f.write("# scenario ceiling " + " ".join(tools) + "\n")
    for key, name in (("narrow_1", "narrow/1"), ("narrow_4", "narrow/4"),
                      ("wide_1", "wide/1"), ("wide_4", "wide/4")):
        kind, c = key.split("_")
        vals = [str(ceil[kind][c])]
        for n in tools:
            r = res["tools"][n].get("load", {}).get(key, {})
            vals.append(f"{r['rate']:.0f}" if "rate" in r else "0")
        f.write(f'"{name}" ' + " ".join(vals) + "\n")
    f.write("\n\n")
    for n in tools:
        for v in res["tools"][n].get("stream", []):
            lbl = head(n) + (f" ({v['variant']})" if v.get("variant") else "")
            vals = [str(v.get(p, {}).get("seconds", 0)) for p in ("big", "many")]
            la = v.get("latency", {})
            vals += [str(la.get("p50_ms", 0)), str(la.get("p99_ms", 0))]
            f.write(f'"{lbl}" ' + " ".join(vals) + "\n")
png = os.path.join(out, "bench.png")
gp = f"""set terminal pngcairo size 1500,560 font ",10" noenhanced
set output "{png}"
set multiplot layout 1,3
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top right font ",9"
set grid ytics
set title "initial load, rows/s (kind/requests open at once)"
plot "{dat}" index 0 using 2:xtic(1) title "raw _bulk (ceiling)", \\
""" + ", \\\n".join(f'     "" index 0 using {i + 3} title "{head(n)}"' for i, n in enumerate(tools)) + f"""
set title "streaming: seconds until all {S} rows are searchable"
set xtics rotate by -25
set yrange [0:*]
plot "{dat}" index 1 using 2:xtic(1) title "1 transaction", "" index 1 using 3 title "{res['stream_rows'] // 100} transactions"
set title "commit -> realtime GET, ms"
set logscale y
set yrange [*:*]
plot "{dat}" index 1 using 4:xtic(1) title "p50", "" index 1 using 5 title "p99"
unset multiplot
"""
r = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True)
if r.returncode != 0:
    print("gnuplot failed: " + r.stderr[-300:])
else:
    print(f"chart: {png}")
