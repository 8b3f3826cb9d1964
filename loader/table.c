/*
 * table.c - what the loader asks the catalogue about a table: which
 * columns a copy row carries (exactly those the stream sends), the key,
 * how many rows there are, and where the sampled boundaries fall. Owns
 * every query about a table except the COPY itself (wave.c runs that,
 * from the text built here) and never reads a row of data but the sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "where.h"
#include "loader.h"

/*
 * The columns pgoutput sends, in the order it sends them: every column
 * that is not dropped or generated, by attnum; from PostgreSQL 15, only
 * those in the publication's column list when it has one.
 */
static const char columns_sql[] =
    "SELECT a.attname, a.atttypid, "
    "pg_catalog.has_column_privilege(a.attrelid, a.attnum, 'SELECT') "
    "FROM pg_catalog.pg_attribute a "
    "WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped "
    "AND a.attgenerated = '' AND ($2 = '' OR a.attnum = ANY (coalesce(("
    "SELECT pr.prattrs::pg_catalog.int2[] "
    "FROM pg_catalog.pg_publication_rel pr "
    "JOIN pg_catalog.pg_publication p ON p.oid = pr.prpubid "
    "WHERE p.pubname = $2 AND pr.prrelid = a.attrelid), "
    "ARRAY[a.attnum]))) ORDER BY a.attnum";

/* the key rows carry: the replica identity index when the table names
 * one, else the primary key (what capture-pg registers), in key order;
 * with each column's exact type, which a boundary is cast to (bit(4), not
 * bit, which would be bit(1)) */
static const char key_sql[] =
    "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) "
    "FROM pg_catalog.pg_class c "
    "JOIN pg_catalog.pg_index i ON i.indrelid = c.oid AND "
    "  (CASE c.relreplident WHEN 'i' THEN i.indisreplident "
    "   ELSE i.indisprimary END) "
    "CROSS JOIN LATERAL pg_catalog.unnest(i.indkey::pg_catalog.int2[]) "
    "  WITH ORDINALITY AS k(attnum, ord) "
    "JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid "
    "  AND a.attnum = k.attnum "
    "WHERE c.oid = $1 ORDER BY k.ord";

/* per heap (a plain table, or each leaf partition): the planner's
 * numbers and the pages it has now, so a table grown since it was last
 * analysed is estimated at its present size */
static const char size_sql[] =
    "SELECT c.reltuples, c.relpages, pg_catalog.pg_relation_size(c.oid) / "
    "pg_catalog.current_setting('block_size')::pg_catalog.int8 "
    "FROM pg_catalog.pg_class c WHERE c.relkind = 'r' AND (c.oid = $1 OR "
    "c.oid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree("
    "$1::pg_catalog.oid::pg_catalog.regclass) t WHERE t.isleaf))";

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
	memset(t, 0, sizeof(*t));
}

static char *
ident(struct ld_conn *c, const char *name, struct ld_err *e)
{
	char *q, *copy;

	if ((q = PQescapeIdentifier(c->pg, name, strlen(name))) == NULL) {
		conn_failed(c, NULL, "quoting a name", e);
		return NULL;
	}
	copy = xstrdup(q);
	PQfreemem(q);
	return copy;
}

static int
find(struct ld_conn *c, const struct sync_section *sec, struct ld_table *t,
    struct ld_err *e)
{
	const char *params[2] = { sec->schema, sec->table };
	struct sbuf from = SBUF_INIT;
	const char *kind;
	char *s, *n;
	PGresult *res;
	int rc = -1;

	res = conn_query(c, "reading the catalogue",
	    "SELECT c.oid, c.relkind FROM pg_catalog.pg_class c "
	    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
	    "WHERE n.nspname = $1 AND c.relname = $2", 2, params, e);
	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0) {
		ld_fail(e, P2O_EXIT_REFUSED, "table '%s' does not exist (sync "
		    "section '%s')", sec->rel, sec->name);
		goto out;
	}
	kind = PQgetvalue(res, 0, 1);
	if (strcmp(kind, "r") != 0 && strcmp(kind, "p") != 0) {
		ld_fail(e, P2O_EXIT_REFUSED, "'%s' is not a table (relkind "
		    "'%s')", sec->rel, kind);
		goto out;
	}
	t->oid = (uint32_t)strtoul(PQgetvalue(res, 0, 0), NULL, 10);
	if ((s = ident(c, sec->schema, e)) == NULL)
		goto out;
	if ((n = ident(c, sec->table, e)) == NULL) {
		free(s);
		goto out;
	}
	/* a partitioned table reads its partitions, as the stream sends
	 * them under its name; a plain one must not read tables that
	 * inherit from it, which the stream sends under their own */
	sbuf_addf(&from, "%s%s.%s", kind[0] == 'r' ? "ONLY " : "", s, n);
	t->from = xstrdup(from.buf);
	free(s);
	free(n);
	rc = 0;
out:
	sbuf_release(&from);
	PQclear(res);
	return rc;
}

static int
columns(struct ld_conn *c, const struct config *cfg,
    const struct sync_section *sec, struct ld_table *t, struct ld_err *e)
{
	struct sbuf sel = SBUF_INIT;
	char oid[16], *q;
	const char *params[2] = { oid, c->version >= 150000 ?
	    cfg->publication : "" };
	PGresult *res;
	int i, rc = -1;

	snprintf(oid, sizeof(oid), "%u", t->oid);
	if ((res = conn_query(c, "reading the table's columns", columns_sql,
	    2, params, e)) == NULL)
		return -1;
	t->ncols = PQntuples(res);
	if (t->ncols == 0) {
		ld_fail(e, P2O_EXIT_REFUSED, "table '%s' has no column the "
		    "stream sends", sec->rel);
		goto out;
	}
	t->cols = xcalloc(t->ncols, sizeof(*t->cols));
	for (i = 0; i < t->ncols; i++) {
		t->cols[i].name = xstrdup(PQgetvalue(res, i, 0));
		t->cols[i].typoid = (uint32_t)strtoul(PQgetvalue(res, i, 1),
		    NULL, 10);
		if (strcmp(PQgetvalue(res, i, 2), "t") != 0) {
			ld_fail(e, P2O_EXIT_REFUSED, "the role may not read "
			    "column '%s' of table '%s' (GRANT SELECT)",
			    t->cols[i].name, sec->rel);
			goto out;
		}
		if ((q = ident(c, t->cols[i].name, e)) == NULL)
			goto out;
		if (i > 0)
			sbuf_adds(&sel, ", ");
		sbuf_adds(&sel, q);
		free(q);
	}
	t->select = xstrdup(sel.buf);
	rc = 0;
out:
	sbuf_release(&sel);
	PQclear(res);
	return rc;
}

/* a column's exact type, by name */
static const char column_type_sql[] =
    "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) "
    "FROM pg_catalog.pg_attribute a WHERE a.attrelid = $1 "
    "AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped";

/* the section's primary_key: the ranges cut on the key ids are made of */
static int
key_override(struct ld_conn *c, const struct sync_section *sec,
    struct ld_table *t, struct ld_err *e)
{
	char oid[16];
	const char *params[2] = { oid, NULL };
	PGresult *res;
	int i;

	snprintf(oid, sizeof(oid), "%u", t->oid);
	t->keys = xcalloc(sec->nprimary_key, sizeof(*t->keys));
	for (i = 0; i < sec->nprimary_key; i++) {
		params[1] = sec->primary_key[i];
		if ((res = conn_query(c, "reading the table's key",
		    column_type_sql, 2, params, e)) == NULL)
			return -1;
		if (PQntuples(res) != 1) {
			PQclear(res);
			return ld_fail(e, P2O_EXIT_REFUSED, "table '%s': "
			    "'primary_key' names column '%s', which the table "
			    "does not have", sec->rel, sec->primary_key[i]);
		}
		t->keys[i].name = xstrdup(PQgetvalue(res, 0, 0));
		t->keys[i].type = xstrdup(PQgetvalue(res, 0, 1));
		t->nkeys++;
		PQclear(res);
		if ((t->keys[i].ident = ident(c, t->keys[i].name, e)) == NULL)
			return -1;
	}
	return 0;
}

static int
key(struct ld_conn *c, const struct sync_section *sec, struct ld_table *t,
    struct ld_err *e)
{
	char oid[16];
	const char *params[1] = { oid };
	PGresult *res;
	int i, rc = -1;

	if (sec->primary_key != NULL)
		return key_override(c, sec, t, e);
	snprintf(oid, sizeof(oid), "%u", t->oid);
	if ((res = conn_query(c, "reading the table's key", key_sql, 1,
	    params, e)) == NULL)
		return -1;
	/* an append-only table needs none: it is read as one range */
	if ((t->nkeys = PQntuples(res)) == 0 && sec->append_only) {
		rc = 0;
		goto out;
	}
	if (t->nkeys == 0) {
		ld_fail(e, P2O_EXIT_REFUSED, "table '%s' has no primary key",
		    sec->rel);
		goto out;
	}
	t->keys = xcalloc(t->nkeys, sizeof(*t->keys));
	for (i = 0; i < t->nkeys; i++) {
		t->keys[i].name = xstrdup(PQgetvalue(res, i, 0));
		t->keys[i].type = xstrdup(PQgetvalue(res, i, 1));
		if ((t->keys[i].ident = ident(c, t->keys[i].name, e)) == NULL)
			goto out;
	}
	rc = 0;
out:
	PQclear(res);
	return rc;
}

/*
 * Rows from pg_class.reltuples scaled to the heap's present size; a leaf
 * that was never analysed has no number to scale, and the table is
 * counted instead.
 */
static int
size(struct ld_conn *c, const struct sync_section *sec, struct ld_table *t,
    struct ld_err *e)
{
	struct sbuf sql = SBUF_INIT;
	char oid[16];
	const char *params[1] = { oid };
	PGresult *res;
	double tuples, est = 0;
	long long relpages, pages;
	int i, unknown = 0, rc = -1;

	snprintf(oid, sizeof(oid), "%u", t->oid);
	if ((res = conn_query(c, "reading the table's size", size_sql, 1,
	    params, e)) == NULL)
		return -1;
	t->pages = 0;
	for (i = 0; i < PQntuples(res); i++) {
		tuples = strtod(PQgetvalue(res, i, 0), NULL);
		relpages = strtoll(PQgetvalue(res, i, 1), NULL, 10);
		pages = strtoll(PQgetvalue(res, i, 2), NULL, 10);
		t->pages += pages;
		/* -1 from PostgreSQL 14; before, 0 pages and 0 tuples */
		if (tuples < 0 || (relpages == 0 && pages > 0))
			unknown = 1;
		else if (relpages > 0)
			est += tuples / relpages * pages;
	}
	PQclear(res);
	if (unknown) {
		sbuf_addf(&sql, "SELECT pg_catalog.count(*) FROM %s", t->from);
		if ((res = conn_query(c, "counting the table's rows",
		    sql.buf, 0, NULL, e)) == NULL)
			goto out;
		est = strtod(PQgetvalue(res, 0, 0), NULL);
		PQclear(res);
		log_info("table '%s' was never analysed: counted %.0f rows",
		    sec->rel, est);
	}
	t->estimate = est < 0 ? 0 : (uint64_t)(est + 0.5);
	rc = 0;
out:
	sbuf_release(&sql);
	return rc;
}

int
table_describe(struct ld_conn *c, const struct config *cfg,
    const struct sync_section *sec, struct ld_table *t, struct ld_err *e)
{
	memset(t, 0, sizeof(*t));
	t->rel = xstrdup(sec->rel);
	t->where = sec->where_expr;
	if (find(c, sec, t, e) == -1 || columns(c, cfg, sec, t, e) == -1 ||
	    key(c, sec, t, e) == -1 || size(c, sec, t, e) == -1) {
		table_release(t);
		return -1;
	}
	return 0;
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
 * The sample, sorted by the key, in single-row mode: the server counts it
 * first (the window), so the boundaries can be picked as the rows go by
 * and only they are kept, however large the sample.
 */
static int
sample(struct ld_conn *c, const struct ld_table *t, int nranges,
    struct progress *p, struct ld_err *e)
{
	struct sbuf sql = SBUF_INIT;
	PGresult *res;
	size_t *idx = NULL, row = 0, nsample = 0;
	int nb = 0, next = 0, i, rc = -1, failed = 0;

	sbuf_adds(&sql, "SELECT ");
	key_list(&sql, t);
	sbuf_addf(&sql, ", pg_catalog.count(*) OVER () FROM %s "
	    "TABLESAMPLE SYSTEM (%.6f) ORDER BY ", t->from,
	    range_sample_percent(t->estimate, t->pages, nranges));
	key_list(&sql, t);
	if (!PQsendQuery(c->pg, sql.buf) || !PQsetSingleRowMode(c->pg)) {
		conn_failed(c, NULL, "sampling the key", e);
		goto out;
	}
	idx = xcalloc(nranges, sizeof(*idx));
	p->bounds = xcalloc(nranges, (size_t)t->nkeys * sizeof(char *));
	while ((res = PQgetResult(c->pg)) != NULL) {
		if (PQresultStatus(res) == PGRES_SINGLE_TUPLE && !failed) {
			if (row == 0) {
				nsample = strtoull(PQgetvalue(res, 0,
				    t->nkeys), NULL, 10);
				nb = range_pick(nsample, nranges, idx);
			}
			if (next < nb && idx[next] == row) {
				for (i = 0; i < t->nkeys; i++)
					p->bounds[(size_t)next * t->nkeys + i] =
					    xstrdup(PQgetvalue(res, 0, i));
				next++;
			}
			row++;
		} else if (PQresultStatus(res) != PGRES_TUPLES_OK &&
		    !failed) {
			conn_failed(c, res, "sampling the key", e);
			failed = 1;
		}
		PQclear(res);
	}
	if (failed)
		goto out;
	if (next != nb) {
		ld_fail(e, P2O_EXIT_TEMPFAIL, "sampling the key of '%s': %zu "
		    "rows arrived, %zu announced", t->rel, row, nsample);
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
table_cut(struct ld_conn *c, const struct ld_table *t, uint64_t range_rows,
    struct progress *p, struct ld_err *e)
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

/* pg_type OIDs, fixed since they are built in */
enum { OID_TEXT = 25, OID_BPCHAR = 1042, OID_VARCHAR = 1043 };

struct where_arg {
	struct ld_conn *c;
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
			return t->cols[i].typoid == OID_TEXT ||
			    t->cols[i].typoid == OID_VARCHAR ||
			    t->cols[i].typoid == OID_BPCHAR;
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
	char *q, *copy;

	q = is_ident ? PQescapeIdentifier(a->c->pg, s, strlen(s)) :
	    PQescapeLiteral(a->c->pg, s, strlen(s));
	if (q == NULL)
		return NULL;
	if (is_ident && collatable(a->t, s)) {
		copy = xmalloc(strlen(q) + sizeof(" COLLATE \"C\""));
		sprintf(copy, "%s COLLATE \"C\"", q);
	} else
		copy = xstrdup(q);
	PQfreemem(q);
	return copy;
}

int
table_copy_sql(struct sbuf *sql, struct ld_conn *c, const struct ld_table *t,
    const struct progress *p, int r, struct ld_err *e)
{
	struct where_arg wa = { c, t };
	size_t before;

	sbuf_reset(sql);
	sbuf_addf(sql, "COPY (SELECT %s FROM %s", t->select, t->from);
	before = sql->len;
	if (range_where(sql, t->keys, t->nkeys,
	    r > 0 ? progress_bound(p, r - 1) : NULL,
	    r < p->of - 1 ? progress_bound(p, r) : NULL, conn_quote, c) == -1)
		return conn_failed(c, NULL, "quoting a range boundary", e);
	/* the section's filter, as the shaper evaluates it on each row:
	 * rows it would delete are not read at all */
	if (t->where != NULL) {
		sbuf_adds(sql, sql->len > before ? " AND " : " WHERE ");
		if (where_sql(t->where, sql, where_quote, &wa) == -1)
			return conn_failed(c, NULL, "quoting the filter", e);
	}
	sbuf_adds(sql, ") TO STDOUT");
	return 0;
}
