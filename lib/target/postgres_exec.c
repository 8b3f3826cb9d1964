/*
 * postgres_exec.c - the PostgreSQL target's requests answered in-process
 * (lib/http.h's struct http_local): one libpq connection per client,
 * opened at its first request, and the statements of the data path: the
 * probe, a table created from its DDL, a batch of writes in one
 * transaction, stored rows read back as documents (TOAST completion), a
 * clear. Owns what a table of ours must have (a one-column
 * primary key and _version bigint), learned from the catalog once per
 * connection, and the statements that write rows: an upsert that never
 * replaces a newer version, a delete that never removes one.
 *
 * A document is refused (400 for its item) when a field names no column,
 * or when the server refuses its row (a value its column's type cannot
 * read, a constraint); the other writes of the batch are written in a
 * transaction without it. What may pass on its own (a lost connection, a
 * server shutting down, a deadlock) fails the whole request, to be asked
 * again. Never logs or exits, and never quotes the url.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "http.h"
#include "p2o.h"
#include "pg/pgconn.h"
#include "postgres.h"

struct pgt_table {
	char	*name;		/* the index name */
	char	*key;		/* its key column, NULL: none of one column */
	int	 has_version;
	char	**cols;
	int	 ncols;
	uint64_t request;	/* the session's request it was read in */
};

/* one write of a /bulk body */
struct entry {
	char	 table[160];
	struct jspan id, doc;
	uint64_t version;
	int	 del;
	int	 status;	/* 0 pending, else the item's answer */
	char	 reason[320];
};

static void
table_free(struct pgt_table *t)
{
	int i;

	free(t->name);
	free(t->key);
	for (i = 0; i < t->ncols; i++)
		free(t->cols[i]);
	free(t->cols);
	memset(t, 0, sizeof(*t));
}

static void
forget_table(struct pgt_session *s, const char *name)
{
	int i;

	for (i = 0; i < s->ntables; i++)
		if (strcmp(s->tables[i].name, name) == 0) {
			table_free(&s->tables[i]);
			s->tables[i] = s->tables[--s->ntables];
			return;
		}
}

static void
session_close(void *conn)
{
	struct pgt_session *s = conn;
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ntables; i++)
		table_free(&s->tables[i]);
	free(s->tables);
	pgconn_close(s->pg);
	free(s);
}

static struct pgt_session *
session_open(const char *url, struct p2o_err *err)
{
	struct pgt_session *s;
	struct pg_conn *pg;

	if ((pg = pgconn_open_target(url, "pg2osync", err)) == NULL)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	s->pg = pg;
	return s;
}

struct pgt_session *
pgt_session_of(struct target_conn *c, struct p2o_err *err)
{
	if (c->http.local_conn == NULL)
		c->http.local_conn = session_open(c->http.local_url, err);
	return c->http.local_conn;
}

void
pgt_session_check(struct target_conn *c)
{
	struct pgt_session *s = c->http.local_conn;

	if (s != NULL && PQstatus(s->pg) == CONNECTION_BAD) {
		session_close(s);
		c->http.local_conn = NULL;
	}
}

/* an answer of a status and {"error":why} */
static void
answer_error(struct sbuf *resp, long *status, long code, const char *why)
{
	*status = code;
	sbuf_reset(resp);
	sbuf_adds(resp, "{\"error\":");
	sbuf_add_jstr(resp, why, strlen(why));
	sbuf_addc(resp, '}');
}

/* the status a failed statement answers with, from its exit code */
static long
status_of(int code)
{
	return code == P2O_EXIT_TEMPFAIL ? 503 : code == P2O_EXIT_AUTH ? 401 :
	    400;
}

/* a table's key and columns, from the catalog once per connection: the
 * table, NULL when it does not exist (0) or on failure (-1 with err) */
static struct pgt_table *
table_get(struct pgt_session *s, const char *name, struct p2o_err *err)
{
	static const char sql[] =
	    "SELECT a.attname::text, coalesce(i.indnatts = 1 AND "
	    "a.attnum = i.indkey[0], false) "
	    "FROM pg_catalog.pg_attribute a "
	    "LEFT JOIN pg_catalog.pg_index i ON i.indrelid = a.attrelid AND "
	    "i.indisprimary "
	    "WHERE a.attrelid = pg_catalog.to_regclass($1) AND a.attnum > 0 "
	    "AND NOT a.attisdropped ORDER BY a.attnum";
	struct sbuf q = SBUF_INIT;
	struct pgt_table *t;
	const char *param;
	PGresult *res;
	int i;

	for (i = 0; i < s->ntables; i++)
		if (strcmp(s->tables[i].name, name) == 0)
			return &s->tables[i];
	pgt_put_table(&q, name);
	param = q.buf;
	res = pgconn_query(s->pg, "reading a target table's columns", sql, 1,
	    &param, err);
	sbuf_release(&q);
	if (res == NULL)
		return NULL;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return NULL;
	}
	if (s->ntables == s->captables) {
		s->captables = s->captables ? s->captables * 2 : 8;
		s->tables = xrealloc(s->tables, (size_t)s->captables *
		    sizeof(*s->tables));
	}
	t = &s->tables[s->ntables++];
	memset(t, 0, sizeof(*t));
	t->name = xstrdup(name);
	t->request = s->requests;
	t->ncols = PQntuples(res);
	t->cols = xcalloc((size_t)t->ncols, sizeof(*t->cols));
	for (i = 0; i < t->ncols; i++) {
		t->cols[i] = xstrdup(PQgetvalue(res, i, 0));
		if (strcmp(PQgetvalue(res, i, 1), "t") == 0)
			t->key = xstrdup(t->cols[i]);
		if (strcmp(t->cols[i], PGT_VERSION_COL) == 0)
			t->has_version = 1;
	}
	PQclear(res);
	return t;
}

static int
has_col(const struct pgt_table *t, const char *name)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i], name) == 0)
			return 1;
	return 0;
}

/* why a table cannot take our rows, or NULL */
static const char *
table_unfit(const struct pgt_table *t)
{
	if (t->key == NULL)
		return "has no primary key of one column (the document id)";
	if (!t->has_version)
		return "has no column '" PGT_VERSION_COL " bigint'";
	return NULL;
}

/* the row of an index entry as a JSON object for json_populate_record:
 * the key from the id, the version, and the document's fields, each of
 * which must name a column; 0, or -1 with why (-2: a field names no
 * column) */
static int
row_json(const struct pgt_table *t, const struct entry *e, struct sbuf *row,
    char *why, size_t whylen)
{
	struct jspan k, v;
	struct jiter it;
	char name[256];

	sbuf_reset(row);
	sbuf_addc(row, '{');
	sbuf_add_jstr(row, t->key, strlen(t->key));
	sbuf_addc(row, ':');
	sbuf_add(row, e->id.p, e->id.n);
	sbuf_adds(row, ",\"" PGT_VERSION_COL "\":");
	sbuf_add_u64(row, e->version);
	if (jiter_init(&it, e->doc) == -1) {
		snprintf(why, whylen, "the document is not an object");
		return -1;
	}
	while (jiter_member(&it, &k, &v)) {
		if (jstr_copy(k, name, sizeof(name)) == -1 ||
		    !has_col(t, name)) {
			snprintf(why, whylen, "field '%.200s' is not a column of "
			    "table '%s'", jstr_copy(k, name, sizeof(name)) ==
			    -1 ? "(a long name)" : name, t->name);
			return -2;
		}
		if (strcmp(name, PGT_VERSION_COL) == 0) {
			snprintf(why, whylen, "field '" PGT_VERSION_COL "' is "
			    "the column the target keeps each row's version "
			    "in: rename it");
			return -1;
		}
		/* the id is the key: the document's own copy of it (the
		 * source's key column) is the same value */
		if (strcmp(name, t->key) == 0)
			continue;
		sbuf_addc(row, ',');
		sbuf_add(row, k.p, k.n);
		sbuf_addc(row, ':');
		sbuf_add(row, v.p, v.n);
	}
	sbuf_addc(row, '}');
	return 0;
}

/* INSERT .. ON CONFLICT (key) DO UPDATE .. WHERE the stored version is
 * not newer; a delete at or above the stored version */
static void
write_sql(const struct pgt_table *t, int del, struct sbuf *sql)
{
	int i, n = 0;

	sbuf_reset(sql);
	if (del) {
		sbuf_adds(sql, "DELETE FROM ");
		pgt_put_table(sql, t->name);
		sbuf_adds(sql, " WHERE ");
		pgconn_put_ident(sql, t->key);
		sbuf_adds(sql, " = $1 AND " PGT_VERSION_COL " <= $2");
		return;
	}
	sbuf_adds(sql, "INSERT INTO ");
	pgt_put_table(sql, t->name);
	sbuf_adds(sql, " AS t SELECT * FROM pg_catalog.json_populate_record("
	    "NULL::");
	pgt_put_table(sql, t->name);
	sbuf_adds(sql, ", $1::json) ON CONFLICT (");
	pgconn_put_ident(sql, t->key);
	sbuf_adds(sql, ") DO UPDATE SET ");
	for (i = 0; i < t->ncols; i++) {
		if (strcmp(t->cols[i], t->key) == 0)
			continue;
		if (n++)
			sbuf_addc(sql, ',');
		pgconn_put_ident(sql, t->cols[i]);
		sbuf_adds(sql, " = excluded.");
		pgconn_put_ident(sql, t->cols[i]);
	}
	sbuf_adds(sql, " WHERE t." PGT_VERSION_COL " <= excluded."
	    PGT_VERSION_COL);
}

/* the lines of a write body, {"t":..,"id":..,"v":N,"doc":..|"del":true}
 * (whole), or of a /read body, {"t":..,"id":..}: 0, or -1 when one is
 * not such a line */
static int
parse_lines(const char *body, size_t len, int whole, struct entry **out,
    int *n)
{
	const char *p = body, *end = body + len, *nl;
	struct entry *e = NULL;
	struct jspan obj, v;
	size_t off;
	int cap = 0;

	*n = 0;
	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (nl == p)
			continue;
		obj.p = p, obj.n = (size_t)(nl - p);
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			e = xrealloc(e, (size_t)cap * sizeof(*e));
		}
		memset(&e[*n], 0, sizeof(e[*n]));
		if (jscan_validate(obj.p, obj.n, &off, NULL) == -1 ||
		    !jobj_get(obj, "t", &v) || jstr_copy(v, e[*n].table,
		    sizeof(e[*n].table)) == -1 || !jobj_get(obj, "id",
		    &e[*n].id) || (whole && (!jobj_get(obj, "v", &v) ||
		    jnum_u64(v, &e[*n].version) == -1))) {
			free(e);
			return -1;
		}
		e[*n].del = whole && jobj_get(obj, "del", &v);
		if (whole && !e[*n].del && !jobj_get(obj, "doc", &e[*n].doc)) {
			free(e);
			return -1;
		}
		(*n)++;
	}
	*out = e;
	return 0;
}

/* one pass of the batch in a transaction: 0 committed, 1 an item was
 * refused (the transaction rolled back, the pass is to be run again
 * without it), -1 with err (the request fails) */
static int
bulk_pass(struct pgt_session *s, struct entry *e, int n, struct p2o_err *err)
{
	struct sbuf sql = SBUF_INIT, row = SBUF_INIT;
	struct pgt_table *t;
	const char *params[2], *why;
	char id[1024], ver[24];
	PGresult *res;
	int i, r, rc = -1;

	if (pgconn_exec(s->pg, "beginning a write", "BEGIN", err) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (e[i].status == 400)
			continue;
		e[i].status = 0;
		p2o_err_clear(err);
		if ((t = table_get(s, e[i].table, err)) == NULL) {
			if (err->code != 0)
				goto rollback;
			e[i].status = 400;
			snprintf(e[i].reason, sizeof(e[i].reason), "table '%s' "
			    "does not exist", e[i].table);
			continue;
		}
		if ((why = table_unfit(t)) != NULL) {
			e[i].status = 400;
			snprintf(e[i].reason, sizeof(e[i].reason), "table '%s' "
			    "%s", e[i].table, why);
			continue;
		}
		write_sql(t, e[i].del, &sql);
		snprintf(ver, sizeof(ver), "%llu",
		    (unsigned long long)e[i].version);
		if (e[i].del) {
			if (jstr_copy(e[i].id, id, sizeof(id)) == -1) {
				e[i].status = 400;
				snprintf(e[i].reason, sizeof(e[i].reason),
				    "the document id is too long");
				continue;
			}
			params[0] = id;
			params[1] = ver;
		} else {
			r = row_json(t, &e[i], &row, e[i].reason,
			    sizeof(e[i].reason));
			/* a column added since the table was read: read it
			 * again, once a request, before refusing */
			if (r == -2 && t->request != s->requests) {
				forget_table(s, e[i].table);
				i--;
				continue;
			}
			if (r != 0) {
				e[i].status = 400;
				continue;
			}
			params[0] = row.buf;
		}
		res = pgconn_run(s->pg, PGRES_COMMAND_OK, "writing a row",
		    sql.buf, e[i].del ? 2 : 1, params, err);
		if (res == NULL) {
			if (err->code == P2O_EXIT_TEMPFAIL ||
			    err->code == P2O_EXIT_AUTH)
				goto rollback;
			/* this row, not the batch: refused, and the rest
			 * written again without it; the table may have
			 * changed under us */
			e[i].status = 400;
			snprintf(e[i].reason, sizeof(e[i].reason), "%.300s",
			    err->msg);
			forget_table(s, e[i].table);
			p2o_err_clear(err);
			rc = 1;
			goto rollback;
		}
		e[i].status = atoi(PQcmdTuples(res)) > 0 ? 200 :
		    e[i].del ? 404 : 409;
		PQclear(res);
	}
	rc = pgconn_exec(s->pg, "committing a write", "COMMIT", err);
	goto out;
rollback:
	if (PQstatus(s->pg) != CONNECTION_BAD) {
		res = PQexec(s->pg, "ROLLBACK");
		PQclear(res);
	}
out:
	sbuf_release(&sql);
	sbuf_release(&row);
	return rc;
}

static int
do_bulk(struct pgt_session *s, const char *body, size_t len,
    struct sbuf *resp, long *status, struct p2o_err *err)
{
	struct entry *e = NULL;
	int n, i, r;

	s->requests++;
	if (parse_lines(body, len, 1, &e, &n) == -1) {
		answer_error(resp, status, 400, "a write request that is not "
		    "the module's");
		return 0;
	}
	while ((r = bulk_pass(s, e, n, err)) == 1)
		;
	if (r == -1) {
		free(e);
		return -1;
	}
	*status = 200;
	sbuf_adds(resp, "{\"items\":[");
	for (i = 0; i < n; i++) {
		sbuf_addf(resp, "%s{\"s\":%d", i ? "," : "", e[i].status);
		if (e[i].del)
			sbuf_adds(resp, ",\"d\":1");
		if (e[i].status == 400) {
			sbuf_adds(resp, ",\"r\":");
			sbuf_add_jstr(resp, e[i].reason, strlen(e[i].reason));
		}
		sbuf_addc(resp, '}');
	}
	sbuf_adds(resp, "]}");
	free(e);
	return 0;
}

/* lines of {"t":..,"id":..}: each stored row as a document (less its
 * _version; the key column keeps its own name), or null. A column that
 * is NULL is no field of it: a field a document lacked was written NULL,
 * and a fill (framing.md, fill) copies the late copy's value only into a
 * document that lacks the field - read as a null field, a row the stream
 * wrote without its unchanged TOAST value during a load kept NULL for
 * good. For a completion an absent field and a null one write the same
 * row. Only the top level: a null inside a json value stays. */
static int
do_read(struct pgt_session *s, const char *body, size_t len,
    struct sbuf *resp, long *status, struct p2o_err *err)
{
	struct entry *e = NULL;
	struct sbuf sql = SBUF_INIT;
	struct pgt_table *t;
	const char *param;
	char id[1024];
	PGresult *res;
	int n, i, rc = 0;

	if (parse_lines(body, len, 0, &e, &n) == -1) {
		answer_error(resp, status, 400, "a read request that is not the "
		    "module's");
		return 0;
	}
	sbuf_adds(resp, "{\"docs\":[");
	for (i = 0; i < n; i++) {
		if (i)
			sbuf_addc(resp, ',');
		p2o_err_clear(err);
		if ((t = table_get(s, e[i].table, err)) == NULL ||
		    table_unfit(t) != NULL ||
		    jstr_copy(e[i].id, id, sizeof(id)) == -1) {
			if (err->code != 0) {
				rc = -1;
				break;
			}
			sbuf_adds(resp, "null");
			continue;
		}
		sbuf_reset(&sql);
		sbuf_adds(&sql, "SELECT (SELECT pg_catalog.jsonb_object_agg("
		    "f.key, f.value) FROM pg_catalog.jsonb_each("
		    "pg_catalog.to_jsonb(t) - '" PGT_VERSION_COL "') f WHERE "
		    "pg_catalog.jsonb_typeof(f.value) <> 'null')::text FROM ");
		pgt_put_table(&sql, t->name);
		sbuf_adds(&sql, " t WHERE ");
		pgconn_put_ident(&sql, t->key);
		sbuf_adds(&sql, " = $1");
		param = id;
		if ((res = pgconn_query(s->pg, "reading a stored row", sql.buf,
		    1, &param, err)) == NULL) {
			rc = -1;
			break;
		}
		sbuf_adds(resp, PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) :
		    "null");
		PQclear(res);
	}
	sbuf_adds(resp, "]}");
	*status = 200;
	free(e);
	sbuf_release(&sql);
	return rc;
}

/* {"t":..,"f":..,"val":..,"v":N}: the rows at or below the version,
 * of the table or of its column's value */
static int
do_clear(struct pgt_session *s, const char *body, size_t len,
    struct sbuf *resp, long *status, struct p2o_err *err)
{
	struct jspan obj = { body, len }, v, f, val;
	struct sbuf sql = SBUF_INIT;
	struct pgt_table *t;
	const char *params[2];
	char table[160], field[256], ver[24];
	char *value = NULL;
	uint64_t version;
	PGresult *res;
	size_t off;
	int rc = 0;

	if (jscan_validate(body, len, &off, NULL) == -1 ||
	    !jobj_get(obj, "t", &v) || jstr_copy(v, table, sizeof(table)) ==
	    -1 || !jobj_get(obj, "v", &v) || jnum_u64(v, &version) == -1) {
		answer_error(resp, status, 400, "a clear request that is not "
		    "the module's");
		return 0;
	}
	if ((t = table_get(s, table, err)) == NULL) {
		if (err->code != 0)
			return -1;
		*status = 404;
		sbuf_adds(resp, "{\"deleted\":0}");
		return 0;
	}
	snprintf(ver, sizeof(ver), "%llu", (unsigned long long)version);
	params[0] = ver;
	sbuf_adds(&sql, "DELETE FROM ");
	pgt_put_table(&sql, table);
	sbuf_adds(&sql, " WHERE " PGT_VERSION_COL " <= $1");
	if (jobj_get(obj, "f", &f) && jobj_get(obj, "val", &val)) {
		if (jstr_copy(f, field, sizeof(field)) == -1 ||
		    !has_col(t, field)) {
			answer_error(resp, status, 400, "a clear by a field "
			    "that is not a column");
			goto out;
		}
		/* the value's text, as the column's type reads it */
		value = jspan_type(val) == J_STRING ? jstr_dup(val) :
		    xstrndup(val.p, val.n);
		params[1] = value;
		sbuf_adds(&sql, " AND ");
		pgconn_put_ident(&sql, field);
		sbuf_adds(&sql, " = $2");
	}
	res = pgconn_run(s->pg, PGRES_COMMAND_OK, "clearing a table", sql.buf,
	    value ? 2 : 1, params, err);
	if (res == NULL) {
		if (err->code == P2O_EXIT_TEMPFAIL)
			rc = -1;
		else
			answer_error(resp, status, status_of(err->code),
			    err->msg);
		goto out;
	}
	*status = 200;
	sbuf_addf(resp, "{\"deleted\":%s}", PQcmdTuples(res)[0] ?
	    PQcmdTuples(res) : "0");
	PQclear(res);
out:
	free(value);
	sbuf_release(&sql);
	return rc;
}

/* the table from its DDL, unless it exists: 201 created, 200 there */
static int
do_create(struct pgt_session *s, const char *table, const char *body,
    size_t len, struct sbuf *resp, long *status, struct p2o_err *err)
{
	char *ddl;
	int rc;

	forget_table(s, table);
	if (table_get(s, table, err) != NULL) {
		*status = 200;
		sbuf_adds(resp, "{}");
		return 0;
	}
	if (err->code != 0)
		return -1;
	if (body == NULL || len == 0) {
		answer_error(resp, status, 404, "the table does not exist and "
		    "its section has no mapping_file to create it from");
		return 0;
	}
	ddl = xstrndup(body, len);
	rc = pgconn_exec(s->pg, "creating a target table", ddl, err);
	free(ddl);
	if (rc == -1) {
		/* another writer made it meanwhile */
		if (strstr(err->msg, "already exists") != NULL) {
			p2o_err_clear(err);
			*status = 200;
			sbuf_adds(resp, "{}");
			return 0;
		}
		if (err->code == P2O_EXIT_TEMPFAIL)
			return -1;
		answer_error(resp, status, status_of(err->code), err->msg);
		p2o_err_clear(err);
		return 0;
	}
	*status = 201;
	sbuf_adds(resp, "{}");
	return 0;
}

static int
do_probe(struct pgt_session *s, struct sbuf *resp, long *status,
    struct p2o_err *err)
{
	PGresult *res;

	res = pgconn_query(s->pg, "asking the server's version",
	    "SELECT pg_catalog.current_setting('server_version'), "
	    "pg_catalog.current_setting('server_version_num'), "
	    "(SELECT extversion FROM pg_catalog.pg_extension WHERE "
	    "extname = 'vector')", 0, NULL, err);
	if (res == NULL)
		return -1;
	*status = 200;
	sbuf_adds(resp, "{\"version\":");
	sbuf_add_jstr(resp, PQgetvalue(res, 0, 0),
	    strcspn(PQgetvalue(res, 0, 0), " "));
	sbuf_addf(resp, ",\"num\":%ld,\"vector\":",
	    atol(PQgetvalue(res, 0, 1)));
	if (PQgetisnull(res, 0, 2))
		sbuf_adds(resp, "null");
	else
		sbuf_add_jstr(resp, PQgetvalue(res, 0, 2),
		    strlen(PQgetvalue(res, 0, 2)));
	sbuf_addc(resp, '}');
	PQclear(res);
	return 0;
}

static int
request(void **conn, const char *url, const char *method, const char *path,
    const char *body, size_t len, struct sbuf *resp, long *status,
    char *errbuf, size_t errlen)
{
	struct pgt_session *s = *conn;
	struct p2o_err err = { 0 };
	struct sbuf local = SBUF_INIT;
	int rc;

	(void)method;
	if (resp == NULL)
		resp = &local;
	if (s == NULL && (s = *conn = session_open(url, &err)) == NULL) {
		/* credentials and a url libpq cannot read are answers
		 * (permanent); anything else is the server unreachable */
		if (err.code == P2O_EXIT_TEMPFAIL ||
		    err.code == P2O_EXIT_INTERNAL) {
			snprintf(errbuf, errlen, "%s", err.msg);
			return -1;
		}
		answer_error(resp, status, err.code == P2O_EXIT_AUTH ? 401 :
		    400, err.msg);
		sbuf_release(&local);
		return 0;
	}
	if (strcmp(path, "/probe") == 0)
		rc = do_probe(s, resp, status, &err);
	else if (strcmp(path, "/bulk") == 0)
		rc = do_bulk(s, body, len, resp, status, &err);
	else if (strcmp(path, "/read") == 0)
		rc = do_read(s, body, len, resp, status, &err);
	else if (strcmp(path, "/clear") == 0)
		rc = do_clear(s, body, len, resp, status, &err);
	else if (strncmp(path, "/create/", 8) == 0)
		rc = do_create(s, path + 8, body, len, resp, status, &err);
	else if (strncmp(path, "/rejects/", 9) == 0)
		rc = pgt_rejects_request(s, path + 9, body, len, resp, status,
		    &err);
	else {
		answer_error(resp, status, 400, "no such request");
		rc = 0;
	}
	sbuf_release(&local);
	if (rc == 0)
		return 0;
	if (PQstatus(s->pg) == CONNECTION_BAD) {
		/* the next request opens another connection */
		session_close(s);
		*conn = NULL;
		snprintf(errbuf, errlen, "%s", err.msg);
		return -1;
	}
	answer_error(resp, status, status_of(err.code), err.msg);
	return 0;
}

const struct http_local pgt_transport = {
	.request = request,
	.close = session_close,
};
