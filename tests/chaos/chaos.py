#!/usr/bin/env python3
"""chaos.py - trials of a continuous writer against the supervised pipeline
while processes and the database are killed at random moments; after each
trial the index must equal the table by content, every document.

  tests/chaos/chaos.py [--trials N] [--seed S] [--db pg|mariadb|both] [--tap]
                       [--keep DIR]

It runs under tests/servers/run-with.sh (`make chaos` starts the servers):
PGHOST/PGPORT/... for PostgreSQL, MYSQL_* for MariaDB, OS_URL for the
target, P2O_SERVERS_DIR for the servers' directories (a restart of the
database uses tests/servers/pg.sh and mariadb.sh), P2O_BIN for the build.

A trial, all of it decided by its seed:
  - a table filled with a random number of rows, so the pipeline starts
    with an initial load beside the stream; a random engine configuration
    (batch size, write concurrency, load workers);
  - a writer that never stops for the trial's length: inserts, upserts,
    updates of one row and of ranges, large values (TOAST on PostgreSQL)
    and updates that leave them alone, deletes of one row and of ranges,
    primary-key moves, transactions rolled back, truncates followed by a
    refill;
  - two to five faults at random moments, the first often inside the
    load: kill -9 of one stage (the capture, the loader, the shaper, the
    writer, ckpt), kill -9 of every process or of the supervisor alone
    (its stages drain at its death; then a restart), SIGTERM of
    the supervisor (it must drain and exit 0, then a restart), a restart
    of the database (a clean stop or a crash);
  - then the writer stops, and the index must come to equal the table.

Truncates land at any moment, during the initial load too
(504-truncate-during-load.t), and every 97th row of the fill, loaded or
written by a truncate's refill, holds a large (TOASTed) value the load
copies and the stream updates around (301-toast-replay.t).

Trial i of a run with seed S has seed S + i and runs on database
DBS[i % len(DBS)]; `--trials 1 --seed S+i --db THAT` repeats it (with
--short, a short run's trial): the same table, configuration, statements
and fault schedule (the interleaving of statements and faults is the
clock's). Each failure is printed with that command. The summary gives
the trials run, failures, how many were nested, and the mix of faults
and of statements.

One trial in two (by its seed) has nested documents (NestTable): the
table is the parent of an ordered array of items (projected, a column
renamed), a single profile (some parents have two: the lowest key
stands), a count of open tickets (a `where`) and tags through a
junction; its children are filled with it, a tenth naming no filled
parent. The writer's statements are then about half the parent's (all of
the above) and half the children's: items inserted, updated, moved to
another parent, deleted, one at a time and all of a parent's; profiles
upserted, updated, deleted; tickets inserted, updated in and out of the
`where`, moved, deleted; junction rows inserted and deleted, a tag
renamed; a parent deleted with its children; and transactions over many
children of one parent. A child's truncate is left out (it is not
applied to the parents, by design). Every parent document must equal
its rows grouped as tests/helper/nest-expect.py groups them.

Tables are described by a spec (ChaosTable: DDL, fill, statements, the
expected documents); NestTable is ChaosTable with its children.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests"))
import compare  # noqa: E402

BIN = os.environ.get("P2O_BIN") or os.path.join(TOP, "build", "bin")
OS_URL = os.environ.get("OS_URL", "")
SERVERS = os.environ.get("P2O_SERVERS_DIR", "")
STAGES = {"pg": ["capture-pg", "loader", "shaper", "writer", "ckpt"],
          "mariadb": ["capture-mysql", "loader", "shaper", "writer", "ckpt"]}
ID_SPACE = 30000


def sh(*argv, check=False, timeout=180, quiet=True):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])}...: exit {r.returncode}: "
                           f"{r.stdout.decode(errors='replace')[-400:]}")
    return r


def http(method, path, body=None):
    req = urllib.request.Request(OS_URL + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def doc_version(index, doc_id):
    """the external version a document holds, for a failure's report (it
    says which run and which path wrote it); None when it cannot be read"""
    try:
        with urllib.request.urlopen(f"{OS_URL}/{index}/_doc/{doc_id}", timeout=30) as r:
            return json.load(r).get("_version")
    except (OSError, ValueError):
        return None


def free_port():
    import socket
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


# ---------------------------------------------------------------- tables

class ChaosTable:
    """the one table of every trial: (id, v, note, pad); pad is mostly
    null or short, sometimes a value large enough to be stored out of
    line, which updates of the other columns leave unchanged"""
    name = "chaos"

    def __init__(self, db):
        self.db = db

    def ddl(self):
        if self.db.kind == "pg":
            return ("drop table if exists chaos; create table chaos "
                    "(id int primary key, v int not null, note text, pad text)")
        return ("DROP TABLE IF EXISTS chaos; CREATE TABLE chaos (id int PRIMARY KEY, "
                "v int NOT NULL, note varchar(40), pad mediumtext)")

    def big(self, r):
        """a large value that does not compress much: md5s of a seed"""
        if self.db.kind == "pg":
            return (f"(select string_agg(md5('{r}' || g), '') from generate_series(1, "
                    f"{r % 150 + 80}) g)")
        return f"REPEAT(MD5('{r}'), {r % 150 + 80})"

    def fill(self, n):
        """n rows; every 97th holds a large value (out of line on
        PostgreSQL), which the load copies"""
        if self.db.kind == "pg":
            big = "(select string_agg(md5(g::text || x), '') from generate_series(1, 90) x)"
            return (f"insert into chaos select g, 0, 'fill ' || g, case when g % 97 = 0 then "
                    f"{big} when g % 3 = 0 then 'short ' || g end from generate_series(1, {n}) g")
        return (f"INSERT INTO chaos SELECT seq, 0, "
                f"CONCAT('fill ', seq), CASE WHEN seq % 97 = 0 THEN REPEAT(MD5(seq), 90) "
                f"WHEN seq % 3 = 0 THEN CONCAT('short ', seq) END FROM seq_1_to_{n}")

    def render(self):
        if self.db.kind == "pg":
            return "json_build_object('id',id,'v',v,'note',note,'pad',pad)"
        return "JSON_OBJECT('id', id, 'v', v, 'note', note, 'pad', pad)"

    def expected(self):
        """the documents the index must hold, by id"""
        return {str(r["id"]): r for r in self.db.query_json(self.render(), self.name)}

    def statement(self, rng):
        """one statement, and the kind it is (for the tally)"""
        pg = self.db.kind == "pg"
        x = rng.randint(1, ID_SPACE)
        k = rng.randint(1, 40)
        note = f"'n{rng.randrange(10**9)}'"
        w = rng.random()
        if w < 0.25:
            pad = self.big(rng.randrange(10**6)) if rng.random() < 0.05 else "null"
            if pg:
                return "insert", (f"insert into chaos values ({x}, 0, {note}, {pad}) on conflict (id) "
                                  f"do update set v = chaos.v + 1, note = excluded.note")
            return "insert", (f"INSERT INTO chaos VALUES ({x}, 0, {note}, {pad}) "
                              f"ON DUPLICATE KEY UPDATE v = v + 1, note = VALUES(note)")
        if w < 0.45:
            return "update", f"update chaos set v = v + 1, note = {note} where id = {x}"
        if w < 0.55:
            return "update-range", f"update chaos set v = v + 1 where id between {x} and {x + k}"
        if w < 0.58:
            return "update-large", f"update chaos set pad = {self.big(rng.randrange(10**6))} where id = {x}"
        if w < 0.72:
            return "delete", f"delete from chaos where id = {x}"
        if w < 0.76:
            return "delete-range", f"delete from chaos where id between {x} and {x + k}"
        if w < 0.90:
            y = rng.randint(1, ID_SPACE)
            return "key-move", f"update chaos set id = {y} where id = {x}"
        if w < 0.95:
            if pg:
                return "insert-range", (f"insert into chaos select g, 1, 'r' || g, null from "
                                        f"generate_series({x}, {x + k * 5}) g on conflict do nothing")
            return "insert-range", (f"INSERT IGNORE INTO chaos SELECT seq, 1, CONCAT('r', seq), NULL "
                                    f"FROM seq_{x}_to_{x + k * 5}")
        return "noop-update", f"update chaos set v = v where id = {x}"


class NestTable(ChaosTable):
    """the chaos table as the parent of nested documents: its rows embed
    an ordered array of items (projected, one column renamed), a single
    profile (the lowest key when a parent has two), a count of its open
    tickets, and its tags through a junction. The parent's statements are
    ChaosTable's; the children's name parents mostly among the filled
    keys, some none (an orphan is embedded once its parent is inserted)"""
    CHILDREN = ["chaos_item", "chaos_prof", "chaos_tick", "chaos_ptag", "chaos_tag"]
    TAGS = 40

    def __init__(self, db, rows):
        super().__init__(db)
        self.rows = rows
        self.items = rows * 2 + rows // 5      # keys the statements pick among
        self.profs = rows + 200
        self.ticks = rows + rows // 5

    def ddl(self):
        drop = ", ".join(self.CHILDREN)
        if self.db.kind == "pg":
            return (super().ddl() + f"; drop table if exists {drop}; "
                    "create table chaos_item (id int primary key, parent_id int, v int not null, note text); "
                    "create index on chaos_item (parent_id); "
                    "create table chaos_prof (id int primary key, parent_id int, bio text); "
                    "create index on chaos_prof (parent_id); "
                    "create table chaos_tick (id int primary key, parent_id int, status text); "
                    "create index on chaos_tick (parent_id); "
                    "create table chaos_tag (id int primary key, label text); "
                    "create table chaos_ptag (parent_id int, tag_id int, primary key (parent_id, tag_id)); "
                    "create index on chaos_ptag (tag_id); "
                    # a delete or a move must name the parent it leaves
                    "alter table chaos_item replica identity full; "
                    "alter table chaos_prof replica identity full; "
                    "alter table chaos_tick replica identity full")
        return (super().ddl() + f"; DROP TABLE IF EXISTS {drop}; "
                "CREATE TABLE chaos_item (id int PRIMARY KEY, parent_id int, v int NOT NULL, "
                "note varchar(40), KEY (parent_id)); "
                "CREATE TABLE chaos_prof (id int PRIMARY KEY, parent_id int, bio varchar(40), KEY (parent_id)); "
                "CREATE TABLE chaos_tick (id int PRIMARY KEY, parent_id int, status varchar(10), KEY (parent_id)); "
                "CREATE TABLE chaos_tag (id int PRIMARY KEY, label varchar(40)); "
                "CREATE TABLE chaos_ptag (parent_id int, tag_id int, PRIMARY KEY (parent_id, tag_id), KEY (tag_id))")

    def fill_children(self):
        """two items a parent on average, a tenth of them naming no filled
        parent; a profile on every second parent, a second (higher key)
        one on 50; a ticket per parent, a third open; one or two tags"""
        n, t = self.rows, self.TAGS
        if self.db.kind == "pg":
            gs = "generate_series"
            return (f"insert into chaos_item select g, 1 + (g * 7919) % ({n} + {n} / 10), g % 100, 'i' || g "
                    f"from {gs}(1, {2 * n}) g; "
                    f"insert into chaos_prof select g, g, 'bio ' || g from {gs}(2, {n}, 2) g; "
                    f"insert into chaos_prof select {n} + g, 3 * g, 'second ' || g from {gs}(1, 50) g; "
                    f"insert into chaos_tick select g, 1 + (g * 31) % {n}, case when g % 3 = 0 then 'open' "
                    f"else 'closed' end from {gs}(1, {n}) g; "
                    f"insert into chaos_tag select g, 'tag' || g from {gs}(1, {t}) g; "
                    f"insert into chaos_ptag select g, 1 + g % {t} from {gs}(1, {n}) g; "
                    f"insert into chaos_ptag select g, 1 + (g * 7 + 3) % {t} from {gs}(2, {n}, 2) g "
                    f"on conflict do nothing")
        return (f"INSERT INTO chaos_item SELECT seq, 1 + (seq * 7919) % ({n} + {n} DIV 10), seq % 100, "
                f"CONCAT('i', seq) FROM seq_1_to_{2 * n}; "
                f"INSERT INTO chaos_prof SELECT seq, seq, CONCAT('bio ', seq) FROM seq_2_to_{n}_step_2; "
                f"INSERT INTO chaos_prof SELECT {n} + seq, 3 * seq, CONCAT('second ', seq) FROM seq_1_to_50; "
                f"INSERT INTO chaos_tick SELECT seq, 1 + (seq * 31) % {n}, IF(seq % 3 = 0, 'open', 'closed') "
                f"FROM seq_1_to_{n}; "
                f"INSERT INTO chaos_tag SELECT seq, CONCAT('tag', seq) FROM seq_1_to_{t}; "
                f"INSERT INTO chaos_ptag SELECT seq, 1 + seq % {t} FROM seq_1_to_{n}; "
                f"INSERT IGNORE INTO chaos_ptag SELECT seq, 1 + (seq * 7 + 3) % {t} FROM seq_2_to_{n}_step_2")

    def config(self, schema):
        q = (lambda t: f"{schema}.{t}")
        return [
            "    children:",
            f"      - {{table: {q('chaos_item')}, field: items, foreign_key: parent_id,",
            "         columns: [id, v, note], fields: {note: text}}",
            f"      - {{table: {q('chaos_prof')}, field: profile, foreign_key: parent_id, single: true,",
            "         exclude_columns: [parent_id]}",
            f"      - {{table: {q('chaos_tag')}, field: tags, through: {q('chaos_ptag')},",
            "         foreign_key: parent_id, through_key: tag_id}",
            "    aggregates:",
            f"      - {{field: open_tickets, table: {q('chaos_tick')}, foreign_key: parent_id, op: count,",
            "         where: \"status = 'open'\"}",
        ]

    def expected(self):
        """every parent as the pipeline documents it, from the rows: each
        collection's rows grouped by the parent they name and ordered by
        the child's key (tests/helper/nest-expect.py's rules)"""
        pg = self.db.kind == "pg"
        obj = (lambda *kv: ("json_build_object(" if pg else "JSON_OBJECT(") + ", ".join(kv) + ")")
        q = self.db.query_json
        want = super().expected()
        cols = [("items", "array", q(obj("'_fk'", "parent_id", "'_k'", "id", "'id'", "id", "'v'", "v",
                                         "'text'", "note"), "chaos_item")),
                ("profile", "single", q(obj("'_fk'", "parent_id", "'_k'", "id", "'id'", "id", "'bio'", "bio"),
                                        "chaos_prof")),
                ("tags", "array", q(obj("'_fk'", "j.parent_id", "'_k'", "g.id", "'id'", "g.id",
                                        "'label'", "g.label"),
                                    "chaos_tag g join chaos_ptag j on j.tag_id = g.id")),
                ("open_tickets", "count", q(obj("'_fk'", "parent_id"), "chaos_tick where status = 'open'"))]
        for field, kind, rows in cols:
            by = {}
            for r in rows:
                by.setdefault(str(r.pop("_fk")), []).append(r)
            for k, p in want.items():
                rs = sorted(by.get(k, []), key=lambda r: r.get("_k", 0))
                for r in rs:
                    r.pop("_k", None)
                if kind == "count":
                    p[field] = len(rs)
                elif kind == "single":
                    p[field] = rs[0] if rs else None
                else:
                    p[field] = rs
        return want

    def parent(self, rng):
        """mostly a filled parent, sometimes any key (one that may not exist)"""
        return rng.randint(1, self.rows) if rng.random() < 0.85 else rng.randint(1, ID_SPACE)

    def upsert(self, table, values, update):
        if self.db.kind == "pg":
            return f"insert into {table} values ({values}) on conflict (id) do update set {update}"
        return f"INSERT INTO {table} VALUES ({values}) ON DUPLICATE KEY UPDATE {update}"

    def many(self, x, lo, hi):
        if self.db.kind == "pg":
            return (f"insert into chaos_item select g, {x}, g % 100, 'm' || g from generate_series({lo}, {hi}) g "
                    f"on conflict do nothing")
        return (f"INSERT IGNORE INTO chaos_item SELECT seq, {x}, seq % 100, CONCAT('m', seq) "
                f"FROM seq_{lo}_to_{hi}")

    def delete_parent(self, x):
        return (f"delete from chaos_item where parent_id = {x}; delete from chaos_prof where parent_id = {x}; "
                f"delete from chaos_tick where parent_id = {x}; delete from chaos_ptag where parent_id = {x}; "
                f"delete from chaos where id = {x}")

    CHILD = [("item-insert", 12), ("item-update", 10), ("item-update-of-parent", 4), ("item-move", 8),
             ("item-delete", 7), ("item-insert-many", 3), ("item-delete-of-parent", 2),
             ("single-upsert", 4), ("single-update", 3), ("single-delete", 3),
             ("count-insert", 5), ("count-in", 4), ("count-out", 4), ("count-move", 3), ("count-delete", 3),
             ("junction-insert", 6), ("junction-delete", 6), ("tag-rename", 1), ("parent-delete-cascade", 3)]

    def statement(self, rng):
        if rng.random() < 0.45:
            return super().statement(rng)
        return self.child_statement(rng, pick(rng, self.CHILD), self.parent(rng))

    def child_statement(self, rng, kind, x):
        pg = self.db.kind == "pg"
        note = f"'c{rng.randrange(10**9)}'"
        i = rng.randint(1, self.items)
        y = self.parent(rng)
        tag = rng.randint(1, self.TAGS)
        if kind == "item-insert":
            return kind, self.upsert("chaos_item", f"{self.items + rng.randint(1, 10**6)}, {x}, 0, {note}",
                                     "v = 0, note = " + ("excluded.note" if pg else "VALUES(note)"))
        if kind == "item-update":
            return kind, f"update chaos_item set v = v + 1, note = {note} where id = {i}"
        if kind == "item-update-of-parent":
            return kind, f"update chaos_item set v = v + 1 where parent_id = {x}"
        if kind == "item-move":
            return kind, f"update chaos_item set parent_id = {y} where id = {i}"
        if kind == "item-delete":
            return kind, f"delete from chaos_item where id = {i}"
        if kind == "item-insert-many":
            lo = rng.randint(2 * 10**6, 3 * 10**6)
            return kind, self.many(x, lo, lo + rng.randint(10, 200))
        if kind == "item-delete-of-parent":
            return kind, f"delete from chaos_item where parent_id = {x}"
        if kind == "single-upsert":
            # sometimes a second profile of a parent that has one
            return kind, self.upsert("chaos_prof", f"{rng.randint(1, self.profs)}, {x}, {note}",
                                     "bio = " + ("excluded.bio" if pg else "VALUES(bio)"))
        if kind == "single-update":
            return kind, f"update chaos_prof set bio = {note} where parent_id = {x}"
        if kind == "single-delete":
            return kind, f"delete from chaos_prof where id = {rng.randint(1, self.profs)}"
        k = rng.randint(1, self.ticks)
        if kind == "count-insert":
            st = rng.choice(["'open'", "'closed'"])
            return kind, self.upsert("chaos_tick", f"{self.ticks + rng.randint(1, 10**6)}, {x}, {st}",
                                     "status = " + ("excluded.status" if pg else "VALUES(status)"))
        if kind == "count-in":
            return kind, f"update chaos_tick set status = 'open' where id = {k}"
        if kind == "count-out":
            return kind, f"update chaos_tick set status = 'closed' where id = {k}"
        if kind == "count-move":
            return kind, f"update chaos_tick set parent_id = {y} where id = {k}"
        if kind == "count-delete":
            return kind, f"delete from chaos_tick where id = {k}"
        if kind == "junction-insert":
            if pg:
                return kind, f"insert into chaos_ptag values ({x}, {tag}) on conflict do nothing"
            return kind, f"INSERT IGNORE INTO chaos_ptag VALUES ({x}, {tag})"
        if kind == "junction-delete":
            return kind, f"delete from chaos_ptag where parent_id = {x} and tag_id = {tag}"
        if kind == "tag-rename":
            return kind, f"update chaos_tag set label = {note} where id = {tag}"
        return kind, self.delete_parent(x)

    def transaction(self, rng):
        """one transaction over many children of one parent: a batch of
        new items, every item updated, some moved away and some deleted,
        its profile, a ticket and a tag changed"""
        x = self.parent(rng)
        parts = [self.child_statement(rng, k, x) for k in
                 ["item-insert-many", "item-update-of-parent", "count-insert", "single-update",
                  "junction-insert", "junction-delete"]]
        parts.append(("item-move", f"update chaos_item set parent_id = {self.parent(rng)} "
                                   f"where parent_id = {x} and v % 7 = 0"))
        parts.append(("item-delete", f"delete from chaos_item where parent_id = {x} and v % 11 = 0"))
        rng.shuffle(parts)
        return parts


# ------------------------------------------------------------- databases

class Postgres:
    kind = "pg"

    def __init__(self):
        e = os.environ
        self.url = f"postgres://{e['PGUSER']}:{e['PGPASSWORD']}@{e['PGHOST']}:{e['PGPORT']}/{e['PGDATABASE']}"
        self.slot = "p2o_chaos"
        self.index = "chaos_pg"
        self.stream = f"postgres:{self.slot}"

    def client_argv(self):
        return ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=0", "-o", "/dev/null"]

    def sql(self, text, timeout=300):
        return sh("psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", text, timeout=timeout)

    def query_json(self, render, source):
        r = sh("psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c",
               f"select coalesce(json_agg({render}), '[]') from {source}", check=True)
        return json.loads(r.stdout)

    def begin(self):
        return "begin;"

    def truncate(self, table):
        return f"truncate {table}"

    def fresh_stream(self, tables):
        for _ in range(50):
            r = self.sql(f"select count(*) from pg_replication_slots where slot_name = '{self.slot}' and active")
            if r.stdout.strip() in (b"0", b""):
                break
            time.sleep(0.2)
        self.sql(f"select pg_drop_replication_slot(slot_name) from pg_replication_slots "
                 f"where slot_name = '{self.slot}' and not active")
        self.sql(f"drop publication if exists {self.slot}")
        http("DELETE", f"/.pg2osync_meta/_doc/{self.stream}?refresh=true")
        for t in tables:
            http("DELETE", f"/.pg2osync_meta/_doc/{self.stream}%2Fload%2Fpublic.{t}?refresh=true")

    def config_source(self, rng):
        return [
            "source:", "  url_env: P2O_CHAOS_URL", f"  slot_name: {self.slot}",
            f"  publication: {self.slot}", "  reconnect_max: 1000",
            f"  load_workers: {rng.choice([1, 1, 2, 3])}",
        ], f"public"

    def restart(self, crash, down_s):
        d = os.path.join(SERVERS, "pg")
        sh(os.path.join(TOP, "tests/servers/pg.sh"), "kill" if crash else "stop", d, check=True)
        time.sleep(down_s)
        sh(os.path.join(TOP, "tests/servers/pg.sh"), "start", d, check=True)


class MariaDB:
    kind = "mariadb"

    def __init__(self):
        e = os.environ
        self.url = (f"mysql://{e['MYSQL_USER']}:{e['MYSQL_PWD']}@{e['MYSQL_HOST']}:"
                    f"{e['MYSQL_TCP_PORT']}/{e['MYSQL_DB']}")
        self.dbname = e["MYSQL_DB"]
        self.server_id = 4201201
        self.index = "chaos_my"
        self.stream = f"mysql:{self.server_id}"
        self.base = ["mariadb", "--no-defaults", "-h" + e["MYSQL_HOST"], "-P" + e["MYSQL_TCP_PORT"],
                     "-u" + e["MYSQL_USER"]]

    def client_argv(self):
        return self.base + ["--force", "-N", "-B", self.dbname]

    def sql(self, text, timeout=300):
        return sh(*self.base, "-N", "-B", self.dbname, "-e", text, timeout=timeout)

    def query_json(self, render, source):
        r = sh(*self.base, "--default-character-set=utf8mb4", "-N", "-B", "-r", self.dbname, "-e",
               "SET SESSION group_concat_max_len = 1073741824; "
               f"SELECT COALESCE(JSON_ARRAYAGG({render}), '[]') FROM {source}", check=True)
        return json.loads(r.stdout)

    def begin(self):
        return "BEGIN;"

    def truncate(self, table):
        return f"TRUNCATE TABLE {table}"

    def fresh_stream(self, tables):
        http("DELETE", f"/.pg2osync_meta/_doc/{self.stream}?refresh=true")
        for t in tables:
            http("DELETE", f"/.pg2osync_meta/_doc/{self.stream}%2Fload%2F{self.dbname}.{t}?refresh=true")

    def config_source(self, rng):
        return ["source:", "  url_env: P2O_CHAOS_URL", f"  server_id: {self.server_id}",
                "  reconnect_max: 1000"], self.dbname

    def restart(self, crash, down_s):
        d = os.path.join(SERVERS, "mariadb")
        sh(os.path.join(TOP, "tests/servers/mariadb.sh"), "kill" if crash else "stop", d, check=True)
        time.sleep(down_s)
        sh(os.path.join(TOP, "tests/servers/mariadb.sh"), "start", d, check=True)


# ---------------------------------------------------------------- writer

class Writer(threading.Thread):
    """one client connection fed statements through a pipe; a client that
    died (its server restarted) is started again; statements meant for a
    moment without a client are dropped, the sequence goes on"""

    def __init__(self, db, tables, rng, rate, log):
        super().__init__(daemon=True)
        self.db, self.tables, self.rng, self.rate, self.log = db, tables, rng, rate, log
        self.stop_ev = threading.Event()
        self.proc = None
        self.spawned = 0.0
        self.tally = {}
        self.txns = 0

    def client(self):
        if self.proc is not None and self.proc.poll() is None:
            return self.proc
        if time.monotonic() - self.spawned < 0.5:
            return None
        self.spawned = time.monotonic()
        self.proc = subprocess.Popen(self.db.client_argv(), stdin=subprocess.PIPE,
                                     stdout=self.log, stderr=self.log)
        return self.proc

    def send(self, text):
        p = self.client()
        if p is None:
            return
        try:
            p.stdin.write(text.encode() + b"\n")
            p.stdin.flush()
        except (BrokenPipeError, OSError):
            self.proc = None

    def txn(self):
        rng = self.rng
        t = self.tables[0]
        w = rng.random()
        if w < 0.004:
            self.tally["truncate"] = self.tally.get("truncate", 0) + 1
            return f"{self.db.truncate(t.name)}; {t.fill(rng.randint(10, 3000))};"
        if isinstance(t, NestTable) and w < 0.06:
            # many children of one parent in one transaction
            self.tally["txn-one-parent"] = self.tally.get("txn-one-parent", 0) + 1
            stmts = t.transaction(rng)
            n = len(stmts)
        else:
            n = rng.choice([1, 1, 1, 2, 3, 5, 8])
            stmts = [t.statement(rng) for _ in range(n)]
        parts = []
        for kind, s in stmts:
            self.tally[kind] = self.tally.get(kind, 0) + 1
            parts.append(s + ";")
        if n == 1 and rng.random() < 0.5:
            return parts[0]
        end = "commit;"
        if rng.random() < 0.05:
            end = "rollback;"
            self.tally["rolled-back"] = self.tally.get("rolled-back", 0) + 1
        return self.db.begin() + " " + " ".join(parts) + " " + end

    def run(self):
        gap = 1.0 / self.rate
        while not self.stop_ev.is_set():
            self.send(self.txn())
            self.txns += 1
            self.stop_ev.wait(gap)

    def finish(self):
        self.stop_ev.set()
        self.join(10)
        p = self.proc
        if p is not None and p.poll() is None:
            try:
                p.stdin.close()
            except OSError:
                pass
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


# ------------------------------------------------------------- pipeline

class Pipeline:
    def __init__(self, db, cfg, log, port):
        self.db, self.cfg, self.log, self.port = db, cfg, log, port
        self.proc = None
        self.env = dict(os.environ, P2O_CHAOS_URL=db.url,
                        PATH=BIN + ":" + os.environ.get("PATH", ""))

    def start(self):
        self.started = time.monotonic()
        self.proc = subprocess.Popen([os.path.join(BIN, "pg2osync-supervise"), "-c", self.cfg],
                                     stdout=self.log, stderr=self.log, env=self.env)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def healthy(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/ready", timeout=5) as r:
                return r.status == 200
        except OSError:
            return False

    def pids(self, stage):
        r = sh("pgrep", "-f", f"/{stage} -c {self.cfg}")
        return [int(p) for p in r.stdout.split()]

    def kill_all(self):
        sh("pkill", "-KILL", "-f", "--", f"-c {self.cfg}")
        if self.proc:
            self.proc.wait()

    def kill_supervisor(self, timeout=30):
        """kill -9 of the supervisor alone: its stages get SIGTERM at its
        death and drain what they hold, with nobody left to ack anything.
        Whatever is still running after timeout is killed."""
        if self.proc:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass
            self.proc.wait()
        end = time.monotonic() + timeout
        while time.monotonic() < end and sh("pgrep", "-f", "--", f"-c {self.cfg}").stdout.strip():
            time.sleep(0.1)
        self.kill_all()

    def term(self, timeout=90):
        if not self.alive():
            return self.proc.returncode if self.proc else None
        # a SIGTERM in the first instants after exec lands before the
        # supervisor has its handler: the default action, not a drain
        gap = self.started + 1.0 - time.monotonic()
        if gap > 0:
            time.sleep(gap)
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill_all()
            return "timeout"


# ---------------------------------------------------------------- trial

FAULTS = [("kill-stage", 40), ("kill-all", 20), ("sigterm", 15), ("db-restart", 12), ("db-crash", 8)]


def pick(rng, weighted):
    total = sum(w for _, w in weighted)
    x = rng.uniform(0, total)
    for name, w in weighted:
        x -= w
        if x <= 0:
            return name
    return weighted[-1][0]


def trial(db, seed, dbname, workdir, short):
    rng = random.Random(seed)
    # one trial in two has nested documents, drawn apart from the trial's
    # other draws so that a seed's plain trial stays what it was
    nested = random.Random(f"nested {seed}").random() < 0.5
    rows = rng.randint(1000, 6000 if short else 20000)
    tables = [NestTable(db, rows) if nested else ChaosTable(db)]
    t = tables[0]
    length = rng.uniform(6, 10) if short else rng.uniform(10, 22)
    nfaults = rng.randint(2, 3) if short else rng.randint(2, 5)
    times = sorted([rng.uniform(0.3, 2.0)] + [rng.uniform(0.5, length) for _ in range(nfaults - 1)])
    plan = []
    for at in times:
        f = pick(rng, FAULTS)
        arg = None
        if f == "kill-stage":
            arg = rng.choice(STAGES[db.kind])
        elif f in ("db-restart", "db-crash"):
            arg = round(rng.uniform(0.2, 4.0), 1)
        plan.append((at, f, arg))
    rate = rng.choice([15, 30, 60])
    batch = rng.choice([20, 200, 1000])
    conc = rng.choice([1, 1, 2, 4])
    port = free_port()

    # the table, an empty index and a stream with no past
    r = db.sql(t.ddl())
    if r.returncode != 0:
        raise RuntimeError(f"ddl: {r.stdout[-300:]}")
    r = db.sql(t.fill(rows))
    if r.returncode != 0:
        raise RuntimeError(f"fill: {r.stdout[-300:]}")
    if nested:
        r = db.sql(t.fill_children())
        if r.returncode != 0:
            raise RuntimeError(f"fill of the children: {r.stdout[-300:]}")
    http("DELETE", f"/{db.index}")
    db.fresh_stream([x.name for x in tables])
    src, schema = db.config_source(rng)
    cfg = os.path.join(workdir, "cfg.yaml")
    with open(cfg, "w") as f:
        f.write("\n".join(src + [
            "target:", f"  url: {OS_URL}",
            "sync:", f"  {t.name}:", f"    table: {schema}.{t.name}", f"    index: {db.index}"] +
            (t.config(schema) if nested else []) + [
            "engine:", f"  batch_size: {batch}", f"  write_concurrency: {conc}",
            "  checkpoint_interval_ms: 200",
            "metrics:", f"  bind: 127.0.0.1:{port}", ""]))
    suplog = open(os.path.join(workdir, "sup.log"), "ab")
    wlog = open(os.path.join(workdir, "writer.log"), "ab")
    pl = Pipeline(db, cfg, suplog, port)
    desc = (f"{dbname} seed={seed}: {rows} {'parents (nested) ' if nested else 'rows '}loaded, "
            f"{length:.0f} s of writes at {rate}/s, "
            f"batch {batch}, concurrency {conc}, faults " +
            ", ".join(f"{f}{':' + str(a) if a is not None else ''}@{at:.1f}s" for at, f, a in plan))
    problems = []
    done = []
    pl.start()
    w = Writer(db, tables, rng, rate, wlog)
    t0 = time.monotonic()
    w.start()
    for at, f, arg in plan:
        delay = t0 + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if not pl.alive():
            problems.append(f"the supervisor exited on its own ({pl.proc.returncode}) before {f}")
            pl.start()
        if f == "kill-stage":
            # the drawn stage, or the next one running (the loader ends
            # with its load; a stage may be between restarts)
            order = STAGES[db.kind]
            i = order.index(arg)
            for st in order[i:] + order[:i]:
                killed = False
                for pid in pl.pids(st):
                    try:
                        os.kill(pid, signal.SIGKILL)
                        killed = True
                        break
                    except ProcessLookupError:
                        pass	# it ended between pgrep and the kill
                if killed:
                    done.append(f"kill-stage:{st}")
                    break
            else:
                done.append("kill-stage:none-running")
        elif f == "kill-all":
            # half of them the supervisor alone, its stages left to drain
            # at its death; drawn apart from the trial's other draws so
            # that a seed's plan stays what it was
            if random.Random(f"supervisor {seed} {at}").random() < 0.5:
                pl.kill_supervisor()
                done.append("kill-supervisor")
            else:
                pl.kill_all()
                done.append(f)
            pl.start()
        elif f == "sigterm":
            rc = pl.term()
            if rc not in (0,):
                problems.append(f"SIGTERM: the supervisor exited {rc}, not 0")
            pl.start()
            done.append(f)
        else:
            db.restart(f == "db-crash", arg)
            done.append(f)
    rest = t0 + length - time.monotonic()
    if rest > 0:
        time.sleep(rest)
    w.finish()
    time.sleep(0.5)
    if not pl.alive():
        problems.append(f"the supervisor exited on its own ({pl.proc.returncode})")
        pl.start()
    # the table is still now: the index must come to equal it
    t1 = time.monotonic()
    deadline = t1 + (240 if not short else 180)
    diff, want = None, {}
    while True:
        try:
            want = t.expected()
            http("POST", f"/{db.index}/_refresh")
            got = compare.fetch_all(OS_URL, db.index)
            diff = [k for k in set(want) | set(got) if want.get(k) != got.get(k)]
        except Exception as e:  # a database still starting, a node busy
            diff = [f"compare failed: {e}"]
        if not diff or time.monotonic() > deadline or not pl.alive():
            break
        time.sleep(1)
    converged = time.monotonic() - t1
    if diff:
        ex = []
        for k in sorted(diff)[:5]:
            if k.startswith("compare failed"):
                ex.append(k)
                continue
            a, b = want.get(k), got.get(k)
            what = "missing from index" if b is None else "resurrected" if a is None else "differs"
            ver = "" if b is None else f" (version {doc_version(db.index, k)})"
            if a is not None and b is not None:
                # a nested document is long: the members that differ
                ms = [m for m in sorted(set(a) | set(b)) if a.get(m) != b.get(m)]
                a = {m: a.get(m) for m in ms}
                b = {m: b.get(m) for m in ms}
            ex.append(f"id {k} {what}: table {json.dumps(a)[:300]} index {json.dumps(b)[:300]}{ver}")
        problems.append(f"{len(diff)} documents differ after {converged:.0f} s: " + "; ".join(ex))
    if not pl.alive():
        problems.append(f"the supervisor exited on its own ({pl.proc.returncode})")
    rc = pl.term()
    if rc not in (0, None):
        problems.append(f"final SIGTERM: the supervisor exited {rc}")
    with open(os.path.join(workdir, "tally.json"), "w") as f:
        json.dump(w.tally, f)
    suplog.close()
    wlog.close()
    size = f"{len(want)} documents"
    if nested and want:
        # what the compare covered: the members it found embedded
        ps = list(want.values())
        size += (f" (embedding {sum(len(p.get('items') or []) for p in ps)} items, "
                 f"{sum(p.get('profile') is not None for p in ps)} profiles, "
                 f"{sum(len(p.get('tags') or []) for p in ps)} tags, "
                 f"{sum(p.get('open_tickets') or 0 for p in ps)} open tickets)")
    return desc, done, problems, converged, size, w, nested


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=int(os.environ.get("TRIALS", 10)))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--db", default=os.environ.get("DB", "both"), choices=["pg", "mariadb", "both"])
    ap.add_argument("--tap", action="store_true", help="TAP output, for prove")
    ap.add_argument("--short", action="store_true", help="short trials (the test suite's)")
    ap.add_argument("--keep", default=None, help="where the logs of failed trials go")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int(time.time()) % 1000000
    if not OS_URL or not SERVERS:
        print("chaos: needs tests/servers/run-with.sh (OS_URL, P2O_SERVERS_DIR)", file=sys.stderr)
        return 2
    names = ["pg", "mariadb"] if a.db == "both" else [a.db]
    dbs = {}
    for n in names:
        try:
            dbs[n] = Postgres() if n == "pg" else MariaDB()
        except KeyError as e:
            print(f"chaos: no {n} server in the environment ({e})", file=sys.stderr)
            return 2
    keep = a.keep or tempfile.mkdtemp(prefix="p2o-chaos.", dir="/tmp")
    os.makedirs(keep, exist_ok=True)
    out = (lambda s: print(s, flush=True))
    note = (lambda s: out(("# " if a.tap else "") + s))
    note(f"chaos: {a.trials} trials from seed {seed} on {', '.join(names)}")
    fails, mix, ops, ran, nested = [], {}, {}, {n: 0 for n in names}, {n: 0 for n in names}
    start = time.monotonic()
    # SIGTERM or Ctrl-C: stop after the summary of the trials done so far
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    ran_total = 0
    for i in range(a.trials):
        s = seed + i
        n = names[i % len(names)]
        wd = os.path.join(keep, f"{n}-{s}")
        os.makedirs(wd, exist_ok=True)
        t0 = time.monotonic()
        try:
            ran_total += 1
            desc, done, problems, conv, nrows, w, nest = trial(dbs[n], s, n, wd, a.short)
            nested[n] += nest
            for d in done:
                mix[d] = mix.get(d, 0) + 1
            for k, v in w.tally.items():
                ops[k] = ops.get(k, 0) + v
        except KeyboardInterrupt:
            note(f"chaos: interrupted in trial {i + 1} (seed {s}); it is not counted")
            sh("pkill", "-KILL", "-f", "--", wd + "/")
            ran_total -= 1
            break
        except Exception as e:  # the harness's own failure is a failure too
            desc, problems, conv, nrows = f"{n} seed={s}", [f"harness error: {e!r}"], 0, 0
            # nothing of it may outlive it: a pipeline left running with
            # the same replica id would fight the next trial's for the
            # binlog dump, and its writer would write into the next table
            for th in threading.enumerate():
                if isinstance(th, Writer):
                    th.finish()
            sh("pkill", "-KILL", "-f", "--", wd + "/")
        ran[n] += 1
        took = time.monotonic() - t0
        cmd = f"make chaos DB={n} TRIALS=1 SEED={s}" + (" SHORT=1" if a.short else "")
        if problems:
            fails.append((n, s, cmd, problems, wd))
            out(f"{'not ok' if a.tap else 'FAIL'} {i + 1} - {desc} ({took:.0f} s)")
            for p in problems:
                note(f"  {p}")
            note(f"  reproduce: {cmd}   (logs in {wd})")
        else:
            out(f"{'ok' if a.tap else 'ok  '} {i + 1} - {desc}; {nrows} equal after "
                f"{conv:.0f} s ({took:.0f} s)")
            subprocess.run(["rm", "-rf", wd])
    total = time.monotonic() - start
    note(f"chaos: trials run {ran_total} of {a.trials} ({', '.join(f'{k} {v}' for k, v in ran.items())}), "
         f"failures {len(fails)}, {total:.0f} s")
    note("chaos: nested trials " + ", ".join(f"{k} {v} of {ran[k]}" for k, v in nested.items()))
    note("chaos: faults " + ", ".join(f"{k} {v}" for k, v in sorted(mix.items())))
    note("chaos: statements " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    for n, s, cmd, problems, wd in fails:
        note(f"chaos: failed {n} seed {s}: {problems[0][:200]} -- reproduce: {cmd}")
    if not fails:
        subprocess.run(["rmdir", keep], stderr=subprocess.DEVNULL)
    if a.tap:
        out(f"1..{ran_total}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
