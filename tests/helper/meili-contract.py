#!/usr/bin/env python3
"""meili-contract.py PORT [DELAY_MS] - a contract test server for the
Meilisearch target: it behaves as Meilisearch 1.x's documented HTTP API
says, on loopback, for the parts pg2osync uses, and where a real server
(tests/servers/meilisearch.sh, 1.50.0) was seen to answer otherwise, as
that server does. It holds no search engine: it keeps documents in memory.
The tests run against the real server; this one is for what a real server
cannot do on demand (a task held enqueued or processing: /_contract).

What the documentation says, and this server does:
  - Every write is an asynchronous task: the request is answered 202 with a
    summarized task {"taskUid", "indexUid", "status": "enqueued", "type",
    "enqueuedAt"}; tasks are processed one at a time in the order they were
    enqueued; GET /tasks/{uid} shows "enqueued", then "processing", then
    "succeeded" or "failed", a failed task carrying "error": {"message",
    "code", "type", "link"}. A task is processed DELAY_MS (default 30) after
    it is started.
  - GET /tasks?statuses=&types=&indexUids=&uids=&limit= lists tasks, newest
    first, with "total" the count of all that match and "limit" (default
    20) of them in "results".
  - GET /health {"status": "available"}; GET /version {"pkgVersion", ...}.
  - POST /indexes {"uid", "primaryKey"} (task indexCreation; fails with
    index_already_exists); GET /indexes/{uid} (404 index_not_found).
  - POST /indexes/{uid}/documents[?primaryKey=] adds or replaces documents
    (task documentAdditionOrUpdate; creates the index when missing; a
    document without its primary key fails the task with
    missing_document_id, an id not made of a-z A-Z 0-9 - _ (or longer than
    511 bytes) with invalid_document_id naming the document); PUT updates
    (merges) instead.
  - POST /indexes/{uid}/documents/delete-batch [ids] and DELETE
    /indexes/{uid}/documents (task documentDeletion; the task fails with
    index_not_found when there is no index, as a real server's does).
  - A document naming its primary key twice is written under the last
    value (the real server takes the last member of a name).
  - GET /indexes/{uid}/documents/{id} (404 document_not_found), GET
    /indexes/{uid}/documents?offset=&limit= and POST
    /indexes/{uid}/documents/fetch {"offset", "limit"}: {"results",
    "offset", "limit", "total"} (404 index_not_found).
  - POST /swap-indexes [{"indexes": [a, b]}, ...] (task indexSwap,
    indexUid null, details {"swaps": [...]}): every pair exchanges its
    documents and settings, atomically - all or none; in the task history
    every mention of one uid becomes the other, an earlier swap's details
    too (as a real server rewrites them). A missing index fails the
    task with index_not_found ("Index `x` not found.", "Indexes `x`, `y`
    not found." for several); an index named
    twice is answered 400 invalid_swap_duplicate_index_found at once.
  - DELETE /indexes/{uid} (task indexDeletion; index_not_found when there
    is none).
  - GET /indexes/{uid}/stats {"numberOfDocuments", "isIndexing",
    "fieldDistribution"} (404 index_not_found).
  - A body that is not JSON is answered 400 malformed_payload at once.
  - With a master key (the environment's MEILI_MASTER_KEY, so it is on no
    argv), every route but /health needs "Authorization: Bearer <key>":
    without the header 401 missing_authorization_header, with another key
    403 invalid_api_key (type auth).

For the tests only, under /_contract (no Meilisearch route starts so):
  POST /_contract/hold     no task is started until released: tasks stay
                           "enqueued" (one already started finishes)
  POST /_contract/hold?at=processing
                           a task is started but does not finish until
                           released: it stays "processing"
  POST /_contract/release  process again
  GET  /_contract/state    {"held", "enqueued", "processing", "succeeded",
                           "failed"} counts
"""
import datetime
import os
import http.server
import json
import re
import socketserver
import sys
import threading
import time
import urllib.parse

PORT = int(sys.argv[1])
DELAY = (int(sys.argv[2]) if len(sys.argv) > 2 else 30) / 1000.0
VERSION = "1.50.0"
MASTER_KEY = os.environ.get("MEILI_MASTER_KEY") or None
ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,511}$")
LINK = "https://docs.meilisearch.com/errors#"

lock = threading.Condition()
indexes = {}        # uid -> {"primaryKey", "docs": {id: doc}, "createdAt"}
tasks = []          # uid order
held = None         # None, "enqueued" or "processing"


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def error(code, message, typ="invalid_request"):
    return {"message": message, "code": code, "type": typ, "link": LINK + code}


def enqueue(index_uid, typ, work, details):
    """a task whose work(task) runs in the queue: returns None or an error"""
    with lock:
        t = {"uid": len(tasks), "indexUid": index_uid, "status": "enqueued",
             "type": typ, "canceledBy": None, "details": details,
             "error": None, "duration": None, "enqueuedAt": now(),
             "startedAt": None, "finishedAt": None, "_work": work}
        tasks.append(t)
        lock.notify_all()
        return {"taskUid": t["uid"], "indexUid": index_uid,
                "status": "enqueued", "type": typ,
                "enqueuedAt": t["enqueuedAt"]}


def public(t):
    return {k: v for k, v in t.items() if not k.startswith("_")}


def worker():
    nxt = 0
    while True:
        with lock:
            while nxt >= len(tasks) or held == "enqueued":
                lock.wait()
            t = tasks[nxt]
            t["status"] = "processing"
            t["startedAt"] = now()
        time.sleep(DELAY)
        with lock:
            while held == "processing":
                lock.wait()
            err = t["_work"](t)
            t["status"] = "failed" if err else "succeeded"
            t["error"] = err
            t["finishedAt"] = now()
            t["duration"] = "PT%.3fS" % DELAY
        nxt += 1


def doc_id_text(v):
    return json.dumps(v)


def add_work(uid, docs, pk_param, replace):
    def work(t):
        ix = indexes.get(uid)
        if ix is None:
            ix = indexes[uid] = {"primaryKey": pk_param, "docs": {},
                                 "createdAt": now()}
        if ix["primaryKey"] is None:
            ix["primaryKey"] = pk_param
        pk = ix["primaryKey"]
        if pk is None and docs and isinstance(docs[0], dict):
            # inferred: the one attribute of the first document whose
            # name ends with "id"
            cands = [k for k in docs[0] if k.lower().endswith("id")]
            if len(cands) > 1:
                return error("index_primary_key_multiple_candidates_found",
                             "The primary key inference failed as the engine "
                             "found %d fields ending with `id` in their names: "
                             "%s. Please specify the primary key manually "
                             "using the `primaryKey` query parameter."
                             % (len(cands), ", ".join(cands)))
            pk = ix["primaryKey"] = cands[0] if cands else None
        if pk is None:
            return error("index_primary_key_no_candidate_found",
                         "The primary key inference failed as the engine did "
                         "not find any field ending with `id` in its name. "
                         "Please specify the primary key manually using the "
                         "`primaryKey` query parameter.")
        if pk_param is not None and pk_param != pk:
            return error("index_primary_key_already_exists",
                         "Index already has a primary key: `%s`." % pk)
        staged = {}
        # the whole task fails, none of its documents is written
        for d in docs:
            if not isinstance(d, dict) or pk not in d:
                return error("missing_document_id",
                             "Document doesn't have a `%s` attribute: `%s`."
                             % (pk, json.dumps(d)))
            v = d[pk]
            if isinstance(v, bool) or not (
                    (isinstance(v, int)) or
                    (isinstance(v, str) and ID_RE.match(v))):
                return error("invalid_document_id",
                             "Document identifier `%s` is invalid. A document "
                             "identifier can be of type integer or string, "
                             "only composed of alphanumeric characters "
                             "(a-z A-Z 0-9), hyphens (-) and underscores (_), "
                             "and can not be more than 511 bytes."
                             % doc_id_text(v))
            key = str(v)
            if replace or key not in ix["docs"]:
                staged[key] = d
            else:
                merged = dict(staged.get(key, ix["docs"][key]))
                merged.update(d)
                staged[key] = merged
        ix["docs"].update(staged)
        t["details"]["indexedDocuments"] = len(docs)
        return None
    return work


def delete_work(uid, ids):
    def work(t):
        ix = indexes.get(uid)
        if ix is None:
            return error("index_not_found", "Index `%s` not found." % uid)
        n = 0
        for i in ids if ids is not None else list(ix["docs"]):
            if ix["docs"].pop(str(i), None) is not None:
                n += 1
        t["details"]["deletedDocuments"] = n
        return None
    return work


def create_work(uid, pk):
    def work(t):
        if uid in indexes:
            return error("index_already_exists",
                         "Index `%s` already exists." % uid)
        indexes[uid] = {"primaryKey": pk, "docs": {}, "createdAt": now()}
        return None
    return work


def swap_work(pairs):
    def work(t):
        missing = sorted({u for p in pairs for u in p if u not in indexes})
        if missing:
            return error("index_not_found", "%s %s not found." % (
                "Index" if len(missing) == 1 else "Indexes",
                ", ".join("`%s`" % u for u in missing)))
        other = {}
        for a, b in pairs:
            indexes[a], indexes[b] = indexes[b], indexes[a]
            other[a], other[b] = b, a
        # the whole history, as a real server rewrites it: each task's
        # index and the uids an earlier swap named (this one's too)
        for o in tasks:
            o["indexUid"] = other.get(o["indexUid"], o["indexUid"])
            for sw in (o["details"] or {}).get("swaps", []) \
                    if o["type"] == "indexSwap" and o is not t else []:
                sw["indexes"] = [other.get(u, u) for u in sw["indexes"]]
        return None
    return work


def drop_work(uid):
    def work(t):
        ix = indexes.pop(uid, None)
        if ix is None:
            return error("index_not_found", "Index `%s` not found." % uid)
        t["details"]["deletedDocuments"] = len(ix["docs"])
        return None
    return work


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw) if raw else None, None
        except ValueError as e:
            return None, error("malformed_payload",
                               "The json payload provided is malformed. `%s`."
                               % e)

    def route(self, method):
        global held
        u = urllib.parse.urlparse(self.path)
        parts = [urllib.parse.unquote(p) for p in u.path.split("/")[1:]]
        q = dict(urllib.parse.parse_qsl(u.query))
        body, bad = self.body() if method in ("POST", "PUT") else (None, None)
        if bad:
            return self.send(400, bad)
        if MASTER_KEY and parts[:1] != ["_contract"] and parts != ["health"]:
            auth = self.headers.get("Authorization")
            if auth is None:
                return self.send(401, error(
                    "missing_authorization_header", "The Authorization "
                    "header is missing. It must use the bearer "
                    "authorization method.", "auth"))
            if auth != "Bearer " + MASTER_KEY:
                return self.send(403, error(
                    "invalid_api_key", "The provided API key is invalid.",
                    "auth"))
        if parts[:1] == ["_contract"]:
            with lock:
                if parts[1:] == ["hold"]:
                    held = q.get("at", "enqueued")
                elif parts[1:] == ["release"]:
                    held = None
                    lock.notify_all()
                st = {"held": held}
                for s in ("enqueued", "processing", "succeeded", "failed"):
                    st[s] = sum(1 for t in tasks if t["status"] == s)
            return self.send(200, st)
        if method == "GET" and parts == ["health"]:
            return self.send(200, {"status": "available"})
        if method == "GET" and parts == ["version"]:
            return self.send(200, {"commitSha": "contract-server",
                                   "commitDate": "2024-01-01T00:00:00Z",
                                   "pkgVersion": VERSION})
        if method == "GET" and parts == ["tasks"]:
            def among(name):
                return set(filter(None, q.get(name, "").split(",")))
            statuses, types = among("statuses"), among("types")
            indexes_, uids = among("indexUids"), among("uids")
            limit = int(q.get("limit", 20))
            with lock:
                res = [public(t) for t in reversed(tasks)
                       if (not statuses or t["status"] in statuses) and
                       (not types or t["type"] in types) and
                       (not indexes_ or t["indexUid"] in indexes_) and
                       (not uids or str(t["uid"]) in uids)]
            page = res[:limit]
            return self.send(200, {"results": page, "total": len(res),
                                   "limit": limit,
                                   "from": page[0]["uid"] if page else None,
                                   "next": res[limit]["uid"]
                                   if len(res) > limit else None})
        if method == "GET" and len(parts) == 2 and parts[0] == "tasks":
            with lock:
                i = int(parts[1]) if parts[1].isdigit() else -1
                if 0 <= i < len(tasks):
                    return self.send(200, public(tasks[i]))
            return self.send(404, error("task_not_found",
                                        "Task `%s` not found." % parts[1]))
        if parts == ["indexes"] and method == "POST":
            if not isinstance(body, dict) or "uid" not in body:
                return self.send(400, error("missing_index_uid",
                                            "Missing field `uid`"))
            return self.send(202, enqueue(body["uid"], "indexCreation",
                                          create_work(body["uid"],
                                                      body.get("primaryKey")),
                                          {"primaryKey":
                                           body.get("primaryKey")}))
        if parts == ["swap-indexes"] and method == "POST":
            if not isinstance(body, list) or not all(
                    isinstance(p, dict) and isinstance(p.get("indexes"), list)
                    and len(p["indexes"]) == 2 for p in body):
                return self.send(400, error(
                    "invalid_swap_indexes", "Two indexes must be given "
                    "in each `indexes` array."))
            pairs = [tuple(p["indexes"]) for p in body]
            names = [u for p in pairs for u in p]
            dup = sorted({u for u in names if names.count(u) > 1})
            if dup:
                return self.send(400, error(
                    "invalid_swap_duplicate_index_found", "Indexes must "
                    "be declared only once during a swap. %s was specified "
                    "several times." % ", ".join("`%s`" % u for u in dup)))
            return self.send(202, enqueue(
                None, "indexSwap", swap_work(pairs),
                {"swaps": [{"indexes": list(p), "rename": False}
                           for p in pairs]}))
        if len(parts) >= 2 and parts[0] == "indexes":
            uid = parts[1]
            rest = parts[2:]
            if method == "DELETE" and rest == []:
                return self.send(202, enqueue(uid, "indexDeletion",
                                              drop_work(uid),
                                              {"deletedDocuments": None}))
            if method == "GET" and rest == ["stats"]:
                with lock:
                    ix = indexes.get(uid)
                    if ix:
                        fields = {}
                        for d in ix["docs"].values():
                            for k in d:
                                fields[k] = fields.get(k, 0) + 1
                        busy = any(t["indexUid"] == uid and t["status"] in
                                   ("enqueued", "processing") for t in tasks)
                        return self.send(200, {
                            "numberOfDocuments": len(ix["docs"]),
                            "isIndexing": busy,
                            "fieldDistribution": fields})
                return self.send(404, error("index_not_found",
                                            "Index `%s` not found." % uid))
            if method == "GET" and rest == []:
                with lock:
                    ix = indexes.get(uid)
                    if ix:
                        return self.send(200, {"uid": uid,
                                               "primaryKey": ix["primaryKey"],
                                               "createdAt": ix["createdAt"],
                                               "updatedAt": ix["createdAt"]})
                return self.send(404, error("index_not_found",
                                            "Index `%s` not found." % uid))
            if rest == ["documents"] and method in ("POST", "PUT"):
                docs = body if isinstance(body, list) else [body]
                return self.send(202, enqueue(
                    uid, "documentAdditionOrUpdate",
                    add_work(uid, docs, q.get("primaryKey"),
                             method == "POST"),
                    {"receivedDocuments": len(docs),
                     "indexedDocuments": None}))
            if rest == ["documents", "delete-batch"] and method == "POST":
                if not isinstance(body, list):
                    return self.send(400, error("bad_request",
                                                "expected an array of ids"))
                return self.send(202, enqueue(
                    uid, "documentDeletion", delete_work(uid, body),
                    {"providedIds": len(body), "deletedDocuments": None}))
            if rest == ["documents"] and method == "DELETE":
                return self.send(202, enqueue(
                    uid, "documentDeletion", delete_work(uid, None),
                    {"deletedDocuments": None}))
            if rest == ["documents", "fetch"] and method == "POST":
                body = body if isinstance(body, dict) else {}
                with lock:
                    ix = indexes.get(uid)
                    if ix is None:
                        return self.send(404, error(
                            "index_not_found", "Index `%s` not found." % uid))
                    docs = list(ix["docs"].values())
                off = int(body.get("offset", 0))
                lim = int(body.get("limit", 20))
                return self.send(200, {"results": docs[off:off + lim],
                                       "offset": off, "limit": lim,
                                       "total": len(docs)})
            if rest[:1] == ["documents"] and method == "GET":
                with lock:
                    ix = indexes.get(uid)
                    if ix is None:
                        return self.send(404, error(
                            "index_not_found", "Index `%s` not found." % uid))
                    if len(rest) == 2:
                        d = ix["docs"].get(rest[1])
                        if d is None:
                            return self.send(404, error(
                                "document_not_found",
                                "Document `%s` not found." % rest[1]))
                        return self.send(200, d)
                    docs = list(ix["docs"].values())
                off, lim = int(q.get("offset", 0)), int(q.get("limit", 20))
                return self.send(200, {"results": docs[off:off + lim],
                                       "offset": off, "limit": lim,
                                       "total": len(docs)})
        return self.send(404, error("not_found", "not found", "invalid_request"))

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("PUT")

    def do_DELETE(self):
        self.route("DELETE")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


threading.Thread(target=worker, daemon=True).start()
Server(("127.0.0.1", PORT), Handler).serve_forever()
