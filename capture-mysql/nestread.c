/*
 * nestread.c - the parents a binlog transaction's child rows name, read
 * again at its commit (docs/config.md "children"). A row of a child,
 * junction or counted table is reduced to the parent keys its after- and
 * before-image name (a row moving to another parent names both) and is
 * not forwarded; a parent's own insert or update is reduced to its key
 * the same way, since its document must carry its collections. At the
 * XID (or COMMIT) one statement reads the pending parents of a section
 * whole and one per collection reads their collections
 * (lib/mysql/mynest.c, the reader the load uses); each parent becomes an
 * ordinary row frame at the transaction's version ahead of the commit
 * frame, so the commit is acknowledged only once they are durable. A
 * thousand children of one parent are one key and one document. A parent
 * no longer found was deleted later; its delete follows in the stream.
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
 * Owns those statements, the key sets, and the warnings about child
 * tables (a truncate the parents do not see, a child that is a section
 * too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>
#include <mysqld_error.h>

#include "config.h"
#include "keyset.h"
#include "log.h"
#include "p2o.h"
#include "xio.h"
#include "mysql/myconn.h"
#include "mysql/mynest.h"
#include "nestread.h"
#include "server.h"

#define LOCK	"LOCK IN SHARE MODE"

/* a section with collections */
struct nr_parent {
	const struct sync_section *sec;
	int	 ti;		/* its table (a section: its index) */
	struct mynest nest;
	struct keyset pending;	/* this transaction's parent keys */
};

/* a table whose rows name parents */
struct nr_link {
	int	 ti;
	int	 parent;
	char	*col;		/* its column naming the parent's key; for a
				 * child read through a junction, its own
				 * key, which the junction maps */
	enum my_kind kind;	/* through: that key's kind */
	char	*via;		/* through: "SELECT fk FROM junction WHERE
				 * through_key IN (" */
	struct keyset keys;	/* through: this transaction's child keys */
	int	 section;	/* a sync section of its own too */
};

struct nestread {
	MYSQL	*sql;
	struct my_table **tables;	/* the assembler's, by index */
	int	 nparents;
	struct nr_parent *parents;
	int	 nlinks;
	struct nr_link *links;
	int	 pending;	/* some key waits for the commit */
	struct sbuf json, q;
	uint64_t documents, queries, child_rows;
};

/* the table named rel among *tables, appended (described) when no
 * section reads it: its rows must reach the assembler */
static int
table_of(struct nestread *nr, struct server *srv, const char *rel,
    const char *db, const char *name, int *ntables, struct p2o_err *e)
{
	struct my_table t;
	int i, rc;

	for (i = 0; i < *ntables; i++)
		if (strcmp((*nr->tables)[i].rel, rel) == 0)
			return i;
	if ((rc = mycat_table(srv->sql, srv->mariadb, db, name, &t, e)) != 0)
		return rc == -1 ? -1 : p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' "
		    "(a collection) does not exist or may not be read", rel);
	*nr->tables = xrealloc(*nr->tables, (size_t)(*ntables + 1) *
	    sizeof(**nr->tables));
	(*nr->tables)[*ntables] = t;
	return (*ntables)++;
}

static struct nr_link *
add_link(struct nestread *nr, const struct config *cfg, int ti, int parent,
    const char *col)
{
	struct nr_link *l;

	nr->links = xrealloc(nr->links, (size_t)(nr->nlinks + 1) *
	    sizeof(*nr->links));
	l = &nr->links[nr->nlinks++];
	memset(l, 0, sizeof(*l));
	l->ti = ti;
	l->parent = parent;
	l->col = xstrdup(col);
	l->section = config_find_rel(cfg, (*nr->tables)[ti].rel) != NULL;
	return l;
}

static int
add_parent(struct nestread *nr, const struct config *cfg, struct server *srv,
    int si, int *ntables, struct p2o_err *e)
{
	const struct sync_section *sec = &cfg->syncs[si];
	struct nr_parent *p;
	struct nr_link *l;
	const struct my_table *ct;
	int k, ti, jt, idx = nr->nparents;

	nr->parents = xrealloc(nr->parents, (size_t)(nr->nparents + 1) *
	    sizeof(*nr->parents));
	p = &nr->parents[nr->nparents++];
	memset(p, 0, sizeof(*p));
	p->sec = sec;
	p->ti = si;
	if (mynest_describe(nr->sql, srv->mariadb, sec, &(*nr->tables)[si],
	    &p->nest, e) == -1)
		return -1;
	for (k = 0; k < sec->nchildren; k++) {
		const struct sync_child *c = &sec->children[k];

		if ((ti = table_of(nr, srv, c->rel, c->schema, c->table,
		    ntables, e)) < 0)
			return -1;
		if (c->through == NULL) {
			add_link(nr, cfg, ti, idx, c->foreign_key);
			continue;
		}
		if ((jt = table_of(nr, srv, c->through_rel, c->through_schema,
		    c->through_table, ntables, e)) < 0)
			return -1;
		add_link(nr, cfg, jt, idx, c->foreign_key);
		ct = &nr->parents[idx].nest.coll[k].t;
		if (!mynest_keyable(ct->cols[ct->pk[0]].kind))
			return p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' is read "
			    "through '%s' by its key column '%s', which is "
			    "%s, not an integer or a string", c->rel,
			    c->through_rel, ct->cols[ct->pk[0]].name,
			    ct->cols[ct->pk[0]].column_type);
		l = add_link(nr, cfg, ti, idx, ct->cols[ct->pk[0]].name);
		l->kind = ct->cols[ct->pk[0]].kind;
		sbuf_reset(&nr->q);
		sbuf_adds(&nr->q, "SELECT ");
		myconn_ident(&nr->q, c->foreign_key);
		sbuf_adds(&nr->q, " FROM ");
		myconn_ident(&nr->q, c->through_schema);
		sbuf_addc(&nr->q, '.');
		myconn_ident(&nr->q, c->through_table);
		sbuf_adds(&nr->q, " WHERE ");
		myconn_ident(&nr->q, c->through_key);
		sbuf_adds(&nr->q, " IN (");
		l->via = xstrdup(nr->q.buf);
	}
	for (k = 0; k < sec->naggregates; k++) {
		const struct sync_aggregate *a = &sec->aggregates[k];

		if ((ti = table_of(nr, srv, a->rel, a->schema, a->table,
		    ntables, e)) < 0)
			return -1;
		add_link(nr, cfg, ti, idx, a->foreign_key);
	}
	return 0;
}

struct nestread *
nestread_open(const struct config *cfg, struct server *srv,
    struct my_table **tables, int *ntables, struct p2o_err *e)
{
	struct nestread *nr;
	int i;

	p2o_err_clear(e);
	for (i = 0; i < cfg->nsyncs; i++)
		if (cfg->syncs[i].nchildren > 0 ||
		    cfg->syncs[i].naggregates > 0)
			break;
	if (i == cfg->nsyncs)
		return NULL;
	nr = xcalloc(1, sizeof(*nr));
	nr->tables = tables;
	/* its own connection: the catalogue one re-reads shapes between
	 * events, the dump one streams */
	if ((nr->sql = myconn_open(cfg, "re-read", e)) == NULL ||
	    myconn_value_session(nr->sql, e) == -1 ||
	    myconn_exec(nr->sql, "SET SESSION TRANSACTION ISOLATION LEVEL "
	    "READ COMMITTED", "setting the session", e) == -1)
		goto fail;
	for (i = 0; i < cfg->nsyncs; i++)
		if ((cfg->syncs[i].nchildren > 0 ||
		    cfg->syncs[i].naggregates > 0) &&
		    add_parent(nr, cfg, srv, i, ntables, e) == -1)
			goto fail;
	for (i = 0; i < nr->nlinks; i++)
		if (nr->links[i].section)
			log_warnx("table '%s' is a collection of sync section "
			    "'%s' and a sync section of its own: its index "
			    "gets its rows as they change, and the parent "
			    "its rows again at each change",
			    (*tables)[nr->links[i].ti].rel,
			    nr->parents[nr->links[i].parent].sec->name);
	return nr;
fail:
	nestread_close(nr);
	return NULL;
}

void
nestread_close(struct nestread *nr)
{
	int i;

	if (nr == NULL)
		return;
	if (nr->documents > 0 || nr->child_rows > 0)
		log_info("collections: %llu child rows rewrote %llu parent "
		    "documents in %llu queries",
		    (unsigned long long)nr->child_rows,
		    (unsigned long long)nr->documents,
		    (unsigned long long)nr->queries);
	for (i = 0; i < nr->nparents; i++) {
		mynest_release(&nr->parents[i].nest);
		keyset_release(&nr->parents[i].pending);
	}
	for (i = 0; i < nr->nlinks; i++) {
		free(nr->links[i].col);
		free(nr->links[i].via);
		keyset_release(&nr->links[i].keys);
	}
	free(nr->parents);
	free(nr->links);
	sbuf_release(&nr->json);
	sbuf_release(&nr->q);
	myconn_close(nr->sql);
	free(nr);
}

/* img's value of col as the text protocol would print it, into b: 1, or
 * 0 (no image, no such column, NULL) */
static int
key_text(struct jspan img, const char *col, struct sbuf *b)
{
	struct jspan v;

	sbuf_reset(b);
	if (img.p == NULL || !jobj_get(img, col, &v))
		return 0;
	switch (jspan_type(v)) {
	case J_STRING:
		sbuf_grow(b, v.n + 1);
		b->len = jstr_unescape(v, b->buf);
		return 1;
	case J_NUMBER:
		sbuf_add(b, v.p, v.n);
		return 1;
	default:
		return 0;
	}
}

int
nestread_row(void *ctx, int ti, char op, struct jspan newi, struct jspan oldi)
{
	struct nestread *nr = ctx;
	struct sbuf kn = SBUF_INIT, ko = SBUF_INIT;
	struct jspan img[2] = { newi, oldi };
	struct nr_parent *p;
	struct nr_link *l;
	int i, k, forward = 1, swallowed = 0;

	for (i = 0; i < nr->nparents; i++) {
		p = &nr->parents[i];
		if (op == 'd' || p->ti != ti || !key_text(newi, p->nest.key,
		    &kn))
			continue;
		/* its document is written whole at the commit */
		keyset_add(&p->pending, kn.buf, kn.len);
		nr->pending = 1;
		forward = 0;
		/* a key that changed: the row goes out as it came, so the
		 * shaper deletes the old document; the commit's rewrite of
		 * the new one follows it */
		if (key_text(oldi, p->nest.key, &ko) && (ko.len != kn.len ||
		    memcmp(ko.buf, kn.buf, kn.len) != 0))
			forward = 1;
	}
	for (i = 0; i < nr->nlinks; i++) {
		l = &nr->links[i];
		if (l->ti != ti)
			continue;
		if (!l->section)
			swallowed = 1;
		for (k = 0; k < 2; k++) {
			if (!key_text(img[k], l->col, &kn))
				continue;
			keyset_add(l->via ? &l->keys :
			    &nr->parents[l->parent].pending, kn.buf, kn.len);
			nr->pending = 1;
			nr->child_rows++;
		}
	}
	sbuf_release(&kn);
	sbuf_release(&ko);
	return swallowed ? 0 : forward;
}

/* what keyset_take hands: the literals of a list, comma-separated */
struct lits {
	struct nestread *nr;
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
	if (mynest_literal(l->kind, l->nr->sql, l->out, s, n) == -1) {
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
put_list(struct nestread *nr, struct keyset *k, enum my_kind kind,
    struct sbuf *q)
{
	struct lits l = { nr, kind, q, 0, 0 };

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
again(const struct nr_parent *p, unsigned err, int attempt,
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
resolve_via(struct nestread *nr, struct nr_link *l, struct p2o_err *e)
{
	struct nr_parent *p = &nr->parents[l->parent];
	MYSQL_RES *r;
	MYSQL_ROW row;
	unsigned long *lens;
	int attempt = 1;

	sbuf_reset(&nr->q);
	sbuf_adds(&nr->q, l->via);
	if (put_list(nr, &l->keys, l->kind, &nr->q) == 0)
		return 0;
	sbuf_adds(&nr->q, " " LOCK);
	for (;;) {
		nr->queries++;
		if ((r = myconn_query(nr->sql, nr->q.buf, "reading a "
		    "junction's parents", e)) != NULL)
			break;
		if (!again(p, mysql_errno(nr->sql), attempt++, e))
			return -1;
	}
	if (attempt > 1)
		p2o_err_clear(e);
	while ((row = mysql_fetch_row(r)) != NULL) {
		lens = mysql_fetch_lengths(r);
		if (row[0] != NULL)
			keyset_add(&p->pending, row[0], lens[0]);
	}
	mysql_free_result(r);
	return 0;
}

/* the parents nr->q selects (cond: their keys), with their collections:
 * 0 with *res, or -1 with err and *why the server's error number */
static int
read_once(struct nestread *nr, struct nr_parent *p, const char *cond,
    MYSQL_RES **res, unsigned *why, struct p2o_err *e)
{
	nr->queries++;
	/* stored: the collections are read on the same connection */
	if ((*res = myconn_query(nr->sql, nr->q.buf, "reading parents again",
	    e)) == NULL) {
		*why = mysql_errno(nr->sql);
		return -1;
	}
	if (mysql_num_rows(*res) == 0)
		return 0;
	nr->queries += (uint64_t)p->nest.n;
	if (mynest_read(&p->nest, nr->sql, cond, LOCK, e) == -1) {
		*why = mysql_errno(nr->sql);
		mysql_free_result(*res);
		*res = NULL;
		return -1;
	}
	return 0;
}

/* every pending parent of p, read and written as row frames */
static int
read_parents(struct nestread *nr, struct nr_parent *p, uint64_t v,
    struct sbuf *out, uint64_t *nrows, struct p2o_err *e)
{
	const struct my_table *t = &(*nr->tables)[p->ti];
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
	if (put_list(nr, &p->pending, p->nest.key_kind, &cond) == 0) {
		sbuf_release(&cond);
		return 0;
	}
	sbuf_reset(&nr->q);
	sbuf_adds(&nr->q, "SELECT ");
	mynest_select_cols(&nr->q, t, NULL);
	sbuf_adds(&nr->q, " FROM ");
	myconn_ident(&nr->q, t->db);
	sbuf_addc(&nr->q, '.');
	myconn_ident(&nr->q, t->name);
	sbuf_adds(&nr->q, " WHERE ");
	myconn_ident(&nr->q, p->nest.key);
	sbuf_addc(&nr->q, ' ');
	sbuf_add(&nr->q, cond.buf, cond.len);
	sbuf_adds(&nr->q, " " LOCK);
	/* nothing is written before a read is whole: a second one starts
	 * from the same keys and writes each parent once */
	while (read_once(nr, p, cond.buf, &r, &why, e) == -1)
		if (!again(p, why, attempt++, e))
			goto out;
	if (attempt > 1)
		p2o_err_clear(e);
	while ((row = mysql_fetch_row(r)) != NULL) {
		mynest_row_frame(out, &nr->json, 'u', t, v,
		    (const char *const *)row, mysql_fetch_lengths(r), &p->nest);
		(*nrows)++;
		nr->documents++;
	}
	mysql_free_result(r);
	mynest_flush(&p->nest);
	rc = 0;
out:
	sbuf_release(&cond);
	return rc;
}

int
nestread_commit(void *ctx, uint64_t v, struct sbuf *out, uint64_t *nrows,
    struct p2o_err *e)
{
	struct nestread *nr = ctx;
	int i;

	if (!nr->pending)
		return 0;
	nr->pending = 0;
	for (i = 0; i < nr->nlinks; i++)
		if (nr->links[i].keys.n > 0 &&
		    resolve_via(nr, &nr->links[i], e) == -1)
			return -1;
	for (i = 0; i < nr->nparents; i++)
		if (nr->parents[i].pending.n > 0 &&
		    read_parents(nr, &nr->parents[i], v, out, nrows, e) == -1)
			return -1;
	return 0;
}

void
nestread_truncate(void *ctx, int ti)
{
	struct nestread *nr = ctx;
	const struct sync_section *sec;
	int i;

	for (i = 0; i < nr->nlinks; i++) {
		if (nr->links[i].ti != ti)
			continue;
		sec = nr->parents[nr->links[i].parent].sec;
		log_warnx("table '%s' was truncated; the documents of sync "
		    "section '%s' still embed its rows and are not rewritten: "
		    "pg2osync resnapshot --table %s rebuilds them",
		    (*nr->tables)[ti].rel, sec->name, sec->rel);
	}
}

uint64_t
nestread_queries(const struct nestread *nr)
{
	return nr->queries;
}
