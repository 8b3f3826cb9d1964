/*
 * pgload.c - the PostgreSQL operations of the load driver (load.c): the
 * connections and their session, a table described and cut into ranges
 * (or resumed at its first unfinished one), and its unit: a wave of
 * source.load_workers contiguous ranges, each on its own connection,
 * read after the slot's WAL is reserved and the wave's version is safe.
 * Owns how a wave advances the progress object; the SQL is table.c's,
 * visible.c's and walgate.c's, the reading wave.c's. Never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "pg/pgcat.h"
#include "pg/pgconn.h"
#include "xio.h"
#include "loader.h"

/*
 * What a range read needs beyond the session every value is read in
 * (pgconn.c sends that one): READ COMMITTED, so each COPY takes its
 * snapshot when it starts (visible.c relies on that); no statement
 * timeout, because a range read waits on the pipeline behind it; and a
 * local commit, because the only thing the loader commits is the
 * transaction id visible.c takes, which no standby needs to see.
 */
static const char session_sql[] =
    "SET default_transaction_isolation = 'read committed'; "
    "SET statement_timeout = 0; SET synchronous_commit = local";

/* a table being loaded */
struct pgtab {
	struct load_view v;
	struct ld_table t;
	struct progress p;
	uint64_t *rows;		/* per range of the wave being read */
};

static int
pg_open(struct loader *ld)
{
	struct pgload *pg = xcalloc(1, sizeof(*pg));
	int i;

	ld->src = pg;
	pg->nconns = ld->cfg->load_workers;
	pg->conns = xcalloc((size_t)pg->nconns, sizeof(*pg->conns));
	for (i = 0; i < pg->nconns; i++) {
		if ((pg->conns[i] = pgconn_open(ld->cfg, PGCONN_SQL, "loader",
		    &ld->err)) == NULL)
			return -1;
		pg->version = PQserverVersion(pg->conns[i]);
		if (pg->version < 120000)
			return p2o_fail(&ld->err, P2O_EXIT_REFUSED, "the "
			    "server is PostgreSQL %d; the loader needs 12 or "
			    "later", pg->version / 10000);
		if (pgconn_exec(pg->conns[i], "setting up the session",
		    session_sql, &ld->err) == -1)
			return -1;
	}
	return 0;
}

/* the answers read ahead and not used */
static void
pre_release(struct pgload *pg)
{
	int k;

	for (k = 0; k < pg->pre_n; k++)
		pgcat_table_release(&pg->pre[k]);
	free(pg->pre);
	pg->pre = NULL;
	pg->pre_n = pg->pre_ok = 0;
}

static void
pg_close(struct loader *ld)
{
	struct pgload *pg = ld->src;
	int i;

	if (pg == NULL)
		return;
	pre_release(pg);
	for (i = 0; i < pg->nconns; i++)
		pgconn_close(pg->conns[i]);
	free(pg->conns);
	free(pg);
	ld->src = NULL;
}

/* the view the driver reads, from the progress object */
static void
sync_view(struct pgtab *tab)
{
	tab->v.done = tab->p.done;
	tab->v.of = tab->p.of;
	tab->v.rows = tab->p.rows;
	tab->v.finished = tab->p.done == tab->p.of;
}

/*
 * How old answers read ahead may be when their table's load starts: a
 * table's columns, key and publication are what the catalogue said just
 * before its copy, as when each table was asked alone; past this the rest
 * of the batch is asked again (a load of large tables asks each table
 * alone, a load of many small ones still asks once for many).
 */
#define PRE_FRESH_MS	1000

/*
 * sec's catalogue answers when it is the next table of the load: read
 * with those of the tables after it, PGCAT_BATCH at a time (four
 * questions a table were most of the loader's own 8 ms a table at 1,000
 * tables of one row). 1 with *t (taken over), 0 when sec is not the next
 * table (the caller asks), -1 with err when its description failed.
 */
static int
pre_take(struct loader *ld, const char *pub, const struct sync_section *sec,
    struct pgcat_table *t)
{
	struct pgload *pg = ld->src;
	int n, k, stale;

	if (pg->next >= ld->nahead || ld->ahead[pg->next] != sec)
		return 0;
	k = pg->next - pg->pre_at;
	stale = pg->pre != NULL && k < pg->pre_n &&
	    now_ms() - pg->pre_when > PRE_FRESH_MS;
	if (pg->pre == NULL || k >= pg->pre_n || stale) {
		/* next, as many as were used in time (1 for large tables),
		 * or twice as many as a batch used whole */
		if (stale)
			pg->want = k > 0 ? k : 1;
		else if (pg->pre != NULL)
			pg->want *= 2;
		if (pg->want < 1 || pg->want > PGCAT_BATCH)
			pg->want = PGCAT_BATCH;
		pre_release(pg);
		pg->pre_at = pg->next;
		n = ld->nahead - pg->next < pg->want ? ld->nahead -
		    pg->next : pg->want;
		pg->pre = xcalloc((size_t)n, sizeof(*pg->pre));
		pg->pre_n = n;
		p2o_err_clear(&pg->pre_err);
		pg->pre_when = now_ms();
		/* the tables after a failing one are released: the load
		 * stops at it */
		if (pgcat_describe_many(pg->conns[0], pub, ld->ahead +
		    pg->next, n, pg->pre, &pg->pre_ok, &pg->pre_err) == -1 &&
		    pg->pre_err.code == 0)
			p2o_fail(&pg->pre_err, P2O_EXIT_INTERNAL, "describing "
			    "the tables failed");
		k = 0;
	}
	pg->next++;
	if (k >= pg->pre_ok) {
		ld->err = pg->pre_err;
		return -1;
	}
	*t = pg->pre[k];
	memset(&pg->pre[k], 0, sizeof(pg->pre[k]));
	return 1;
}

static int
pg_describe(struct loader *ld, const struct sync_section *sec,
    struct load_view **vp)
{
	struct pgload *pg = ld->src;
	struct pgtab *tab = xcalloc(1, sizeof(*tab));
	const char *pub = pg->version >= 150000 ? ld->cfg->publication : "";
	struct pgcat_table pt;
	int r;

	*vp = &tab->v;
	progress_init(&tab->p);
	if ((r = pre_take(ld, pub, sec, &pt)) == -1)
		return -1;
	if (table_describe(pg->conns[0], pub, ld->cfg, sec, r ? &pt : NULL,
	    &tab->t, &ld->err) == -1)
		return -1;
	tab->v.rel = tab->t.rel;
	tab->t.scope = ld->scope;
	tab->rows = xcalloc((size_t)pg->nconns, sizeof(*tab->rows));
	return 0;
}

static int
pg_resume(struct loader *ld, struct load_view *v, const char *json)
{
	struct pgtab *tab = (struct pgtab *)v;
	char err[256];

	(void)ld;
	if (progress_parse((struct jspan){ json, strlen(json) }, &tab->p, err,
	    sizeof(err)) == -1) {
		log_warnx("table '%s': the stored %s; loading it from the "
		    "start", v->rel, err);
		return 0;
	}
	if (!table_key_matches(&tab->t, &tab->p)) {
		log_warnx("table '%s': its key is not the one its stored "
		    "progress was cut on; loading it from the start", v->rel);
		progress_release(&tab->p);
		return 0;
	}
	if (tab->p.done == tab->p.of)
		log_info("table '%s' was loaded already (%d of %d ranges)",
		    v->rel, tab->p.done, tab->p.of);
	else
		log_info("resuming '%s' at range %d of %d", v->rel,
		    tab->p.done + 1, tab->p.of);
	sync_view(tab);
	return 1;
}

static int
pg_count(struct loader *ld, struct load_view *v, int fresh)
{
	struct pgload *pg = ld->src;
	struct pgtab *tab = (struct pgtab *)v;

	if (table_size(pg->conns[0], &tab->t, &ld->err) == -1)
		return -1;
	v->estimate = tab->t.estimate;
	if (fresh && table_cut(pg->conns[0], &tab->t, ld->range_rows, &tab->p,
	    &ld->err) == -1)
		return -1;
	sync_view(tab);
	return 0;
}

static int
pg_read(struct loader *ld, struct load_view *v)
{
	struct pgload *pg = ld->src;
	struct pgtab *tab = (struct pgtab *)v;
	uint64_t version;
	int i, n;

	if (walgate_pass(ld) == -1 ||
	    visible_position(ld, v->rel, tab->p.done, &version) == -1)
		return -1;
	n = tab->p.of - tab->p.done < pg->nconns ? tab->p.of - tab->p.done :
	    pg->nconns;
	if (wave_run(ld, &tab->t, &tab->p, tab->p.done, n, version,
	    tab->rows) == -1)
		return -1;
	/* a wave is the batch a single child's second rows are said for */
	pgnest_flush(&tab->t.nest);
	for (i = 0; i < n; i++)
		tab->p.rows += tab->rows[i];
	tab->p.done += n;
	sync_view(tab);
	return 0;
}

static int
pg_exact(struct loader *ld, struct load_view *v, uint64_t *n)
{
	struct pgload *pg = ld->src;

	return table_count(pg->conns[0], &((struct pgtab *)v)->t, n, &ld->err);
}

static void
pg_progress(const struct load_view *v, struct sbuf *out)
{
	progress_put(out, &((const struct pgtab *)v)->p);
}

static void
pg_release(struct load_view *v)
{
	struct pgtab *tab = (struct pgtab *)v;

	if (tab == NULL)
		return;
	progress_release(&tab->p);
	table_release(&tab->t);
	free(tab->rows);
	free(tab);
}

const struct load_ops pgload_ops = {
	.unit = "range",
	.rows_default = LOAD_RANGE_ROWS,
	.overlap = 1,
	.open = pg_open,
	.close = pg_close,
	.describe = pg_describe,
	.resume = pg_resume,
	.count = pg_count,
	.read = pg_read,
	.progress = pg_progress,
	.exact = pg_exact,
	.release = pg_release,
};
