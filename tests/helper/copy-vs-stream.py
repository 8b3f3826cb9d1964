#!/usr/bin/env python3
"""copy-vs-stream.py STREAM COPY N - are the loader's copy rows the stream's
inserts of the same rows, byte for byte?

STREAM holds a capture's frames of N inserted rows, COPY the loader's
frames for the same table. Rows are matched by their "id"; for each, the
stream's op must be "i" and the copy's "c", and the "key" member and the
"new" image must be the same bytes. Prints the differences and a closing
count; exits 1 when there are any, or when the stream does not hold
exactly N rows."""
import sys


def rows(path):
    out = {}
    for line in open(path, "rb"):
        j = line.split(b" ", 1)[1].rstrip(b"\n")
        if not j.startswith(b'{"k":"row"'):
            continue
        op = j[j.index(b'"op":"') + 6:][:1]
        key = j[j.index(b',"key":'):j.index(b',"new":{')]
        new = j[j.index(b',"new":{') + 7:-1]
        rid = new[new.index(b'"id":') + 5:].split(b",", 1)[0]
        out[rid] = (op, key, new)
    return out


def main():
    s, c, want = rows(sys.argv[1]), rows(sys.argv[2]), int(sys.argv[3])
    bad = 0
    for rid in sorted(set(s) | set(c)):
        if rid not in s or rid not in c:
            print("row", rid, "only in", "copy" if rid in c else "stream")
            bad += 1
            continue
        if s[rid][0] != b"i" or c[rid][0] != b"c":
            print("row", rid, "ops", s[rid][0], c[rid][0])
            bad += 1
        if s[rid][1] != c[rid][1]:
            print("row", rid, "key", s[rid][1], c[rid][1])
            bad += 1
        if s[rid][2] != c[rid][2]:
            print("row", rid, "differs:\n  stream", s[rid][2].decode(),
                  "\n  copy  ", c[rid][2].decode())
            bad += 1
    print(len(s), "stream rows,", len(c), "copy rows,", bad, "differences")
    sys.exit(1 if bad or len(s) != want else 0)


main()
