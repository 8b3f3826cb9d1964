#!/usr/bin/env python3
"""qdrant-contract.py PORT - a contract test server for the Qdrant target:
it behaves as Qdrant's REST API reference (api.qdrant.tech, v1.12.x) says,
on loopback, for the parts pg2osync uses. No Qdrant server can be had
where these tests run, so every Qdrant test runs against this one; it
holds no vector index: it keeps collections and points in memory, checks
what it is sent as the reference describes, and holds a fault on demand.

What the reference says, and this server does:
  - Every answer is JSON: {"result": ..., "status": "ok", "time": s} on
    success, {"status": {"error": "<message>"}, "time": s} on failure
    (400 "Wrong input: ...", 404 "Not found: ...", 409 for a collection
    that exists, 422 for a body that is not what the route takes).
  - GET / {"title": "qdrant - vector search engine", "version", "commit"}
    (bare, not under "result"); GET /healthz (text).
  - PUT /collections/{name} with a CreateCollection body: "vectors"
    optional, one unnamed vector {"size", "distance"} or named ones
    {"<name>": {"size", "distance"}}, distance Cosine, Euclid, Dot or
    Manhattan; other members kept. 409 when the collection exists.
  - GET /collections/{name} {"status", "points_count", "config":
    {"params": {"vectors": ...}}} (404 when missing); GET
    /collections/{name}/exists {"exists"}; GET /collections; DELETE
    /collections/{name} (result true, false when there was none).
  - PUT /collections/{name}/points {"points": [...]} upserts; POST
    /collections/{name}/points/delete {"points": [ids]} or {"filter": ..};
    POST /collections/{name}/points/batch {"operations": [{"upsert":
    {"points"}}, {"delete": {"points"|"filter"}}, ...]} applies them one
    after the other and stops at the first that fails, leaving the ones
    before it applied (not atomic); each answers {"operation_id",
    "status": "completed"} once applied when ?wait=true, else
    "acknowledged".
  - A point: "id" an unsigned integer or a UUID string (400 otherwise);
    "vector" named vectors (an object) whose names the collection
    configures and whose lengths are their sizes (400 "Wrong input:
    Vector dimension error: expected dim: N, got M", "Wrong input: Not
    existing vector name error: x"); a collection with one unnamed vector
    takes a bare array; "payload" an object. An upsert replaces the point
    whole. Missing named vectors are allowed.
  - A filter: {} matches every point; {"must": [{"key", "match":
    {"value"}}]} those whose payload member equals the value.
  - GET /collections/{name}/points/{id} (404 "Not found: Point with id
    {id} does not exists!"); POST /collections/{name}/points {"ids",
    "with_payload", "with_vector"}; POST .../points/scroll {"limit",
    "offset", "with_payload", "with_vector"} {"points",
    "next_page_offset"} in id order; POST .../points/count {"count"}.
  - With an API key (the environment's QDRANT_API_KEY, so it is on no
    argv), every route but / and /healthz needs "api-key: <key>" or
    "Authorization: Bearer <key>": 401 otherwise (403 for a wrong one).

For the tests only, under /_contract (no Qdrant route starts so):
  POST /_contract/fault {"status": 503, "count": N, "path": "points"}
        the next N requests whose path holds that text answer the status
        (an error body of Qdrant's shape), none of them applied
  POST /_contract/fault {"delay_ms": D, "count": N, "path": ..}
        the next N such requests are applied D ms late (a slow write)
  GET  /_contract/stats {"requests", "writes", "writes_without_wait",
        "faults_left", "paths": {"METHOD /route": count}}
  GET  /_contract/dump?collection=NAME   every point as stored, id order
"""
import http.server
import json
import os
import re
import socketserver
import sys
import threading
import time
import urllib.parse
import uuid

PORT = int(sys.argv[1])
API_KEY = os.environ.get("QDRANT_API_KEY") or None
VERSION = "1.12.4"

lock = threading.Lock()
collections = {}	# name -> {"config": body, "points": {id: point}}
faults = []		# {"status"|"delay_ms", "count", "path"}
stats = {"requests": 0, "writes": 0, "writes_without_wait": 0, "paths": {}}
op_id = [0]
DISTANCES = ("Cosine", "Euclid", "Dot", "Manhattan")


class Refusal(Exception):
    def __init__(self, status, message):
        Exception.__init__(self, message)
        self.status = status
        self.message = message


def vectors_config(body):
    """the vectors of a CreateCollection body: None (unnamed one: its
    size), or {name: size}"""
    v = body.get("vectors", {})
    if not isinstance(v, dict):
        raise Refusal(422, "Json deserialize error: vectors must be an object")
    if "size" in v or "distance" in v:
        check_params("", v)
        return {"": v["size"]}
    out = {}
    for name, p in v.items():
        check_params(name, p)
        out[name] = p["size"]
    return out


def check_params(name, p):
    if not isinstance(p, dict) or not isinstance(p.get("size"), int) \
            or isinstance(p.get("size"), bool) or p["size"] < 1 \
            or p.get("distance") not in DISTANCES:
        raise Refusal(422, "Json deserialize error: vector params %r need a "
                      "positive size and a distance of %s" % (name, DISTANCES))


def point_id(v):
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return v
    if isinstance(v, str):
        try:
            return str(uuid.UUID(v))
        except ValueError:
            pass
    raise Refusal(400, "Wrong input: Unable to parse point id %s: an "
                  "unsigned integer or a UUID" % json.dumps(v))


def check_point(coll, p):
    if not isinstance(p, dict) or "id" not in p:
        raise Refusal(422, "Json deserialize error: a point needs an id")
    pid = point_id(p["id"])
    sizes = coll["vectors"]
    vec = p.get("vector", {})
    if isinstance(vec, list):
        if "" not in sizes:
            raise Refusal(400, "Wrong input: Not existing vector name error: ")
        vec = {"": vec}
    if not isinstance(vec, dict):
        raise Refusal(422, "Json deserialize error: vector must be an "
                      "object of named vectors")
    for name, v in vec.items():
        if name not in sizes:
            raise Refusal(400, "Wrong input: Not existing vector name "
                          "error: %s" % name)
        if not isinstance(v, list) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool)
                for x in v):
            raise Refusal(422, "Json deserialize error: vector %s is not "
                          "a list of numbers" % name)
        if len(v) != sizes[name]:
            raise Refusal(400, "Wrong input: Vector dimension error: "
                          "expected dim: %d, got %d" % (sizes[name], len(v)))
    payload = p.get("payload") or {}
    if not isinstance(payload, dict):
        raise Refusal(422, "Json deserialize error: payload must be an "
                      "object")
    vec = {k: [float(x) for x in v] for k, v in vec.items()}
    return pid, {"id": pid, "vector": vec, "payload": payload}


def matches(filt, point):
    if filt is None or not isinstance(filt, dict):
        raise Refusal(422, "Json deserialize error: filter must be an object")
    for cond in filt.get("must", []) or []:
        key, m = cond.get("key"), cond.get("match", {})
        if key is None or "value" not in m:
            raise Refusal(400, "Wrong input: only key/match.value "
                          "conditions are known to this contract server")
        if point["payload"].get(key) != m["value"]:
            return False
    return True


def get_coll(name):
    c = collections.get(name)
    if c is None:
        raise Refusal(404, "Not found: Collection `%s` doesn't exist!" % name)
    return c


def upsert(coll, points):
    """the points checked first, then stored: an upsert is whole or none"""
    if not isinstance(points, list):
        raise Refusal(422, "Json deserialize error: points must be a list")
    checked = [check_point(coll, p) for p in points]
    for pid, p in checked:
        coll["points"][pid] = p


def delete(coll, sel):
    if "points" in sel:
        ids = [point_id(i) for i in sel["points"]]
        for i in ids:
            coll["points"].pop(i, None)
    elif "filter" in sel:
        f = sel["filter"]
        for pid in [k for k, p in coll["points"].items() if matches(f, p)]:
            del coll["points"][pid]
    else:
        raise Refusal(422, "Json deserialize error: points or filter")


def update_result(wait):
    op_id[0] += 1
    return {"operation_id": op_id[0],
            "status": "completed" if wait else "acknowledged"}


def public_point(p, with_payload=True, with_vector=False):
    out = {"id": p["id"]}
    out["payload"] = p["payload"] if with_payload else None
    if with_vector:
        v = p["vector"]
        out["vector"] = v[""] if list(v) == [""] else v
    else:
        out["vector"] = None
    return out


def sort_key(pid):
    return (0, pid, "") if isinstance(pid, int) else (1, 0, pid)


def route_name(method, path):
    path = re.sub(r"^/collections/[^/]+", "/collections/{c}", path)
    path = re.sub(r"/points/[0-9a-f-]{36}$", "/points/{id}", path)
    return method + " " + path


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("qdrant-contract: " + fmt % args + "\n")

    def send(self, status, obj, started, bare=False):
        if status < 300 and not bare:
            obj = {"result": obj, "status": "ok",
                   "time": time.time() - started}
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def fail(self, status, message, started):
        self.send(status, {"status": {"error": message},
                           "time": time.time() - started}, started)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError as e:
            raise Refusal(400, "Format error in JSON body: %s" % e)

    def authorized(self):
        if API_KEY is None:
            return 0
        got = self.headers.get("api-key")
        auth = self.headers.get("Authorization") or ""
        if auth.startswith("Bearer "):
            got = auth[7:]
        if got is None:
            return 401
        return 0 if got == API_KEY else 403

    def handle_one(self, method):
        started = time.time()
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        try:
            body = self.body()
        except Refusal as r:
            return self.fail(r.status, r.message, started)
        if path.startswith("/_contract/"):
            return self.contract(method, path, query, body, started)
        if path in ("/", "/healthz"):
            if path == "/healthz":
                msg = b"healthz check passed"
                self.send_response(200)
                self.send_header("Content-Length", str(len(msg)))
                self.end_headers()
                return self.wfile.write(msg)
            return self.send(200, {"title": "qdrant - vector search engine",
                                   "version": VERSION,
                                   "commit": "contract-server"}, started,
                             bare=True)
        denied = self.authorized()
        if denied:
            return self.fail(denied, "Must provide an API key or an "
                             "Authorization bearer token" if denied == 401
                             else "Invalid API key or JWT", started)
        delay, fault = 0, None
        with lock:
            stats["requests"] += 1
            rn = route_name(method, path)
            stats["paths"][rn] = stats["paths"].get(rn, 0) + 1
            for f in faults:
                if f["count"] > 0 and f.get("path", "") in path:
                    f["count"] -= 1
                    if "status" in f:
                        fault = f["status"]
                    else:
                        delay = f.get("delay_ms", 0)
                    break
            faults[:] = [f for f in faults if f["count"] > 0]
        if fault is not None:
            return self.fail(fault, "Service internal error: fault held by "
                             "the contract server", started)
        if delay:
            time.sleep(delay / 1000.0)
        wait = query.get("wait", ["false"])[0] == "true"
        try:
            with lock:
                status, result = self.route(method, path, body, wait)
        except Refusal as r:
            return self.fail(r.status, r.message, started)
        return self.send(status, result, started)

    def route(self, method, path, body, wait):
        if path == "/collections" and method == "GET":
            return 200, {"collections": [{"name": n} for n in
                                         sorted(collections)]}
        m = re.match(r"^/collections/([^/]+)(/.*)?$", path)
        if not m:
            raise Refusal(404, "Not found: %s" % path)
        name, rest = urllib.parse.unquote(m.group(1)), m.group(2) or ""
        if rest == "":
            if method == "PUT":
                if name in collections:
                    raise Refusal(409, "Wrong input: Collection `%s` "
                                  "already exists!" % name)
                if not isinstance(body, dict):
                    raise Refusal(422, "Json deserialize error: a "
                                  "CreateCollection object")
                collections[name] = {"config": body,
                                     "vectors": vectors_config(body),
                                     "points": {}}
                return 200, True
            if method == "GET":
                c = get_coll(name)
                return 200, {"status": "green",
                             "points_count": len(c["points"]),
                             "config": {"params": {"vectors":
                                        c["config"].get("vectors", {})}}}
            if method == "DELETE":
                return 200, collections.pop(name, None) is not None
        if rest == "/exists" and method == "GET":
            return 200, {"exists": name in collections}
        c = get_coll(name)
        writes = {("PUT", "/points"), ("POST", "/points/delete"),
                  ("POST", "/points/batch")}
        if (method, rest) in writes:
            stats["writes"] += 1
            if not wait:
                stats["writes_without_wait"] += 1
        if method == "PUT" and rest == "/points":
            upsert(c, body.get("points"))
            return 200, update_result(wait)
        if method == "POST" and rest == "/points/delete":
            delete(c, body)
            return 200, update_result(wait)
        if method == "POST" and rest == "/points/batch":
            ops = body.get("operations")
            if not isinstance(ops, list):
                raise Refusal(422, "Json deserialize error: operations "
                              "must be a list")
            out = []
            # one after the other; a failure leaves those before applied
            for op in ops:
                if "upsert" in op:
                    upsert(c, op["upsert"].get("points"))
                elif "delete" in op:
                    delete(c, op["delete"])
                else:
                    raise Refusal(422, "Json deserialize error: unknown "
                                  "operation %s" % list(op))
                out.append(update_result(wait))
            return 200, out
        if method == "POST" and rest == "/points/count":
            f = body.get("filter")
            n = sum(1 for p in c["points"].values()
                    if f is None or matches(f, p))
            return 200, {"count": n}
        if method == "POST" and rest == "/points":
            ids = [point_id(i) for i in body.get("ids", [])]
            return 200, [public_point(c["points"][i],
                                      body.get("with_payload", True),
                                      body.get("with_vector", False))
                         for i in ids if i in c["points"]]
        if method == "POST" and rest == "/points/scroll":
            limit = body.get("limit", 10)
            ids = sorted(c["points"], key=sort_key)
            off = body.get("offset")
            if off is not None:
                off = point_id(off)
                ids = [i for i in ids if sort_key(i) >= sort_key(off)]
            page = ids[:limit]
            return 200, {"points": [public_point(c["points"][i],
                                                 body.get("with_payload",
                                                          True),
                                                 body.get("with_vector",
                                                          False))
                                    for i in page],
                         "next_page_offset": ids[limit] if len(ids) > limit
                         else None}
        m = re.match(r"^/points/([^/]+)$", rest)
        if m and method == "GET":
            pid = point_id(int(m.group(1)) if m.group(1).isdigit()
                           else m.group(1))
            if pid not in c["points"]:
                raise Refusal(404, "Not found: Point with id %s does not "
                              "exists!" % pid)
            return 200, public_point(c["points"][pid], True, True)
        raise Refusal(404, "Not found: %s %s" % (method, path))

    def contract(self, method, path, query, body, started):
        if path == "/_contract/fault" and method == "POST":
            f = dict(body)
            f.setdefault("count", 1)
            with lock:
                faults.append(f)
            return self.send(200, True, started)
        if path == "/_contract/stats" and method == "GET":
            with lock:
                out = dict(stats)
                out["paths"] = dict(stats["paths"])
                out["faults_left"] = sum(f["count"] for f in faults)
            return self.send(200, out, started)
        if path == "/_contract/dump" and method == "GET":
            name = query.get("collection", [""])[0]
            with lock:
                c = collections.get(name)
                pts = [] if c is None else [
                    public_point(c["points"][i], True, True)
                    for i in sorted(c["points"], key=sort_key)]
            return self.send(200, pts, started)
        return self.fail(404, "Not found: %s" % path, started)

    def do_GET(self):
        self.handle_one("GET")

    def do_POST(self):
        self.handle_one("POST")

    def do_PUT(self):
        self.handle_one("PUT")

    def do_DELETE(self):
        self.handle_one("DELETE")

    def do_PATCH(self):
        self.handle_one("PATCH")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


Server(("127.0.0.1", PORT), Handler).serve_forever()
