#!/usr/bin/env python3
"""faultproxy.py LISTEN_PORT TARGET_URL PLAN - an HTTP proxy in front of a
real OpenSearch node that injects the faults a healthy node will not produce
on demand. Every request is forwarded unchanged, except that the Nth _bulk
request (counting from 1) gets the fault the plan names for it:

  PLAN = comma list of N:FAULT, FAULT one of
    429     answer 429 without forwarding (node overloaded)
    503     answer 503 without forwarding
    reset   close the connection without answering
    item429 forward, then mark the first item of the response 429
            (the document was written; a retry must be harmless)

It logs one line per injected fault on stderr, for the test to count."""
import http.client
import http.server
import json
import socketserver
import sys
import urllib.parse

port, target, plan = int(sys.argv[1]), sys.argv[2], sys.argv[3]
faults = {}
for part in filter(None, plan.split(",")):
    n, f = part.split(":")
    faults[int(n)] = f
t = urllib.parse.urlparse(target)
bulk_seen = 0


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

    def handle_any(self):
        global bulk_seen
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        fault = None
        if self.path.split("?")[0].endswith("/_bulk"):
            bulk_seen += 1
            fault = faults.get(bulk_seen)
        if fault:
            print(f"faultproxy: bulk {bulk_seen}: {fault}", file=sys.stderr, flush=True)
        if fault in ("429", "503"):
            err = {"error": {"type": "es_rejected_execution_exception" if fault == "429"
                             else "unavailable", "reason": "injected"}, "status": int(fault)}
            return self.reply(int(fault), "application/json", json.dumps(err).encode())
        if fault == "reset":
            self.close_connection = True
            self.connection.close()
            return
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
        self.reply(status, ctype, data)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


Server(("127.0.0.1", port), Proxy).serve_forever()
