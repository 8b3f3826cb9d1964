/*
 * pgnestread.c - PostgreSQL's operations under the commit-time re-read
 * driver (lib/nestread.c), for capture-pg: a connection of their own, the
 * wait for the held transactions to be visible to a new snapshot, then
 * one query per parent table reading every pending parent whole, its
 * collections included (pgnest.c, the builder the load uses), each an
 * ordinary row frame at the transaction's version. The snapshot is what
 * makes the read see the commit: the walsender sends a commit once it is
 * in the WAL, possibly before it is visible.
 *
 * Owns those statements, the junction reads, and the warning about a
 * child whose replica identity cannot name the parent on delete. Never
 * decides which parents to read or when (the driver does).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "config.h"
#include "keyset.h"
#include "log.h"
#include "msg.h"
#include "nestread.h"
#include "p2o.h"
#include "pg/pgcat.h"
#include "pg/pgconn.h"
#include "pg/pgnest.h"
#include "pg/pgtypes.h"

/* the source's state */
struct pgnr {
	struct pg_conn *sql;
	const struct config *cfg;
	const struct pgcat_table *tables;	/* per section, the capture's */
	struct sbuf frame;	/* one row frame's JSON */
};

/* a section with collections */
struct pgnr_parent {
	const struct sync_section *sec;
	struct pgnest nest;
	char	*sql;		/* the parents named by $1, whole */
	int	 ncols;		/* the columns pgoutput sends, in order */
	char	**cols;
	uint32_t *types;
	int	 keycol;	/* the key's index in cols */
	char	**via;		/* per collection read through a junction:
				 * the parents of the child keys in $1 */
};

/* the keys as an array literal ({"a","b"}) */
static void
put_elem(void *arg, const char *s, size_t n)
{
	struct sbuf *lit = arg;
	size_t j;

	if (lit->buf[lit->len - 1] != '{')
		sbuf_addc(lit, ',');
	sbuf_addc(lit, '"');
	for (j = 0; j < n; j++) {
		if (s[j] == '"' || s[j] == '\\')
			sbuf_addc(lit, '\\');
		sbuf_addc(lit, s[j]);
	}
	sbuf_addc(lit, '"');
}

/* the set's keys as an array literal, the set emptied */
static void
keyset_literal(struct keyset *k, struct sbuf *lit)
{
	sbuf_addc(lit, '{');
	keyset_take(k, put_elem, lit);
	sbuf_addc(lit, '}');
}

/* the statement reading parents whole: the columns the stream sends,
 * then each collection */
static void
parent_sql(struct pgnr_parent *p, const struct pgcat_table *t)
{
	const struct pgcat_column *key = &t->cols[t->key[0]];
	struct sbuf b = SBUF_INIT;
	int i;

	p->cols = xcalloc((size_t)t->ncols + 1, sizeof(char *));
	p->types = xcalloc((size_t)t->ncols + 1, sizeof(uint32_t));
	sbuf_adds(&b, "SELECT ");
	for (i = 0; i < t->ncols; i++) {
		if (!t->cols[i].sent)
			continue;
		if (p->ncols)
			sbuf_adds(&b, ", ");
		sbuf_adds(&b, PGNEST_PARENT ".");
		pgconn_put_ident(&b, t->cols[i].name);
		if (i == t->key[0])
			p->keycol = p->ncols;
		p->types[p->ncols] = t->cols[i].typoid;
		p->cols[p->ncols++] = xstrdup(t->cols[i].name);
	}
	sbuf_adds(&b, p->nest.select);
	sbuf_adds(&b, " FROM ");
	pgconn_put_qname(&b, p->sec->schema, p->sec->table);
	sbuf_adds(&b, " " PGNEST_PARENT " WHERE " PGNEST_PARENT ".");
	pgconn_put_ident(&b, key->name);
	sbuf_addf(&b, " = ANY($1::%s[])", key->type);
	p->sql = b.buf;
}

static void
parent_free(void *arg)
{
	struct pgnr_parent *p = arg;
	int k;

	if (p == NULL)
		return;
	for (k = 0; p->via != NULL && k < p->nest.n; k++)
		free(p->via[k]);
	free(p->via);
	pgnest_release(&p->nest);
	free(p->sql);
	for (k = 0; k < p->ncols; k++)
		free(p->cols[k]);
	free(p->cols);
	free(p->types);
	free(p);
}

static int
parent(void *arg, int si, const struct sync_section *sec, void **out,
    const char **key, struct p2o_err *e)
{
	struct pgnr *s = arg;
	const struct pgcat_table *t = &s->tables[si];
	struct pgnr_parent *p;

	if (t->nkey != 1)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' embeds "
		    "children or aggregates, which name their parent by one "
		    "key column; its key has %d", sec->rel, t->nkey);
	p = xcalloc(1, sizeof(*p));
	p->sec = sec;
	if (pgnest_describe(s->sql, sec, t->cols[t->key[0]].name, &p->nest,
	    e) == -1) {
		parent_free(p);
		return -1;
	}
	p->via = xcalloc((size_t)p->nest.n + 1, sizeof(*p->via));
	parent_sql(p, t);
	*out = p;
	*key = p->nest.key;
	return 0;
}

/* a table a collection reads, described as a section's would be */
static int
describe(struct pgnr *s, const char *rel, const char *schema,
    const char *table, const char *owner, struct pgcat_table *t,
    struct p2o_err *e)
{
	struct sync_section fake = { 0 };

	fake.name = (char *)owner;
	fake.rel = (char *)rel;
	fake.schema = (char *)schema;
	fake.table = (char *)table;
	fake.append_only = 1;	/* its key is its own business */
	if (pgcat_describe(s->sql, s->cfg->publication, &fake, t, e) == -1)
		return -1;
	t->sec = NULL;
	return 0;
}

/* its deletes name the parent only if the identity carries col */
static void
check_identity(const struct pgcat_table *t, const char *rel,
    const char *col, const char *owner)
{
	int i;

	if (t->ident == 'f')
		return;
	for (i = 0; i < t->nidkey; i++)
		if (strcmp(t->cols[t->idkey[i]].name, col) == 0)
			return;
	log_warnx("table '%s' (a collection of sync section '%s'): column "
	    "'%s' is not in its replica identity, so a deleted row cannot "
	    "name its parent and the parent keeps it until its next change "
	    "(ALTER TABLE %s REPLICA IDENTITY FULL)", rel, owner, col, rel);
}

/* a child read through a junction: the statement mapping its keys to
 * parents, and the column of its rows holding them */
static int
through(struct pgnr_parent *p, int k, const struct pgcat_table *ct,
    const struct pgcat_table *jt, struct sbuf *via_col, struct p2o_err *e)
{
	const struct sync_child *c = &sync_more(p->sec)->children[k];
	const struct pgcat_column *jk = pgcat_column(jt, c->through_key);
	struct sbuf b = SBUF_INIT;

	if (ct->nidkey != 1)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' is read "
		    "through '%s', which names one key column; its key has "
		    "%d", c->rel, c->through_rel, ct->nidkey);
	if (jk == NULL || pgcat_column(jt, c->foreign_key) == NULL)
		return p2o_fail(e, P2O_EXIT_REFUSED, "junction '%s' has no "
		    "column '%s'", c->through_rel, jk ? c->foreign_key :
		    c->through_key);
	sbuf_adds(&b, "SELECT DISTINCT ");
	pgconn_put_ident(&b, c->foreign_key);
	sbuf_adds(&b, "::pg_catalog.text FROM ");
	pgconn_put_qname(&b, c->through_schema, c->through_table);
	sbuf_adds(&b, " WHERE ");
	pgconn_put_ident(&b, c->through_key);
	sbuf_addf(&b, " = ANY($1::%s[])", jk->type);
	p->via[k] = b.buf;
	sbuf_adds(via_col, ct->cols[ct->idkey[0]].name);
	return 0;
}

static int
collection(void *arg, void *parg, int k, struct sbuf *via_col,
    struct p2o_err *e)
{
	struct pgnr *s = arg;
	struct pgnr_parent *p = parg;
	const struct sync_section *sec = p->sec;
	const struct sync_more *more = sync_more(sec);
	const struct sync_aggregate *a;
	const struct sync_child *c;
	struct pgcat_table ct, jt;
	int rc = 0;

	if (k >= more->nchildren) {
		a = &more->aggregates[k - more->nchildren];
		if (describe(s, a->rel, a->schema, a->table, sec->name, &ct,
		    e) == -1)
			return -1;
		check_identity(&ct, a->rel, a->foreign_key, sec->name);
		pgcat_table_release(&ct);
		return 0;
	}
	c = &more->children[k];
	if (describe(s, c->rel, c->schema, c->table, sec->name, &ct, e) == -1)
		return -1;
	if (c->through == NULL)
		check_identity(&ct, c->rel, c->foreign_key, sec->name);
	else if ((rc = describe(s, c->through_rel, c->through_schema,
	    c->through_table, sec->name, &jt, e)) == 0) {
		check_identity(&jt, c->through_rel, c->foreign_key, sec->name);
		rc = through(p, k, &ct, &jt, via_col, e);
		pgcat_table_release(&jt);
	}
	pgcat_table_release(&ct);
	return rc;
}

/* wait until every held transaction has left the running ones: a
 * snapshot taken before that would not see the rows their commit
 * records announced. One statement for the burst: the xids widened to
 * xid8 against the current epoch, those still in progress counted */
static int
visible(void *arg, const uint64_t *xids, size_t n, struct p2o_err *e)
{
	static const char sql[] =
	    "SELECT count(*) FROM pg_catalog.unnest($1::bigint[]) AS x(id), "
	    "(SELECT pg_catalog.pg_snapshot_xmax(pg_catalog."
	    "pg_current_snapshot())::text::bigint AS m) s WHERE "
	    "pg_catalog.pg_xact_status((((CASE WHEN x.id <= "
	    "(m & 4294967295) THEN m >> 32 ELSE (m >> 32) - 1 END) << 32) | "
	    "x.id)::text::pg_catalog.xid8) = 'in progress'";
	struct pgnr *s = arg;
	struct sbuf lit = SBUF_INIT;
	const char *params[1];
	struct timespec ms = { 0, 1000000 };
	PGresult *res;
	size_t i;
	int running, tries = 0;

	sbuf_addc(&lit, '{');
	for (i = 0; i < n; i++)
		sbuf_addf(&lit, "%s%" PRIu64, i ? "," : "", xids[i]);
	sbuf_addc(&lit, '}');
	params[0] = lit.buf;
	do {
		if ((res = (PGresult *)pgconn_query(s->sql, "waiting for a "
		    "transaction to be visible", sql, 1, params, e)) == NULL) {
			sbuf_release(&lit);
			return -1;
		}
		running = PQntuples(res) == 1 &&
		    strcmp(PQgetvalue(res, 0, 0), "0") != 0;
		PQclear(res);
		if (running && ++tries % 10000 == 0)
			log_warnx("%zu transaction(s) from %" PRIu64 " on are "
			    "committed in the WAL and still not visible after "
			    "%d s", n, xids[0], tries / 1000);
		if (running)
			nanosleep(&ms, NULL);
	} while (running);
	sbuf_release(&lit);
	return 0;
}

/* a junction's parents of the child keys a transaction changed */
static int
resolve(void *arg, void *parg, int k, struct keyset *keys,
    struct keyset *parents, uint64_t *queries, struct p2o_err *e)
{
	struct pgnr *s = arg;
	struct pgnr_parent *p = parg;
	struct sbuf lit = SBUF_INIT;
	const char *params[1];
	PGresult *res;
	int i;

	keyset_literal(keys, &lit);
	params[0] = lit.buf;
	res = (PGresult *)pgconn_query(s->sql, "reading a junction's "
	    "parents", p->via[k], 1, params, e);
	sbuf_release(&lit);
	if (res == NULL)
		return -1;
	(*queries)++;
	for (i = 0; i < PQntuples(res); i++)
		if (!PQgetisnull(res, i, 0))
			keyset_add(parents, PQgetvalue(res, i, 0),
			    (size_t)PQgetlength(res, i, 0));
	PQclear(res);
	return 0;
}

/* every parent keys names, read and written as row frames */
static int
read_parents(void *arg, void *parg, struct keyset *keys, uint64_t v,
    struct sbuf *out, uint64_t *docs, uint64_t *queries, struct p2o_err *e)
{
	struct pgnr *s = arg;
	struct pgnr_parent *p = parg;
	struct sbuf lit = SBUF_INIT;
	struct sbuf *j = &s->frame;
	const char *params[1];
	const char *vals[p->nest.n + 1];
	size_t lens[p->nest.n + 1];
	const char *kname = p->cols[p->keycol];
	PGresult *res;
	int r, c, rc = 0;

	keyset_literal(keys, &lit);
	params[0] = lit.buf;
	res = (PGresult *)pgconn_query(s->sql, "reading parents again",
	    p->sql, 1, params, e);
	sbuf_release(&lit);
	if (res == NULL)
		return -1;
	(*queries)++;
	for (r = 0; r < PQntuples(res) && rc == 0; r++) {
		msg_row_begin(j, 'u', p->sec->rel, strlen(p->sec->rel), v);
		msg_list_begin(j, ML_KEY);
		msg_list_item(j, kname, strlen(kname));
		msg_list_end(j);
		msg_image_begin(j, MI_NEW);
		for (c = 0; c < p->ncols; c++) {
			if (config_nest_member(p->sec, p->cols[c]))
				continue;
			msg_column(j, p->cols[c], strlen(p->cols[c]));
			if (PQgetisnull(res, r, c))
				sbuf_adds(j, "null");
			else
				pgtype_to_json(p->types[c], PQgetvalue(res, r,
				    c), (size_t)PQgetlength(res, r, c), j);
		}
		for (c = 0; c < p->nest.n; c++) {
			vals[c] = PQgetisnull(res, r, p->ncols + c) ? NULL :
			    PQgetvalue(res, r, p->ncols + c);
			lens[c] = (size_t)PQgetlength(res, r, p->ncols + c);
		}
		rc = pgnest_put(&p->nest, j, vals, lens, PQgetvalue(res, r,
		    p->keycol), p->sec->rel, e);
		if (rc == 0) {
			msg_image_end(j);
			msg_end(out, j);
			(*docs)++;
		} else
			sbuf_reset(j);
	}
	PQclear(res);
	pgnest_flush(&p->nest);
	return rc;
}

/* an UPDATE that sets the key to itself reaches the stream, and the
 * commit then reads the parent whole */
static void
rewrite_hint(void *parg, struct sbuf *out)
{
	struct pgnr_parent *p = parg;

	sbuf_addf(out, "touching the parents rewrites them (UPDATE %s SET %s "
	    "= %s)", p->sec->rel, p->nest.key, p->nest.key);
}

/* its own connection: the catalogue one is the slot watch's, which
 * keeps a statement of its own in flight */
static int
source_open(void *arg, const struct config *cfg, struct p2o_err *e)
{
	struct pgnr *s = arg;

	return (s->sql = pgconn_open(cfg, PGCONN_ADMIN, "capture-pg refetch",
	    e)) == NULL ? -1 : 0;
}

static void
source_close(void *arg)
{
	struct pgnr *s = arg;

	sbuf_release(&s->frame);
	pgconn_close(s->sql);
	free(s);
}

static const struct nestread_ops pgnestread_ops = {
	.open = source_open,
	.parent = parent,
	.collection = collection,
	.visible = visible,
	.resolve = resolve,
	.read = read_parents,
	.rewrite_hint = rewrite_hint,
	.parent_free = parent_free,
	.close = source_close,
};

struct nestread *
pgnestread_open(const struct config *cfg, const struct pgcat_table *tables,
    struct p2o_err *e)
{
	struct pgnr *s = xcalloc(1, sizeof(*s));

	s->cfg = cfg;
	s->tables = tables;
	return nestread_open(cfg, &pgnestread_ops, s, e);
}
