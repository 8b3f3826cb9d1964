#!/usr/bin/env python3
"""faultproxy.py LISTEN_PORT TARGET_URL PLAN [ACCEPTED] - an HTTP proxy in
front of a real OpenSearch node that injects the faults a healthy node will
not produce on demand. Every request is forwarded unchanged, except that the
Nth _bulk request (counting from 1) gets the fault the plan names for it.
A _bulk whose every item goes to a hidden index (a name starting with a
dot: the checkpoint's load progress in .pg2osync_meta) is not counted, so
N numbers the writer's data requests whatever the checkpoint stores
beside them; a sticky fault below still hits it.

  PLAN = comma list of N:FAULT, FAULT one of
    429     answer 429 without forwarding (node overloaded)
    503     answer 503 without forwarding
    reset   close the connection without answering
    item429 forward, then mark the first item of the response 429
            (the document was written; a retry must be harmless)
    slow    forward after 1.5 s, so requests sent after it finish first

A fault that lasts: GET /_faultproxy?mode=M&delay_ms=D (answered by the
proxy itself, never forwarded) makes every later _bulk request get fault M
until the mode is set again (mode=none); M is 429, 503, reset, or disk: a
200 whose every item is refused 429 with the cluster block a node puts on
its indices past the disk's flood-stage watermark. delay_ms holds every
forwarded request that long first (a slow target). Sticky faults log a
line when set and count each request they hit (GET /_faultproxy answers
{"mode", "delay_ms", "hits", "hold_ms", "held"}). hold_ms=H holds every
PUT of a document of a hidden index (a checkpoint: PUT
/.pg2osync_meta/_doc/...) H ms, then answers it 500
node_not_connected_exception unforwarded, as a node of a cluster answers a
write it could not hand to the shard's primary once the write's timeout
is over (hold_ms=0 ends it); held counts those requests.

It logs one line per injected fault on stderr, for the test to count, and
one each time more _bulk requests than ever before are open at once. With
ACCEPTED, every _bulk answer that reaches the client first appends a line
there: the CLOCK_MONOTONIC time and a JSON list of [action, index, id,
version] for each item the answer says is written (2xx, a 409 version
conflict, a delete of a missing document), so a test can tell when each
operation was known to be in the node."""
import http.client
import http.server
import json
import socketserver
import sys
import threading
import time
import urllib.parse

port, target, plan = int(sys.argv[1]), sys.argv[2], sys.argv[3]
accepted = open(sys.argv[4], "a") if len(sys.argv) > 4 else None
accepted_lock = threading.Lock()
faults = {}
for part in filter(None, plan.split(",")):
    n, f = part.split(":")
    faults[int(n)] = f
t = urllib.parse.urlparse(target)
bulk_seen = 0
log_lock = threading.Lock()
sticky = {"mode": "none", "delay_ms": 0, "hits": 0, "hold_ms": 0, "held": 0}
FLOOD = ("index [{}] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage "
         "watermark, index has read-only-allow-delete block];")


def log(line):
    # one write per line: print() writes the newline apart, and two
    # threads' lines would share one
    with log_lock:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


bulk_open = 0
bulk_open_max = 0
bulk_lock = threading.Lock()


def bulk_actions(body):
    """[action, index, id, version] of each entry of a bulk body"""
    out = []
    lines = iter((body or b"").split(b"\n"))
    for line in lines:
        if not line.strip():
            continue
        action, meta = next(iter(json.loads(line).items()))
        out.append([action, meta.get("_index"), meta.get("_id"), meta.get("version")])
        if action in ("index", "create", "update"):
            next(lines, None)
    return out


def hidden_only(path, body):
    """every item of this bulk goes to an index whose name starts with '.'"""
    parts = path.split("?")[0].strip("/").split("/")
    default = parts[0] if len(parts) > 1 else None
    try:
        names = [index or default for _a, index, _i, _v in bulk_actions(body)]
    except ValueError:
        return False
    return bool(names) and all(n and n.startswith(".") for n in names)


def log_accepted(body, data):
    try:
        items = json.loads(data).get("items") or []
    except ValueError:
        return
    done = []
    for entry, item in zip(bulk_actions(body), items):
        action, res = next(iter(item.items()))
        st = res.get("status", 0)
        if 200 <= st < 300 or st == 409 or (st == 404 and action == "delete"):
            done.append(entry)
    with accepted_lock:
        accepted.write(f"{time.monotonic():.6f} {json.dumps(done)}\n")
        accepted.flush()


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def forward(self, body):
        c = http.client.HTTPConnection(t.hostname, t.port, timeout=120)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "content-length", "connection")}
        c.request(self.command, self.path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, r.getheader("Content-Type", "application/json"), data

    def reply(self, status, ctype, data):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def control(self):
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        with bulk_lock:
            if "mode" in q:
                sticky["mode"] = q["mode"][0]
                sticky["hits"] = 0
            if "delay_ms" in q:
                sticky["delay_ms"] = int(q["delay_ms"][0])
            if "hold_ms" in q:
                sticky["hold_ms"] = int(q["hold_ms"][0])
                sticky["held"] = 0
            state = dict(sticky)
        if q:
            log(f"faultproxy: mode {state['mode']}, delay {state['delay_ms']} ms, "
                f"hold {state['hold_ms']} ms")
        self.reply(200, "application/json", json.dumps(state).encode())

    def handle_any(self):
        global bulk_seen, bulk_open, bulk_open_max
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        if self.path.startswith("/_faultproxy"):
            return self.control()
        if self.command == "PUT" and self.path.startswith("/.") and "/_doc/" in self.path \
                and sticky["hold_ms"]:
            return self.hold()
        if not self.path.split("?")[0].endswith("/_bulk"):
            return self.handle_request(body, None)
        if hidden_only(self.path, body):
            return self.handle_request(body, 0)
        with bulk_lock:
            bulk_seen += 1
            n = bulk_seen
            bulk_open += 1
            if bulk_open > bulk_open_max:
                bulk_open_max = bulk_open
                log(f"faultproxy: {bulk_open} bulk requests open at once")
        try:
            self.handle_request(body, n)
        finally:
            with bulk_lock:
                bulk_open -= 1

    def hold(self):
        with bulk_lock:
            sticky["held"] += 1
            ms = sticky["hold_ms"]
        log(f"faultproxy: holding {self.command} {self.path.split('?')[0]} {ms} ms")
        time.sleep(ms / 1000.0)
        node = f"127.0.0.1:{port}"
        err = {"error": {"type": "node_not_connected_exception",
                         "reason": f"[lost][{node}] Node not connected"}, "status": 500}
        try:
            self.reply(500, "application/json", json.dumps(err).encode())
        except OSError:
            pass    # the client gave up on it meanwhile

    def handle_request(self, body, n):
        is_bulk = n is not None
        fault = faults.get(n) if is_bulk else None
        if fault:
            log(f"faultproxy: bulk {n}: {fault}")
        elif is_bulk and sticky["mode"] != "none":
            with bulk_lock:
                fault = sticky["mode"]
                sticky["hits"] += 1
        if sticky["delay_ms"]:
            time.sleep(sticky["delay_ms"] / 1000.0)
        if fault == "disk":
            items = []
            for action, index, _id, _v in bulk_actions(body):
                items.append({action: {"_index": index, "_id": _id, "status": 429, "error": {
                    "type": "cluster_block_exception", "reason": FLOOD.format(index)}}})
            return self.reply(200, "application/json",
                              json.dumps({"took": 1, "errors": True, "items": items}).encode())
        if fault in ("429", "503"):
            err = {"error": {"type": "es_rejected_execution_exception" if fault == "429"
                             else "unavailable", "reason": "injected"}, "status": int(fault)}
            return self.reply(int(fault), "application/json", json.dumps(err).encode())
        if fault == "reset":
            self.close_connection = True
            self.connection.close()
            return
        if fault == "slow":
            time.sleep(1.5)
        status, ctype, data = self.forward(body)
        if fault == "item429" and status == 200:
            doc = json.loads(data)
            items = doc.get("items") or []
            if items:
                action = next(iter(items[0]))
                items[0][action]["status"] = 429
                items[0][action]["error"] = {"type": "es_rejected_execution_exception",
                                             "reason": "injected"}
                doc["errors"] = True
                data = json.dumps(doc).encode()
        if is_bulk and accepted and status == 200:
            log_accepted(body, data)
        self.reply(status, ctype, data)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


Server(("127.0.0.1", port), Proxy).serve_forever()
