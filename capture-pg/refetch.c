/*
 * refetch.c - the parents a transaction's child rows name, read again at
 * its commit (docs/config.md "children"). A row of a child, junction or
 * counted table is reduced to the parent keys its after- and
 * before-image name (a row moving to another parent names both) and is
 * not forwarded; a parent's own insert or update is reduced to its key
 * the same way, since its document must carry its collections. At the
 * Commit, after waiting for the transaction to be visible to a new
 * snapshot, one query per parent table reads every such parent whole,
 * collections included (lib/pg/pgnest.c, the builder the load uses), and
 * each becomes an ordinary row frame at the transaction's version, ahead
 * of the commit frame, so the commit is acknowledged only once they are
 * written. A thousand children of one parent are one key and one
 * document. A parent the query no longer finds was deleted later; that
 * delete is in the stream after it. The commits of a burst already
 * received are held (pgoutput.c, pgo_flush) and read at once: one wait
 * for all of them to be visible, one query per parent table, at the last
 * one's version, closed by one commit frame.
 *
 * Owns those statements, the key sets, and the warnings about child
 * tables (an identity that cannot name the parent on delete, a truncate
 * the parents do not see, a child that is a section too).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "config.h"
#include "log.h"
#include "msg.h"
#include "keyset.h"
#include "p2o.h"
#include "pg/pgcat.h"
#include "pg/pgconn.h"
#include "pg/pgtypes.h"
#include "capture-pg.h"

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

/* a section with collections */
struct rf_parent {
	const struct sync_section *sec;
	struct pgnest nest;
	char	*sql;		/* the parents named by $1, whole */
	int	 ncols;		/* the columns pgoutput sends, in order */
	char	**cols;
	uint32_t *types;
	int	 keycol;	/* the key's index in cols */
	struct keyset pending;	/* this transaction's parent keys */
};

/* a table whose rows name parents */
struct rf_link {
	char	*rel;
	int	 parent;	/* index into parents */
	char	*col;		/* its column naming the parent's key; for
				 * a child read through a junction, its own
				 * key, which the junction maps */
	char	*via_sql;	/* through: the parents of the keys in $1 */
	struct keyset via;	/* through: this transaction's child keys */
	int	 section;	/* the table is a section of its own too */
};

struct refetch {
	struct pg_conn *sql;
	int	 nparents;
	struct rf_parent *parents;
	int	 nlinks;
	struct rf_link *links;
	int	 pending;	/* some key waits for the commit */
	uint32_t *xids;		/* the held commits' transactions */
	size_t	 nxids, capxids;
	struct sbuf frame;	/* one row frame's JSON */
	struct refetch_counts n;
};

static void
put_qname(struct sbuf *b, const char *schema, const char *table)
{
	pgconn_put_ident(b, schema);
	sbuf_addc(b, '.');
	pgconn_put_ident(b, table);
}

/* the statement reading parents whole: the columns the stream sends,
 * then each collection */
static int
parent_sql(struct rf_parent *p, const struct pgcat_table *t,
    struct p2o_err *e)
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
	put_qname(&b, p->sec->schema, p->sec->table);
	sbuf_adds(&b, " " PGNEST_PARENT " WHERE " PGNEST_PARENT ".");
	pgconn_put_ident(&b, key->name);
	sbuf_addf(&b, " = ANY($1::%s[])", key->type);
	p->sql = b.buf;
	(void)e;
	return 0;
}

/* a table a collection reads, described as a section's would be */
static int
describe(struct refetch *rf, const char *pub, const char *rel,
    const char *schema, const char *table, const char *owner,
    struct pgcat_table *t, struct p2o_err *e)
{
	struct sync_section fake = { 0 };

	fake.name = (char *)owner;
	fake.rel = (char *)rel;
	fake.schema = (char *)schema;
	fake.table = (char *)table;
	fake.append_only = 1;	/* its key is its own business */
	if (pgcat_describe(rf->sql, pub, &fake, t, e) == -1)
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

static struct rf_link *
add_link(struct refetch *rf, const struct config *cfg, const char *rel,
    int parent, const char *col)
{
	struct rf_link *l;

	rf->links = xrealloc(rf->links, (size_t)(rf->nlinks + 1) *
	    sizeof(*rf->links));
	l = &rf->links[rf->nlinks++];
	memset(l, 0, sizeof(*l));
	l->rel = xstrdup(rel);
	l->parent = parent;
	l->col = xstrdup(col);
	l->section = config_find_rel(cfg, rel) != NULL;
	return l;
}

/* a child read through a junction: a change of the child itself names
 * parents only through the junction's rows */
static int
through_link(struct refetch *rf, const struct config *cfg, int parent,
    const struct sync_child *c, const struct pgcat_table *ct,
    const struct pgcat_table *jt, struct p2o_err *e)
{
	const struct pgcat_column *ck = &ct->cols[ct->idkey[0]];
	const struct pgcat_column *jk = pgcat_column(jt, c->through_key);
	struct rf_link *l;
	struct sbuf b = SBUF_INIT;

	if (jk == NULL || pgcat_column(jt, c->foreign_key) == NULL)
		return p2o_fail(e, P2O_EXIT_REFUSED, "junction '%s' has no "
		    "column '%s'", c->through_rel, jk ? c->foreign_key :
		    c->through_key);
	l = add_link(rf, cfg, c->rel, parent, ck->name);
	sbuf_adds(&b, "SELECT DISTINCT ");
	pgconn_put_ident(&b, c->foreign_key);
	sbuf_adds(&b, "::pg_catalog.text FROM ");
	put_qname(&b, c->through_schema, c->through_table);
	sbuf_adds(&b, " WHERE ");
	pgconn_put_ident(&b, c->through_key);
	sbuf_addf(&b, " = ANY($1::%s[])", jk->type);
	l->via_sql = b.buf;
	return 0;
}

static int
add_parent(struct refetch *rf, const struct config *cfg, int i,
    const struct pgcat_table *t, struct p2o_err *e)
{
	const struct sync_section *sec = &cfg->syncs[i];
	struct rf_parent *p;
	struct pgcat_table ct, jt;
	int k, rc = 0, idx = rf->nparents;

	if (t->nkey != 1)
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' embeds "
		    "children or aggregates, which name their parent by one "
		    "key column; its key has %d", sec->rel, t->nkey);
	rf->parents = xrealloc(rf->parents, (size_t)(rf->nparents + 1) *
	    sizeof(*rf->parents));
	p = &rf->parents[rf->nparents++];
	memset(p, 0, sizeof(*p));
	p->sec = sec;
	if (pgnest_describe(rf->sql, sec, t->cols[t->key[0]].name, &p->nest,
	    e) == -1 || parent_sql(p, t, e) == -1)
		return -1;
	for (k = 0; k < sec->nchildren && rc == 0; k++) {
		const struct sync_child *c = &sec->children[k];

		if (describe(rf, cfg->publication, c->rel, c->schema, c->table,
		    sec->name, &ct, e) == -1)
			return -1;
		if (c->through == NULL) {
			check_identity(&ct, c->rel, c->foreign_key, sec->name);
			add_link(rf, cfg, c->rel, idx, c->foreign_key);
		} else if ((rc = describe(rf, cfg->publication,
		    c->through_rel, c->through_schema, c->through_table,
		    sec->name, &jt, e)) == 0) {
			check_identity(&jt, c->through_rel, c->foreign_key,
			    sec->name);
			add_link(rf, cfg, c->through_rel, idx, c->foreign_key);
			if (ct.nidkey != 1)
				rc = p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' "
				    "is read through '%s', which names one key "
				    "column; its key has %d", c->rel,
				    c->through_rel, ct.nidkey);
			else
				rc = through_link(rf, cfg, idx, c, &ct, &jt,
				    e);
			pgcat_table_release(&jt);
		}
		pgcat_table_release(&ct);
	}
	for (k = 0; k < sec->naggregates && rc == 0; k++) {
		const struct sync_aggregate *a = &sec->aggregates[k];

		if (describe(rf, cfg->publication, a->rel, a->schema, a->table,
		    sec->name, &ct, e) == -1)
			return -1;
		check_identity(&ct, a->rel, a->foreign_key, sec->name);
		add_link(rf, cfg, a->rel, idx, a->foreign_key);
		pgcat_table_release(&ct);
	}
	return rc;
}

struct refetch *
refetch_open(const struct config *cfg, const struct pgcat_table *tables,
    struct p2o_err *e)
{
	struct refetch *rf;
	int i;

	for (i = 0; i < cfg->nsyncs; i++)
		if (cfg->syncs[i].nchildren > 0 ||
		    cfg->syncs[i].naggregates > 0)
			break;
	if (i == cfg->nsyncs)
		return NULL;
	rf = xcalloc(1, sizeof(*rf));
	/* its own connection: the catalogue one is the slot watch's, which
	 * keeps a statement of its own in flight */
	if ((rf->sql = pgconn_open(cfg, PGCONN_SQL, "capture-pg refetch",
	    e)) == NULL) {
		free(rf);
		return NULL;
	}
	for (i = 0; i < cfg->nsyncs; i++)
		if ((cfg->syncs[i].nchildren > 0 ||
		    cfg->syncs[i].naggregates > 0) &&
		    add_parent(rf, cfg, i, &tables[i], e) == -1) {
			refetch_close(rf);
			return NULL;
		}
	for (i = 0; i < rf->nlinks; i++)
		if (rf->links[i].section)
			log_warnx("table '%s' is a collection of sync section "
			    "'%s' and a sync section of its own: its index "
			    "gets its rows as they change, and the parent "
			    "its rows again at each change", rf->links[i].rel,
			    rf->parents[rf->links[i].parent].sec->name);
	return rf;
}

void
refetch_close(struct refetch *rf)
{
	int i, k;

	if (rf == NULL)
		return;
	for (i = 0; i < rf->nparents; i++) {
		struct rf_parent *p = &rf->parents[i];

		pgnest_release(&p->nest);
		free(p->sql);
		for (k = 0; k < p->ncols; k++)
			free(p->cols[k]);
		free(p->cols);
		free(p->types);
		keyset_release(&p->pending);
	}
	for (i = 0; i < rf->nlinks; i++) {
		free(rf->links[i].rel);
		free(rf->links[i].col);
		free(rf->links[i].via_sql);
		keyset_release(&rf->links[i].via);
	}
	free(rf->parents);
	free(rf->links);
	free(rf->xids);
	sbuf_release(&rf->frame);
	pgconn_close(rf->sql);
	free(rf);
}

static int
col_of(const struct pgo_rel *rel, const char *name)
{
	int i;

	for (i = 0; i < rel->ncols; i++)
		if (strcmp(rel->cols[i].name, name) == 0)
			return i;
	return -1;
}

int
refetch_row(struct refetch *rf, const struct pgo_rel *rel, char type,
    const struct refetch_val *newv, const struct refetch_val *oldv)
{
	const struct refetch_val *v[2] = { newv, oldv };
	struct rf_parent *p;
	struct rf_link *l;
	int i, c, k, forward = 1, swallowed = 0;

	for (i = 0; i < rf->nparents; i++) {
		p = &rf->parents[i];
		if (type == 'D' || strcmp(p->sec->rel, rel->qname) != 0)
			continue;
		/* its document is written whole at the commit */
		c = col_of(rel, p->cols[p->keycol]);
		if (c >= 0 && newv && newv[c].p) {
			keyset_add(&p->pending, newv[c].p, newv[c].n);
			rf->pending = 1;
			forward = 0;
			/* a key that changed: the row goes out as it came,
			 * so the shaper deletes the old document; the
			 * commit's rewrite of the new one follows it */
			if (oldv && oldv[c].p && (oldv[c].n != newv[c].n ||
			    memcmp(oldv[c].p, newv[c].p, newv[c].n) != 0))
				forward = 1;
		}
	}
	for (i = 0; i < rf->nlinks; i++) {
		l = &rf->links[i];
		if (strcmp(l->rel, rel->qname) != 0)
			continue;
		if (!l->section)
			swallowed = 1;
		if ((c = col_of(rel, l->col)) < 0)
			continue;
		for (k = 0; k < 2; k++) {
			if (v[k] == NULL || v[k][c].p == NULL)
				continue;
			if (l->via_sql)
				keyset_add(&l->via, v[k][c].p, v[k][c].n);
			else
				keyset_add(&rf->parents[l->parent].pending,
				    v[k][c].p, v[k][c].n);
			rf->pending = 1;
			rf->n.child_rows++;
		}
	}
	return swallowed ? 0 : forward;
}

/*
 * A held burst is read at once, but not unbounded: a backlog of a million
 * child changes would hold every acknowledgement until it is all read,
 * and name its parents in one statement.
 */
#define HOLD_MAX_TXNS	1000
#define HOLD_MAX_KEYS	10000

/* wait until every held transaction has left the running ones: a
 * snapshot taken before that would not see the rows their commit
 * records announced. One statement for the burst: the xids widened to
 * xid8 against the current epoch, those still in progress counted */
static int
await_visible(struct refetch *rf, struct p2o_err *e)
{
	static const char sql[] =
	    "SELECT count(*) FROM pg_catalog.unnest($1::bigint[]) AS x(id), "
	    "(SELECT pg_catalog.pg_snapshot_xmax(pg_catalog."
	    "pg_current_snapshot())::text::bigint AS m) s WHERE "
	    "pg_catalog.pg_xact_status((((CASE WHEN x.id <= "
	    "(m & 4294967295) THEN m >> 32 ELSE (m >> 32) - 1 END) << 32) | "
	    "x.id)::text::pg_catalog.xid8) = 'in progress'";
	struct sbuf lit = SBUF_INIT;
	const char *params[1];
	struct timespec ms = { 0, 1000000 };
	PGresult *res;
	size_t i;
	int running, tries = 0;

	sbuf_addc(&lit, '{');
	for (i = 0; i < rf->nxids; i++)
		sbuf_addf(&lit, "%s%" PRIu32, i ? "," : "", rf->xids[i]);
	sbuf_addc(&lit, '}');
	params[0] = lit.buf;
	do {
		if ((res = (PGresult *)pgconn_query(rf->sql, "waiting for a "
		    "transaction to be visible", sql, 1, params, e)) == NULL) {
			sbuf_release(&lit);
			return -1;
		}
		running = PQntuples(res) == 1 &&
		    strcmp(PQgetvalue(res, 0, 0), "0") != 0;
		PQclear(res);
		if (running && ++tries % 10000 == 0)
			log_warnx("%zu transaction(s) from %" PRIu32 " on are "
			    "committed in the WAL and still not visible after "
			    "%d s", rf->nxids, rf->xids[0], tries / 1000);
		if (running)
			nanosleep(&ms, NULL);
	} while (running);
	sbuf_release(&lit);
	rf->nxids = 0;
	return 0;
}

int
refetch_pending(const struct refetch *rf)
{
	return rf->pending;
}

int
refetch_hold(struct refetch *rf, uint32_t xid)
{
	size_t keys = 0;
	int i;

	if (rf->nxids == rf->capxids) {
		rf->capxids = rf->capxids ? rf->capxids * 2 : 64;
		rf->xids = xrealloc(rf->xids, rf->capxids * sizeof(*rf->xids));
	}
	rf->xids[rf->nxids++] = xid;
	for (i = 0; i < rf->nparents; i++)
		keys += rf->parents[i].pending.n;
	for (i = 0; i < rf->nlinks; i++)
		keys += rf->links[i].via.n;
	return rf->nxids >= HOLD_MAX_TXNS || keys >= HOLD_MAX_KEYS;
}

/* a junction's parents of the child keys a transaction changed */
static int
resolve_via(struct refetch *rf, struct rf_link *l, struct p2o_err *e)
{
	struct sbuf lit = SBUF_INIT;
	const char *params[1];
	struct rf_parent *p = &rf->parents[l->parent];
	PGresult *res;
	int i;

	keyset_literal(&l->via, &lit);
	params[0] = lit.buf;
	res = (PGresult *)pgconn_query(rf->sql, "reading a junction's "
	    "parents", l->via_sql, 1, params, e);
	sbuf_release(&lit);
	if (res == NULL)
		return -1;
	rf->n.queries++;
	for (i = 0; i < PQntuples(res); i++)
		if (!PQgetisnull(res, i, 0))
			keyset_add(&p->pending, PQgetvalue(res, i, 0),
			    (size_t)PQgetlength(res, i, 0));
	PQclear(res);
	return 0;
}

/* every pending parent of p, read and written as row frames */
static int
read_parents(struct refetch *rf, struct rf_parent *p, uint64_t v,
    struct sbuf *out, uint64_t *nrows, struct p2o_err *e)
{
	struct sbuf lit = SBUF_INIT;
	struct sbuf *j = &rf->frame;
	const char *params[1];
	const char *vals[p->nest.n + 1];
	size_t lens[p->nest.n + 1];
	const char *kname = p->cols[p->keycol];
	PGresult *res;
	int r, c, rc = 0;

	keyset_literal(&p->pending, &lit);
	params[0] = lit.buf;
	res = (PGresult *)pgconn_query(rf->sql, "reading parents again",
	    p->sql, 1, params, e);
	sbuf_release(&lit);
	if (res == NULL)
		return -1;
	rf->n.queries++;
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
			(*nrows)++;
			rf->n.documents++;
		} else
			sbuf_reset(j);
	}
	PQclear(res);
	pgnest_flush(&p->nest);
	return rc;
}

int
refetch_commit(struct refetch *rf, uint64_t v, struct sbuf *out,
    uint64_t *nrows, struct p2o_err *e)
{
	int i;

	if (!rf->pending)
		return 0;
	rf->pending = 0;
	if (await_visible(rf, e) == -1)
		return -1;
	for (i = 0; i < rf->nlinks; i++)
		if (rf->links[i].via.n > 0 &&
		    resolve_via(rf, &rf->links[i], e) == -1)
			return -1;
	for (i = 0; i < rf->nparents; i++)
		if (rf->parents[i].pending.n > 0 &&
		    read_parents(rf, &rf->parents[i], v, out, nrows, e) == -1)
			return -1;
	return 0;
}

void
refetch_truncate(struct refetch *rf, const char *rel)
{
	int i;

	for (i = 0; i < rf->nlinks; i++)
		if (strcmp(rf->links[i].rel, rel) == 0)
			log_warnx("table '%s' was truncated; the documents of "
			    "sync section '%s' still embed its rows and are "
			    "not rewritten: touching the parents rewrites "
			    "them (UPDATE %s SET %s = %s)", rel,
			    rf->parents[rf->links[i].parent].sec->name,
			    rf->parents[rf->links[i].parent].sec->rel,
			    rf->parents[rf->links[i].parent].nest.key,
			    rf->parents[rf->links[i].parent].nest.key);
}

const struct refetch_counts *
refetch_counts(const struct refetch *rf)
{
	return &rf->n;
}
