#!/usr/bin/env python3
"""raw_bulk.py OS_URL INDEX OPS.frames BATCH [CONNS [CREATE]] - what the
target ingests through plain _bulk on this machine, for the same documents
the pipeline writes: the index operations of an ops frames file (the
shaper's output) become bulk bodies up front, BATCH documents per request,
and are then sent over CONNS keep-alive connections (default 1), each
sending its next request as soon as its last one is answered, so CONNS
requests are open at once. CREATE is the body the index is created with
first (mappings), as the pipeline's index is. Prints documents per second."""
import http.client
import json
import socket
import sys
import threading
import time
import urllib.parse

url, index, path, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
conns = int(sys.argv[5]) if len(sys.argv) > 5 else 1
create = sys.argv[6] if len(sys.argv) > 6 else None
u = urllib.parse.urlparse(url)


def connect():
    c = http.client.HTTPConnection(u.hostname, u.port)
    c.connect()
    # http.client writes headers and body separately: without NODELAY every
    # request waits out a delayed ACK, and the ceiling would measure that
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return c


def req(conn, method, path, body=None, ctype="application/x-ndjson"):
    conn.request(method, path, body=body, headers={"Content-Type": ctype})
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
admin = connect()
req(admin, "DELETE", f"/{index}")
if create:
    st, data = req(admin, "PUT", f"/{index}", create.encode(), "application/json")
    if st != 200:
        sys.exit(f"creating {index} failed: {st} {data[:300]}")
lock = threading.Lock()
next_body = 0
failed = []


def sender():
    global next_body
    conn = connect()
    while True:
        with lock:
            if next_body == len(bodies) or failed:
                return
            b = bodies[next_body]
            next_body += 1
        # the same response filter the writer asks for
        st, data = req(conn, "POST", "/_bulk?filter_path=errors,items.*.error,items.*.status", b)
        if st != 200 or json.loads(data).get("errors"):
            failed.append((st, data[:300]))
            return


threads = [threading.Thread(target=sender) for _ in range(conns)]
t0 = time.monotonic()
for t in threads:
    t.start()
for t in threads:
    t.join()
dt = time.monotonic() - t0
if failed:
    print("bulk failed", *failed[0], file=sys.stderr)
    sys.exit(1)
req(admin, "DELETE", f"/{index}")
print(f"{len(lines) / dt:.0f}")
