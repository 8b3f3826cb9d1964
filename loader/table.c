/*
 * table.c - a table as the load reads it: which columns a copy row
 * carries (exactly those the stream sends) and its key, as the catalogue
 * says (lib/pg/pgcat.c owns those questions and the key rule), how many
 * rows there are, and where the sampled boundaries fall. Owns every
 * query about a table's rows except the COPY itself (wave.c runs that,
 * from the text built here) and never reads a row of data but the sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "pg/pgcat.h"
#include "pg/pgconn.h"
#include "pg/pgtypes.h"
#include "where.h"
#include "loader.h"

void
table_release(struct ld_table *t)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		free(t->cols[i].name);
	for (i = 0; i < t->nkeys; i++) {
		free(t->keys[i].name);
		free(t->keys[i].ident);
		free(t->keys[i].type);
	}
	free(t->cols);
	free(t->keys);
	free(t->rel);
	free(t->from);
	free(t->select);
	pgnest_release(&t->nest);
	if (t->tpl != NULL) {
		msg_rowtpl_release(t->tpl);
		free(t->tpl);
	}
	memset(t, 0, sizeof(*t));
}

void
table_template(struct ld_table *t)
{
	const char *keys[t->nkeys + 1], *cols[t->ncols + 1];
	int i, n = 0;

	for (i = 0; i < t->nkeys; i++)
		keys[i] = t->keys[i].name;
	for (i = 0; i < t->ncols; i++)
		if (!t->cols[i].hidden)
			cols[n++] = t->cols[i].name;
	t->tpl = xmalloc(sizeof(*t->tpl));
	msg_rowtpl_init(t->tpl, 'c', t->rel, keys, t->nkeys, cols, n);
}

/* the section's collections, read after the columns: a child names its
 * parent by one key column */
static int
describe_nest(struct pg_conn *c, const struct sync_section *sec,
    struct ld_table *t, struct p2o_err *e)
{
	int i;

	if (t->nkeys != 1)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' embeds "
		    "children or aggregates, which name their parent by one "
		    "key column; its key has %d", sec->rel, t->nkeys);
	for (i = 0; i < t->ncols; i++) {
		if (strcmp(t->cols[i].name, t->keys[0].name) == 0)
			t->nest_key = i;
		t->cols[i].hidden = config_nest_member(sec, t->cols[i].name);
	}
	return pgnest_describe(c, sec, t->keys[0].name, &t->nest, e);
}

/* what a copy row carries, as pgcat_describe found it: the columns
 * the stream sends, the key, and how to name them in SQL */
static int
from_catalogue(struct pg_conn *c, const struct pgcat_table *pt,
    struct ld_table *t, struct p2o_err *e)
{
	const struct sync_section *sec = pt->sec;
	const struct sync_more *more = sync_more(sec);
	struct sbuf sel = SBUF_INIT;
	char *q, *s, *n;
	int i, rc = -1;

	t->oid = pt->oid;
	/* a partitioned table reads its partitions and a table its
	 * inheritance children: the stream sends both under its name */
	if ((s = pgconn_ident(c, sec->schema, e)) == NULL)
		return -1;
	if ((n = pgconn_ident(c, sec->table, e)) == NULL) {
		free(s);
		return -1;
	}
	t->from = xmalloc(strlen(s) + strlen(n) + 2);
	sprintf(t->from, "%s.%s", s, n);
	free(s);
	free(n);

	t->cols = xcalloc((size_t)pt->ncols + 1, sizeof(*t->cols));
	for (i = 0; i < pt->ncols; i++) {
		if (!pt->cols[i].sent)
			continue;
		if (!pt->cols[i].readable) {
			p2o_fail(e, P2O_EXIT_REFUSED, "the role may not read "
			    "column '%s' of table '%s' (GRANT SELECT)",
			    pt->cols[i].name, sec->rel);
			goto out;
		}
		t->cols[t->ncols].name = xstrdup(pt->cols[i].name);
		t->cols[t->ncols++].typoid = pt->cols[i].typoid;
		if ((q = pgconn_ident(c, pt->cols[i].name, e)) == NULL)
			goto out;
		if (sel.len > 0)
			sbuf_adds(&sel, ", ");
		sbuf_adds(&sel, q);
		free(q);
	}
	if (t->ncols == 0) {
		p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' has no column the "
		    "stream sends", sec->rel);
		goto out;
	}
	t->select = xstrdup(sel.buf);
	t->keys = xcalloc((size_t)pt->nkey + 1, sizeof(*t->keys));
	for (i = 0; i < pt->nkey; i++) {
		const struct pgcat_column *k = &pt->cols[pt->key[i]];

		t->keys[i].name = xstrdup(k->name);
		t->keys[i].type = xstrdup(k->type);
		t->nkeys++;
		if ((t->keys[i].ident = pgconn_ident(c, k->name, e)) == NULL)
			goto out;
	}
	if (more->nchildren + more->naggregates > 0 &&
	    describe_nest(c, sec, t, e) == -1)
		goto out;
	rc = 0;
out:
	sbuf_release(&sel);
	return rc;
}

/*
 * Rows from pg_class.reltuples scaled to the heap's present size; a leaf
 * that was never analysed has no number to scale, and the table is
 * counted instead.
 */
int
table_size(struct pg_conn *c, struct ld_table *t, struct p2o_err *e)
{
	struct sbuf sql = SBUF_INIT;
	struct pgcat_heap *h;
	PGresult *res;
	double est = 0;
	int i, n, unknown = 0, rc = -1;

	if (pgcat_heaps(c, t->oid, &h, &n, e) == -1)
		return -1;
	t->pages = 0;
	for (i = 0; i < n; i++) {
		t->pages += h[i].pages;
		/* -1 from PostgreSQL 14; before, 0 pages and 0 tuples */
		if (h[i].tuples < 0 || (h[i].relpages == 0 && h[i].pages > 0))
			unknown = 1;
		else if (h[i].relpages > 0)
			est += h[i].tuples / h[i].relpages * h[i].pages;
	}
	free(h);
	if (unknown) {
		sbuf_addf(&sql, "SELECT pg_catalog.count(*) FROM %s", t->from);
		if ((res = pgconn_query(c, "counting the table's rows",
		    sql.buf, 0, NULL, e)) == NULL)
			goto out;
		est = strtod(PQgetvalue(res, 0, 0), NULL);
		PQclear(res);
		log_info("table '%s' was never analysed: counted %.0f rows",
		    t->rel, est);
	}
	t->estimate = est < 0 ? 0 : (uint64_t)(est + 0.5);
	rc = 0;
out:
	sbuf_release(&sql);
	return rc;
}

int
table_describe(struct pg_conn *c, const char *pub, const struct config *cfg,
    const struct sync_section *sec, struct pgcat_table *pre,
    struct ld_table *t, struct p2o_err *e)
{
	struct pgcat_table pt;
	int rc;

	memset(t, 0, sizeof(*t));
	t->rel = xstrdup(sec->rel);
	t->where = sync_more(sec)->where_expr;
	if (pre != NULL)
		pt = *pre;
	else if (pgcat_describe(c, pub, sec, &pt, e) == -1) {
		table_release(t);
		return -1;
	}
	rc = pgcat_check_overlap(cfg, &pt, e) == -1 ||
	    from_catalogue(c, &pt, t, e) == -1 ? -1 : 0;
	pgcat_table_release(&pt);
	if (rc == -1)
		table_release(t);
	else
		table_template(t);
	return rc;
}

int
table_key_matches(const struct ld_table *t, const struct progress *p)
{
	int i;

	if (p->nkeys != t->nkeys)
		return 0;
	for (i = 0; i < t->nkeys; i++)
		if (strcmp(p->key[i], t->keys[i].name) != 0 ||
		    strcmp(p->types[i], t->keys[i].type) != 0)
			return 0;
	return 1;
}

/* the key's columns, quoted, comma-separated */
static void
key_list(struct sbuf *sql, const struct ld_table *t)
{
	int i;

	for (i = 0; i < t->nkeys; i++) {
		if (i > 0)
			sbuf_adds(sql, ", ");
		sbuf_adds(sql, t->keys[i].ident);
	}
}

/*
 * The boundaries of a sample sorted by the key. The server numbers and
 * counts the sample (the windows) and sends only the rows range_pick
 * takes, with their numbers, which are checked against range_pick's: a
 * sample of a third of a small table used to cross the wire row by row
 * for the few it cuts at (600 instructions a row of the table in the
 * client, as much as copying it).
 */
static int
sample(struct pg_conn *c, const struct ld_table *t, int nranges,
    struct progress *p, struct p2o_err *e)
{
	struct sbuf sql = SBUF_INIT;
	PGresult *res;
	size_t *idx = NULL, nsample = 0, at;
	int nb = 0, next = 0, i, row, nrows, rc = -1;

	/* the window's columns have names no key column has in practice;
	 * the pick is range_pick's: a sample row r is a boundary when
	 * floor(i * n / nranges) = r for an i in 1 .. nranges - 1 */
	sbuf_adds(&sql, "SELECT ");
	key_list(&sql, t);
	sbuf_adds(&sql, ", \"p2o sample n\", \"p2o sample r\" FROM (SELECT ");
	key_list(&sql, t);
	sbuf_adds(&sql, ", pg_catalog.count(*) OVER () AS \"p2o sample n\", "
	    "pg_catalog.row_number() OVER (ORDER BY ");
	key_list(&sql, t);
	sbuf_addf(&sql, ") - 1 AS \"p2o sample r\" FROM %s TABLESAMPLE SYSTEM "
	    "(%.6f)) s WHERE GREATEST((\"p2o sample r\" * %d + \"p2o sample "
	    "n\" - 1) / \"p2o sample n\", 1) <= LEAST(((\"p2o sample r\" + 1) * "
	    "%d + \"p2o sample n\" - 1) / \"p2o sample n\" - 1, %d) ORDER BY "
	    "\"p2o sample r\"", t->from,
	    range_sample_percent(t->estimate, t->pages, nranges), nranges,
	    nranges, nranges - 1);
	res = PQexec(c, sql.buf);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		pgconn_failed(c, res, "sampling the key", e);
		PQclear(res);
		goto out;
	}
	idx = xcalloc(nranges, sizeof(*idx));
	p->bounds = xcalloc(nranges, (size_t)t->nkeys * sizeof(char *));
	nrows = PQntuples(res);
	for (row = 0; row < nrows; row++) {
		if (row == 0) {
			nsample = strtoull(PQgetvalue(res, 0, t->nkeys), NULL,
			    10);
			nb = range_pick(nsample, nranges, idx);
		}
		at = strtoull(PQgetvalue(res, row, t->nkeys + 1), NULL, 10);
		if (next == nb || idx[next] != at)
			break;
		for (i = 0; i < t->nkeys; i++)
			p->bounds[(size_t)next * t->nkeys + i] =
			    xstrdup(PQgetvalue(res, row, i));
		next++;
	}
	PQclear(res);
	if (next != nb || row != nrows) {
		p2o_fail(e, P2O_EXIT_TEMPFAIL, "sampling the key of '%s': %d "
		    "boundaries arrived, %d expected of %zu rows", t->rel, nrows,
		    nb, nsample);
		goto out;
	}
	p->of = nb + 1;
	log_info("table '%s': about %llu rows, cut into %d range%s at %zu "
	    "sampled keys", t->rel, (unsigned long long)t->estimate, p->of,
	    p->of > 1 ? "s" : "", nsample);
	rc = 0;
out:
	if (rc == -1)
		p->of = next + 1;	/* what progress_release frees */
	sbuf_release(&sql);
	free(idx);
	return rc;
}

int
table_cut(struct pg_conn *c, const struct ld_table *t, uint64_t range_rows,
    struct progress *p, struct p2o_err *e)
{
	int i, nranges;

	progress_init(p);
	p->nkeys = t->nkeys;
	p->key = xcalloc(t->nkeys, sizeof(char *));
	p->types = xcalloc(t->nkeys, sizeof(char *));
	for (i = 0; i < t->nkeys; i++) {
		p->key[i] = xstrdup(t->keys[i].name);
		p->types[i] = xstrdup(t->keys[i].type);
	}
	/* without a key there is nothing to cut by */
	nranges = t->nkeys ? range_count(t->estimate, range_rows) : 1;
	if (nranges == 1) {
		p->of = 1;
		log_info("table '%s': about %llu rows, read as one range",
		    t->rel, (unsigned long long)t->estimate);
		return 0;
	}
	if (sample(c, t, nranges, p, e) == -1) {
		progress_release(p);
		return -1;
	}
	return 0;
}

struct where_arg {
	struct pg_conn *c;
	const struct ld_table *t;
};

/* text, varchar, bpchar: the types the filter's byte order can differ
 * from the database's for, under the column's collation */
static int
collatable(const struct ld_table *t, const char *name)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return pgtype_is_string(t->cols[i].typoid);
	return 0;
}

/*
 * The filter's names and literals, quoted for PostgreSQL. A string column
 * is compared under COLLATE "C", byte order as the shaper compares: under
 * another collation the load would leave out rows the stream keeps
 * ('B' < 'b' bytewise, not in en-US).
 */
static char *
where_quote(void *arg, const char *s, int is_ident)
{
	struct where_arg *a = arg;
	struct p2o_err e;
	char *q, *copy;

	if (!is_ident)
		return pgconn_literal(a->c, s, &e);
	if ((q = pgconn_ident(a->c, s, &e)) == NULL || !collatable(a->t, s))
		return q;
	copy = xmalloc(strlen(q) + sizeof(" COLLATE \"C\""));
	sprintf(copy, "%s COLLATE \"C\"", q);
	free(q);
	return copy;
}

/* a range_quote_fn: PQescapeLiteral, as a heap copy */
static char *
quote(void *arg, const char *s)
{
	struct p2o_err e;

	return pgconn_literal(arg, s, &e);
}

/*
 * The section's filter, as the shaper evaluates it on each row (rows it
 * would delete are not read at all), and a resnapshot's scope, which
 * narrows the read the same way: appended after a WHERE (more: one is
 * there already).
 */
static int
add_filters(struct sbuf *sql, struct pg_conn *c, const struct ld_table *t,
    int more, struct p2o_err *e)
{
	struct where_arg wa = { c, t };

	if (t->where != NULL) {
		sbuf_adds(sql, more ? " AND " : " WHERE ");
		more = 1;
		if (where_sql(t->where, sql, where_quote, &wa) == -1)
			return pgconn_failed(c, NULL, "quoting the filter", e);
	}
	if (t->scope != NULL) {
		sbuf_adds(sql, more ? " AND " : " WHERE ");
		if (where_sql(t->scope, sql, where_quote, &wa) == -1)
			return pgconn_failed(c, NULL, "quoting --where", e);
	}
	return 0;
}

int
table_count(struct pg_conn *c, const struct ld_table *t, uint64_t *n,
    struct p2o_err *e)
{
	struct sbuf sql = SBUF_INIT;
	struct pg_result *res;
	int rc = -1;

	sbuf_addf(&sql, "SELECT pg_catalog.count(*) FROM %s", t->from);
	if (add_filters(&sql, c, t, 0, e) == 0 &&
	    (res = pgconn_query(c, "counting the rows", sql.buf, 0, NULL,
	    e)) != NULL) {
		*n = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
		rc = 0;
	}
	sbuf_release(&sql);
	return rc;
}

int
table_copy_sql(struct sbuf *sql, struct pg_conn *c, const struct ld_table *t,
    const struct progress *p, int r, struct p2o_err *e)
{
	size_t before;

	sbuf_reset(sql);
	/* the collections' subqueries name the parent by its alias */
	sbuf_addf(sql, "COPY (SELECT %s%s FROM %s " PGNEST_PARENT, t->select,
	    t->nest.select ? t->nest.select : "", t->from);
	before = sql->len;
	if (range_where(sql, t->keys, t->nkeys,
	    r > 0 ? progress_bound(p, r - 1) : NULL,
	    r < p->of - 1 ? progress_bound(p, r) : NULL, quote, c) == -1)
		return pgconn_failed(c, NULL, "quoting a range boundary", e);
	if (add_filters(sql, c, t, sql->len > before, e) == -1)
		return -1;
	sbuf_adds(sql, ") TO STDOUT");
	return 0;
}
