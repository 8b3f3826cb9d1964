#!/usr/bin/env python3
"""raw_bulk.py OS_URL INDEX OPS.frames BATCH - what the target ingests through
plain _bulk on this machine, for the same documents the pipeline writes: the
index operations of an ops frames file (the shaper's output) become bulk
bodies up front, BATCH documents per request, and are then sent one request
at a time over one keep-alive connection. Prints documents per second."""
import http.client
import json
import socket
import sys
import time
import urllib.parse

url, index, path, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
u = urllib.parse.urlparse(url)
conn = http.client.HTTPConnection(u.hostname, u.port)
conn.connect()
# http.client writes headers and body separately: without NODELAY every
# request waits out a delayed ACK, and the ceiling would measure that
conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def req(method, path, body=None):
    conn.request(method, path, body=body, headers={"Content-Type": "application/x-ndjson"})
    r = conn.getresponse()
    return r.status, r.read()


lines = []
with open(path, "rb") as f:
    for raw in f:
        op = json.loads(raw.split(b" ", 1)[1])
        if op.get("k") != "index":
            continue
        action = {"index": {"_index": index, "_id": op["id"], "version": op["v"],
                            "version_type": "external_gte"}}
        lines.append(json.dumps(action, separators=(",", ":")) + "\n" +
                     json.dumps(op["doc"], separators=(",", ":")) + "\n")
bodies = ["".join(lines[i:i + batch]).encode() for i in range(0, len(lines), batch)]
req("DELETE", f"/{index}")
t0 = time.monotonic()
for b in bodies:
    # the same response filter the writer asks for
    st, data = req("POST", "/_bulk?filter_path=errors,items.*.error,items.*.status", b)
    if st != 200 or json.loads(data).get("errors"):
        print("bulk failed", st, data[:300], file=sys.stderr)
        sys.exit(1)
dt = time.monotonic() - t0
req("DELETE", f"/{index}")
print(f"{len(lines) / dt:.0f}")
