#!/usr/bin/env python3
"""nest-expect.py OS_URL INDEX SPEC.json - does the index hold exactly the
parents SPEC describes, each with its collections, by content?

SPEC: {"parents": FILE, "collections": [{"field": F, "rows": FILE,
"kind": "array" | "single" | "count"}, ...]}. Every FILE holds one JSON
object per line, as the source's own SQL renders its rows: a parent as the
pipeline documents it ("id" its key); a collection row with "_fk" (the
parent it names) and "_k" (its order), the rest as the embedded row; a
count row {"_fk": ..., "n": N}. Prints the differences, exits 1 on any."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from compare import differences, fetch_all  # noqa: E402


def lines(path):
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def main():
    url, index, spec = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
    want = {str(p["id"]): p for p in lines(spec["parents"])}
    for c in spec["collections"]:
        by = {}
        for r in lines(c["rows"]):
            by.setdefault(str(r.pop("_fk")), []).append(r)
        for k, p in want.items():
            rows = sorted(by.get(k, []), key=lambda r: r.get("_k", 0))
            for r in rows:
                r.pop("_k", None)
            if c["kind"] == "count":
                p[c["field"]] = rows[0]["n"] if rows else 0
            elif c["kind"] == "single":
                p[c["field"]] = rows[0] if rows else None
            else:
                p[c["field"]] = rows
    bad = differences(want, fetch_all(url, index), src="source", noun="parents",
                      width=400, extra="")
    sys.exit(1 if bad else 0)


main()
