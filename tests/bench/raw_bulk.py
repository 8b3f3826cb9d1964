#!/usr/bin/env python3
"""raw_bulk.py OS_URL INDEX N BATCH - what the target ingests through plain
_bulk on this machine: N small documents shaped like the bench table's rows,
BATCH per request, one request open at a time over one keep-alive
connection. Prints documents per second."""
import http.client
import json
import socket
import sys
import time
import urllib.parse

url, index, n, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
u = urllib.parse.urlparse(url)
conn = http.client.HTTPConnection(u.hostname, u.port)
conn.connect()
# http.client writes headers and body separately: without NODELAY every
# request waits out a delayed ACK, and the ceiling would measure that
conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def req(method, path, body=None):
    conn.request(method, path, body=body, headers={"Content-Type": "application/x-ndjson"})
    r = conn.getresponse()
    data = r.read()
    return r.status, data


req("DELETE", f"/{index}")
bodies = []
for start in range(0, n, batch):
    lines = []
    for i in range(start, min(n, start + batch)):
        lines.append(json.dumps({"index": {"_index": index, "_id": str(i), "version": 100 + i,
                                           "version_type": "external_gte"}}, separators=(",", ":")))
        lines.append(json.dumps({"id": i, "name": f"name {i}", "price": f"{i}.50", "qty": i % 100,
                                 "active": i % 2 == 0, "note": "lorem ipsum dolor sit amet",
                                 "score": i / 3.0, "code": f"C{i:08d}", "grp": i % 17,
                                 "tag": "t" + str(i % 5)}, separators=(",", ":")))
    bodies.append(("\n".join(lines) + "\n").encode())
t0 = time.monotonic()
for b in bodies:
    # the same response filter the writer asks for: the ceiling should
    # measure the node, not this client parsing per-item metadata
    st, data = req("POST", "/_bulk?filter_path=errors,items.*.error,items.*.status", b)
    if st != 200 or json.loads(data).get("errors"):
        print("bulk failed", st, data[:300], file=sys.stderr)
        sys.exit(1)
dt = time.monotonic() - t0
print(f"{n / dt:.0f}")
