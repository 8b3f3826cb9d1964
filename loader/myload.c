/*
 * myload.c - the MySQL and MariaDB operations of the load driver
 * (load.c): the connection and the session values are read in, a table
 * described with the source layer's key rule (lib/mysql/mycat.h: the
 * section's primary_key, else the primary key, else none for an
 * append_only table), its filter written for the server, and its unit:
 * one chunk, the rows past the last key written in key order. Chunks
 * follow one another (each starts where the last ended), so one
 * connection reads them all; a table without a key is one chunk. Owns how
 * a chunk advances the progress object; the statement is mychunk.c's,
 * the reading and the version mysrc.c's. Never exits.
 *
 * There is no pause analogue of PostgreSQL's WAL pressure: the binlog is
 * the server's whatever the load does, and the load never waits for the
 * stream.
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "xio.h"
#include "mysql/mycat.h"
#include "mysql/myconn.h"
#include "mysql/mygtid.h"
#include "mysql/mynest.h"
#include "mysql/myval.h"
#include "loader.h"

/*
 * The server gives up on a client that reads nothing for
 * net_write_timeout (60 s by default). A chunk's rows reach stdout at
 * the target's pace, and a target that is down holds them: 10 minutes
 * covers an outage the writer waits out, and a longer one ends the
 * chunk, which is read again from the last mark.
 */
#define NET_WRITE_TIMEOUT_S	600

/* a table being loaded */
struct mytab {
	struct load_view v;
	struct my_table t;
	struct myprogress p;
	char	*filter;	/* the section's where, as the server runs it */
	struct copy_field *last;	/* the last key read */
	struct mynest *nest;	/* its collections, or NULL */
};

/*
 * The capture versions by base + coordinate, base being the checkpoint's
 * position less its text's coordinate; the loader takes the same base
 * from the same checkpoint. The capture may open a new generation (a
 * failover: the new server's coordinates are lower) that the loader does
 * not know of: its copies then carry the older generation's base. That
 * is safe because such a copy only ever loses to the stream:
 * - every change the stream carries from the new server is in the new
 *   generation, whose base is past every version of the old one, so it
 *   outranks any copy whatever the copy read;
 * - a copy that loses to an old-generation version leaves that version's
 *   document, written by the stream up to the checkpoint the new server
 *   resumed from, and every later change streams again in the new
 *   generation;
 * - a copy that wins holds the row as the server it was read from had
 *   it, which holds every transaction up to the point it was read.
 * The next run reads the new generation's checkpoint and versions by it.
 */
static int
base(struct loader *ld, uint64_t *b)
{
	struct mypos p;
	long long idx;
	uint64_t coord;
	char err[256];

	*b = 0;
	if (!ld->cp_present)
		return 0;
	memset(&p, 0, sizeof(p));
	if (ld->cp_text == NULL || mypos_parse(&p, ld->cp_text, err,
	    sizeof(err)) == -1 ||
	    (idx = binlog_file_index(p.file, strlen(p.file))) < 0) {
		mypos_release(&p);
		return p2o_fail(&ld->err, P2O_EXIT_DATA, "control fd 3: the "
		    "load frame's checkpoint is not a binlog position");
	}
	coord = mypos_coord((uint64_t)idx, p.offset);
	mypos_release(&p);
	if (ld->cp_pos < coord)
		return p2o_fail(&ld->err, P2O_EXIT_CHECKPOINT, "the stored "
		    "checkpoint's position %llu is below the coordinate of its "
		    "own text (%llu): refusing a checkpoint that disagrees "
		    "with itself", (unsigned long long)ld->cp_pos,
		    (unsigned long long)coord);
	*b = ld->cp_pos - coord;
	return 0;
}

static int
my_open(struct loader *ld)
{
	struct myload *my = xcalloc(1, sizeof(*my));
	char set[64];

	ld->src = my;
	if (base(ld, &my->base) == -1)
		return -1;
	if ((my->conn = myconn_open(ld->cfg, "load", &ld->err)) == NULL)
		return -1;
	my->mariadb = myconn_mariadb(my->conn);
	snprintf(set, sizeof(set), "SET net_write_timeout = %d",
	    NET_WRITE_TIMEOUT_S);
	if (myconn_value_session(my->conn, &ld->err) == -1 ||
	    myconn_exec(my->conn, set, "setting the session", &ld->err) == -1)
		return -1;
	return 0;
}

static void
my_close(struct loader *ld)
{
	struct myload *my = ld->src;

	if (my == NULL)
		return;
	myconn_close(my->conn);
	free(my);
	ld->src = NULL;
}

/* the filter pushed into every chunk's statement, when the server can
 * compute it as the shaper does; the shaper evaluates it on every row
 * either way, so a filter left out only costs rows read */
static int
filter(struct loader *ld, const struct sync_section *sec, struct mytab *tab)
{
	const struct sync_more *more = sync_more(sec);
	struct myload *my = ld->src;
	struct sbuf sql = SBUF_INIT, scope = SBUF_INIT;
	char why[512];
	int rc = 0;

	if (more->where_expr != NULL)
		rc = mychunk_filter(&sql, &tab->t, more->where_expr,
		    mysrc_quote, my, why, sizeof(why));
	if (rc == -1)
		goto quoting;
	if (rc == 1) {
		log_info("table '%s': its 'where' is evaluated on every row "
		    "read, not by the server: %s", sec->rel, why);
		sbuf_reset(&sql);
	}
	/* a resnapshot's scope has no second filter behind it (the shaper
	 * knows only the section's where): the server must run it */
	if (ld->scope != NULL) {
		rc = mychunk_filter(&scope, &tab->t, ld->scope, mysrc_quote,
		    my, why, sizeof(why));
		if (rc == -1)
			goto quoting;
		if (rc == 1) {
			sbuf_release(&sql);
			sbuf_release(&scope);
			return p2o_fail(&ld->err, P2O_EXIT_USAGE, "table '%s': "
			    "--where '%s' cannot be run by the server as the "
			    "shaper would run it: %s", sec->rel,
			    ld->scope_text, why);
		}
		if (sql.len > 0)
			sbuf_adds(&sql, " AND ");
		sbuf_add(&sql, scope.buf, scope.len);
	}
	if (sql.len > 0)
		tab->filter = xstrdup(sql.buf);
	sbuf_release(&sql);
	sbuf_release(&scope);
	return 0;
quoting:
	sbuf_release(&sql);
	sbuf_release(&scope);
	return p2o_fail(&ld->err, P2O_EXIT_INTERNAL, "table '%s': writing its "
	    "filter as SQL failed", sec->rel);
}

static int
my_exact(struct loader *ld, struct load_view *v, uint64_t *n)
{
	struct myload *my = ld->src;
	struct mytab *tab = (struct mytab *)v;
	struct sbuf q = SBUF_INIT;
	int rc;

	sbuf_adds(&q, "SELECT COUNT(*) FROM ");
	myconn_ident(&q, tab->t.db);
	sbuf_addc(&q, '.');
	myconn_ident(&q, tab->t.name);
	if (tab->filter != NULL) {
		sbuf_adds(&q, " WHERE ");
		sbuf_adds(&q, tab->filter);
	}
	rc = myconn_query_u64(my->conn, q.buf, "counting the rows", n,
	    &ld->err);
	sbuf_release(&q);
	return rc;
}

static int
my_describe(struct loader *ld, const struct sync_section *sec,
    struct load_view **vp)
{
	const struct sync_more *more = sync_more(sec);
	struct myload *my = ld->src;
	struct mytab *tab = xcalloc(1, sizeof(*tab));
	const struct my_col *k;
	int i;

	*vp = &tab->v;
	myprogress_init(&tab->p);
	if (mycat_describe(my->conn, my->mariadb, sec, &tab->t,
	    &ld->err) == -1)
		return -1;
	tab->v.rel = tab->t.rel;
	for (i = 0; i < tab->t.nkeys; i++) {
		k = &tab->t.cols[tab->t.keys[i]];
		if (!mychunk_pageable(k))
			return p2o_fail(&ld->err, P2O_EXIT_REFUSED, "table "
			    "'%s': key column '%s' is %s, whose order the "
			    "server's comparisons do not follow: the table "
			    "cannot be read in key order", tab->t.rel, k->name,
			    k->column_type);
	}
	tab->last = xcalloc((size_t)tab->t.nkeys + 1, sizeof(*tab->last));
	if (more->nchildren > 0 || more->naggregates > 0) {
		tab->nest = xcalloc(1, sizeof(*tab->nest));
		if (mynest_describe(my->conn, my->mariadb, sec, &tab->t,
		    tab->nest, &ld->err) == -1)
			return -1;
	}
	return filter(ld, sec, tab);
}

/* 1 if progress was written for this table's key (names and types) */
static int
key_matches(const struct my_table *t, const struct myprogress *p)
{
	int i;

	if (p->nkeys != t->nkeys)
		return 0;
	for (i = 0; i < t->nkeys; i++)
		if (strcmp(p->key[i], t->cols[t->keys[i]].name) != 0 ||
		    strcmp(p->types[i], t->cols[t->keys[i]].column_type) != 0)
			return 0;
	return 1;
}

/* chunks the table should take, for the stats: at least one more than
 * done while it is not finished */
static int
chunks_of(uint64_t estimate, uint64_t limit, const struct myprogress *p)
{
	uint64_t n = (estimate + limit - 1) / limit;

	if (p->finished)
		return p->chunks;
	if (n < (uint64_t)p->chunks + 1)
		n = (uint64_t)p->chunks + 1;
	return n > 0x7fffffff ? 0x7fffffff : (int)n;
}

static void
sync_view(struct loader *ld, struct mytab *tab)
{
	tab->v.done = tab->p.chunks;
	tab->v.rows = tab->p.rows;
	tab->v.finished = tab->p.finished;
	tab->v.of = tab->t.nkeys == 0 ? 1 :
	    chunks_of(tab->v.estimate, ld->range_rows, &tab->p);
}

static int
my_resume(struct loader *ld, struct load_view *v, const char *json)
{
	struct mytab *tab = (struct mytab *)v;
	char err[256];

	if (myprogress_parse((struct jspan){ json, strlen(json) }, &tab->p,
	    err, sizeof(err)) == -1) {
		log_warnx("table '%s': the stored %s; loading it from the "
		    "start", v->rel, err);
		return 0;
	}
	if (!key_matches(&tab->t, &tab->p)) {
		log_warnx("table '%s': its key is not the one its stored "
		    "progress was written for; loading it from the start",
		    v->rel);
		myprogress_release(&tab->p);
		return 0;
	}
	if (tab->p.finished)
		log_info("table '%s' was loaded already (%llu rows)", v->rel,
		    (unsigned long long)tab->p.rows);
	else
		log_info("resuming '%s' after chunk %d (%llu rows loaded)",
		    v->rel, tab->p.chunks, (unsigned long long)tab->p.rows);
	sync_view(ld, tab);
	return 1;
}

static int
my_count(struct loader *ld, struct load_view *v, int fresh)
{
	struct myload *my = ld->src;
	struct mytab *tab = (struct mytab *)v;
	const char *names[16], *types[16];
	int i;

	if (mycat_row_estimate(my->conn, tab->t.db, tab->t.name, &v->estimate,
	    &ld->err) == -1)
		return -1;
	if (fresh) {
		for (i = 0; i < tab->t.nkeys && i < 16; i++) {
			names[i] = tab->t.cols[tab->t.keys[i]].name;
			types[i] = tab->t.cols[tab->t.keys[i]].column_type;
		}
		myprogress_start(&tab->p, i, names, types);
	}
	sync_view(ld, tab);
	return 0;
}

static int
my_read(struct loader *ld, struct load_view *v)
{
	struct myload *my = ld->src;
	struct mytab *tab = (struct mytab *)v;
	struct sbuf sql = SBUF_INIT;
	uint64_t rows;
	long long t0 = now_ms();
	int rc;

	/* MariaDB reads a snapshot; MySQL reads past nothing that is
	 * still being committed (mysrc.c says why) */
	if (mychunk_sql(&sql, &tab->t, tab->filter, tab->p.have_after ?
	    tab->p.after : NULL, ld->range_rows, my->mariadb ? "" :
	    "FOR SHARE NOWAIT", mysrc_quote, my) == -1) {
		sbuf_release(&sql);
		return p2o_fail(&ld->err, P2O_EXIT_DATA, "table '%s': the "
		    "stored progress holds a key value that is not of its "
		    "column's form", v->rel);
	}
	rc = mysrc_chunk(ld, &tab->t, sql.buf, tab->nest, &rows, tab->last);
	sbuf_release(&sql);
	if (rc == -1)
		return -1;
	meter_range(&ld->meter, tab->p.chunks, rows, now_ms() - t0);
	tab->p.chunks++;
	tab->p.rows += rows;
	if (rows > 0 && tab->t.nkeys > 0)
		myprogress_after(&tab->p, tab->last);
	/* a short chunk is the last; a table without a key is one */
	tab->p.finished = rows < ld->range_rows || tab->t.nkeys == 0;
	sync_view(ld, tab);
	return 0;
}

static void
my_progress(const struct load_view *v, struct sbuf *out)
{
	myprogress_put(out, &((const struct mytab *)v)->p);
}

static void
my_release(struct load_view *v)
{
	struct mytab *tab = (struct mytab *)v;
	int i;

	if (tab == NULL)
		return;
	if (tab->last != NULL)
		for (i = 0; i < tab->t.nkeys; i++)
			free((char *)tab->last[i].p);
	free(tab->last);
	free(tab->filter);
	if (tab->nest != NULL)
		mynest_release(tab->nest);
	free(tab->nest);
	myprogress_release(&tab->p);
	my_table_release(&tab->t);
	free(tab);
}

const struct load_ops myload_ops = {
	.unit = "chunk",
	.rows_default = LOAD_CHUNK_ROWS,
	.overlap = 0,
	.open = my_open,
	.close = my_close,
	.describe = my_describe,
	.resume = my_resume,
	.count = my_count,
	.read = my_read,
	.progress = my_progress,
	.exact = my_exact,
	.release = my_release,
};
