/*
 * poll.c - capture-pg's poll mode (source.mode: poll), for a server that
 * gives no replication connection: the capture loop's source (lib/
 * capture.c) that reads each synced table again a page at a time, in the
 * order of its poll column and then its key, after the last row it sent.
 *
 * Owns the cursor of each table - the poll column's and the key's values
 * of the last row sent, as text - and the position text that carries them
 * all to the checkpoint, so that a restart resumes each table after the
 * row the stored checkpoint names. A page is one transaction of the
 * stream: its rows, then a commit whose position is one more than the
 * page before. The text names the last round that ended too (when, how
 * long it read, its rows: what `pg2osync status` judges the rounds by);
 * a round ending on an empty page moves the position by a pos frame of
 * its own, so that an idle source's rounds reach the checkpoint. Its
 * rows carry no version (v 0): poll mode has no position in the
 * source's log, and the target keeps them by the order they are
 * written in. A row the section's soft_delete matches is sent as a
 * delete. The filter (where) is not pushed down: a row that left it must
 * still arrive, for the shaper to delete its document.
 *
 * What it cannot see is the mode's own limit (docs/config.md): a row
 * deleted from the table, a change that does not move the poll column, a
 * row whose poll column is NULL, and a row committed with a value below a
 * cursor already past it. Never connects for replication, never creates
 * anything on the server, never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "capture.h"
#include "capture-pg.h"
#include "config.h"
#include "jscan.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "where.h"
#include "xio.h"
#include "pg/pgcat.h"
#include "pg/pgconn.h"
#include "pg/pgpoll.h"

struct poll_table {
	const struct sync_section *sec;
	char	*first_sql;	/* the first page: no cursor yet */
	char	*next_sql;	/* a page after the cursor ($1..$n) */
	int	 ncols;		/* the row's columns, then the cursor's */
	char	**names;
	uint32_t *types;
	int	 nkey;
	char	**key;		/* the key's column names, in key order */
	int	 soft;		/* a last column says the row is deleted */
	int	 ncur;		/* 1 + nkey */
	char	**by;		/* the cursor's columns: poll column, key */
	char	**cur;		/* the last row sent, as text; NULL: none */
};

/* the cursor texts of a table's last row: poll column, then the key */
static void
cursor_set(struct poll_table *t, char **v)
{
	int i;

	for (i = 0; i < t->ncur; i++) {
		if (t->cur != NULL)
			free(t->cur[i]);
	}
	if (t->cur == NULL)
		t->cur = xcalloc((size_t)t->ncur, sizeof(char *));
	for (i = 0; i < t->ncur; i++)
		t->cur[i] = v[i];
}

/* SELECT every column, the cursor's as text and the soft delete, in the
 * order of the cursor, after it when after is set */
static char *
page_sql(const struct config *cfg, const struct pgcat_table *ct,
    const struct sync_section *s, const char *pc, const char *soft,
    int after)
{
	struct sbuf b = SBUF_INIT;
	int i, n = 1;

	sbuf_adds(&b, "SELECT ");
	for (i = 0; i < ct->ncols; i++) {
		pgconn_put_ident(&b, ct->cols[i].name);
		sbuf_adds(&b, ", ");
	}
	/* named apart from the columns, which ORDER BY names */
	pgconn_put_ident(&b, pc);
	sbuf_adds(&b, "::text AS p2o_cursor_0");
	for (i = 0; i < ct->nkey; i++) {
		sbuf_adds(&b, ", ");
		pgconn_put_ident(&b, ct->cols[ct->key[i]].name);
		sbuf_addf(&b, "::text AS p2o_cursor_%d", i + 1);
	}
	if (soft != NULL)
		sbuf_addf(&b, ", (%s) IS TRUE AS p2o_soft_delete", soft);
	sbuf_adds(&b, " FROM ");
	pgconn_put_ident(&b, s->schema);
	sbuf_adds(&b, ".");
	pgconn_put_ident(&b, s->table);
	sbuf_adds(&b, " WHERE ");
	if (after)
		pgpoll_cmp(&b, ct, pc, ">", &n);
	else {
		pgconn_put_ident(&b, pc);
		sbuf_adds(&b, " IS NOT NULL");
	}
	sbuf_adds(&b, " ORDER BY ");
	pgconn_put_ident(&b, pc);
	for (i = 0; i < ct->nkey; i++) {
		sbuf_adds(&b, ", ");
		pgconn_put_ident(&b, ct->cols[ct->key[i]].name);
	}
	sbuf_addf(&b, " LIMIT %d", cfg->poll_page_size);
	return b.buf;
}

static char *
quote_sql(void *arg, const char *s, int ident)
{
	struct sbuf b = SBUF_INIT;

	(void)arg;
	if (ident)
		pgconn_put_ident(&b, s);
	else
		pgconn_put_literal(&b, s);
	return b.buf;
}

/* a section's table: its columns, key and the two statements */
static int
table_init(struct poller *p, struct poll_table *t,
    const struct sync_section *s)
{
	const struct sync_more *more = sync_more(s);
	struct pgcat_table ct;
	struct sbuf soft = SBUF_INIT;
	const char *pc = config_poll_column(p->cfg, s);
	int i, rc = -1;

	memset(&ct, 0, sizeof(ct));
	memset(t, 0, sizeof(*t));
	t->sec = s;
	if (pgcat_describe(p->conn, "", s, &ct, &p->err) == -1)
		return -1;
	if (pgcat_column(&ct, pc) == NULL) {
		p2o_fail(&p->err, P2O_EXIT_REFUSED, "table '%s' has no "
		    "column '%s' (its poll_column)", s->rel, pc);
		goto out;
	}
	if (ct.nkey == 0) {
		p2o_fail(&p->err, P2O_EXIT_REFUSED, "table '%s' has no "
		    "key: a page resumes after the key of its last row",
		    s->rel);
		goto out;
	}
	if (more->soft_delete_expr != NULL && where_sql(more->soft_delete_expr,
	    &soft, quote_sql, NULL) == -1) {
		p2o_fail(&p->err, P2O_EXIT_CONFIG, "table '%s': its "
		    "soft_delete could not be written as SQL", s->rel);
		goto out;
	}
	t->soft = more->soft_delete_expr != NULL;
	t->ncols = ct.ncols;
	t->names = xcalloc((size_t)ct.ncols, sizeof(char *));
	t->types = xcalloc((size_t)ct.ncols, sizeof(uint32_t));
	for (i = 0; i < ct.ncols; i++) {
		t->names[i] = xstrdup(ct.cols[i].name);
		t->types[i] = ct.cols[i].typoid;
	}
	t->nkey = ct.nkey;
	t->key = xcalloc((size_t)ct.nkey, sizeof(char *));
	for (i = 0; i < ct.nkey; i++)
		t->key[i] = xstrdup(ct.cols[ct.key[i]].name);
	t->ncur = 1 + ct.nkey;
	t->by = xcalloc((size_t)t->ncur, sizeof(char *));
	t->by[0] = xstrdup(pc);
	for (i = 0; i < ct.nkey; i++)
		t->by[i + 1] = xstrdup(t->key[i]);
	t->first_sql = page_sql(p->cfg, &ct, s, pc, t->soft ? soft.buf : NULL,
	    0);
	t->next_sql = page_sql(p->cfg, &ct, s, pc, t->soft ? soft.buf : NULL,
	    1);
	rc = 0;
out:
	sbuf_release(&soft);
	pgcat_table_release(&ct);
	return rc;
}

static void
table_release(struct poll_table *t)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		free(t->names[i]);
	for (i = 0; i < t->nkey; i++)
		free(t->key[i]);
	for (i = 0; t->cur != NULL && i < t->ncur; i++)
		free(t->cur[i]);
	for (i = 0; t->by != NULL && i < t->ncur; i++)
		free(t->by[i]);
	free(t->by);
	free(t->names);
	free(t->types);
	free(t->key);
	free(t->cur);
	free(t->first_sql);
	free(t->next_sql);
}

/* the position text: every table's cursor, by its name */
static void
put_text(const struct poller *p, uint64_t pos, struct sbuf *b)
{
	const struct poll_table *t;
	int i, j, n = 0;

	sbuf_addf(b, PGPOLL_TEXT "%llu,\"at\":{", (unsigned long long)pos);
	for (i = 0; i < p->ntables; i++) {
		t = &p->tables[i];
		if (t->cur == NULL)
			continue;
		if (n++)
			sbuf_adds(b, ",");
		sbuf_add_jstr(b, t->sec->rel, strlen(t->sec->rel));
		sbuf_adds(b, ":{\"by\":[");
		for (j = 0; j < t->ncur; j++) {
			if (j)
				sbuf_adds(b, ",");
			sbuf_add_jstr(b, t->by[j], strlen(t->by[j]));
		}
		sbuf_adds(b, "],\"v\":[");
		for (j = 0; j < t->ncur; j++) {
			if (j)
				sbuf_adds(b, ",");
			sbuf_add_jstr(b, t->cur[j], strlen(t->cur[j]));
		}
		sbuf_adds(b, "]}");
	}
	sbuf_adds(b, "}");
	if (p->last_end != 0)
		sbuf_addf(b, ",\"round\":{\"end\":%lld,\"ms\":%lld,\"rows\":"
		    "%llu}", p->last_end, p->last_ms,
		    (unsigned long long)p->last_rows);
	sbuf_adds(b, "}");
}

/* by (a JSON array) names the table's cursor columns, in order */
static int
same_names(const struct poll_table *t, struct jspan by)
{
	struct jiter it;
	struct jspan e;
	int n = 0;

	if (jiter_init(&it, by) == -1)
		return 0;
	while (jiter_elem(&it, &e) == 1) {
		if (n >= t->ncur || jspan_type(e) != J_STRING ||
		    !jstr_eq(e, t->by[n]))
			return 0;
		n++;
	}
	return n == t->ncur;
}

/* the last round a checkpoint names, kept until the next one ends */
static void
resume_round(struct poller *p, struct jspan top)
{
	struct jspan round, v;
	int64_t end, ms;
	uint64_t rows;

	if (jobj_get(top, "round", &round) && jobj_get(round, "end", &v) &&
	    jnum_i64(v, &end) == 0 && jobj_get(round, "ms", &v) &&
	    jnum_i64(v, &ms) == 0 && jobj_get(round, "rows", &v) &&
	    jnum_u64(v, &rows) == 0) {
		p->last_end = end;
		p->last_ms = ms;
		p->last_rows = rows;
	}
}

/* --start-pos: the cursors a checkpoint stored (a table it does not name
 * starts from its first row) */
static int
resume(struct poller *p, const char *text, uint64_t *pos)
{
	struct jspan top, at, v, key, e, by, vals;
	struct jiter it, ie;
	struct poll_table *t;
	char *rel, **cur;
	const char *why;
	size_t off;
	int i, n;

	top.p = text;
	top.n = strlen(text);
	if (strncmp(text, PGPOLL_TEXT, strlen(PGPOLL_TEXT)) != 0 ||
	    jscan_validate(text, top.n, &off, &why) == -1 ||
	    !jobj_get(top, "poll", &v) || jnum_u64(v, pos) == -1 ||
	    !jobj_get(top, "at", &at) || jiter_init(&it, at) == -1)
		return p2o_fail(&p->err, P2O_EXIT_CHECKPOINT, "--start-pos is "
		    "not a position of poll mode ({\"poll\":N,\"at\":{...}}): "
		    "a checkpoint of another stream");
	while (jiter_member(&it, &key, &v) == 1) {
		rel = jstr_dup(key);
		for (t = NULL, i = 0; i < p->ntables; i++)
			if (strcmp(p->tables[i].sec->rel, rel) == 0)
				t = &p->tables[i];
		if (t == NULL) {
			/* a table no longer synced: its cursor goes */
			log_info("the checkpoint's cursor of '%s', no longer "
			    "synced, is dropped", rel);
			free(rel);
			continue;
		}
		free(rel);
		if (!jobj_get(v, "by", &by) || !jobj_get(v, "v", &vals))
			return p2o_fail(&p->err, P2O_EXIT_CHECKPOINT, "the "
			    "checkpoint's cursor of '%s' has no 'by' and 'v': "
			    "a checkpoint of another stream", t->sec->rel);
		/* another poll column or key (a reload changed it): the
		 * table is read again from its first row */
		if (!same_names(t, by)) {
			log_info("'%s': the checkpoint's cursor is of other "
			    "columns; the table is read again from its first "
			    "row", t->sec->rel);
			continue;
		}
		cur = xcalloc((size_t)t->ncur, sizeof(char *));
		n = 0;
		if (jiter_init(&ie, vals) == 0)
			while (jiter_elem(&ie, &e) == 1 && n < t->ncur &&
			    jspan_type(e) == J_STRING)
				cur[n++] = jstr_dup(e);
		if (n != t->ncur || jiter_elem(&ie, &e) == 1) {
			for (i = 0; i < n; i++)
				free(cur[i]);
			free(cur);
			return p2o_fail(&p->err, P2O_EXIT_CHECKPOINT, "the "
			    "checkpoint's cursor of '%s' does not hold a value "
			    "for each of its columns", t->sec->rel);
		}
		cursor_set(t, cur);
		free(cur);
	}
	resume_round(p, top);
	return 0;
}

int
poller_init(struct poller *p, const struct config *cfg,
    const struct capture_args *a)
{
	uint64_t token;
	int i;

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p2o_err_clear(&p->err);
	if ((p->conn = pgconn_open(cfg, PGCONN_SQL, "pg2osync poll",
	    &p->err)) == NULL)
		return -1;
	p->tables = xcalloc((size_t)cfg->nsyncs, sizeof(*p->tables));
	for (i = 0; i < cfg->nsyncs; i++) {
		if (table_init(p, &p->tables[i], &cfg->syncs[i]) == -1)
			return -1;
		p->ntables++;
	}
	if (a->pos != NULL) {
		if (resume(p, a->pos, &p->pos) == -1)
			return -1;
		if (capture_start_token(a, p->pos, 1, &token, &p->err) == -1)
			return -1;
		log_info("resuming the poll of %d table(s) from the stored "
		    "cursors (position %llu)", p->ntables,
		    (unsigned long long)p->pos);
	} else
		log_info("polling %d table(s) from their first rows, %d rows a "
		    "page, every %d s once caught up", p->ntables,
		    cfg->poll_page_size, cfg->poll_interval_secs);
	p->acked = p->pos;
	return 0;
}

void
poller_release(struct poller *p)
{
	int i;

	for (i = 0; i < p->ntables; i++)
		table_release(&p->tables[i]);
	free(p->tables);
	if (p->conn != NULL)
		pgconn_close(p->conn);
	p->conn = NULL;
}

/* one row of a page as a frame: an update of the whole row, or a delete
 * of it when the soft delete matches */
static void
put_row(struct poller *p, struct poll_table *t, PGresult *r, int row,
    struct sbuf *out)
{
	int i, del = t->soft && PQgetvalue(r, row, t->ncols + t->ncur)[0] ==
	    't';

	msg_row_begin(&p->json, del ? 'd' : 'u', t->sec->rel,
	    strlen(t->sec->rel), 0);
	msg_list_begin(&p->json, ML_KEY);
	for (i = 0; i < t->nkey; i++)
		msg_list_item(&p->json, t->key[i], strlen(t->key[i]));
	msg_list_end(&p->json);
	msg_image_begin(&p->json, del ? MI_OLD : MI_NEW);
	for (i = 0; i < t->ncols; i++) {
		msg_column(&p->json, t->names[i], strlen(t->names[i]));
		if (PQgetisnull(r, row, i))
			sbuf_adds(&p->json, "null");
		else
			pgtype_to_json(t->types[i], PQgetvalue(r, row, i),
			    (size_t)PQgetlength(r, row, i), &p->json);
	}
	msg_image_end(&p->json);
	msg_end(out, &p->json);
	if (del)
		p->n.deletes++;
	else
		p->n.updates++;
}

/* the next page of the table being read: its rows and its commit */
static int
page(struct poller *p, struct sbuf *out, long long now)
{
	struct poll_table *t = &p->tables[p->cur];
	struct sbuf text = SBUF_INIT;
	PGresult *r;
	char **cur;
	int i, nrows;

	if (p->round_start == 0)
		p->round_start = now;
	r = (PGresult *)pgconn_query(p->conn, "a page of a polled table",
	    t->cur ? t->next_sql : t->first_sql, t->cur ? t->ncur : 0,
	    (const char *const *)t->cur, &p->err);
	if (r == NULL)
		return -1;
	nrows = PQntuples(r);
	for (i = 0; i < nrows; i++)
		put_row(p, t, r, i, out);
	p->round_rows += (uint64_t)nrows;
	/* a short page of the round's last table ends the round: its
	 * commit, or a pos frame when it has no row, tells the checkpoint */
	if (nrows < p->cfg->poll_page_size && p->cur + 1 == p->ntables) {
		p->last_end = now_us_wall() / 1000;
		p->last_ms = now - p->round_start;
		p->last_rows = p->round_rows;
		p->round_start = 0;
		p->round_rows = 0;
		p->round_owed = nrows == 0;
	}
	if (nrows > 0) {
		p->round_owed = 0;
		cur = xcalloc((size_t)t->ncur, sizeof(char *));
		for (i = 0; i < t->ncur; i++)
			cur[i] = xstrdup(PQgetvalue(r, nrows - 1,
			    t->ncols + i));
		cursor_set(t, cur);
		free(cur);
		put_text(p, ++p->pos, &text);
		msg_put_commit(out, p->pos, text.buf, now * 1000LL,
		    (uint64_t)nrows, 0, 0, NULL);
		p->n.commits++;
		p->n.received += (uint64_t)nrows;
	}
	PQclear(r);
	sbuf_release(&text);
	/* a short page: the table is caught up until the next round */
	if (nrows < p->cfg->poll_page_size && ++p->cur == p->ntables) {
		p->cur = 0;
		p->next_ms = now + p->cfg->poll_interval_secs * 1000LL;
	}
	return 0;
}

static int
pl_read(void *src, struct outq *out, long long now, struct p2o_err *e)
{
	struct poller *p = src;

	if (now < p->next_ms || outq_pending(out) >= CAPTURE_OUT_CAP)
		return 0;
	if (page(p, &out->buf, now) == -1) {
		*e = p->err;
		return -1;
	}
	return 0;
}

/* no socket to wait on: the loop wakes for the next page by due */
static int
pl_socket(void *src)
{
	(void)src;
	return -1;
}

static long long
pl_due(void *src, int reading)
{
	struct poller *p = src;

	/* while out is full the loop waits for stdout, not for us */
	return reading ? p->next_ms : now_ms() + 1000;
}

static int
pl_tick(void *src, long long now, int reading, int running,
    struct p2o_err *e)
{
	(void)src; (void)now; (void)reading; (void)running; (void)e;
	return 0;
}

/* the server is told nothing: the stored checkpoint is the cursor */
static int
pl_acked(void *src, uint64_t acked, struct p2o_err *e)
{
	struct poller *p = src;

	(void)e;
	p->acked = acked;
	return 0;
}

/* a round that ended on an empty page: the checkpoint learns of it by a
 * position of its own, so that status sees the rounds of an idle table */
static int
pl_pos_owed(void *src)
{
	return ((struct poller *)src)->round_owed;
}

static void
pl_put_pos(void *src, struct sbuf *out)
{
	struct poller *p = src;
	struct sbuf text = SBUF_INIT;

	put_text(p, ++p->pos, &text);
	msg_put_pos(out, p->pos, text.buf);
	sbuf_release(&text);
	p->round_owed = 0;
}

static void
pl_counters(void *src, uint64_t acked, uint64_t v[CAPTURE_NSTATS])
{
	struct poller *p = src;

	v[0] = 0;
	v[1] = p->n.updates;
	v[2] = p->n.deletes;
	v[3] = 0;
	v[4] = p->n.commits;
	v[5] = acked;
	v[6] = p->n.received;
}

static void
pl_where(void *src, char *buf, size_t len)
{
	struct poller *p = src;

	snprintf(buf, len, "poll position %llu (acked %llu)",
	    (unsigned long long)p->pos, (unsigned long long)p->acked);
}

const struct capture_ops poll_ops = {
	.tool = "capture-pg",
	.read = pl_read,
	.socket = pl_socket,
	.due = pl_due,
	.tick = pl_tick,
	.acked = pl_acked,
	.pos_owed = pl_pos_owed,
	.put_pos = pl_put_pos,
	.counters = pl_counters,
	.where = pl_where,
};
