/*
 * pgcat.c - the catalogue questions about a synced table and the answers
 * every program must agree on: the columns pgoutput sends, the replica
 * identity, the key rows are filed by (pgcat.h states the rule; this is
 * the only place it is written), the tables a publication of it carries
 * with it, and whether each of them keeps what a document's identity
 * reads in a row's before-image.
 *
 * It reads the catalogue and nothing else: no row of data, no DDL, and it
 * never exits. It logs the tables a refusal names, since a refusal must
 * name every one of them and a message holds only so many.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "pgcat.h"
#include "pgconn.h"
#include "sbuf.h"
#include "where.h"

/*
 * Every question below is asked of many tables at once (pgcat_describe_many:
 * their names, or oids, as arrays; the answers tagged with the table's
 * number or oid): a question a table cost thousands of round trips at
 * start with thousands of tables (issue 38), each answered in well under
 * a millisecond by the server.
 */
static const char find_sql[] =
    "SELECT s.ord, c.oid, c.relkind, c.relreplident "
    "FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.text[]), "
    "  pg_catalog.unnest($2::pg_catalog.text[])) "
    "  WITH ORDINALITY AS s(nsp, rel, ord) "
    "JOIN pg_catalog.pg_namespace n ON n.nspname = s.nsp "
    "JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid "
    "  AND c.relname = s.rel";

/* the replica identity's columns in key order: the identity index when
 * the table names one, else the primary key (what pgoutput flags); of
 * one table, and of many at once with each one's oid */
#define IDENTITY_FROM \
    "FROM pg_catalog.pg_class c " \
    "JOIN pg_catalog.pg_index i ON i.indrelid = c.oid AND " \
    "  (CASE c.relreplident WHEN 'i' THEN i.indisreplident " \
    "   ELSE i.indisprimary END) " \
    "CROSS JOIN LATERAL pg_catalog.unnest(i.indkey::pg_catalog.int2[]) " \
    "  WITH ORDINALITY AS k(attnum, ord) " \
    "JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid " \
    "  AND a.attnum = k.attnum "
static const char identity_sql[] =
    "SELECT a.attname " IDENTITY_FROM "WHERE c.oid = $1 ORDER BY k.ord";
static const char identity_many_sql[] =
    "SELECT c.oid, a.attname " IDENTITY_FROM
    "WHERE c.oid = ANY ($1::pg_catalog.oid[]) ORDER BY c.oid, k.ord";

/*
 * Every column, by attnum: its type (the exact one, which a boundary is
 * cast to: bit(4), not bit), whether pgoutput sends it (from PostgreSQL
 * 15 a publication may list columns; generated columns never), whether a
 * value may be stored out of line (PGCAT_TOASTABLE) and whether the role
 * may read it.
 */
#define COLUMNS_HEAD \
    "SELECT a.attrelid, a.attname, a.atttypid, " \
    "pg_catalog.format_type(a.atttypid, a.atttypmod), "
#define COLUMNS_TAIL \
    ", " PGCAT_TOASTABLE ", " \
    "pg_catalog.has_column_privilege(a.attrelid, a.attnum, 'SELECT') " \
    "FROM pg_catalog.pg_attribute a " \
    "WHERE a.attrelid = ANY ($1::pg_catalog.oid[]) " \
    "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attrelid, a.attnum"
static const char columns15_sql[] = COLUMNS_HEAD
    "a.attgenerated = '' AND ($2 = '' OR a.attnum = ANY (coalesce(("
    "SELECT pr.prattrs::pg_catalog.int2[] "
    "FROM pg_catalog.pg_publication_rel pr "
    "JOIN pg_catalog.pg_publication p ON p.oid = pr.prpubid "
    "WHERE p.pubname = $2 AND pr.prrelid = a.attrelid), "
    "ARRAY[a.attnum])))" COLUMNS_TAIL;
static const char columns12_sql[] = COLUMNS_HEAD
    "a.attgenerated = ''" COLUMNS_TAIL;
static const char columns10_sql[] = COLUMNS_HEAD "true" COLUMNS_TAIL;

/* what a publication of the table carries with it: its inheritance
 * children and partitions, at every depth (pg_inherits holds both) */
static const char tree_sql[] =
    "WITH RECURSIVE tree(root, oid) AS ("
    "  SELECT i.inhparent, i.inhrelid FROM pg_catalog.pg_inherits i "
    "  WHERE i.inhparent = ANY ($1::pg_catalog.oid[]) "
    "  UNION SELECT t.root, i.inhrelid FROM pg_catalog.pg_inherits i "
    "  JOIN tree t ON i.inhparent = t.oid) "
    "SELECT tree.root, c.oid, n.nspname, c.relname, c.relispartition, "
    "c.relreplident, c.relkind "
    "FROM tree JOIN pg_catalog.pg_class c ON c.oid = tree.oid "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind IN ('r', 'p') ORDER BY 1, 3, 4";

static const char names_sql[] =
    "SELECT a.attname FROM pg_catalog.pg_attribute a "
    "WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped "
    "ORDER BY a.attnum";

/* the first column of every row, as heap strings */
static int
strings(struct pg_conn *c, const char *what, const char *sql, uint32_t oid,
    char ***v, int *n, struct p2o_err *e)
{
	char buf[16];
	const char *params[1] = { buf };
	PGresult *res;
	int i;

	snprintf(buf, sizeof(buf), "%u", oid);
	if ((res = pgconn_query(c, what, sql, 1, params, e)) == NULL)
		return -1;
	*n = PQntuples(res);
	*v = xcalloc((size_t)*n + 1, sizeof(char *));
	for (i = 0; i < *n; i++)
		(*v)[i] = xstrdup(PQgetvalue(res, i, 0));
	PQclear(res);
	return 0;
}

static void
free_strings(char **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int
in_names(char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return 1;
	return 0;
}

void
pgcat_table_release(struct pgcat_table *t)
{
	int i;

	for (i = 0; i < t->ncols; i++) {
		free(t->cols[i].name);
		free(t->cols[i].type);
	}
	for (i = 0; i < t->nrels; i++) {
		free(t->rels[i].qname);
		free_strings(t->rels[i].idkey, t->rels[i].nidkey);
		free_strings(t->rels[i].cols, t->rels[i].ncols);
	}
	free(t->cols);
	free(t->idkey);
	free(t->key);
	free(t->rels);
	memset(t, 0, sizeof(*t));
}

const struct pgcat_column *
pgcat_column(const struct pgcat_table *t, const char *name)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return &t->cols[i];
	return NULL;
}

static int
column_index(const struct pgcat_table *t, const char *name)
{
	const struct pgcat_column *c = pgcat_column(t, name);

	return c == NULL ? -1 : (int)(c - t->cols);
}

void
pgcat_array_add(struct sbuf *b, const char *s)
{
	if (b->len > 1)
		sbuf_addc(b, ',');
	sbuf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sbuf_addc(b, '\\');
		sbuf_addc(b, *s);
	}
	sbuf_addc(b, '"');
}

/* the tables of one pgcat_describe_many, by oid */
struct byoid {
	uint32_t oid;
	int	 i;
};

static int
byoid_cmp(const void *a, const void *b)
{
	const struct byoid *x = a, *y = b;

	return x->oid < y->oid ? -1 : x->oid > y->oid;
}

/* the entries of by (n, sorted) for the oid of a row: by[*lo..*hi), the
 * tables of every section naming that table (none: *lo == *hi) */
static void
tables_of(const struct byoid *by, int n, const char *oidtext, int *lo,
    int *hi)
{
	struct byoid key = { (uint32_t)strtoul(oidtext, NULL, 10), 0 };
	const struct byoid *hit;

	*lo = *hi = 0;
	if ((hit = bsearch(&key, by, (size_t)n, sizeof(*by),
	    byoid_cmp)) == NULL)
		return;
	*lo = *hi = (int)(hit - by);
	while (*lo > 0 && by[*lo - 1].oid == key.oid)
		(*lo)--;
	while (*hi < n && by[*hi].oid == key.oid)
		(*hi)++;
}

/* the oid, relkind and replica identity of each table found into t[];
 * found[i] says which were */
static int
find(struct pg_conn *c, struct pgcat_table *t, int n, int *found,
    struct p2o_err *e)
{
	struct sbuf nsp = SBUF_INIT, rel = SBUF_INIT;
	const char *params[2];
	PGresult *res;
	long ord;
	int i, rc = 0;

	sbuf_addc(&nsp, '{');
	sbuf_addc(&rel, '{');
	for (i = 0; i < n; i++) {
		pgcat_array_add(&nsp, t[i].sec->schema);
		pgcat_array_add(&rel, t[i].sec->table);
	}
	sbuf_addc(&nsp, '}');
	sbuf_addc(&rel, '}');
	params[0] = nsp.buf;
	params[1] = rel.buf;
	if ((res = pgconn_query(c, "reading the catalogue", find_sql, 2,
	    params, e)) == NULL) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < PQntuples(res); i++) {
		ord = strtol(PQgetvalue(res, i, 0), NULL, 10) - 1;
		if (ord < 0 || ord >= n)
			continue;
		t[ord].oid = (uint32_t)strtoul(PQgetvalue(res, i, 1), NULL,
		    10);
		t[ord].kind = PQgetvalue(res, i, 2)[0];
		t[ord].ident = PQgetvalue(res, i, 3)[0];
		found[ord] = 1;
	}
	PQclear(res);
out:
	sbuf_release(&nsp);
	sbuf_release(&rel);
	return rc;
}

/* every column of the tables in by, into each one's cols */
static int
columns(struct pg_conn *c, const char *pub, struct pgcat_table *t,
    const struct byoid *by, int nby, const char *oids, struct p2o_err *e)
{
	int version = PQserverVersion(c);
	const char *params[2] = { oids, pub ? pub : "" };
	struct pgcat_column *col;
	PGresult *res;
	int i, k, hi;

	res = pgconn_query(c, "reading the table's columns", version >= 150000 ?
	    columns15_sql : version >= 120000 ? columns12_sql : columns10_sql,
	    version >= 150000 ? 2 : 1, params, e);
	if (res == NULL)
		return -1;
	/* counted first: a table's columns are one array */
	for (i = 0; i < PQntuples(res); i++)
		for (tables_of(by, nby, PQgetvalue(res, i, 0), &k, &hi);
		    k < hi; k++)
			t[by[k].i].ncols++;
	for (k = 0; k < nby; k++) {
		t[by[k].i].cols = xcalloc((size_t)t[by[k].i].ncols + 1,
		    sizeof(*t[by[k].i].cols));
		t[by[k].i].ncols = 0;
	}
	for (i = 0; i < PQntuples(res); i++) {
		for (tables_of(by, nby, PQgetvalue(res, i, 0), &k, &hi);
		    k < hi; k++) {
			col = &t[by[k].i].cols[t[by[k].i].ncols++];
			col->name = xstrdup(PQgetvalue(res, i, 1));
			col->typoid = (uint32_t)strtoul(PQgetvalue(res, i, 2),
			    NULL, 10);
			col->type = xstrdup(PQgetvalue(res, i, 3));
			col->sent = PQgetvalue(res, i, 4)[0] == 't';
			col->toastable = PQgetvalue(res, i, 5)[0] == 't';
			col->readable = PQgetvalue(res, i, 6)[0] == 't';
		}
	}
	PQclear(res);
	return 0;
}

/* each table's replica identity, as indexes into its columns; a name its
 * columns lack goes into lost[i] (heap), the table's error */
static int
identity(struct pg_conn *c, struct pgcat_table *t, const struct byoid *by,
    int nby, const char *oids, char **lost, struct p2o_err *e)
{
	const char *params[1] = { oids };
	struct pgcat_table *tt;
	PGresult *res;
	const char *name;
	int i, k, hi, ix;

	if ((res = pgconn_query(c, "reading the table's replica identity",
	    identity_many_sql, 1, params, e)) == NULL)
		return -1;
	for (i = 0; i < PQntuples(res); i++)
		for (tables_of(by, nby, PQgetvalue(res, i, 0), &k, &hi);
		    k < hi; k++)
			t[by[k].i].nidkey++;
	for (k = 0; k < nby; k++) {
		t[by[k].i].idkey = xcalloc((size_t)t[by[k].i].nidkey + 1,
		    sizeof(int));
		t[by[k].i].nidkey = 0;
	}
	for (i = 0; i < PQntuples(res); i++) {
		name = PQgetvalue(res, i, 1);
		for (tables_of(by, nby, PQgetvalue(res, i, 0), &k, &hi);
		    k < hi; k++) {
			tt = &t[by[k].i];
			if ((ix = column_index(tt, name)) < 0 &&
			    lost[by[k].i] == NULL)
				lost[by[k].i] = xstrdup(name);
			tt->idkey[tt->nidkey++] = ix;
		}
	}
	PQclear(res);
	return 0;
}

/* pgcat.h states the rule */
static int
choose_key(struct pgcat_table *t, struct p2o_err *e)
{
	const struct sync_section *sec = t->sec;
	const struct sync_more *more = sync_more(sec);
	int j, ix, k;

	if (t->ident == 'n' && !sec->append_only)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' has REPLICA "
		    "IDENTITY NOTHING; publishing it would make its updates "
		    "and deletes fail", sec->rel);
	t->key = xcalloc((size_t)(more->nprimary_key > t->nidkey ?
	    more->nprimary_key : t->nidkey) + 1, sizeof(int));
	if (more->primary_key != NULL) {
		for (j = 0; j < more->nprimary_key; j++) {
			if ((ix = column_index(t, more->primary_key[j])) < 0)
				return p2o_fail(e, P2O_EXIT_REFUSED, "table "
				    "'%s' (sync section '%s'): 'primary_key' "
				    "names column '%s', which the table does "
				    "not have", sec->rel, sec->name,
				    more->primary_key[j]);
			for (k = 0; k < t->nidkey && t->idkey[k] != ix; k++)
				;
			if (t->ident != 'f' && k == t->nidkey)
				return p2o_fail(e, P2O_EXIT_REFUSED, "table "
				    "'%s' (sync section '%s'): 'primary_key' "
				    "names column '%s', which is not in its "
				    "replica identity: a delete sends only "
				    "those columns (ALTER TABLE %s REPLICA "
				    "IDENTITY FULL)", sec->rel, sec->name,
				    more->primary_key[j], sec->rel);
			t->key[t->nkey++] = ix;
		}
		return 0;
	}
	if (t->nidkey > 0) {
		memcpy(t->key, t->idkey, (size_t)t->nidkey * sizeof(int));
		t->nkey = t->nidkey;
		return 0;
	}
	if (sec->append_only)
		return 0;
	return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' has no primary key "
	    "(sync section '%s'): declare 'append_only: true' for an "
	    "insert-only table, or name its key with 'primary_key'", sec->rel,
	    sec->name);
}

/* the descendants of the tables in by, each one's rels by name */
static int
tree(struct pg_conn *c, struct pgcat_table *t, const struct byoid *by,
    int nby, const char *oids, struct p2o_err *e)
{
	const char *params[1] = { oids };
	struct pgcat_rel *r;
	struct pgcat_table *tt;
	PGresult *res;
	int i, k, hi;

	if ((res = pgconn_query(c, "reading the table's inheritance tree",
	    tree_sql, 1, params, e)) == NULL)
		return -1;
	for (i = 0; i < PQntuples(res); i++)
		for (tables_of(by, nby, PQgetvalue(res, i, 0), &k, &hi);
		    k < hi; k++)
			t[by[k].i].nrels++;
	for (k = 0; k < nby; k++) {
		tt = &t[by[k].i];
		tt->rels = xcalloc((size_t)tt->nrels + 1, sizeof(*tt->rels));
		tt->nrels = 0;
	}
	for (i = 0; i < PQntuples(res); i++) {
	    for (tables_of(by, nby, PQgetvalue(res, i, 0), &k, &hi); k < hi;
		k++) {
		tt = &t[by[k].i];
		r = &tt->rels[tt->nrels++];
		r->oid = (uint32_t)strtoul(PQgetvalue(res, i, 1), NULL, 10);
		r->qname = xmalloc(strlen(PQgetvalue(res, i, 2)) +
		    strlen(PQgetvalue(res, i, 3)) + 2);
		sprintf(r->qname, "%s.%s", PQgetvalue(res, i, 2),
		    PQgetvalue(res, i, 3));
		r->partition = PQgetvalue(res, i, 4)[0] == 't';
		r->ident = PQgetvalue(res, i, 5)[0];
		r->kind = PQgetvalue(res, i, 6)[0];
		tt->nchildren += !r->partition;
	    }
	}
	PQclear(res);
	return 0;
}

/* what only a table with descendants needs: each one's identity and
 * columns (rare enough to ask one at a time) */
static int
tree_rels(struct pg_conn *c, struct pgcat_table *t, struct p2o_err *e)
{
	struct pgcat_rel *r;
	int i;

	for (i = 0; i < t->nrels; i++) {
		r = &t->rels[i];
		if (strings(c, "reading a replica identity", identity_sql,
		    r->oid, &r->idkey, &r->nidkey, e) == -1 ||
		    strings(c, "reading a table's columns", names_sql, r->oid,
		    &r->cols, &r->ncols, e) == -1)
			return -1;
	}
	return 0;
}

/* table t as found (found: whether it was): 0, or -1 with the refusal
 * pgcat_describe makes of it */
static int
judge(struct pgcat_table *t, int found, const char *lost, struct p2o_err *e)
{
	const struct sync_section *sec = t->sec;

	if (!found)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' does not "
		    "exist (sync section '%s')", sec->rel, sec->name);
	if (t->kind != 'r' && t->kind != 'p')
		return p2o_fail(e, P2O_EXIT_REFUSED, "'%s' is not a table "
		    "(relkind '%c'); only tables have rows in the WAL",
		    sec->rel, t->kind);
	if (lost != NULL)
		return p2o_fail(e, P2O_EXIT_TEMPFAIL, "table '%s': its "
		    "replica identity names column '%s', which the "
		    "catalogue did not list", sec->rel, lost);
	return choose_key(t, e);
}

int
pgcat_describe_many(struct pg_conn *c, const char *pub,
    const struct sync_section *const *secs, int n, struct pgcat_table *t,
    int *ndone, struct p2o_err *e)
{
	struct sbuf oids = SBUF_INIT;
	struct byoid *by;
	char **lost;
	int *found, i, nby = 0, rc = -1;

	*ndone = 0;
	found = xcalloc((size_t)n + 1, sizeof(*found));
	lost = xcalloc((size_t)n + 1, sizeof(*lost));
	by = xcalloc((size_t)n + 1, sizeof(*by));
	for (i = 0; i < n; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].sec = secs[i];
	}
	if (find(c, t, n, found, e) == -1)
		goto out;
	sbuf_addc(&oids, '{');
	for (i = 0; i < n; i++) {
		if (!found[i] || (t[i].kind != 'r' && t[i].kind != 'p'))
			continue;
		/* a table named twice is asked for once, answered to both */
		by[nby].oid = t[i].oid;
		by[nby++].i = i;
	}
	qsort(by, (size_t)nby, sizeof(*by), byoid_cmp);
	for (i = 0; i < nby; i++)
		if (i == 0 || by[i].oid != by[i - 1].oid)
			sbuf_addf(&oids, "%s%u", oids.len > 1 ? "," : "",
			    by[i].oid);
	sbuf_addc(&oids, '}');
	if (nby > 0 && (columns(c, pub, t, by, nby, oids.buf, e) == -1 ||
	    identity(c, t, by, nby, oids.buf, lost, e) == -1 ||
	    tree(c, t, by, nby, oids.buf, e) == -1))
		goto out;
	/* in order: the first table that fails is the one named, as when
	 * they were described one at a time */
	for (i = 0; i < n; i++) {
		if (judge(&t[i], found[i], lost[i], e) == -1 ||
		    tree_rels(c, &t[i], e) == -1)
			goto out;
		(*ndone)++;
	}
	rc = 0;
out:
	for (i = *ndone; i < n; i++)
		pgcat_table_release(&t[i]);
	for (i = 0; i < n; i++)
		free(lost[i]);
	free(lost);
	free(found);
	free(by);
	sbuf_release(&oids);
	return rc;
}

int
pgcat_describe(struct pg_conn *c, const char *pub,
    const struct sync_section *sec, struct pgcat_table *t, struct p2o_err *e)
{
	int ndone;

	return pgcat_describe_many(c, pub, &sec, 1, t, &ndone, e);
}

/* a table UPDATE and DELETE keep working on while a publication
 * publishes them: it has a replica identity */
static int
has_identity(char ident, int nidkey)
{
	return ident == 'f' || (ident != 'n' && nidkey > 0);
}

int
pgcat_tree_has_identity(const struct pgcat_table *t)
{
	int i;

	if (!has_identity(t->ident, t->nidkey))
		return 0;
	for (i = 0; i < t->nrels; i++)
		if (t->rels[i].kind == 'r' &&
		    !has_identity(t->rels[i].ident, t->rels[i].nidkey))
			return 0;
	return 1;
}

int
pgcat_in_append(const struct pgcat_table *t)
{
	return t->sec->append_only && !pgcat_tree_has_identity(t);
}

/* has_identity() of the relation aliased c, as SQL */
#define HAS_IDENTITY_SQL \
    "(c.relreplident = 'f' OR (c.relreplident <> 'n' AND EXISTS (" \
    "SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid AND " \
    "(CASE c.relreplident WHEN 'i' THEN i.indisreplident ELSE " \
    "i.indisprimary END))))"

void
pgcat_tree_identity_sql(struct sbuf *b, const char *oid)
{
	/* the table itself, and every table under it that holds rows:
	 * pgcat_tree_has_identity's tree */
	sbuf_addf(b, "(WITH RECURSIVE tree(oid) AS (SELECT %s::pg_catalog.oid "
	    "UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN tree t "
	    "ON i.inhparent = t.oid) SELECT pg_catalog.bool_and(" HAS_IDENTITY_SQL
	    ") FROM tree JOIN pg_catalog.pg_class c ON c.oid = tree.oid WHERE "
	    "c.oid = %s::pg_catalog.oid OR c.relkind = 'r')", oid, oid);
}

/* one table's replica identity, as the checks below read it */
struct idview {
	const char *qname;
	char	 ident;
	char	**cols;		/* its columns' names */
	int	 n;
};

static int
carries(const struct idview *v, const char *col)
{
	return v->ident == 'f' || in_names(v->cols, v->n, col);
}

/*
 * A column the shaper reads from a before-image (to delete or move a
 * document) or from every update (a filter column whose value may be
 * left out as unchanged TOAST): it must exist, and unless the identity
 * is FULL it must be in the replica identity.
 */
static int
need_column(const struct pgcat_table *t, const struct idview *v,
    const char *key, const char *col, int toastable_only, struct p2o_err *e)
{
	const struct sync_section *sec = t->sec;
	const struct pgcat_column *pc;

	if ((pc = pgcat_column(t, col)) == NULL)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' (sync section "
		    "'%s'): '%s' names column '%s', which the table does not "
		    "have", sec->rel, sec->name, key, col);
	if (carries(v, col) || (toastable_only && !pc->toastable))
		return 0;
	if (v->qname != sec->rel)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' (under '%s', "
		    "sync section '%s'): '%s' names column '%s', which is not "
		    "in its replica identity (ALTER TABLE %s REPLICA IDENTITY "
		    "FULL)", v->qname, sec->rel, sec->name, key, col,
		    v->qname);
	return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' (sync section '%s'): "
	    "'%s' names column '%s', which is not in its replica identity: "
	    "%s needs the row's before-image (ALTER TABLE %s REPLICA "
	    "IDENTITY FULL)", sec->rel, sec->name, key, col, toastable_only ?
	    "an update that leaves its out-of-line value unchanged does not "
	    "send it, so filtering it" : "deleting or moving a document by "
	    "it", sec->rel);
}

static int
need_template(const struct pgcat_table *t, const struct idview *v,
    const char *key, const struct tmpl *tm, struct p2o_err *e)
{
	int i;

	for (i = 0; i < tm->nparts; i++)
		if (tm->parts[i].column && need_column(t, v, key,
		    tm->parts[i].text, 0, e) == -1)
			return -1;
	return 0;
}

/* every column the key, an identity or the filter reads */
static int
check_view(const struct pgcat_table *t, const struct idview *v,
    struct p2o_err *e)
{
	const struct sync_section *sec = t->sec;
	const struct sync_more *more = sync_more(sec);
	int i;

	for (i = 0; i < t->nkey; i++)
		if (need_column(t, v, "the key", t->cols[t->key[i]].name, 0,
		    e) == -1)
			return -1;
	if (sec->id && need_template(t, v, "id", &sec->id_t, e) == -1)
		return -1;
	if (sec->index_templated &&
	    need_template(t, v, "index", &sec->index_t, e) == -1)
		return -1;
	if (more->routing && need_column(t, v, "routing", more->routing, 0,
	    e) == -1)
		return -1;
	if (sec->has_join && more->join.column && need_column(t, v,
	    "join.column", more->join.column, 0, e) == -1)
		return -1;
	/* an element that went is found in the before-image */
	if (sec->has_fan_out && need_column(t, v, "fan_out.column",
	    more->fan_out.column, 0, e) == -1)
		return -1;
	for (i = 0; more->where_expr && i < where_ncolumns(more->where_expr);
	    i++)
		if (need_column(t, v, "where",
		    where_column(more->where_expr, i), 1, e) == -1)
			return -1;
	return 0;
}

/* a join child computes its parent's id from one column: the parent's
 * id must name its key, and its key only */
static int
check_join_parent(const struct pgcat_table *t, struct p2o_err *e)
{
	const struct sync_section *sec = t->sec;
	const char *col = NULL;
	int i;

	for (i = 0; i < sec->id_t.nparts; i++)
		if (sec->id_t.parts[i].column)
			col = sec->id_t.parts[i].text;
	if (t->nkey != 1 || col == NULL ||
	    strcmp(t->cols[t->key[0]].name, col) != 0)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' (sync section "
		    "'%s') is a join parent: its 'id' must name its key, a "
		    "single column, and nothing else, since a child computes "
		    "its parent's id from one column", sec->rel, sec->name);
	return 0;
}

int
pgcat_check_images(const struct pgcat_table *t, struct p2o_err *e)
{
	const struct sync_section *sec = t->sec;
	struct idview v;
	struct p2o_err one, first;
	char **names;
	int i, bad = 0;

	names = xcalloc((size_t)t->nidkey + 1, sizeof(char *));
	for (i = 0; i < t->nidkey; i++)
		names[i] = t->cols[t->idkey[i]].name;
	v = (struct idview){ sec->rel, t->ident, names, t->nidkey };
	i = check_view(t, &v, e);
	free(names);
	if (i == -1 || (sec->has_join && sync_more(sec)->join.parent == NULL &&
	    check_join_parent(t, e) == -1))
		return -1;

	/*
	 * The descendants' rows are this table's rows: the publication
	 * carries them (inheritance children unless ONLY, partitions as
	 * the root), so each must keep its UPDATE and DELETE working and
	 * carry what the documents' identities read. Every table that
	 * does not is named, not only the first.
	 */
	for (i = 0; i < t->nrels; i++) {
		const struct pgcat_rel *r = &t->rels[i];

		/* a partitioned partition has no rows: its leaves do */
		if (r->kind != 'r')
			continue;
		p2o_err_clear(&one);
		if (!has_identity(r->ident, r->nidkey))
			p2o_fail(&one, P2O_EXIT_REFUSED, "table '%s' (%s '%s') "
			    "has no replica identity: its own UPDATE and "
			    "DELETE would fail once a publication publishes "
			    "them (ALTER TABLE %s REPLICA IDENTITY FULL, or "
			    "give it a primary key)", r->qname, r->partition ?
			    "a partition of" : "inherits from", sec->rel,
			    r->qname);
		else {
			v = (struct idview){ r->qname, r->ident, r->idkey,
			    r->nidkey };
			check_view(t, &v, &one);
		}
		if (one.code == 0)
			continue;
		log_warnx("%s", one.msg);
		if (bad++ == 0)
			first = one;
	}
	if (bad == 1)
		*e = first;
	else if (bad > 1)
		p2o_fail(e, P2O_EXIT_REFUSED, "%d tables under '%s' (sync "
		    "section '%s') cannot be synced with it, each logged above "
		    "with the ALTER TABLE that fixes it; the first: %.600s",
		    bad, sec->rel, sec->name, first.msg);
	return bad ? -1 : 0;
}

int
pgcat_check_overlap(const struct config *cfg, const struct pgcat_table *t,
    struct p2o_err *e)
{
	const struct sync_section *other;
	int i;

	for (i = 0; i < t->nrels; i++)
		if ((other = config_find_rel(cfg, t->rels[i].qname)) != NULL)
			return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' (sync "
			    "section '%s') %s '%s' (sync section '%s'), whose "
			    "load and stream carry its rows: sync one of the "
			    "two", t->rels[i].qname, other->name,
			    t->rels[i].partition ? "is a partition of" :
			    "inherits from", t->sec->rel, t->sec->name);
	return 0;
}

/* what a sync section could name; the key test is choose_key's (an
 * identity index or the primary key), asked of the catalogue at once */
static const char tables_sql[] =
    "SELECT n.nspname, c.relname, EXISTS (SELECT 1 FROM pg_catalog.pg_index i "
    "  WHERE i.indrelid = c.oid AND (i.indisprimary OR "
    "  (c.relreplident = 'i' AND i.indisreplident))) "
    "FROM pg_catalog.pg_class c "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition "
    "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
    "AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%' "
    "AND pg_catalog.has_table_privilege(c.oid, 'SELECT') "
    "ORDER BY 1, 2";

int
pgcat_tables(struct pg_conn *c, struct pgcat_name **v, int *n,
    struct p2o_err *e)
{
	PGresult *res;
	int i;

	*v = NULL;
	*n = 0;
	if ((res = pgconn_query(c, "listing the tables", tables_sql, 0, NULL,
	    e)) == NULL)
		return -1;
	*v = xcalloc((size_t)PQntuples(res) + 1, sizeof(**v));
	for (i = 0; i < PQntuples(res); i++) {
		(*v)[i].schema = xstrdup(PQgetvalue(res, i, 0));
		(*v)[i].name = xstrdup(PQgetvalue(res, i, 1));
		(*v)[i].has_key = PQgetvalue(res, i, 2)[0] == 't';
	}
	*n = PQntuples(res);
	PQclear(res);
	return 0;
}

void
pgcat_names_free(struct pgcat_name *v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free(v[i].schema);
		free(v[i].name);
	}
	free(v);
}

/* per heap (the table, each inheritance child, each leaf partition): the
 * planner's numbers and the pages it has now */
static const char heaps_sql[] =
    "WITH RECURSIVE tree(oid) AS (SELECT $1::pg_catalog.oid "
    "  UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i "
    "  JOIN tree t ON i.inhparent = t.oid) "
    "SELECT c.reltuples, c.relpages, pg_catalog.pg_relation_size(c.oid) / "
    "pg_catalog.current_setting('block_size')::pg_catalog.int8 "
    "FROM tree JOIN pg_catalog.pg_class c ON c.oid = tree.oid "
    "WHERE c.relkind = 'r'";

int
pgcat_heaps(struct pg_conn *c, uint32_t oid, struct pgcat_heap **v, int *n,
    struct p2o_err *e)
{
	char buf[16];
	const char *params[1] = { buf };
	PGresult *res;
	int i;

	*v = NULL;
	*n = 0;
	snprintf(buf, sizeof(buf), "%u", oid);
	if ((res = pgconn_query(c, "reading the table's size", heaps_sql, 1,
	    params, e)) == NULL)
		return -1;
	*v = xcalloc((size_t)PQntuples(res) + 1, sizeof(**v));
	for (i = 0; i < PQntuples(res); i++) {
		(*v)[i].tuples = strtod(PQgetvalue(res, i, 0), NULL);
		(*v)[i].relpages = strtoll(PQgetvalue(res, i, 1), NULL, 10);
		(*v)[i].pages = strtoll(PQgetvalue(res, i, 2), NULL, 10);
	}
	*n = PQntuples(res);
	PQclear(res);
	return 0;
}
