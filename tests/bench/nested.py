"""nested.py - the bench's nested rows: parents that embed their children.

  load      NESTED_PARENTS parents with 5 children each, every parent
            document carrying its children as an array ordered by the
            child's key: seconds from the tool's start until every parent
            is counted, parents/s
  children  1,000 transactions each changing one child of a random parent:
            from the first commit, and from the last, until every touched
            parent's document equals the SQL query of its children
  cost      CPU seconds of each part, peak RSS and PSS of the tool's tree
  content   the touched parents and a sample of the rest compared with the
            SQL query by content: the array, its order, numerics as written

pg2osync embeds them with sync.<name>.children; PGSync with its own
children schema (one_to_many, label items); Debezium has no nesting
without a stream processor beside it, so it has no column here.

Run by bench.py (BENCH_ONLY=nested for these rows alone): B is the bench
module, whose node, tools and meters these rows share."""
import json
import os
import random
import time

KIDS = 5
TXNS = 1000
PARENT_COLS = ["id", "name", "price"]
CHILD_COLS = ["id", "sku", "qty", "price"]
MAPPING = {"properties": {
    "id": {"type": "long"}, "name": {"type": "text"}, "price": {"type": "keyword"},
    "items": {"properties": {"id": {"type": "long"}, "sku": {"type": "keyword"},
                             "qty": {"type": "integer"}, "price": {"type": "keyword"}}}}}
# the children of each parent in key order, as both tools are asked to
# embed them: the query every document is compared with
EXPECT_SQL = ("select coalesce(json_agg(json_build_object('id', p.id, 'name', p.name, "
              "'price', p.price, 'items', (select coalesce(json_agg(json_build_object("
              "'id', c.id, 'sku', c.sku, 'qty', c.qty, 'price', c.price) order by c.id), "
              "'[]') from n_child c where c.parent_id = p.id))), '[]') "
              "from n_parent p where p.id in ({ids})")


def make_tables(B, n):
    B.psql("drop table if exists n_child, n_parent")
    B.psql("create table n_parent (id int primary key, name text not null, "
           "price numeric(10,2) not null)")
    # child ids interleave parents (child g of parent g % n): an array in
    # key order is not the order the rows were inserted in per parent
    B.psql("create table n_child (id int primary key, parent_id int not null "
           "references n_parent, sku text not null, qty int not null, "
           "price numeric(10,2) not null)")
    B.psql(f"insert into n_parent select g, 'parent ' || g, (g % 10000) / 100.0 "
           f"from generate_series(1, {n}) g")
    B.psql(f"insert into n_child select g, 1 + g % {n}, 'sku-' || g, g % 100, "
           f"(g % 1000) / 10.0 from generate_series(1, {n * KIDS}) g")
    B.psql("create index on n_child (parent_id)")
    B.psql("analyze n_parent; analyze n_child")


def fresh(B, index):
    B.NODE.req("DELETE", f"/{index}")
    st, data = B.NODE.req("PUT", f"/{index}", {"settings": B.SETTINGS, "mappings": MAPPING})
    if st != 200:
        raise RuntimeError(f"creating index {index}: {st} {data[:300]}")


def expected(B, ids, pf):
    rows = json.loads(B.psql(EXPECT_SQL.format(ids=",".join(str(i) for i in ids))),
                      parse_float=pf)
    return {str(r["id"]): r for r in rows}


def loose(doc):
    """a document as its values mean, not as written: numbers as numbers,
    the array in key order - what 'current' asks of a tool whose content
    check fails anyway, so its lag is measured apart from its format"""
    if not isinstance(doc, dict):
        return doc
    d = {k: (float(v) if k == "price" and v is not None else v) for k, v in doc.items()}
    if isinstance(d.get("items"), list):
        d["items"] = sorted((loose(x) for x in d["items"]), key=lambda x: x.get("id", 0))
    return d


def differ(B, index, ids, strict=True):
    """(number of parents whose document is not the query's, an example);
    strict: the array's order and the numerics as written too"""
    pf = str if strict else float
    want = expected(B, ids, pf)
    st, data = B.NODE.req("POST", f"/{index}/_mget?realtime=true",
                          {"ids": [str(i) for i in ids]})
    docs = {d["_id"]: d.get("_source")
            for d in json.loads(data, parse_float=pf).get("docs", [])}
    if not strict:
        want = {k: loose(v) for k, v in want.items()}
        docs = {k: loose(v) for k, v in docs.items()}
    bad, example = 0, ""
    for k, w in want.items():
        d = docs.get(k)
        if d is None:
            bad += 1
            example = example or f"parent {k} missing"
            continue
        for c in PARENT_COLS + ["items"]:
            if d.get(c, "<missing>") != w[c]:
                bad += 1
                if not example:
                    if c == "items" and isinstance(d.get(c), list):
                        got = [x.get("id") for x in d[c]]
                        exp = [x["id"] for x in w[c]]
                        if got == exp:
                            i = next(i for i, (a, b) in enumerate(zip(w[c], d[c]))
                                     if a != b)
                            example = (f"parent {k} items[{i}]: table "
                                       f"{json.dumps(w[c][i])}, index {json.dumps(d[c][i])}")
                        else:
                            example = f"parent {k} items ids: table {exp}, index {got}"
                    else:
                        example = (f"parent {k} {c}: table {json.dumps(w[c])[:60]}, "
                                   f"index {json.dumps(d.get(c))[:60]}")
                break
    return bad, example


def p2o_section(index):
    return f"""  n_parent:
    table: public.n_parent
    index: {index}
    children:
      - table: public.n_child
        field: items
        foreign_key: parent_id
        columns: [{", ".join(CHILD_COLS)}]
"""


def pgsync_schema(index):
    return [{"database": os.environ["PGDATABASE"], "index": index,
             "nodes": {"table": "n_parent", "schema": "public", "columns": PARENT_COLS,
                       "children": [{"table": "n_child", "schema": "public",
                                     "label": "items", "columns": CHILD_COLS,
                                     "relationship": {
                                         "variant": "object", "type": "one_to_many",
                                         "foreign_key": {"child": ["parent_id"],
                                                         "parent": ["id"]}}}]}}]


def run_tool(B, tool, n):
    index = f"bench_{tool.key}_nested"
    fresh(B, index)
    r = {"parents": n, "children": n * KIDS}
    t0 = time.monotonic()
    roots = tool.start("n_parent", index, 1, tool.variants[-1][0])
    meter = B.Meter(roots)
    try:
        t1, got = B.wait_count(tool, index, n, 180 + n / 200, every=0.5)
        c1 = meter.sample()
        if t1 is None:
            r["load_error"] = f"{got} of {n} parents after {time.monotonic() - t0:.0f} s"
            return r
        r["load_s"] = t1 - t0
        r["load_rate"] = n / (t1 - t0)
        r["load_cpu_per_100k"] = {k: v * 100000 / n for k, v in c1.items()}
        sample = random.Random(7).sample(range(1, n + 1), min(B.SAMPLE, n))
        bad, ex = differ(B, index, sample)
        r["load_content"] = {"sampled": len(sample), "differ": bad, "example": ex}
        # the children: one change each, to a child of a random parent
        rnd = random.Random(11)
        kids = [rnd.randint(1, n * KIDS) for _ in range(TXNS)]
        parents = sorted({1 + k % n for k in kids})
        script = os.path.join(B.T, "nested-txns.sql")
        stamp = os.path.join(B.T, "nested-first")
        with open(script, "w") as f:
            for i, k in enumerate(kids):
                f.write(f"update n_child set qty = qty + 1, price = price + 0.01 "
                        f"where id = {k};\n")
                if i == 0:
                    f.write(f"\\! date +%s.%N > {stamp}\n")
        time.sleep(2)
        c2 = meter.sample()
        s0 = time.time()
        B.psql_file(script)
        s1 = time.time()
        with open(stamp) as f:
            first = float(f.read())
        deadline = time.monotonic() + 180
        while True:
            bad, ex = differ(B, index, parents, strict=False)
            if bad == 0:
                done = time.time()
                break
            if time.monotonic() > deadline or not tool.alive():
                r["txn_error"] = (f"{bad} of {len(parents)} parents not current after "
                                  f"{time.time() - s1:.0f} s: {ex}")
                break
            time.sleep(0.05)
        c3 = meter.sample()
        r["txn_client_s"] = s1 - s0
        r["touched_parents"] = len(parents)
        if "txn_error" not in r:
            r["txn_first_s"] = done - first
            r["txn_last_s"] = done - s1
        r["txn_cpu"] = {k: c3[k] - c2[k] for k in c3}
        bad, ex = differ(B, index, sample)
        r["content"] = {"sampled": len(sample) + len(parents), "differ": bad, "example": ex,
                        "ok": bad == 0 and "txn_error" not in r and
                        r["load_content"]["differ"] == 0}
    finally:
        meter.stop()
        r["peak_rss_mb"] = {k: v / 2**20 for k, v in meter.peak.items()}
        r["peak_pss_mb"] = {k: v / 2**20 for k, v in meter.peak_pss.items()}
        tool.stop()
        B.NODE.req("DELETE", f"/{index}")
    return r


def run(B, res):
    n = int(os.environ.get("BENCH_NESTED_PARENTS", 100000))
    B.log(f"nested: {n} parents with {KIDS} children each")
    make_tables(B, n)
    out = res["nested"] = {"parents": n, "kids": KIDS, "txns": TXNS, "tools": {}}
    for name in B.TOOLS:
        if name == "debezium":
            out["tools"][name] = {"unavailable": "no nested documents without a stream "
                                  "processor beside it"}
            continue
        tool = {"pg2osync": B.Pg2osync, "pgsync": B.PGSync}[name]()
        why = tool.available()
        if why:
            out["tools"][name] = {"unavailable": why}
            continue
        tool.section = p2o_section
        tool.schema_doc = pgsync_schema
        B.log(f"{name}: nested")
        try:
            out["tools"][name] = run_tool(B, tool, n)
        except Exception as e:
            out["tools"][name] = {"error": str(e)[:300]}
        if hasattr(tool, "version"):
            out["tools"][name]["version"] = tool.version()
        B.log(f"{name}: nested {json.dumps(out['tools'][name])[:500]}")
    B.psql("drop table if exists n_child, n_parent")
