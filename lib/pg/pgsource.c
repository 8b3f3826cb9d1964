/*
 * pgsource.c - a PostgreSQL source's operations (source_ops.h): what the
 * pg2osync command and the supervisor do to it. Each takes the server's
 * contract from pgcontract.c - the same checks capture-pg refuses by, the
 * same statements that create and drop - and the catalogue from pgcat.c;
 * none of them judges the server on its own.
 *
 * It owns the facts status shows. It never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "lsn.h"
#include "p2o.h"
#include "pgcat.h"
#include "pgconn.h"
#include "pgserver.h"
#include "sbuf.h"
#include "source_ops.h"
#include "validate/check.h"

/* ---- the reload, bootstrap, drop-slot ---- */

static int
pg_reload_apply(const struct config *cfg, const char *applies,
    struct sbuf *done, struct p2o_err *e)
{
	struct pg_conn *c;
	int rc;

	if (*applies == '\0')
		return 0;
	if ((c = pgconn_open(cfg, PGCONN_SQL, "pg2osync-supervise", e)) ==
	    NULL)
		return -1;
	rc = pgsrv_apply(c, applies, done, e);
	pgconn_close(c);
	return rc;
}

/* the tables created publication which was made with */
static int
created_with(const struct pgsrv_contract *k, enum pgsrv_which which)
{
	return which == PGSRV_APPEND ? k->nappend :
	    k->cfg->nsyncs - k->nappend + k->nnest;
}

/* what the first start would create: what exists is left as it is (the
 * capture judges it at its start); what is missing is judged, then
 * created */
static int
bootstrap_contract(struct pg_conn *c, struct pgsrv_contract *k, FILE *out,
    struct p2o_err *e)
{
	const struct config *cfg = k->cfg;
	enum pgsrv_which w;
	char at[32];
	uint64_t lsn;
	int i;

	if (pgsrv_facts(c, &k->facts, e) == -1 ||
	    pgsrv_judge_server(&k->facts, source_refuse, e) != 0)
		return -1;
	for (i = 0; i < cfg->nsyncs; i++) {
		if (pgcat_describe(c, cfg->publication, &cfg->syncs[i],
		    &k->tables[i], e) == -1)
			return -1;
		k->usable[i] = 1;
	}
	pgsrv_place(k);
	for (w = PGSRV_MAIN; w <= (k->nappend ? PGSRV_APPEND : PGSRV_MAIN);
	    w++) {
		if (pgsrv_read_pub(c, k, w, e) == -1)
			return -1;
		if (k->pub[w].exists) {
			fprintf(out, "publication '%s' exists: left as it is "
			    "(the capture checks it at its start)\n",
			    k->pubname[w]);
			continue;
		}
		if (pgsrv_judge_pub(k, w, source_refuse, e) != 0 ||
		    pgsrv_create_pub(c, k, w, e) == -1)
			return -1;
		fprintf(out, "created publication '%s' for %d table(s)\n",
		    k->pubname[w], created_with(k, w));
	}
	if (pgsrv_read_slot(c, k, e) == -1)
		return -1;
	if (k->slot_found) {
		fprintf(out, "slot '%s' exists: left as it is\n",
		    cfg->slot_name);
		return 0;
	}
	if (pgsrv_judge_slot(k, source_refuse, e) != 0 ||
	    pgsrv_create_slot(c, cfg->slot_name, &lsn, e) == -1)
		return -1;
	lsn_format(lsn, at);
	fprintf(out, "created replication slot '%s' at %s: it retains WAL from "
	    "now on, until the pipeline reads it (pg2osync drop-slot removes "
	    "it)\n", cfg->slot_name, at);
	return 0;
}

static int
pg_bootstrap(const struct config *cfg, FILE *out, struct p2o_err *e)
{
	struct pgsrv_contract k;
	struct pg_conn *c;
	int rc;

	if ((c = pgconn_open(cfg, PGCONN_SQL, "pg2osync bootstrap", e)) == NULL)
		return -1;
	pgsrv_contract_init(&k, cfg);
	rc = bootstrap_contract(c, &k, out, e);
	pgsrv_contract_release(&k);
	pgconn_close(c);
	return rc;
}

/* publication name dropped when there is one: 1 dropped, 0 none, -1 */
static int
drop_pub(struct pg_conn *c, const char *name, FILE *out, struct p2o_err *e)
{
	struct pgsrv_pub p;
	int exists;

	if (pgsrv_publication(c, name, &p, e) == -1)
		return -1;
	exists = p.exists;
	pgsrv_pub_release(&p);
	if (!exists)
		return 0;
	if (pgsrv_drop_pub(c, name, e) == -1)
		return -1;
	fprintf(out, "dropped publication '%s'\n", name);
	return 1;
}

static int
drop_both(struct pg_conn *c, const struct config *cfg, FILE *out,
    struct p2o_err *e)
{
	char apub[PGSRV_PUB_MAX];
	int r;

	pgsrv_append_name(cfg->publication, apub, sizeof(apub));
	if ((r = drop_pub(c, cfg->publication, out, e)) == -1 ||
	    drop_pub(c, apub, out, e) == -1)
		return -1;
	if (r == 0)
		fprintf(out, "publication '%s' does not exist: nothing to "
		    "drop\n", cfg->publication);
	return 0;
}

static int
pg_drop_stream(const struct config *cfg, int publications, FILE *out,
    char *why, size_t whylen, struct p2o_err *e)
{
	struct pgsrv_slot s;
	struct pg_conn *c;
	int found, rc = -1;

	if ((c = pgconn_open(cfg, PGCONN_SQL, "pg2osync drop-slot", e)) ==
	    NULL)
		return -1;
	if (pgsrv_slot_get(c, cfg->slot_name, &s, &found, e) == -1)
		goto out;
	if (!found)
		fprintf(out, "slot '%s' does not exist: nothing to drop\n",
		    cfg->slot_name);
	else if (s.active) {
		snprintf(why, whylen, "slot '%s' is active (pid %d streams "
		    "from it): stop the pipeline first", cfg->slot_name,
		    s.active_pid);
		rc = 1;
		goto out;
	} else {
		if (pgsrv_drop_slot(c, cfg->slot_name, e) == -1)
			goto out;
		fprintf(out, "dropped slot '%s'; the checkpoint 'postgres:%s' in "
		    "the target is kept: a new slot starts after it, so the next "
		    "start refuses it (exit 66) until it is deleted and the "
		    "tables loaded again\n", cfg->slot_name, cfg->slot_name);
	}
	if (!publications)
		fprintf(out, "publication '%s' is kept (--publication drops "
		    "it)\n", cfg->publication);
	else if (drop_both(c, cfg, out, e) == -1)
		goto out;
	rc = 0;
out:
	pgsrv_slot_release(&s);
	pgconn_close(c);
	return rc;
}

/* ---- status, the stream, the position now ---- */

/* what is said about a slot beside its numbers */
static const char *
slot_verdict(const struct config *cfg, const struct pgsrv_slot *s)
{
	if (strcmp(s->wal_status, "lost") == 0)
		return "lost";
	if (strcmp(s->name, cfg->slot_name) == 0)
		return "configured";
	if (s->logical && !s->active && !s->temporary)
		return "orphan";
	return "other";
}

static int
pg_status(const struct config *cfg, struct source_status *st,
    struct p2o_err *e)
{
	struct source_slot *o;
	struct pgsrv_slot *v;
	struct pg_conn *c;
	struct sbuf drop = SBUF_INIT;
	int i, n;

	memset(st, 0, sizeof(*st));
	if ((c = pgconn_open(cfg, PGCONN_SQL, "pg2osync status", e)) == NULL)
		return -1;
	if (pgsrv_slots(c, &v, &n, &st->pos, e) == -1) {
		pgconn_close(c);
		return -1;
	}
	pgconn_close(c);
	st->kind = pg_source_ops.kind;
	snprintf(st->engine, sizeof(st->engine), "%s", pg_source_ops.title);
	st->has_pos = 1;
	lsn_format(st->pos, st->pos_text);
	snprintf(st->where, sizeof(st->where), "WAL at %s", st->pos_text);
	st->has_slots = 1;
	st->slots = xcalloc((size_t)n + 1, sizeof(*st->slots));
	for (i = 0; i < n; i++) {
		o = &st->slots[st->nslots++];
		o->name = xstrdup(v[i].name);
		o->type = v[i].logical ? "logical" : "physical";
		o->active = v[i].active;
		o->configured = strcmp(v[i].name, cfg->slot_name) == 0;
		o->has_retained = v[i].has_retained;
		o->retained = v[i].retained;
		o->has_safe = v[i].has_safe;
		o->safe = v[i].safe_wal_size;
		o->wal_status = xstrdup(v[i].wal_status);
		o->has_lag_s = v[i].has_lag_s;
		o->lag_s = v[i].lag_s;
		o->verdict = slot_verdict(cfg, &v[i]);
		sbuf_reset(&drop);
		pgsrv_drop_slot_sql(&drop, v[i].name);
		o->drop = xstrdup(drop.buf);
		if (o->configured)
			st->mine = o;
	}
	sbuf_release(&drop);
	pgsrv_slots_free(v, n);
	return 0;
}

static void
pg_status_ckpt(const struct source_status *st, const char *text,
    uint64_t pos, struct source_ckpt *ck)
{
	memset(ck, 0, sizeof(*ck));
	ck->parsed = 1;
	ck->reached = pos >= st->pos;
	ck->lag_bytes = st->pos > pos ? (int64_t)(st->pos - pos) : 0;
	if (st->mine != NULL && st->mine->has_lag_s) {
		ck->has_lag_s = 1;
		ck->lag_s = st->mine->lag_s;
	}
}

static int
pg_stream_live(const struct config *cfg, char *why, size_t len,
    struct p2o_err *e)
{
	struct pgsrv_slot s;
	struct pg_conn *c;
	int found, rc = 0;

	if ((c = pgconn_open(cfg, PGCONN_SQL, "pg2osync reindex", e)) == NULL)
		return -1;
	if (pgsrv_slot_get(c, cfg->slot_name, &s, &found, e) == -1)
		rc = -1;
	else if (found && s.active) {
		snprintf(why, len, "slot '%s' is active (walsender pid %d)",
		    s.name, s.active_pid);
		rc = 1;
	}
	pgsrv_slot_release(&s);
	pgconn_close(c);
	return rc;
}

/*
 * The position of a logical message written now. pg_current_wal_lsn() of
 * a quiet server can point where no record the walsender decodes ends,
 * so the slot might never be confirmed to it; the message is a record of
 * its own, which the capture reads and whose end comes back as a
 * keepalive position, so its position is always reached.
 */
static int
pg_pos_now(const struct config *cfg, void **conn, struct sbuf *text,
    struct p2o_err *e)
{
	if (*conn == NULL && (*conn = pgconn_open(cfg, PGCONN_SQL,
	    "pg2osync-supervise", e)) == NULL)
		return -1;
	if (pgsrv_mark(*conn, text, e) == -1) {
		/* the next ask connects afresh */
		pgconn_close(*conn);
		*conn = NULL;
		return -1;
	}
	return 0;
}

static void
pg_pos_close(void *conn)
{
	if (conn != NULL)
		pgconn_close(conn);
}

const struct source_ops pg_source_ops = {
	.kind = "postgres",
	.title = "PostgreSQL",
	.validate = validate_pg,
	.reload_apply = pg_reload_apply,
	.bootstrap = pg_bootstrap,
	.drop_stream = pg_drop_stream,
	.status = pg_status,
	.status_ckpt = pg_status_ckpt,
	.stream_live = pg_stream_live,
	.pos_now = pg_pos_now,
	.pos_close = pg_pos_close,
};
