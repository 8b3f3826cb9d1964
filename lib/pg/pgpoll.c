/*
 * pgpoll.c - poll mode's order and its facts for `pg2osync status`
 * (pgpoll.h). A poll keeps nothing on the server: where the stream is, is
 * the cursor of each table in the stored checkpoint, so status reads each
 * table's last row at the call and, given a checkpoint, counts the rows
 * after its cursor (up to PGPOLL_BEHIND_CAP, an index range on the poll
 * column and the key the mode asks for) - the same comparison the
 * capture pages by. Its session is read only: status changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "config.h"
#include "jscan.h"
#include "p2o.h"
#include "pgcat.h"
#include "pgconn.h"
#include "pgpoll.h"
#include "sbuf.h"
#include "source.h"
#include "source_ops.h"
#include "xio.h"

void
pgpoll_cmp(struct sbuf *b, const struct pgcat_table *ct, const char *pc,
    const char *op, int *n)
{
	const struct pgcat_column *c = pgcat_column(ct, pc);
	int i;

	sbuf_adds(b, "(");
	pgconn_put_ident(b, pc);
	for (i = 0; i < ct->nkey; i++) {
		sbuf_adds(b, ", ");
		pgconn_put_ident(b, ct->cols[ct->key[i]].name);
	}
	sbuf_addf(b, ") %s ($%d::%s", op, (*n)++, c->type);
	for (i = 0; i < ct->nkey; i++)
		sbuf_addf(b, ", $%d::%s", (*n)++, ct->cols[ct->key[i]].type);
	sbuf_adds(b, ")");
}

/* one polled table, as status sees it at the call */
struct ptab {
	const struct sync_section *sec;
	int	 ncur;
	char	**by;		/* poll column, key */
	char	**last;		/* its last row's cursor at the call; NULL:
				 * no row */
	char	*count_sql;	/* rows after $1..$ncur, capped */
	char	*first_sql;	/* rows with a poll column, capped */
	char	*window_sql;	/* 1 when no row after $1.. is at or before
				 * the last row ($ncur+1..) */
};

struct pnow {
	struct pg_conn *c;
	int	 n;
	struct ptab *t;
	int	 interval_s;
};

static void
pnow_free(void *arg)
{
	struct pnow *p = arg;
	int i, j;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++) {
		for (j = 0; j < p->t[i].ncur; j++) {
			free(p->t[i].by[j]);
			if (p->t[i].last != NULL)
				free(p->t[i].last[j]);
		}
		free(p->t[i].by);
		free(p->t[i].last);
		free(p->t[i].count_sql);
		free(p->t[i].first_sql);
		free(p->t[i].window_sql);
	}
	free(p->t);
	if (p->c != NULL)
		pgconn_close(p->c);
	free(p);
}

static void
put_from(struct sbuf *b, const struct sync_section *s)
{
	sbuf_adds(b, " FROM ");
	pgconn_put_ident(b, s->schema);
	sbuf_adds(b, ".");
	pgconn_put_ident(b, s->table);
}

/* "SELECT count(*) FROM (SELECT 1 FROM t WHERE <cond> LIMIT cap+1) x" */
static char *
count_sql(const struct sync_section *s, const char *cond)
{
	struct sbuf b = SBUF_INIT;

	sbuf_adds(&b, "SELECT pg_catalog.count(*) FROM (SELECT 1");
	put_from(&b, s);
	sbuf_addf(&b, " WHERE %s LIMIT %d) AS behind", cond,
	    PGPOLL_BEHIND_CAP + 1);
	return b.buf;
}

/* the statements of a described table */
static void
ptab_sql(struct ptab *t, const struct pgcat_table *ct, const char *pc)
{
	struct sbuf cond = SBUF_INIT, b = SBUF_INIT;
	int n = 1;

	pgpoll_cmp(&cond, ct, pc, ">", &n);
	t->count_sql = count_sql(t->sec, cond.buf);
	sbuf_adds(&b, "SELECT NOT EXISTS (SELECT 1");
	put_from(&b, t->sec);
	sbuf_addf(&b, " WHERE %s AND ", cond.buf);
	pgpoll_cmp(&b, ct, pc, "<=", &n);
	sbuf_adds(&b, ")");
	t->window_sql = b.buf;
	sbuf_reset(&cond);
	pgconn_put_ident(&cond, pc);
	sbuf_adds(&cond, " IS NOT NULL");
	t->first_sql = count_sql(t->sec, cond.buf);
	sbuf_release(&cond);
}

/* the table's columns, statements and last row now */
static int
ptab_init(struct pg_conn *c, const struct config *cfg, struct ptab *t,
    const struct sync_section *s, struct p2o_err *e)
{
	const char *pc = config_poll_column(cfg, s);
	struct pgcat_table ct;
	struct sbuf b = SBUF_INIT;
	PGresult *r = NULL;
	int i, rc = -1;

	memset(&ct, 0, sizeof(ct));
	t->sec = s;
	if (pgcat_describe(c, "", s, &ct, e) == -1)
		return -1;
	if (pgcat_column(&ct, pc) == NULL || ct.nkey == 0) {
		p2o_fail(e, P2O_EXIT_REFUSED, "table '%s' has no %s: pg2osync "
		    "validate says what poll mode needs", s->rel,
		    ct.nkey == 0 ? "key" : "poll column");
		goto out;
	}
	t->ncur = 1 + ct.nkey;
	t->by = xcalloc((size_t)t->ncur, sizeof(char *));
	t->by[0] = xstrdup(pc);
	for (i = 0; i < ct.nkey; i++)
		t->by[i + 1] = xstrdup(ct.cols[ct.key[i]].name);
	ptab_sql(t, &ct, pc);
	/* the last row in the capture's order, backwards on its index; the
	 * texts named apart from the columns, which ORDER BY names (else it
	 * would order by the texts) */
	sbuf_adds(&b, "SELECT ");
	for (i = 0; i < t->ncur; i++) {
		sbuf_adds(&b, i ? ", " : "");
		pgconn_put_ident(&b, t->by[i]);
		sbuf_addf(&b, "::text AS p2o_last_%d", i);
	}
	put_from(&b, s);
	sbuf_adds(&b, " WHERE ");
	pgconn_put_ident(&b, pc);
	sbuf_adds(&b, " IS NOT NULL ORDER BY ");
	for (i = 0; i < t->ncur; i++) {
		sbuf_adds(&b, i ? ", " : "");
		pgconn_put_ident(&b, t->by[i]);
		sbuf_adds(&b, " DESC");
	}
	sbuf_adds(&b, " LIMIT 1");
	if ((r = (PGresult *)pgconn_query(c, "the last row of a polled table",
	    b.buf, 0, NULL, e)) == NULL)
		goto out;
	if (PQntuples(r) == 1) {
		t->last = xcalloc((size_t)t->ncur, sizeof(char *));
		for (i = 0; i < t->ncur; i++)
			t->last[i] = xstrdup(PQgetvalue(r, 0, i));
	}
	rc = 0;
out:
	PQclear(r);
	sbuf_release(&b);
	pgcat_table_release(&ct);
	return rc;
}

int
pgpoll_status(const struct config *cfg, struct source_status *st,
    struct p2o_err *e)
{
	struct pnow *p = xcalloc(1, sizeof(*p));
	int i;

	memset(st, 0, sizeof(*st));
	st->priv = p;
	st->priv_free = pnow_free;
	if ((p->c = pgconn_open(cfg, PGCONN_SQL, "pg2osync status", e)) ==
	    NULL)
		return -1;
	/* whatever a statement below says, the session writes nothing */
	if (pgconn_exec(p->c, "a read-only session", "SET SESSION "
	    "CHARACTERISTICS AS TRANSACTION READ ONLY", e) == -1)
		return -1;
	p->t = xcalloc((size_t)cfg->nsyncs, sizeof(*p->t));
	/* counted first: a table half described is freed with the rest */
	for (i = 0; i < cfg->nsyncs; i++)
		if (ptab_init(p->c, cfg, &p->t[p->n++], &cfg->syncs[i],
		    e) == -1)
			return -1;
	p->interval_s = cfg->poll_interval_secs;
	st->kind = cfg->source->kind;
	st->mode = "poll";
	st->rounds = 1;
	snprintf(st->engine, sizeof(st->engine), "%s", cfg->source->title);
	snprintf(st->where, sizeof(st->where), "poll mode (no slot, no "
	    "publication): %d table(s) read again every %d s, %d rows a page",
	    cfg->nsyncs, cfg->poll_interval_secs, cfg->poll_page_size);
	return 0;
}

/* the checkpoint's cursor of t (at names every table's), when it is of
 * t's columns: their values, else NULL (the capture reads the table
 * again from its first row) */
static char **
stored_cursor(const struct ptab *t, struct jspan at)
{
	struct jspan one, by, v, x;
	struct jiter it;
	char **cur;
	int n = 0, i;

	if (!jobj_get(at, t->sec->rel, &one) || !jobj_get(one, "by", &by) ||
	    !jobj_get(one, "v", &v) || jiter_init(&it, by) == -1)
		return NULL;
	while (jiter_elem(&it, &x) == 1)
		if (n >= t->ncur || jspan_type(x) != J_STRING ||
		    !jstr_eq(x, t->by[n++]))
			return NULL;
	if (n != t->ncur || jiter_init(&it, v) == -1)
		return NULL;
	cur = xcalloc((size_t)t->ncur, sizeof(char *));
	for (n = 0; jiter_elem(&it, &x) == 1; n++) {
		if (n >= t->ncur || jspan_type(x) != J_STRING)
			break;
		cur[n] = jstr_dup(x);
	}
	if (n != t->ncur) {
		for (i = 0; i < t->ncur; i++)
			free(cur[i]);
		free(cur);
		return NULL;
	}
	return cur;
}

/* one number of the query's only row */
static int
one_value(struct pg_conn *c, const char *what, const char *sql, int n,
    char *const *params, char *out, size_t len, struct p2o_err *e)
{
	PGresult *r;

	if ((r = (PGresult *)pgconn_query(c, what, sql, n,
	    (const char *const *)params, e)) == NULL)
		return -1;
	snprintf(out, len, "%s", PQntuples(r) == 1 ? PQgetvalue(r, 0, 0) :
	    "");
	PQclear(r);
	return 0;
}

/* the rows after t's cursor, and whether any row of the call is */
static int
judge_table(struct pg_conn *c, const struct ptab *t, struct source_table *o,
    struct p2o_err *e)
{
	char v[64], **both;
	int i;

	if (one_value(c, "the rows behind a cursor", o->at ? t->count_sql :
	    t->first_sql, o->at ? t->ncur : 0, o->at, v, sizeof(v), e) == -1)
		return -1;
	o->behind = strtoll(v, NULL, 10);
	if ((o->capped = o->behind > PGPOLL_BEHIND_CAP))
		o->behind = PGPOLL_BEHIND_CAP;
	if (t->last == NULL)
		o->reached = 1;
	else if (o->at == NULL)
		o->reached = 0;
	else {
		both = xcalloc((size_t)t->ncur * 2, sizeof(char *));
		for (i = 0; i < t->ncur; i++) {
			both[i] = o->at[i];
			both[t->ncur + i] = t->last[i];
		}
		i = one_value(c, "the rows of the call behind a cursor",
		    t->window_sql, t->ncur * 2, both, v, sizeof(v), e);
		free(both);
		if (i == -1)
			return -1;
		o->reached = v[0] == 't';
	}
	return 0;
}

/* the checkpoint's last round, and whether the next is overdue */
static void
judge_round(const struct pnow *p, struct jspan top, struct source_ckpt *ck)
{
	struct jspan round, v;
	int64_t end, took;
	uint64_t rows = 0;

	ck->interval_s = p->interval_s;
	if (!jobj_get(top, "round", &round) || !jobj_get(round, "end", &v) ||
	    jnum_i64(v, &end) == -1 || !jobj_get(round, "ms", &v) ||
	    jnum_i64(v, &took) == -1)
		return;
	if (jobj_get(round, "rows", &v))
		(void)jnum_u64(v, &rows);
	ck->has_round = 1;
	ck->round_end_ms = end;
	ck->round_took_s = (double)took / 1000.0;
	ck->round_rows = rows;
	ck->round_age_s = (double)(now_us_wall() / 1000 - end) / 1000.0;
	/*
	 * The next round starts an interval after the last ended and, if
	 * it reads what the last did, ends about as long after that: twice
	 * that, and 10 s for the checkpoint's way to the target, is a
	 * round that reads far more than the last did, or none running.
	 */
	ck->round_late = ck->round_age_s > 2.0 * ((double)p->interval_s +
	    ck->round_took_s) + 10.0;
}

/* o is t: its name and its cursor's columns */
static void
table_named(struct source_table *o, const struct ptab *t)
{
	int j;

	o->table = xstrdup(t->sec->rel);
	o->ncur = t->ncur;
	o->by = xcalloc((size_t)o->ncur, sizeof(char *));
	for (j = 0; j < o->ncur; j++)
		o->by[j] = xstrdup(t->by[j]);
}

int
pgpoll_status_ckpt(const struct source_status *st, const char *text,
    uint64_t pos, struct source_ckpt *ck, struct p2o_err *e)
{
	const struct pnow *p = st->priv;
	struct source_table *o;
	struct jspan top, at, v;
	uint64_t n;
	int i;

	(void)pos;
	memset(ck, 0, sizeof(*ck));
	ck->lag_bytes = -1;
	if (text == NULL) {
		/* before the first checkpoint: what the configuration reads,
		 * from its first row */
		ck->interval_s = p->interval_s;
		ck->tables = xcalloc((size_t)p->n + 1, sizeof(*ck->tables));
		for (i = 0; i < p->n; i++)
			table_named(&ck->tables[ck->ntables++], &p->t[i]);
		return 0;
	}
	top.p = text;
	top.n = strlen(text);
	if (strncmp(text, PGPOLL_TEXT, strlen(PGPOLL_TEXT)) != 0 ||
	    jscan_validate(text, top.n, NULL, NULL) == -1 ||
	    !jobj_get(top, "poll", &v) || jnum_u64(v, &n) == -1 ||
	    !jobj_get(top, "at", &at) || jspan_type(at) != J_OBJECT)
		return 0;
	ck->parsed = 1;
	ck->reached = 1;
	ck->tables = xcalloc((size_t)p->n + 1, sizeof(*ck->tables));
	for (i = 0; i < p->n; i++) {
		o = &ck->tables[ck->ntables++];
		table_named(o, &p->t[i]);
		o->at = stored_cursor(&p->t[i], at);
		if (judge_table(p->c, &p->t[i], o, e) == -1)
			return -1;
		o->judged = 1;
		ck->reached &= o->reached;
	}
	judge_round(p, top, ck);
	return 0;
}
