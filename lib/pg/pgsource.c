/*
 * pgsource.c - PostgreSQL's operations table (source_ops.h): the catalogue
 * init reads (pglist.c), and what the pg2osync command and the supervisor
 * do to the server. Each takes the server's
 * contract from pgcontract.c - the same checks capture-pg refuses by, the
 * same statements that create and drop - and the catalogue from pgcat.c;
 * none of them judges the server on its own.
 *
 * It owns the script setup-sql prints for a DBA (the role, its grants,
 * the replica identities, the publications placed by the capture's rule,
 * evaluated on the server), and the facts status shows. It never exits.
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
#include "pglist.h"
#include "pgpoll.h"
#include "pgserver.h"
#include "source.h"
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
	if ((c = pgconn_open(cfg, PGCONN_ADMIN, "pg2osync-supervise", e)) ==
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
	    pgsrv_create_slot(c, cfg->slot_name, cfg->slot_failover, &lsn,
	    e) == -1)
		return -1;
	lsn_format(lsn, at);
	fprintf(out, "created replication slot '%s' at %s%s: it retains WAL "
	    "from now on, until the pipeline reads it (pg2osync drop-slot "
	    "removes it)\n", cfg->slot_name, at, cfg->slot_failover ?
	    " with failover = true (a physical standby running "
	    "sync_replication_slots keeps a copy a promoted standby resumes "
	    "from)" : "");
	return 0;
}

static int
pg_bootstrap(const struct config *cfg, FILE *out, struct p2o_err *e)
{
	struct pgsrv_contract k;
	struct pg_conn *c;
	int rc;

	/* a poll reads with plain queries: the server has nothing of ours */
	if (cfg->poll) {
		fprintf(out, "source: poll mode (source.mode: poll): nothing to "
		    "create, no slot and no publication\n");
		return 0;
	}
	if ((c = pgconn_open(cfg, PGCONN_ADMIN, "pg2osync bootstrap", e)) == NULL)
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

	if ((c = pgconn_open(cfg, PGCONN_ADMIN, "pg2osync drop-slot", e)) ==
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

/* the standby verdict, kept for status */
static int
keep_standby(void *arg, const struct source_verdict *v)
{
	struct source_status *st = arg;

	st->has_standby = 1;
	st->standby = *v;
	return 0;
}

/* what the contract says of the standby slots the configured slot waits
 * for, when anything */
static int
status_standby(struct pg_conn *c, const struct config *cfg,
    struct source_status *st, struct p2o_err *e)
{
	struct pgsrv_contract k;
	int rc = -1;

	pgsrv_contract_init(&k, cfg);
	if (pgsrv_facts(c, &k.facts, e) == 0 &&
	    pgsrv_read_slot(c, &k, e) == 0)
		rc = pgsrv_judge_standby(&k, keep_standby, st);
	pgsrv_contract_release(&k);
	return rc;
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
	if ((c = pgconn_open(cfg, PGCONN_ADMIN, "pg2osync status", e)) == NULL)
		return -1;
	if (pgsrv_slots(c, &v, &n, &st->pos, e) == -1) {
		pgconn_close(c);
		return -1;
	}
	if (status_standby(c, cfg, st, e) == -1) {
		pgsrv_slots_free(v, n);
		pgconn_close(c);
		return -1;
	}
	pgconn_close(c);
	st->kind = cfg->source->kind;
	snprintf(st->engine, sizeof(st->engine), "%s", cfg->source->title);
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
		o->failover = v[i].failover;
		o->synced = v[i].synced;
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

static int
pg_status_ckpt(const struct source_status *st, const char *text,
    uint64_t pos, struct source_ckpt *ck, struct p2o_err *e)
{
	(void)text;
	(void)e;
	memset(ck, 0, sizeof(*ck));
	ck->parsed = 1;
	ck->reached = pos >= st->pos;
	ck->lag_bytes = st->pos > pos ? (int64_t)(st->pos - pos) : 0;
	if (st->mine != NULL && st->mine->has_lag_s) {
		ck->has_lag_s = 1;
		ck->lag_s = st->mine->lag_s;
	}
	return 0;
}

static int
pg_stream_live(const struct config *cfg, char *why, size_t len,
    struct p2o_err *e)
{
	struct pgsrv_slot s;
	struct pg_conn *c;
	int found, rc = 0;

	if ((c = pgconn_open(cfg, PGCONN_ADMIN, "pg2osync reindex", e)) == NULL)
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
	if (*conn == NULL && (*conn = pgconn_open(cfg, PGCONN_ADMIN,
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

/* ---- setup-sql ---- */

/* the url's user and database, when its variable is set (never its
 * password) */
static void
url_names(const struct config *cfg, char *user, size_t ulen, char *db,
    size_t dlen)
{
	const char *url = cfg->source_url_env ? getenv(cfg->source_url_env) :
	    cfg->source_url;
	PQconninfoOption *o, *all;

	if (url == NULL || *url == '\0' ||
	    (all = PQconninfoParse(url, NULL)) == NULL)
		return;
	for (o = all; o->keyword; o++) {
		if (strcmp(o->keyword, "user") == 0 && o->val && user)
			snprintf(user, ulen, "%s", o->val);
		if (strcmp(o->keyword, "dbname") == 0 && o->val && db)
			snprintf(db, dlen, "%s", o->val);
	}
	PQconninfoFree(all);
}

static void
pg_url_user(const struct config *cfg, char *user, size_t len)
{
	user[0] = '\0';
	url_names(cfg, user, len, NULL, 0);
}

static void
qrel(struct sbuf *b, const struct sync_section *s)
{
	pgconn_put_ident(b, s->schema);
	sbuf_addc(b, '.');
	pgconn_put_ident(b, s->table);
}

/* the columns a before-image must carry: what deletes and moves a
 * document, and what its filter reads */
static int
image_columns(const struct sync_section *s, const char **v, int max)
{
	struct named_col all[256];
	int n = section_columns(s, all, 256), i, k = 0;

	for (i = 0; i < n && k < max; i++)
		if (strcmp(all[i].key, "where") == 0 ||
		    strcmp(all[i].key, "id") == 0 ||
		    strcmp(all[i].key, "index") == 0 ||
		    strcmp(all[i].key, "routing") == 0 ||
		    strcmp(all[i].key, "fan_out.column") == 0 ||
		    strcmp(all[i].key, "join.column") == 0)
			v[k++] = all[i].col;
	return k;
}

static void
script_role(struct sbuf *b, const struct config *cfg, const char *role)
{
	/* a poll reads the tables and nothing else */
	const char *attrs = cfg->poll ? " LOGIN" : " LOGIN REPLICATION";
	int i, k, seen;

	sbuf_addf(b, "\n-- %d. The role pg2osync connects as: it may %s the "
	    "tables,\n--    and owns nothing.\nDO $$ BEGIN\n"
	    "  IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = ",
	    cfg->poll ? 1 : 2, cfg->poll ? "read" : "replicate and read");
	pgconn_put_literal(b, role);
	sbuf_adds(b, ") THEN\n    CREATE ROLE ");
	pgconn_put_ident(b, role);
	sbuf_adds(b, attrs);
	sbuf_adds(b, ";\n  ELSE\n    ALTER ROLE ");
	pgconn_put_ident(b, role);
	sbuf_adds(b, attrs);
	sbuf_adds(b, ";\n  END IF;\nEND $$;\n"
	    "--    its password is never written in a file: in psql, \\password ");
	sbuf_adds(b, role);
	sbuf_adds(b, "\nDO $$ BEGIN EXECUTE pg_catalog.format('GRANT CONNECT ON "
	    "DATABASE %I TO %I', pg_catalog.current_database(), ");
	pgconn_put_literal(b, role);
	sbuf_adds(b, "); END $$;\n");
	for (i = 0; i < cfg->nsyncs; i++) {
		for (seen = 0, k = 0; k < i; k++)
			seen |= strcmp(cfg->syncs[k].schema,
			    cfg->syncs[i].schema) == 0;
		if (seen)
			continue;
		sbuf_adds(b, "GRANT USAGE ON SCHEMA ");
		pgconn_put_ident(b, cfg->syncs[i].schema);
		sbuf_adds(b, " TO ");
		pgconn_put_ident(b, role);
		sbuf_adds(b, ";\n");
	}
	/* SELECT on a parent reads its inheritance children and partitions */
	for (i = 0; i < cfg->nsyncs; i++) {
		sbuf_adds(b, "GRANT SELECT ON TABLE ");
		qrel(b, &cfg->syncs[i]);
		sbuf_adds(b, " TO ");
		pgconn_put_ident(b, role);
		sbuf_adds(b, ";\n");
	}
}

static void
script_identity(struct sbuf *b, const struct config *cfg)
{
	const char *cols[256];
	struct sbuf rel = SBUF_INIT, oid = SBUF_INIT;
	int i, k, n, any = 0;

	for (i = 0; i < cfg->nsyncs; i++) {
		if (cfg->syncs[i].append_only ||
		    (n = image_columns(&cfg->syncs[i], cols, 256)) == 0)
			continue;
		if (!any++)
			sbuf_adds(b, "\n-- 3. Replica identity: a delete or an "
			    "update must carry in its before-image\n--    every "
			    "column that names or filters a document. FULL only "
			    "where the key\n--    does not hold them all.\n");
		sbuf_reset(&rel);
		qrel(&rel, &cfg->syncs[i]);
		sbuf_reset(&oid);
		pgconn_put_literal(&oid, rel.buf);
		sbuf_adds(&oid, "::pg_catalog.regclass");
		sbuf_addf(b, "-- sync.%s reads", cfg->syncs[i].name);
		for (k = 0; k < n; k++)
			sbuf_addf(b, "%s %s", k ? "," : "", cols[k]);
		sbuf_adds(b, "\nDO $$ BEGIN\n  IF (SELECT relreplident <> 'f' "
		    "FROM pg_catalog.pg_class WHERE oid = ");
		sbuf_adds(b, oid.buf);
		sbuf_adds(b, ")\n     AND EXISTS (SELECT 1 FROM pg_catalog.unnest("
		    "ARRAY[");
		for (k = 0; k < n; k++) {
			if (k)
				sbuf_addc(b, ',');
			pgconn_put_literal(b, cols[k]);
		}
		sbuf_adds(b, "]::text[]) AS col(name) WHERE col.name NOT IN (\n"
		    "       SELECT a.attname::text FROM pg_catalog.pg_index i "
		    "JOIN pg_catalog.pg_class c ON c.oid = i.indrelid\n"
		    "       JOIN pg_catalog.pg_attribute a ON a.attrelid = "
		    "i.indrelid AND a.attnum = ANY (i.indkey)\n"
		    "       WHERE i.indrelid = ");
		sbuf_adds(b, oid.buf);
		sbuf_adds(b, " AND (CASE c.relreplident WHEN 'i' THEN "
		    "i.indisreplident ELSE i.indisprimary END)))\n  THEN\n"
		    "    ALTER TABLE ");
		sbuf_adds(b, rel.buf);
		sbuf_adds(b, " REPLICA IDENTITY FULL;\n  END IF;\nEND $$;\n");
	}
	sbuf_release(&rel);
	sbuf_release(&oid);
}

/* publication which unless it exists: CREATE PUBLICATION (pgserver.c's)
 * of the tables the plpgsql variable list names, ", "-led; <publication>
 * even without a table (the stream names it), <publication>_append only
 * with one */
static void
script_create(struct sbuf *b, const char *name, enum pgsrv_which which,
    const char *list)
{
	struct sbuf head = SBUF_INIT;

	pgsrv_create_pub_head(&head, name);
	sbuf_adds(b, "  IF ");
	if (which == PGSRV_APPEND)
		sbuf_addf(b, "%s <> '' AND ", list);
	sbuf_adds(b, "NOT EXISTS (SELECT FROM pg_catalog.pg_publication WHERE "
	    "pubname = ");
	pgconn_put_literal(b, name);
	sbuf_adds(b, ") THEN\n    EXECUTE ");
	pgconn_put_literal(b, head.buf);
	sbuf_addf(b, "\n      || CASE WHEN %s = '' THEN '' ELSE ' FOR TABLE ' "
	    "|| pg_catalog.substr(%s, 3) END\n      || ", list, list);
	pgconn_put_literal(b, pgsrv_pub_options(which));
	sbuf_adds(b, ";\n  END IF;\n");
	sbuf_release(&head);
}

static void
script_publications(struct sbuf *b, const struct config *cfg)
{
	struct sbuf rel = SBUF_INIT, oid = SBUF_INIT;
	char apub[PGSRV_PUB_MAX];
	const char **nest;
	int i, append = 0, nnest = config_nest_tables(cfg, &nest);

	sbuf_adds(b, "\n-- 4. The publication of the tables (adding a table "
	    "to one takes its owner,\n--    which pg2osync's role is not). "
	    "An append_only table without a replica\n--    identity (it or "
	    "a table under it) goes in <publication>_append, which\n--    "
	    "publishes no update or delete, so that the application's own "
	    "UPDATE\n--    and DELETE of it keep working.\nDO $$\nDECLARE\n"
	    "  main text := '';\n  append text := '';\nBEGIN\n");
	for (i = 0; i < cfg->nsyncs; i++) {
		sbuf_reset(&rel);
		qrel(&rel, &cfg->syncs[i]);
		sbuf_reset(&oid);
		pgconn_put_literal(&oid, rel.buf);
		sbuf_adds(&oid, "::pg_catalog.regclass");
		if (cfg->syncs[i].append_only) {
			/* pgcat_in_append, on the server */
			append = 1;
			sbuf_adds(b, "  IF ");
			pgcat_tree_identity_sql(b, oid.buf);
			sbuf_adds(b, " THEN\n    main := main || ', ' || ");
			pgconn_put_literal(b, rel.buf);
			sbuf_adds(b, ";\n  ELSE\n    append := append || ', ' || ");
			pgconn_put_literal(b, rel.buf);
			sbuf_adds(b, ";\n  END IF;\n");
		} else {
			sbuf_adds(b, "  main := main || ', ' || ");
			pgconn_put_literal(b, rel.buf);
			sbuf_adds(b, ";\n");
		}
	}
	/* the tables collections read: their changes rewrite the parents */
	for (i = 0; i < nnest; i++) {
		const char *dot = strchr(nest[i], '.');

		sbuf_reset(&rel);
		sbuf_add(&rel, nest[i], (size_t)(dot - nest[i]));
		sbuf_reset(&oid);
		pgconn_put_ident(&oid, rel.buf);
		sbuf_addc(&oid, '.');
		pgconn_put_ident(&oid, dot + 1);
		sbuf_adds(b, "  main := main || ', ' || ");
		pgconn_put_literal(b, oid.buf);
		sbuf_adds(b, ";\n");
	}
	free(nest);
	script_create(b, cfg->publication, PGSRV_MAIN, "main");
	if (append) {
		pgsrv_append_name(cfg->publication, apub, sizeof(apub));
		script_create(b, apub, PGSRV_APPEND, "append");
	}
	sbuf_adds(b, "END $$;\n");
	sbuf_release(&rel);
	sbuf_release(&oid);
}

static void
pg_setup_sql(struct sbuf *b, const struct config *cfg, const char *role)
{
	char db[128] = "";

	url_names(cfg, NULL, 0, db, sizeof(db));
	if (cfg->poll) {
		/* no WAL decoding, no replica identity, no publication */
		sbuf_addf(b, "-- pg2osync setup-sql for '%s' (PostgreSQL, poll "
		    "mode)\n-- Run as a superuser in database %s:\n"
		    "--   psql -v ON_ERROR_STOP=1 -d %s -f setup.sql\n"
		    "-- Every statement can be run again. Poll mode reads the "
		    "tables with plain\n-- queries: no wal_level, no slot, no "
		    "publication.\n", cfg->path, db[0] ? db :
		    "the source url names", db[0] ? db : "DB");
		script_role(b, cfg, role);
		return;
	}
	sbuf_addf(b, "-- pg2osync setup-sql for '%s' (PostgreSQL)\n"
	    "-- Run as a superuser in database %s:\n"
	    "--   psql -v ON_ERROR_STOP=1 -d %s -f setup.sql\n"
	    "-- Every statement can be run again.\n\n"
	    "-- 1. The server must decode its WAL logically, which takes a "
	    "restart:\n"
	    "--    Amazon RDS and Aurora: rds.logical_replication = 1 in the "
	    "parameter group;\n"
	    "--    Cloud SQL: the flag cloudsql.logical_decoding = on; Azure: "
	    "the server\n"
	    "--    parameter wal_level = logical. Elsewhere:\n"
	    "ALTER SYSTEM SET wal_level = logical;\n"
	    "--    then restart PostgreSQL and check: SHOW wal_level;\n",
	    cfg->path, db[0] ? db : "the source url names", db[0] ? db : "DB");
	script_role(b, cfg, role);
	script_identity(b, cfg);
	pg_toast_script(b, cfg);
	script_publications(b, cfg);
	sbuf_addf(b, "\n-- The replication slot '%s' is created by pg2osync "
	    "(bootstrap, or the first start):\n-- it needs only the role's "
	    "REPLICATION.", cfg->slot_name);
	if (!cfg->slot_failover) {
		sbuf_adds(b, "\n");
		return;
	}
	sbuf_adds(b, " It is made with failover = true (source.slot_failover,\n"
	    "-- PostgreSQL 17 and later), as this would make it:\n--   ");
	pgsrv_create_slot_sql(b, cfg->slot_name, 1);
	sbuf_adds(b, ";\n-- so that a physical standby keeps a copy a promoted "
	    "standby resumes from. The standby\n-- runs sync_replication_slots "
	    "= on, hot_standby_feedback = on, a primary_slot_name,\n-- and a "
	    "primary_conninfo naming a dbname. On the primary, name the "
	    "standby's\n-- physical slot, so that no change reaches the index "
	    "before the standby has it:\n--   ALTER SYSTEM SET "
	    "synchronized_standby_slots = 'the_standby_slot';\n--   SELECT "
	    "pg_reload_conf();\n-- A base backup copies that setting: on a "
	    "promoted standby, reset it (or name its\n-- own standby's slot), "
	    "else its failover slots wait for a slot it does not have.\n");
}

const struct source_ops pgsource_ops = {
	.what = "a PostgreSQL source",
	.catalogue = pglist_catalogue,
	.validate = validate_pg,
	.reload_apply = pg_reload_apply,
	.url_user = pg_url_user,
	.setup_sql = pg_setup_sql,
	.bootstrap = pg_bootstrap,
	.drop_stream = pg_drop_stream,
	.status = pg_status,
	.status_ckpt = pg_status_ckpt,
	.stream_live = pg_stream_live,
	.pos_now = pg_pos_now,
	.pos_close = pg_pos_close,
};

/*
 * Poll mode reads the tables with plain queries (capture-pg/poll.c): the
 * server keeps nothing of the stream's, so there is no slot to drop or
 * to measure, and status shows each table's cursor and the rounds
 * (pgpoll.c). The rest is the same as a stream's, each of which knows
 * the mode (validate, setup-sql, bootstrap).
 */
const struct source_ops pgpoll_ops = {
	.what = "a PostgreSQL source in poll mode",
	.catalogue = pglist_catalogue,
	.validate = validate_pg,
	.reload_apply = pg_reload_apply,
	.url_user = pg_url_user,
	.setup_sql = pg_setup_sql,
	.bootstrap = pg_bootstrap,
	.drop_stream = NULL,
	.status = pgpoll_status,
	.status_ckpt = pgpoll_status_ckpt,
	/* no slot: the slot of the same name another pipeline might
	 * have says nothing of this one (pg2osync reindex asks the
	 * supervisor instead) */
	.stream_live = NULL,
	.pos_now = pg_pos_now,
	.pos_close = pg_pos_close,
};
