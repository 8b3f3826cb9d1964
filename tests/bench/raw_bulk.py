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

# the same response filter the writer asks for
BULK = "/_bulk?filter_path=errors,items.*.error,items.*.status"


def connect(u):
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


def bulk_lines(path, index, limit=None):
    """the bulk entries (action and document) of the index operations of
    an ops frames file, at most limit of them"""
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
            if limit is not None and len(lines) == limit:
                break
    return lines


def bodies_of(lines, batch):
    return ["".join(lines[i:i + batch]).encode() for i in range(0, len(lines), batch)]


class Senders:
    """bodies sent over conns keep-alive connections, each sending its next
    body as soon as its last one is answered: conns requests open at once.
    last is the monotonic time of the last answer; failed, the first
    refusal"""

    def __init__(self, url, bodies, conns):
        self.u = urllib.parse.urlparse(url)
        self.bodies, self.next, self.last = bodies, 0, 0.0
        self.lock, self.failed = threading.Lock(), []
        self.threads = [threading.Thread(target=self.sender) for _ in range(conns)]
        for t in self.threads:
            t.start()

    def sender(self):
        conn = connect(self.u)
        while True:
            with self.lock:
                if self.next == len(self.bodies) or self.failed:
                    return
                b = self.bodies[self.next]
                self.next += 1
            st, data = req(conn, "POST", BULK, b)
            if st != 200 or json.loads(data).get("errors"):
                self.failed.append((st, data[:300]))
                return
            with self.lock:
                self.last = max(self.last, time.monotonic())

    def join(self):
        for t in self.threads:
            t.join()


def main():
    url, index, path, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    conns = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    create = sys.argv[6] if len(sys.argv) > 6 else None
    lines = bulk_lines(path, index)
    bodies = bodies_of(lines, batch)
    admin = connect(urllib.parse.urlparse(url))
    req(admin, "DELETE", f"/{index}")
    if create:
        st, data = req(admin, "PUT", f"/{index}", create.encode(), "application/json")
        if st != 200:
            sys.exit(f"creating {index} failed: {st} {data[:300]}")
    t0 = time.monotonic()
    s = Senders(url, bodies, conns)
    s.join()
    dt = time.monotonic() - t0
    if s.failed:
        print("bulk failed", *s.failed[0], file=sys.stderr)
        sys.exit(1)
    req(admin, "DELETE", f"/{index}")
    print(f"{len(lines) / dt:.0f}")


if __name__ == "__main__":
    main()
