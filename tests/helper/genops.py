#!/usr/bin/env python3
"""genops.py OPS.frames EXPECTED.json INDEX N - a writer input stream of
about N operations on INDEX (framing.md section 5) and the documents the
index must hold after it, as the JSON array tests/compare.py reads.

Transactions of 1 to 40 operations, each with its own version; one in
fifteen is a large one of 600 that the writer must split into several
flushes, in which documents written in its first 100 operations are
written again (or deleted) 300 operations later, under the same version.
Every id appears at most once among any 200 consecutive operations of a
transaction, so a request retried in part cannot put back an older copy
of a document the same request changed again. Bare pos frames and load
marks are sprinkled in. The stream is the same for the same arguments."""
import json
import random
import sys

out_path, exp_path, index, total = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rnd = random.Random(20000)
docs = {}
n = 0
v = 1000
wave = 0
with open(out_path, "w") as out:
    def put(obj):
        j = json.dumps(obj, separators=(",", ":"))
        out.write(f"{len(j) + 1} {j}\n")

    while n < total:
        v += 100
        big = rnd.random() < 1 / 15
        size = 600 if big else rnd.randint(1, 40)
        ids = rnd.sample(range(1, 6001), size)
        if big:
            ids[300:400] = ids[0:100]
        for j, i in enumerate(ids):
            if rnd.random() < 0.1 or (big and 300 <= j < 400 and j % 3 == 0):
                put({"k": "delete", "index": index, "id": str(i), "v": v})
                docs.pop(i, None)
            else:
                d = {"id": i, "v": v, "n": n, "pad": "x" * rnd.randint(0, 300)}
                put({"k": "index", "index": index, "id": str(i), "v": v, "doc": d})
                docs[i] = d
            n += 1
        pos = v + 50
        put({"k": "commit", "pos": pos, "text": f"0/{pos:X}",
             "ts": 1764489600000000 + v, "n": size})
        r = rnd.random()
        if r < 0.05:
            put({"k": "pos", "pos": pos + 10, "text": f"0/{pos + 10:X}"})
        elif r < 0.08:
            wave += 1
            put({"k": "mark", "table": "public.c", "wave": wave,
                 "id": f"public.c#{wave}"})
json.dump(list(docs.values()), open(exp_path, "w"))
