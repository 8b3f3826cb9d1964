/*
 * mynestread.c - MySQL's and MariaDB's operations under the commit-time
 * re-read driver (lib/nestread.c), for capture-mysql: per parent section
 * one statement reads the pending parents whole and one per collection
 * reads their collections (mynest.c, the reader the load uses), each
 * parent an ordinary row frame at the transaction's version.
 *
 * The reads are locking reads (LOCK IN SHARE MODE) on a connection of
 * their own, opened at the start. The binlog is written before the
 * engine commits, so the dump can hand over a transaction whose rows a
 * plain read does not show yet; it still holds their locks until it
 * has, and a locking read waits for them and then reads the latest
 * committed rows. READ COMMITTED: no gap locks, so the application's
 * inserts are never held by a re-read. Whatever is newer than the
 * transaction is newer in the stream too and is read again after it.
 *
 * Owns those statements, the key literals, the retries of a read that
 * lost a lock, the tables collections read appended to the capture's,
 * and the assembler's hooks (a row's images as JSON objects, tables by
 * index). Never decides which parents to read or when (the driver does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>
#include <mysqld_error.h>

#include "config.h"
#include "jscan.h"
#include "keyset.h"
#include "log.h"
#include "nestread.h"
#include "p2o.h"
#include "mysql/myconn.h"
#include "mysql/mynest.h"

#define LOCK	"LOCK IN SHARE MODE"

/* the source's state */
struct mynr {
	MYSQL	*sql;		/* the re-reads' own */
	MYSQL	*cat;		/* the capture's catalogue one, while open */
	int	 mariadb;
	struct my_table **tables;	/* the assembler's, by index */
	int	*ntables;
	struct sbuf json, q;
};

/* a section with collections */
struct mynr_parent {
	const struct sync_section *sec;
	int	 ti;		/* its table (a section: its index) */
	struct mynest nest;
	char	**via;		/* per collection read through a junction:
				 * "SELECT fk FROM junction WHERE through_key
				 * IN (" */
	enum my_kind *via_kind;	/* ... and its child key's kind */
};

static void
parent_free(void *arg)
{
	struct mynr_parent *p = arg;
	int k;

	if (p == NULL)
		return;
	for (k = 0; p->via != NULL && k < p->nest.n; k++)
		free(p->via[k]);
	free(p->via);
	free(p->via_kind);
	mynest_release(&p->nest);
	free(p);
}

static int
parent(void *arg, int si, const struct sync_section *sec, void **out,
    const char **key, struct p2o_err *e)
{
	struct mynr *s = arg;
	struct mynr_parent *p = xcalloc(1, sizeof(*p));

	p->sec = sec;
	p->ti = si;
	if (mynest_describe(s->sql, s->mariadb, sec, &(*s->tables)[si],
	    &p->nest, e) == -1) {
		parent_free(p);
		return -1;
	}
	p->via = xcalloc((size_t)p->nest.n + 1, sizeof(*p->via));
	p->via_kind = xcalloc((size_t)p->nest.n + 1, sizeof(*p->via_kind));
	*out = p;
	*key = p->nest.key;
	return 0;
}

/* the table named rel among the assembler's, appended (described) when
 * no section reads it: its rows must reach the assembler */
static int
table_of(struct mynr *s, const char *rel, const char *db, const char *name,
    struct p2o_err *e)
{
	struct my_table t;
	int i, rc;

	for (i = 0; i < *s->ntables; i++)
		if (strcmp((*s->tables)[i].rel, rel) == 0)
			return i;
	if ((rc = mycat_table(s->cat, s->mariadb, db, name, &t, e)) != 0)
		return rc == -1 ? -1 : p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' "
		    "(a collection) does not exist or may not be read", rel);
	*s->tables = xrealloc(*s->tables, (size_t)(*s->ntables + 1) *
	    sizeof(**s->tables));
	(*s->tables)[*s->ntables] = t;
	return (*s->ntables)++;
}

static int
collection(void *arg, void *parg, int k, struct sbuf *via_col,
    struct p2o_err *e)
{
	struct mynr *s = arg;
	struct mynr_parent *p = parg;
	const struct sync_section *sec = p->sec;
	const struct sync_more *more = sync_more(sec);
	const struct sync_aggregate *a;
	const struct sync_child *c;
	const struct my_table *ct;
	const struct my_col *ck;

	if (k >= more->nchildren) {
		a = &more->aggregates[k - more->nchildren];
		return table_of(s, a->rel, a->schema, a->table, e) < 0 ? -1 : 0;
	}
	c = &more->children[k];
	if (table_of(s, c->rel, c->schema, c->table, e) < 0)
		return -1;
	if (c->through == NULL)
		return 0;
	if (table_of(s, c->through_rel, c->through_schema, c->through_table,
	    e) < 0)
		return -1;
	ct = &p->nest.coll[k].t;
	ck = &ct->cols[ct->pk[0]];
	if (!mynest_keyable(ck->kind))
		return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' is read "
		    "through '%s' by its key column '%s', which is %s, not an "
		    "integer or a string", c->rel, c->through_rel, ck->name,
		    ck->column_type);
	sbuf_reset(&s->q);
	sbuf_adds(&s->q, "SELECT ");
	myconn_ident(&s->q, c->foreign_key);
	sbuf_adds(&s->q, " FROM ");
	myconn_ident(&s->q, c->through_schema);
	sbuf_addc(&s->q, '.');
	myconn_ident(&s->q, c->through_table);
	sbuf_adds(&s->q, " WHERE ");
	myconn_ident(&s->q, c->through_key);
	sbuf_adds(&s->q, " IN (");
	p->via[k] = xstrdup(s->q.buf);
	p->via_kind[k] = ck->kind;
	sbuf_adds(via_col, ck->name);
	return 0;
}

/* what keyset_take hands: the literals of a list, comma-separated */
struct lits {
	MYSQL	*sql;
	enum my_kind kind;
	struct sbuf *out;
	int	 n, bad;
};

static void
put_lit(void *arg, const char *s, size_t n)
{
	struct lits *l = arg;
	size_t at = l->out->len;

	if (l->n > 0)
		sbuf_addc(l->out, ',');
	if (mynest_literal(l->kind, l->sql, l->out, s, n) == -1) {
		/* a value the binlog gave that no key of this kind holds */
		l->out->len = at;
		l->bad++;
		return;
	}
	l->n++;
}

/* the keys of k as a list "(a,b)" after what q holds, k emptied: the
 * number of keys */
static int
put_list(struct mynr *s, struct keyset *k, enum my_kind kind,
    struct sbuf *q)
{
	struct lits l = { s->sql, kind, q, 0, 0 };

	keyset_take(k, put_lit, &l);
	if (l.bad > 0)
		log_warnx("%d key values in the binlog are not of their key "
		    "column's form; their parents are not read again", l.bad);
	sbuf_addc(q, ')');
	return l.n;
}

/*
 * A re-read that waited too long for a lock, or was chosen as a
 * deadlock's victim: the statement alone is rolled back (autocommit,
 * nothing else held), so it is run again here, up to NR_LOCK_RETRIES
 * times, rather than end the capture and replay from the checkpoint to
 * the same commit and the same lock. 1 to read again (logged, naming
 * the parent table and the attempt), 0 for the failure to stand.
 */
#define NR_LOCK_RETRIES	3

static int
again(const struct mynr_parent *p, unsigned err, int attempt,
    const struct p2o_err *e)
{
	if ((err != ER_LOCK_WAIT_TIMEOUT && err != ER_LOCK_DEADLOCK) ||
	    attempt > NR_LOCK_RETRIES)
		return 0;
	log_warnx("table '%s': %s (attempt %d of %d); trying again",
	    p->sec->rel, e->msg, attempt, NR_LOCK_RETRIES + 1);
	return 1;
}

/* a junction's parents of the child keys a transaction changed */
static int
resolve(void *arg, void *parg, int k, struct keyset *keys,
    struct keyset *parents, uint64_t *queries, struct p2o_err *e)
{
	struct mynr *s = arg;
	struct mynr_parent *p = parg;
	MYSQL_RES *r;
	MYSQL_ROW row;
	unsigned long *lens;
	int attempt = 1;

	sbuf_reset(&s->q);
	sbuf_adds(&s->q, p->via[k]);
	if (put_list(s, keys, p->via_kind[k], &s->q) == 0)
		return 0;
	sbuf_adds(&s->q, " " LOCK);
	for (;;) {
		(*queries)++;
		if ((r = myconn_query(s->sql, s->q.buf, "reading a "
		    "junction's parents", e)) != NULL)
			break;
		if (!again(p, mysql_errno(s->sql), attempt++, e))
			return -1;
	}
	if (attempt > 1)
		p2o_err_clear(e);
	while ((row = mysql_fetch_row(r)) != NULL) {
		lens = mysql_fetch_lengths(r);
		if (row[0] != NULL)
			keyset_add(parents, row[0], lens[0]);
	}
	mysql_free_result(r);
	return 0;
}

/* the parents s->q selects (cond: their keys), with their collections:
 * 0 with *res, or -1 with err and *why the server's error number */
static int
read_once(struct mynr *s, struct mynr_parent *p, const char *cond,
    MYSQL_RES **res, unsigned *why, uint64_t *queries, struct p2o_err *e)
{
	(*queries)++;
	/* stored: the collections are read on the same connection */
	if ((*res = myconn_query(s->sql, s->q.buf, "reading parents again",
	    e)) == NULL) {
		*why = mysql_errno(s->sql);
		return -1;
	}
	if (mysql_num_rows(*res) == 0)
		return 0;
	*queries += (uint64_t)p->nest.n;
	if (mynest_read(&p->nest, s->sql, cond, LOCK, e) == -1) {
		*why = mysql_errno(s->sql);
		mysql_free_result(*res);
		*res = NULL;
		return -1;
	}
	return 0;
}

/* every parent keys names, read and written as row frames */
static int
read_parents(void *arg, void *parg, struct keyset *keys, uint64_t v,
    struct sbuf *out, uint64_t *docs, uint64_t *queries, struct p2o_err *e)
{
	struct mynr *s = arg;
	struct mynr_parent *p = parg;
	const struct my_table *t = &(*s->tables)[p->ti];
	struct sbuf cond = SBUF_INIT;
	MYSQL_RES *r;
	MYSQL_ROW row;
	unsigned why = 0;
	int attempt = 1, rc = -1;

	/* the keys as the rows spelled them ('A', 'a '): the IN list finds
	 * the parent the server's comparison gives ('a'), its document is
	 * built from its own row, and mynest_read files its collections by
	 * that row's key, so no key is folded or compared here */
	sbuf_adds(&cond, "IN (");
	if (put_list(s, keys, p->nest.key_kind, &cond) == 0) {
		sbuf_release(&cond);
		return 0;
	}
	sbuf_reset(&s->q);
	sbuf_adds(&s->q, "SELECT ");
	mynest_select_cols(&s->q, t, NULL);
	sbuf_adds(&s->q, " FROM ");
	myconn_ident(&s->q, t->db);
	sbuf_addc(&s->q, '.');
	myconn_ident(&s->q, t->name);
	sbuf_adds(&s->q, " WHERE ");
	myconn_ident(&s->q, p->nest.key);
	sbuf_addc(&s->q, ' ');
	sbuf_add(&s->q, cond.buf, cond.len);
	sbuf_adds(&s->q, " " LOCK);
	/* nothing is written before a read is whole: a second one starts
	 * from the same keys and writes each parent once */
	while (read_once(s, p, cond.buf, &r, &why, queries, e) == -1)
		if (!again(p, why, attempt++, e))
			goto out;
	if (attempt > 1)
		p2o_err_clear(e);
	while ((row = mysql_fetch_row(r)) != NULL) {
		mynest_row_frame(out, &s->json, 'u', t, v,
		    (const char *const *)row, mysql_fetch_lengths(r), &p->nest);
		(*docs)++;
	}
	mysql_free_result(r);
	mynest_flush(&p->nest);
	rc = 0;
out:
	sbuf_release(&cond);
	return rc;
}

/* an UPDATE that changes nothing is not in the binlog: touching a
 * parent does not reach the stream, a new snapshot of its table does */
static void
rewrite_hint(void *parg, struct sbuf *out)
{
	struct mynr_parent *p = parg;

	sbuf_addf(out, "pg2osync resnapshot --table %s rebuilds them",
	    p->sec->rel);
}

/* its own connection: the catalogue one re-reads shapes between events,
 * the dump one streams */
static int
source_open(void *arg, const struct config *cfg, struct p2o_err *e)
{
	struct mynr *s = arg;

	if ((s->sql = myconn_open(cfg, "re-read", e)) == NULL ||
	    myconn_value_session(s->sql, e) == -1)
		return -1;
	return myconn_exec(s->sql, "SET SESSION TRANSACTION ISOLATION LEVEL "
	    "READ COMMITTED", "setting the session", e);
}

static void
source_close(void *arg)
{
	struct mynr *s = arg;

	sbuf_release(&s->json);
	sbuf_release(&s->q);
	myconn_close(s->sql);
	free(s);
}

static const struct nestread_ops mynestread_ops = {
	.open = source_open,
	.parent = parent,
	.collection = collection,
	.resolve = resolve,
	.read = read_parents,
	.rewrite_hint = rewrite_hint,
	.parent_free = parent_free,
	.close = source_close,
};

struct nestread *
mynestread_open(const struct config *cfg, struct st_mysql *cat, int mariadb,
    struct my_table **tables, int *ntables, struct p2o_err *e)
{
	struct mynr *s = xcalloc(1, sizeof(*s));
	struct nestread *nr;

	s->cat = cat;
	s->mariadb = mariadb;
	s->tables = tables;
	s->ntables = ntables;
	nr = nestread_open(cfg, &mynestread_ops, s, e);
	/* the catalogue connection is the capture's, used at the open only */
	if (nr != NULL)
		s->cat = NULL;
	return nr;
}

/* a JSON row image's value of col as the text protocol would print it */
static int
json_text(const void *img, const char *col, struct sbuf *b)
{
	const struct jspan *o = img;
	struct jspan v;

	if (!jobj_get(*o, col, &v))
		return 0;
	switch (jspan_type(v)) {
	case J_STRING:
		sbuf_grow(b, v.n + 1);
		b->len += jstr_unescape(v, b->buf + b->len);
		b->buf[b->len] = '\0';
		return 1;
	case J_NUMBER:
		sbuf_add(b, v.p, v.n);
		return 1;
	default:
		return 0;
	}
}

int
mynestread_row(void *ctx, int ti, char op, struct jspan newi,
    struct jspan oldi)
{
	struct nestread *nr = ctx;
	struct mynr *s = nestread_source(nr);
	struct nest_image n = { json_text, &newi }, o = { json_text, &oldi };

	return nestread_row(nr, (*s->tables)[ti].rel, op != 'd' && newi.p ?
	    &n : NULL, oldi.p ? &o : NULL);
}

int
mynestread_commit(void *ctx, uint64_t v, struct sbuf *out, uint64_t *nrows,
    struct p2o_err *e)
{
	return nestread_commit(ctx, v, out, nrows, e);
}

void
mynestread_truncate(void *ctx, int ti)
{
	struct nestread *nr = ctx;
	struct mynr *s = nestread_source(nr);

	nestread_truncate(nr, (*s->tables)[ti].rel);
}
