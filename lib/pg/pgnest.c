/*
 * pgnest.c - the one builder of a PostgreSQL parent's collections
 * (pgnest.h): the catalogue of each child table, the correlated
 * subqueries, and the members a row's results become. Every name in the
 * SQL is quoted here and every value a child row holds goes through
 * pgtype_to_json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "jscan.h"
#include "msg.h"
#include "p2o.h"
#include "pg/pgconn.h"
#include "pg/pgnest.h"
#include "pg/pgtypes.h"
#include "where.h"

#define CHILD	"p2o_c"
#define JUNC	"p2o_j"
#define ROWS	"p2o_x"

static const char cols_sql[] =
    "SELECT a.attname, a.atttypid, "
    "  (SELECT k.o FROM pg_catalog.unnest(i.indkey) WITH ORDINALITY "
    "   k(n, o) WHERE k.n = a.attnum) "
    "FROM pg_catalog.pg_attribute a "
    "LEFT JOIN pg_catalog.pg_index i ON i.indrelid = a.attrelid "
    "  AND i.indisprimary "
    "WHERE a.attrelid = $1::pg_catalog.regclass AND a.attnum > 0 "
    "  AND NOT a.attisdropped ORDER BY a.attnum";

static void
put_col(struct sbuf *b, const char *alias, const char *col)
{
	sbuf_adds(b, alias);
	sbuf_addc(b, '.');
	pgconn_put_ident(b, col);
}

static const struct pgnest_col *
find_col(const struct pgnest_coll *k, const char *name)
{
	int i;

	for (i = 0; i < k->ncols; i++)
		if (strcmp(k->cols[i].name, name) == 0)
			return &k->cols[i];
	return NULL;
}

static int
describe_table(struct pg_conn *c, const char *schema, const char *table,
    struct pgnest_coll *k, struct p2o_err *e)
{
	struct sbuf q = SBUF_INIT;
	const char *params[1];
	PGresult *res;
	int i;

	pgconn_put_qname(&q, schema, table);
	params[0] = q.buf;
	res = (PGresult *)pgconn_query(c, "reading a child table's columns",
	    cols_sql, 1, params, e);
	sbuf_release(&q);
	if (res == NULL)
		return -1;
	k->ncols = PQntuples(res);
	k->cols = xcalloc((size_t)k->ncols + 1, sizeof(*k->cols));
	for (i = 0; i < k->ncols; i++) {
		k->cols[i].name = xstrdup(PQgetvalue(res, i, 0));
		k->cols[i].typoid = (uint32_t)strtoul(PQgetvalue(res, i, 1),
		    NULL, 10);
		k->cols[i].key = PQgetisnull(res, i, 2) ? 0 :
		    atoi(PQgetvalue(res, i, 2));
	}
	PQclear(res);
	return 0;
}

int
pgnest_describe(struct pg_conn *c, const struct sync_section *sec,
    const char *key, struct pgnest *n, struct p2o_err *e)
{
	const struct sync_more *more = sync_more(sec);
	int i;

	memset(n, 0, sizeof(*n));
	n->sec = sec;
	n->key = xstrdup(key);
	n->n = more->nchildren + more->naggregates;
	n->coll = xcalloc((size_t)n->n + 1, sizeof(*n->coll));
	for (i = 0; i < more->nchildren; i++) {
		n->coll[i].child = &more->children[i];
		if (describe_table(c, more->children[i].schema,
		    more->children[i].table, &n->coll[i], e) == -1)
			return -1;
	}
	for (i = 0; i < more->naggregates; i++) {
		n->coll[more->nchildren + i].agg = &more->aggregates[i];
		if (describe_table(c, more->aggregates[i].schema,
		    more->aggregates[i].table, &n->coll[more->nchildren + i],
		    e) == -1)
			return -1;
	}
	return pgnest_build(n, e);
}

/* where_sql's quoting, without a connection: the aggregate's filter is
 * the server's alone to evaluate */
static char *
quote(void *arg, const char *s, int ident)
{
	struct sbuf b = SBUF_INIT;

	(void)arg;
	if (ident)
		put_col(&b, CHILD, s);
	else
		pgconn_put_literal(&b, s);
	return b.buf;
}

/* the keys in key order, as "p2o_c.a, p2o_c.b" */
static int
put_order(struct sbuf *b, const struct pgnest_coll *k)
{
	int pos, i, found, n = 0;

	for (pos = 1;; pos++) {
		for (found = 0, i = 0; i < k->ncols; i++)
			if (k->cols[i].key == pos) {
				if (n++)
					sbuf_adds(b, ", ");
				put_col(b, CHILD, k->cols[i].name);
				found = 1;
			}
		if (!found)
			return n;
	}
}

static int
build_child(struct pgnest *n, struct pgnest_coll *k, struct sbuf *b,
    struct p2o_err *e)
{
	const struct sync_child *c = k->child;
	const struct pgnest_col *col;
	struct sbuf order = SBUF_INIT;
	int i, nkeys;

	if (k->ncols == 0)
		return p2o_fail(e, P2O_EXIT_REFUSED, "sync section '%s': child "
		    "table '%s' does not exist or has no columns",
		    n->sec->name, c->rel);
	if ((nkeys = put_order(&order, k)) == 0) {
		sbuf_release(&order);
		return p2o_fail(e, P2O_EXIT_REFUSED, "sync section '%s': child "
		    "table '%s' has no primary key: its rows are embedded in "
		    "key order, and a single child's lowest key wins",
		    n->sec->name, c->rel);
	}
	if (c->through == NULL && find_col(k, c->foreign_key) == NULL) {
		sbuf_release(&order);
		return nest_no_column(n->sec, c->rel, c->foreign_key,
		    "foreign_key", e);
	}
	if (c->through != NULL && nkeys != 1) {
		sbuf_release(&order);
		return p2o_fail(e, P2O_EXIT_REFUSED, "sync section '%s': child "
		    "table '%s' is read through '%s', which names one key "
		    "column; its primary key has %d", n->sec->name, c->rel,
		    c->through_rel, nkeys);
	}
	for (i = 0; c->columns && i < c->ncolumns; i++)
		if (find_col(k, c->columns[i]) == NULL) {
			sbuf_release(&order);
			return nest_no_column(n->sec, c->rel, c->columns[i],
			    "columns", e);
		}
	k->emb = xcalloc((size_t)k->ncols + 1, sizeof(int));
	for (i = 0; i < k->ncols; i++)
		if (nest_keeps(c, k->cols[i].name))
			k->emb[k->nemb++] = i;
	if (k->nemb == 0) {
		sbuf_release(&order);
		return p2o_fail(e, P2O_EXIT_REFUSED, "sync section '%s': child "
		    "table '%s' keeps no column", n->sec->name, c->rel);
	}
	/* [rows naming the parent, their rows in key order (capped)] */
	sbuf_adds(b, ", (SELECT pg_catalog.json_build_array("
	    "pg_catalog.count(*), pg_catalog.json_agg(" ROWS ".r ORDER BY "
	    ROWS ".n)");
	if (c->max_rows > 0)
		sbuf_addf(b, " FILTER (WHERE " ROWS ".n <= %d)", c->max_rows);
	sbuf_adds(b, ") FROM (SELECT ARRAY[");
	for (i = 0; i < k->nemb; i++) {
		col = &k->cols[k->emb[i]];
		/* format('%s') is the type's output function, the text
		 * pgoutput and COPY send */
		if (i)
			sbuf_adds(b, ", ");
		sbuf_adds(b, "CASE WHEN ");
		put_col(b, CHILD, col->name);
		sbuf_adds(b, " IS NULL THEN NULL ELSE pg_catalog.format('%s', ");
		put_col(b, CHILD, col->name);
		sbuf_adds(b, ") END");
	}
	sbuf_adds(b, "]::pg_catalog.text[] AS r, pg_catalog.row_number() "
	    "OVER (ORDER BY ");
	sbuf_add(b, order.buf, order.len);
	sbuf_adds(b, ") AS n FROM ");
	pgconn_put_qname(b, c->schema, c->table);
	sbuf_adds(b, " " CHILD);
	if (c->through != NULL) {
		sbuf_adds(b, " JOIN ");
		pgconn_put_qname(b, c->through_schema, c->through_table);
		sbuf_adds(b, " " JUNC " ON ");
		put_col(b, JUNC, c->through_key);
		sbuf_adds(b, " = ");
		sbuf_add(b, order.buf, order.len);
		sbuf_adds(b, " WHERE ");
		put_col(b, JUNC, c->foreign_key);
	} else {
		sbuf_adds(b, " WHERE ");
		put_col(b, CHILD, c->foreign_key);
	}
	sbuf_adds(b, " = ");
	put_col(b, PGNEST_PARENT, n->key);
	sbuf_adds(b, ") " ROWS ")");
	sbuf_release(&order);
	return 0;
}

static int
build_agg(struct pgnest *n, struct pgnest_coll *k, struct sbuf *b,
    struct p2o_err *e)
{
	const struct sync_aggregate *a = k->agg;

	if (k->ncols == 0)
		return p2o_fail(e, P2O_EXIT_REFUSED, "sync section '%s': table "
		    "'%s' (an aggregate) does not exist or has no columns",
		    n->sec->name, a->rel);
	if (find_col(k, a->foreign_key) == NULL)
		return nest_no_column(n->sec, a->rel, a->foreign_key,
		    "foreign_key", e);
	sbuf_adds(b, ", (SELECT pg_catalog.count(*) FROM ");
	pgconn_put_qname(b, a->schema, a->table);
	sbuf_adds(b, " " CHILD " WHERE ");
	put_col(b, CHILD, a->foreign_key);
	sbuf_adds(b, " = ");
	put_col(b, PGNEST_PARENT, n->key);
	if (a->where_expr != NULL) {
		sbuf_adds(b, " AND (");
		if (where_sql(a->where_expr, b, quote, NULL) == -1)
			return p2o_fail(e, P2O_EXIT_CONFIG, "sync section '%s': "
			    "quoting the filter of '%s'", n->sec->name,
			    a->field);
		sbuf_addc(b, ')');
	}
	sbuf_addc(b, ')');
	return 0;
}

int
pgnest_build(struct pgnest *n, struct p2o_err *e)
{
	struct sbuf b = SBUF_INIT;
	int i, rc = 0;

	for (i = 0; i < n->n && rc == 0; i++)
		rc = n->coll[i].child ? build_child(n, &n->coll[i], &b, e) :
		    build_agg(n, &n->coll[i], &b, e);
	if (rc == -1) {
		sbuf_release(&b);
		return -1;
	}
	free(n->select);
	n->select = b.buf ? b.buf : xstrdup("");
	return 0;
}

static int
malformed(const struct pgnest *n, const struct pgnest_coll *k,
    struct p2o_err *e)
{
	return p2o_fail(e, P2O_EXIT_DATA, "sync section '%s': the server "
	    "returned a '%s' collection that is not what its subquery "
	    "builds", n->sec->name, k->child ? k->child->field :
	    k->agg->field);
}

/* one child row, a JSON array of texts or nulls, as an object */
static int
put_row(const struct pgnest_coll *k, struct jspan row, struct sbuf *out,
    struct sbuf *tmp)
{
	struct jiter it;
	struct jspan v;
	const char *name;
	int i = 0;
	size_t len;

	if (jiter_init(&it, row) == -1 || jspan_type(row) != J_ARRAY)
		return -1;
	sbuf_addc(out, '{');
	while (jiter_elem(&it, &v)) {
		if (i >= k->nemb)
			return -1;
		if (i)
			sbuf_addc(out, ',');
		name = nest_name(k->child, k->cols[k->emb[i]].name);
		sbuf_add_jstr(out, name, strlen(name));
		sbuf_addc(out, ':');
		if (jspan_type(v) == J_NULL)
			sbuf_adds(out, "null");
		else if (jspan_type(v) == J_STRING) {
			sbuf_reset(tmp);
			sbuf_grow(tmp, v.n + 1);
			len = jstr_unescape(v, tmp->buf);
			pgtype_to_json(k->cols[k->emb[i]].typoid, tmp->buf,
			    len, out);
		} else
			return -1;
		i++;
	}
	sbuf_addc(out, '}');
	return i == k->nemb ? 0 : -1;
}

static int
put_child(struct pgnest *n, struct pgnest_coll *k, struct sbuf *img,
    struct jspan val, const char *key, const char *rel, struct p2o_err *e)
{
	struct sbuf rows = SBUF_INIT, tmp = SBUF_INIT;
	struct jiter it, rit;
	struct jspan total, list, row;
	uint64_t t = 0, nrows = 0;
	size_t first = 0;
	int rc = -1;

	if (jspan_type(val) != J_ARRAY || jiter_init(&it, val) == -1 ||
	    !jiter_elem(&it, &total) || jnum_u64(total, &t) == -1 ||
	    !jiter_elem(&it, &list))
		goto out;
	if (jspan_type(list) == J_ARRAY) {
		jiter_init(&rit, list);
		while (jiter_elem(&rit, &row)) {
			if (nrows)
				sbuf_addc(&rows, ',');
			if (put_row(k, row, &rows, &tmp) == -1)
				goto out;
			if (nrows++ == 0)
				first = rows.len;
		}
	} else if (jspan_type(list) != J_NULL)
		goto out;
	nest_put_child(img, k->child, rows.buf ? rows.buf : "", rows.len,
	    first, nrows, t, key, rel, &k->dups);
	rc = 0;
out:
	sbuf_release(&rows);
	sbuf_release(&tmp);
	return rc == 0 ? 0 : malformed(n, k, e);
}

int
pgnest_put(struct pgnest *n, struct sbuf *img, const char *const *vals,
    const size_t *lens, const char *key, const char *rel,
    struct p2o_err *e)
{
	struct jspan v;
	uint64_t count;
	const char *why;
	size_t off;
	int i;

	for (i = 0; i < n->n; i++) {
		if (vals[i] == NULL)
			return malformed(n, &n->coll[i], e);
		v.p = vals[i];
		v.n = lens[i];
		if (n->coll[i].agg != NULL) {
			if (jscan_validate(v.p, v.n, &off, &why) == -1 ||
			    jnum_u64(v, &count) == -1)
				return malformed(n, &n->coll[i], e);
			nest_put_count(img, n->coll[i].agg, count);
		} else {
			if (jscan_validate(v.p, v.n, &off, &why) == -1)
				return malformed(n, &n->coll[i], e);
			if (put_child(n, &n->coll[i], img, v, key, rel, e) ==
			    -1)
				return -1;
		}
	}
	return 0;
}

void
pgnest_flush(struct pgnest *n)
{
	int i;

	for (i = 0; i < n->n; i++)
		if (n->coll[i].child && n->coll[i].child->single)
			nest_dups_flush(&n->coll[i].dups, n->sec->rel,
			    n->coll[i].child);
}

void
pgnest_release(struct pgnest *n)
{
	int i, j;

	if (n->coll == NULL)
		return;
	for (i = 0; i < n->n; i++) {
		for (j = 0; j < n->coll[i].ncols; j++)
			free(n->coll[i].cols[j].name);
		free(n->coll[i].cols);
		free(n->coll[i].emb);
		free(n->coll[i].dups.worst_key);
	}
	free(n->coll);
	free(n->key);
	free(n->select);
	memset(n, 0, sizeof(*n));
}
