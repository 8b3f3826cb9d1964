#!/usr/bin/env python3
"""compare.py OS_URL INDEX SRC.json - does the index hold exactly the rows in
SRC.json (a JSON array of row objects, keyed by "id"), by content?

compare.py --table PG_URL TABLE SRC.json [SELECT] - the same for a table
target (target.flavor: postgres): its rows, read by psql (the password from
PGPASSWORD, never in the url), rendered by SELECT over the table's row t
(default row_to_json(t)), without the _version column the target keeps.

Prints the differences and exits 1 when there are any. Values are compared as
JSON after the pipeline's documented mapping, which the caller's SQL applies
(numeric as text, and so on)."""
import json
import os
import subprocess
import sys
import urllib.request


def fetch_table(url, table, sel="row_to_json(t)"):
    """the rows of a target table by id, less their _version"""
    out = subprocess.run(
        ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", url, "-c",
         f"select coalesce(json_agg({sel}), '[]') from {table} t"],
        check=True, capture_output=True, text=True,
        env=dict(os.environ, PGOPTIONS="-c client_min_messages=warning"))
    rows = {}
    for r in json.loads(out.stdout):
        r.pop("_version", None)
        rows[str(r["id"])] = r
    return rows


def fetch_all(url, index):
    docs = {}
    body = json.dumps({"size": 10000, "sort": ["_doc"],
                       "query": {"match_all": {}}}).encode()
    req = urllib.request.Request(f"{url}/{index}/_search?scroll=1m", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        res = json.load(urllib.request.urlopen(req, timeout=60))
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return docs
        raise
    while True:
        hits = res["hits"]["hits"]
        if not hits:
            break
        for h in hits:
            docs[h["_id"]] = h["_source"]
        req = urllib.request.Request(
            f"{url}/_search/scroll",
            data=json.dumps({"scroll": "1m", "scroll_id": res["_scroll_id"]}).encode(),
            headers={"Content-Type": "application/json"})
        res = json.load(urllib.request.urlopen(req, timeout=60))
    return docs


def differences(want, got, src="table", noun="rows", width=300,
                extra=" (resurrected/stale)"):
    """prints each id missing, extra or different (at most 20), then the
    totals; returns how many differ"""
    bad = 0
    for k in sorted(set(want) | set(got)):
        if k not in got:
            print(f"missing from index: id {k}")
            bad += 1
        elif k not in want:
            print(f"in index but not in table{extra}: id {k}")
            bad += 1
        elif want[k] != got[k]:
            print(f"differs: id {k}: {src} {json.dumps(want[k])[:width]} "
                  f"index {json.dumps(got[k])[:width]}")
            bad += 1
        if bad >= 20:
            print("...")
            break
    print(f"{noun} {len(want)} docs {len(got)} differences {bad}")
    return bad


def main():
    if sys.argv[1] == "--table":
        url, table, src = sys.argv[2:5]
        sel = sys.argv[5] if len(sys.argv) > 5 else "row_to_json(t)"
        want = {str(r["id"]): r for r in json.load(open(src))}
        sys.exit(1 if differences(want, fetch_table(url, table, sel))
                 else 0)
    url, index, src = sys.argv[1:4]
    rows = json.load(open(src))
    want = {str(r["id"]): r for r in rows}
    sys.exit(1 if differences(want, fetch_all(url, index)) else 0)


if __name__ == "__main__":
    main()
