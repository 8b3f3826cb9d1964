/*
 * postgres_rejects.c - the quarantine of refused documents in the
 * PostgreSQL target: the table pg2osync_rejects in the url's database,
 * one row per record, the record itself a JSON object (what the write
 * was, its position, table and the refusal's words) beside the columns a
 * listing filters and sorts on (stream, version, key).
 *
 * A record's key is md5 of the stream, the document's table and id and
 * the version, computed by the server: recording the same refusal again
 * (a replay after a crash between the record and the acknowledgement)
 * replaces it, and a newer refusal of the same document is a record of
 * its own. Records carry their stream, so pipelines sharing a database
 * each count and list their own.
 *
 * The writer's requests (the table made ready, the count, the records
 * written in one transaction) are answered in-process (postgres_exec.c
 * hands /rejects/... here); the listing and the clearing (pg2osync
 * rejects) block on the connection's session. Never logs or exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "p2o.h"
#include "pg/pgconn.h"
#include "postgres.h"

#define REJECTS_DDL \
	"CREATE TABLE IF NOT EXISTS " PGT_REJECTS_TABLE " (" \
	"key text PRIMARY KEY, stream text NOT NULL, version bigint NOT NULL, " \
	"record json NOT NULL, " \
	"created timestamptz NOT NULL DEFAULT pg_catalog.now())"

static const char exists_sql[] =
    "SELECT pg_catalog.to_regclass('" PGT_REJECTS_TABLE "') IS NOT NULL";

static void
prepare_call(struct sbuf *path, struct http_call *call)
{
	(void)path;
	http_call_set(call, "POST", "/rejects/prepare", NULL, NULL, 0);
}

static void
count_call(const char *stream, struct sbuf *body, struct http_call *call)
{
	sbuf_reset(body);
	sbuf_adds(body, "{\"stream\":");
	sbuf_add_jstr(body, stream, strlen(stream));
	sbuf_addc(body, '}');
	http_call_set(call, "POST", "/rejects/count", NULL, body->buf,
	    body->len);
}

static enum target_answer
count_answer(long status, const struct sbuf *resp, uint64_t *n, char *why,
    size_t whylen)
{
	enum target_answer a = pgt_status_class(status);
	struct jspan obj = { resp->buf, resp->len }, v;
	size_t off;

	*n = 0;
	if (a != TA_OK) {
		pgt_error_text(resp->buf, resp->len, why, whylen);
		return a == TA_AUTH ? TA_AUTH : TA_RETRY;
	}
	if (resp->len == 0 || jscan_validate(resp->buf, resp->len, &off,
	    NULL) == -1 || !jobj_get(obj, "count", &v) ||
	    jnum_u64(v, n) == -1) {
		snprintf(why, whylen, "the count of refused documents could not "
		    "be read");
		return TA_RETRY;
	}
	return TA_OK;
}

/* one line a record: {"op":..,"index":..,"id":..,"version":N,...} */
static void
records_call(const struct target_reject *r, int n, struct sbuf *body,
    struct http_call *call)
{
	int i;

	sbuf_reset(body);
	for (i = 0; i < n; i++) {
		sbuf_addf(body, "{\"op\":\"%s\"", r[i].del ? "delete" :
		    "index");
		target_reject_put(body, &r[i], "");
	}
	http_call_set(call, "POST", "/rejects/put", "application/x-ndjson",
	    body->buf, body->len);
}

static enum target_answer
records_answer(long status, const struct sbuf *resp, int n, char *why,
    size_t whylen)
{
	enum target_answer a = pgt_status_class(status);

	(void)n;
	if (a != TA_OK)
		pgt_error_text(resp->buf, resp->len, why, whylen);
	return a;
}

/* ---- the requests, answered in-process ---- */

static int
table_ready(struct pgt_session *s, struct p2o_err *err)
{
	PGresult *res = pgconn_query(s->pg, "looking table '"
	    PGT_REJECTS_TABLE "' up", exists_sql, 0, NULL, err);
	int rc;

	if (res == NULL)
		return -1;
	rc = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return rc;
}

static int
put_records(struct pgt_session *s, const char *body, size_t len,
    struct sbuf *resp, long *status, struct p2o_err *err)
{
	const char *p = body, *end = body + len, *nl;
	const char *params[4];
	struct jspan obj, v;
	char *line, ver[24];
	PGresult *res;
	size_t off;
	int rc = 0;

	if (pgconn_exec(s->pg, "beginning a record", "BEGIN", err) == -1)
		return -1;
	for (; rc == 0 && p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (nl == p)
			continue;
		obj.p = p, obj.n = (size_t)(nl - p);
		if (jscan_validate(obj.p, obj.n, &off, NULL) == -1 ||
		    !jobj_get(obj, "version", &v) ||
		    (size_t)snprintf(ver, sizeof(ver), "%.*s", (int)v.n, v.p)
		    >= sizeof(ver) || !jobj_get(obj, "stream", &v)) {
			rc = p2o_fail(err, P2O_EXIT_REFUSED, "a record that "
			    "is not the module's");
			break;
		}
		line = xstrndup(obj.p, obj.n);
		params[0] = line, params[1] = ver;
		res = pgconn_run(s->pg, PGRES_COMMAND_OK, "recording a refused "
		    "document",
		    "INSERT INTO " PGT_REJECTS_TABLE " (key, stream, version, "
		    "record) SELECT pg_catalog.md5(r.record->>'stream' || "
		    "E'\\n' || (r.record->'index')::text || E'\\n' || "
		    "(r.record->'id')::text || E'\\n' || $2::text), "
		    "r.record->>'stream', $2::bigint, r.record FROM (SELECT $1::json "
		    "AS record) r ON CONFLICT (key) DO UPDATE SET record = "
		    "excluded.record, created = pg_catalog.now()", 2, params,
		    err);
		free(line);
		if (res == NULL)
			rc = -1;
		PQclear(res);
	}
	if (rc == 0 && pgconn_exec(s->pg, "committing records", "COMMIT",
	    err) == 0) {
		*status = 200;
		sbuf_adds(resp, "{}");
		return 0;
	}
	if (PQstatus(s->pg) != CONNECTION_BAD)
		PQclear(PQexec(s->pg, "ROLLBACK"));
	return -1;
}

int
pgt_rejects_request(struct pgt_session *s, const char *what,
    const char *body, size_t len, struct sbuf *resp, long *status,
    struct p2o_err *err)
{
	struct jspan obj = { body, len }, v;
	PGresult *res;
	char *stream;
	size_t off;
	int rc;

	if (strcmp(what, "prepare") == 0) {
		if ((rc = table_ready(s, err)) == -1)
			return -1;
		if (rc == 0 && pgconn_exec(s->pg, "creating table '"
		    PGT_REJECTS_TABLE "'", REJECTS_DDL, err) == -1)
			return -1;
		*status = rc ? 200 : 201;
		sbuf_adds(resp, "{}");
		return 0;
	}
	if (strcmp(what, "put") == 0)
		return put_records(s, body, len, resp, status, err);
	if (strcmp(what, "count") != 0 || body == NULL ||
	    jscan_validate(body, len, &off, NULL) == -1 ||
	    !jobj_get(obj, "stream", &v) || jspan_type(v) != J_STRING)
		return p2o_fail(err, P2O_EXIT_REFUSED, "no such request");
	if ((rc = table_ready(s, err)) != 1) {
		if (rc == -1)
			return -1;
		*status = 200;
		sbuf_adds(resp, "{\"count\":0}");
		return 0;
	}
	stream = jstr_dup(v);
	res = pgconn_query(s->pg, "counting refused documents",
	    "SELECT pg_catalog.count(*) FROM " PGT_REJECTS_TABLE
	    " WHERE stream = $1", 1, (const char *const *)&stream, err);
	free(stream);
	if (res == NULL)
		return -1;
	*status = 200;
	sbuf_addf(resp, "{\"count\":%s}", PQgetvalue(res, 0, 0));
	PQclear(res);
	return 0;
}

/* ---- the listing and the clearing, blocking ---- */

/* a record read back (its text kept by the set): 0, or -1 when it is
 * not one of ours */
static int
add_record(struct target_rejects *set, const char *key, const char *text)
{
	struct target_reject *r;
	struct jspan src;
	char *copy = target_rejects_keep(set, xstrdup(text));
	size_t off;

	src.p = copy, src.n = strlen(copy);
	if (jscan_validate(src.p, src.n, &off, NULL) == -1 ||
	    (r = target_rejects_add(set, src,
	    target_rejects_keep(set, xstrdup(key)))) == NULL)
		return -1;
	r->stream = target_rejects_str(set, src, "stream");
	return 0;
}

static int
rejects_read(struct target_conn *c, const char *stream, int limit,
    struct target_rejects *set, struct p2o_err *err)
{
	struct pgt_session *s;
	const char *params[2];
	char lim[24];
	PGresult *res;
	int i, rc;

	memset(set, 0, sizeof(*set));
	if ((s = pgt_session_of(c, err)) == NULL)
		return -1;
	if ((rc = table_ready(s, err)) != 1) {
		pgt_session_check(c);
		return rc;
	}
	snprintf(lim, sizeof(lim), "%d", limit);
	params[0] = stream, params[1] = lim;
	res = pgconn_query(s->pg, "listing refused documents",
	    "SELECT key, record::text, pg_catalog.count(*) OVER () FROM "
	    PGT_REJECTS_TABLE " WHERE stream = $1 ORDER BY version, key "
	    "LIMIT $2", 2, params, err);
	if (res == NULL) {
		pgt_session_check(c);
		return -1;
	}
	for (i = 0; i < PQntuples(res); i++) {
		if (add_record(set, PQgetvalue(res, i, 0),
		    PQgetvalue(res, i, 1)) == -1) {
			PQclear(res);
			return p2o_fail(err, P2O_EXIT_TEMPFAIL, "table '"
			    PGT_REJECTS_TABLE "' holds a record that is not "
			    "one of ours");
		}
		set->total = strtoull(PQgetvalue(res, i, 2), NULL, 10);
	}
	PQclear(res);
	return 0;
}

static int
rejects_clear(struct target_conn *c, char *const *keys, int n,
    struct p2o_err *err)
{
	struct pgt_session *s;
	struct sbuf arr = SBUF_INIT;
	const char *param;
	PGresult *res;
	int i;

	if (n == 0)
		return 0;
	if ((s = pgt_session_of(c, err)) == NULL)
		return -1;
	/* the keys are md5 hex: an array literal needs no quoting */
	sbuf_addc(&arr, '{');
	for (i = 0; i < n; i++) {
		if (strspn(keys[i], "0123456789abcdef") != strlen(keys[i])) {
			sbuf_release(&arr);
			return p2o_fail(err, P2O_EXIT_TEMPFAIL, "a record key "
			    "that is not one of ours");
		}
		sbuf_addf(&arr, "%s%s", i ? "," : "", keys[i]);
	}
	sbuf_addc(&arr, '}');
	param = arr.buf;
	res = pgconn_run(s->pg, PGRES_COMMAND_OK, "clearing refused documents",
	    "DELETE FROM " PGT_REJECTS_TABLE " WHERE key = ANY ($1::text[])",
	    1, &param, err);
	sbuf_release(&arr);
	if (res == NULL) {
		pgt_session_check(c);
		return -1;
	}
	PQclear(res);
	return 0;
}

const struct target_rejects_ops pgt_rejects_ops = {
	.prepare_call = prepare_call,
	.count_call = count_call,
	.count_answer = count_answer,
	.call = records_call,
	.answer = records_answer,
	.read = rejects_read,
	.clear = rejects_clear,
};
