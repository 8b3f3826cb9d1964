/*
 * t-target-postgres.c - the PostgreSQL table target's pure side: the DDL
 * a section's table is created from (one CREATE TABLE of that table, a
 * one-column primary key, _version bigint), the names a table may have,
 * the entries of a write, what the answers of a write, a probe and a
 * clear mean; and the in-process transport it is reached through
 * (lib/http.h's struct http_local): a request, blocking or in a pool, goes
 * to the module's handler and its answer comes back as an HTTP one would,
 * a failed one as a transport error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "http.h"
#include "p2o.h"
#include "tap.h"
#include "target.h"

static const struct target_module *pg;

/* index_body's verdict on ddl for a section writing to index: 0 or -1,
 * why in why */
static int
ddl(const char *index, const char *text, char *why, size_t whylen)
{
	struct sync_section s;
	char *body = NULL;
	int rc;

	memset(&s, 0, sizeof(s));
	s.index = (char *)index;
	why[0] = '\0';
	rc = pg->ops->index_body(&s, text, strlen(text), &body, why, whylen);
	if (rc == 0 && (body == NULL || strcmp(body, text) != 0))
		rc = -2;
	free(body);
	return rc;
}

static void
test_ddl(void)
{
	char why[512];

	is_int(ddl("items", "CREATE TABLE items (id int PRIMARY KEY, "
	    "name text, embedding vector(3), _version bigint NOT NULL);\n",
	    why, sizeof(why)), 0, "a table with a key, a vector and "
	    "_version is taken as it is (%s)", why);
	is_int(ddl("app.items", "-- ours\ncreate table if not exists "
	    "\"app\".Items (\n  id text,\n  _version int8,\n  CONSTRAINT "
	    "items_pk PRIMARY KEY (id),\n  CHECK (length(id) > 0)\n)", why,
	    sizeof(why)), 0, "comments, IF NOT EXISTS, a schema, a table "
	    "constraint as the key (%s)", why);
	is_int(ddl("items", "CREATE TABLE items (id int PRIMARY KEY, "
	    "a numeric(10, 2) DEFAULT 0, _version bigint)", why,
	    sizeof(why)), 0, "a comma inside a type's parentheses is no "
	    "column's end (%s)", why);
	ok(ddl("items", "CREATE TABLE items (id int PRIMARY KEY, name text)",
	    why, sizeof(why)) == -1 && strstr(why, "no column '_version "
	    "bigint'"), "no _version refused: %s", why);
	ok(ddl("items", "CREATE TABLE items (id int PRIMARY KEY, _version "
	    "integer)", why, sizeof(why)) == -1 && strstr(why, "must be "
	    "bigint"), "_version of another type refused: %s", why);
	ok(ddl("items", "CREATE TABLE items (id int, _version bigint)", why,
	    sizeof(why)) == -1 && strstr(why, "declares no primary key"),
	    "no key refused: %s", why);
	ok(ddl("items", "CREATE TABLE items (a int, b int, _version bigint, "
	    "PRIMARY KEY (a, b))", why, sizeof(why)) == -1 &&
	    strstr(why, "more than one column"), "a key of two columns "
	    "refused: %s", why);
	ok(ddl("items", "CREATE TABLE items (a int PRIMARY KEY, b int "
	    "PRIMARY KEY, _version bigint)", why, sizeof(why)) == -1 &&
	    strstr(why, "more than one column"), "two keys refused: %s", why);
	ok(ddl("items", "CREATE TABLE items (_version bigint PRIMARY KEY)",
	    why, sizeof(why)) == -1 && strstr(why, "the key takes the "
	    "document id"), "_version as the key refused: %s", why);
	ok(ddl("items", "CREATE TABLE other (id int PRIMARY KEY, _version "
	    "bigint)", why, sizeof(why)) == -1 && strstr(why, "creates table "
	    "'other', not the section's 'items'"), "another table refused: "
	    "%s", why);
	ok(ddl("items", "CREATE TABLE items (id int PRIMARY KEY, _version "
	    "bigint); DROP TABLE x", why, sizeof(why)) == -1 &&
	    strstr(why, "one statement only"), "a second statement refused: "
	    "%s", why);
	ok(ddl("items", "CREATE INDEX ON items (id)", why, sizeof(why)) ==
	    -1 && strstr(why, "one CREATE TABLE statement"), "not a CREATE "
	    "TABLE refused: %s", why);
	ok(ddl("items", "CREATE TABLE items (id int PRIMARY KEY, _version "
	    "bigint", why, sizeof(why)) == -1 && strstr(why, "does not end"),
	    "an open column list refused: %s", why);
}

static void
test_names(void)
{
	char why[256];

	ok(pg->ops->index_name("items", TNAME_WHOLE, why, sizeof(why)) == 0,
	    "a table name");
	ok(pg->ops->index_name("app.items_2", TNAME_WHOLE, why,
	    sizeof(why)) == 0, "schema.table");
	ok(pg->ops->index_name("Items", TNAME_WHOLE, why, sizeof(why)) == -1,
	    "an upper-case name refused: %s", why);
	ok(pg->ops->index_name("a.b.c", TNAME_WHOLE, why, sizeof(why)) == -1,
	    "three parts refused");
	ok(pg->ops->index_name("2x", TNAME_WHOLE, why, sizeof(why)) == -1,
	    "a leading digit refused");
	ok(pg->ops->index_name("items_", TNAME_HEAD, why, sizeof(why)) ==
	    -1 && strstr(why, "cannot be a template"), "a template refused: "
	    "%s", why);
	ok(pg->url_check("postgresql://u@h/db", why, sizeof(why)) == 0 &&
	    pg->url_check("postgres://h/db", why, sizeof(why)) == 0,
	    "postgres urls taken");
	ok(pg->url_check("http://h:9200", why, sizeof(why)) == -1,
	    "an http url refused: %s", why);
}

static void
test_encode(void)
{
	struct target_write w;
	struct target_entry e;
	struct sbuf out = SBUF_INIT;
	struct p2o_err err = { 0 };

	memset(&w, 0, sizeof(w));
	w.index = (struct jspan){ "\"items\"", 7 };
	w.id = (struct jspan){ "\"5\"", 3 };
	w.doc = (struct jspan){ "{\"id\":5,\"v\":[1,2]}", 18 };
	w.version = 42;
	ok(pg->ops->encode(&out, &w, &e, &err) == 0, "an index encoded");
	is_str(out.buf, "{\"t\":\"items\",\"id\":\"5\",\"v\":42,\"doc\":"
	    "{\"id\":5,\"v\":[1,2]}}\n", "as one line of its own");
	ok(e.doc.len == 18 && memcmp(out.buf + e.doc.off, w.doc.p, 18) == 0 &&
	    e.id.len == 3 && memcmp(out.buf + e.id.off, "\"5\"", 3) == 0 &&
	    e.entry.len == out.len, "its spans");
	sbuf_reset(&out);
	w.del = 1;
	ok(pg->ops->encode(&out, &w, &e, &err) == 0, "a delete encoded");
	is_str(out.buf, "{\"t\":\"items\",\"id\":\"5\",\"v\":42,\"del\":true}\n",
	    "with its version");
	w.routing = (struct jspan){ "\"r\"", 3 };
	ok(pg->ops->encode(&out, &w, &e, &err) == -1, "routing refused");
	w.routing.p = NULL;
	w.version = (uint64_t)INT64_MAX + 1;
	ok(pg->ops->encode(&out, &w, &e, &err) == -1 && strstr(err.msg,
	    "bigint"), "a version past bigint refused: %s", err.msg);
	sbuf_release(&out);
}

static void
test_answers(void)
{
	static const char items[] = "{\"items\":[{\"s\":200},{\"s\":409},"
	    "{\"s\":404,\"d\":1},{\"s\":400,\"r\":\"field 'x' is not a column "
	    "of table 'items'\"},{\"s\":503}]}";
	static const char down[] = "{\"error\":\"the database system is "
	    "shutting down\"}";
	struct item_result it[5];
	struct sbuf resp = SBUF_INIT;
	struct target_proc p;
	char why[256], node[128];

	is_int(pg->ops->bulk_answer(200, items, strlen(items), 5, it, why,
	    sizeof(why)), TA_OK, "a write's answer read");
	ok(it[0].verdict == ITEM_OK && it[1].verdict == ITEM_CONFLICT &&
	    it[2].verdict == ITEM_NOTFOUND && it[2].del &&
	    it[3].verdict == ITEM_REJECT && it[4].verdict == ITEM_RETRY,
	    "written, kept newer, absent, refused, again");
	is_str(it[3].reason, "field 'x' is not a column of table 'items'",
	    "the refusal's words");
	is_int(pg->ops->bulk_answer(200, items, strlen(items), 4, it, why,
	    sizeof(why)), TA_RETRY, "more items than sent: asked again");
	is_int(pg->ops->bulk_answer(503, down, strlen(down), 1, it, why,
	    sizeof(why)), TA_RETRY, "a server going down: asked again");
	is_str(why, "the database system is shutting down", "its words");
	is_int(pg->ops->bulk_answer(401, "{}", 2, 1, it, why, sizeof(why)),
	    TA_AUTH, "credentials refused");

	sbuf_adds(&resp, "{\"version\":\"17.12\",\"num\":170012,"
	    "\"vector\":\"0.8.0\"}");
	is_int(pg->ops->probe_answer(200, &resp, node, sizeof(node), why,
	    sizeof(why)), TA_OK, "PostgreSQL 17 taken");
	is_str(node, "postgresql 17.12, pgvector 0.8.0", "and named");
	sbuf_reset(&resp);
	sbuf_adds(&resp, "{\"version\":\"10.23\",\"num\":100023,"
	    "\"vector\":null}");
	ok(pg->ops->probe_answer(200, &resp, node, sizeof(node), why,
	    sizeof(why)) == TA_REFUSED && strstr(why, "11 and later"),
	    "PostgreSQL 10 refused: %s", why);

	{
		struct jspan found[3];

		sbuf_reset(&resp);
		sbuf_adds(&resp, "{\"docs\":[{\"id\":1,\"a\":\"x\"},null,"
		    "{\"id\":3}]}");
		is_int(pg->ops->read_answer(200, &resp, 3, found, why,
		    sizeof(why)), TA_OK, "stored rows read back");
		ok(found[0].p && found[0].n == 16 && found[1].p == NULL &&
		    found[2].p && found[2].n == 8, "a row, none, a row");
		is_int(pg->ops->read_answer(200, &resp, 2, found, why,
		    sizeof(why)), TA_RETRY, "more rows than asked: again");
	}
	target_proc_init(&p);
	p.kind = PROC_CLEAR;
	p.index = "items";
	p.version = 77;
	sbuf_reset(&resp);
	sbuf_adds(&resp, "{\"deleted\":12}");
	is_int(pg->ops->proc_answer(&p, 200, &resp, why, sizeof(why)), TA_OK,
	    "a clear done");
	is_int((long long)p.deleted, 12, "its rows counted");
	is_int(pg->ops->proc_answer(&p, 404, &resp, why, sizeof(why)), TA_OK,
	    "a clear of a missing table is done");
	ok(p.gone, "and says so");
	p.kind = PROC_CASCADE;
	is_int(pg->ops->proc_answer(&p, 200, &resp, why, sizeof(why)),
	    TA_REFUSED, "a cascade refused");
	target_proc_release(&p);
	sbuf_release(&resp);
}

/* a handler answering each request with its path, or failing "/down" */
static int nopen, nclosed;

static int
fake_request(void **conn, const char *url, const char *method,
    const char *path, const char *body, size_t len, struct sbuf *resp,
    long *status, char *err, size_t errlen)
{
	(void)method, (void)body, (void)len;
	if (*conn == NULL) {
		*conn = (void *)url;
		nopen++;
	}
	if (strcmp(path, "/down") == 0) {
		*conn = NULL;
		nclosed++;
		snprintf(err, errlen, "connection lost");
		return -1;
	}
	*status = 200;
	sbuf_adds(resp, path);
	return 0;
}

static void
fake_close(void *conn)
{
	(void)conn;
	nclosed++;
}

static const struct http_local fake = { fake_request, fake_close };

static void
test_transport(void)
{
	struct http_opts o = { .local = &fake };
	struct http_client c;
	struct http_pool p;
	struct http_done d;
	struct sbuf r0 = SBUF_INIT, r1 = SBUF_INIT;
	struct p2o_err err = { 0 };
	const char *secret = "postgres://u:secret@h/db", *plain = "postgres://h/db";
	unsigned ready;
	long status;
	int n = 0;

	ok(http_init(&c, &secret, 1, &o) == 0,
	    "an in-process client takes a url with a password");
	ok(strstr(c.nodes->names, "secret") == NULL &&
	    strstr(c.nodes->names, "u:***@h"),
	    "and names the target without it: %s", c.nodes->names);
	ok(http_request(&c, "POST", "/bulk", NULL, "x", 1, &r0, &status) ==
	    0 && status == 200 && strcmp(r0.buf, "/bulk") == 0,
	    "a blocking request answered by the handler");
	ok(http_request(&c, "GET", "/down", NULL, NULL, 0, &r0, &status) ==
	    -1 && strcmp(c.err, "connection lost") == 0,
	    "a failed one is a transport error: %s", c.err);
	http_release(&c);
	is_int(nopen, 1, "one connection opened");

	ok(http_pool_init(&p, 2, &plain, 1, &o, &err) == 0,
	    "a pool of in-process slots");
	ok(http_pool_start(&p, 0, "GET", "/probe", NULL, NULL, 0, &r0, 0) ==
	    0 && http_pool_start(&p, 1, "GET", "/down", NULL, NULL, 0, &r1,
	    0) == 0, "two requests started");
	ok(http_pool_start(&p, 0, "GET", "/probe", NULL, NULL, 0, &r0, 0) ==
	    -1, "a busy slot refuses another");
	ok(http_pool_wait(&p, NULL, 0, &ready, 5000) == 0, "the wait returns "
	    "at once");
	while (http_pool_done(&p, &d)) {
		n++;
		if (d.slot == 0)
			ok(d.err == NULL && d.status == 200 &&
			    strcmp(r0.buf, "/probe") == 0, "slot 0 answered");
		else
			ok(d.err != NULL && d.status == 0, "slot 1 failed as "
			    "a transport error");
	}
	is_int(n, 2, "each handed out once");
	is_int(p.nopen, 0, "and none open");
	http_pool_release(&p);
	sbuf_release(&r0);
	sbuf_release(&r1);
}

int
main(void)
{
	if ((pg = target_module_find("postgres")) == NULL)
		BAIL_OUT("no postgres module");
	ok(target_can(pg, TCAP_MAPPINGS | TCAP_STATE_DOCS |
	    TCAP_COMPLETE_DOCS) &&
	    !target_can(pg, TCAP_CONCURRENT_WRITES) &&
	    !target_can(pg, TCAP_ROUTING) && pg->transport != NULL &&
	    pg->mapping_form != NULL, "its capability row");
	test_ddl();
	test_names();
	test_encode();
	test_answers();
	test_transport();
	return done_testing();
}
