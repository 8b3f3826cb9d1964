/*
 * validate/pg.c - validate's PostgreSQL checks: the connection and its
 * TLS, the server's contract (lib/pg/pgcontract.c's verdicts: the settings,
 * the role, the slot, the publications - the judgments the capture
 * refuses by), a replication connection, and every table (through
 * lib/pg/pgcat.c, the rules the capture and the loader apply); in poll
 * mode the tables alone, as plain queries read them. Read-only:
 * a filter is compiled with LIMIT 0, nothing is created.
 */
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "validate/check.h"
#include "p2o.h"
#include "pg/pgcat.h"
#include "pg/pgconn.h"
#include "pg/pgserver.h"
#include "where.h"

#define MAX_NAMED	256

/* a section's "schema"."table", quoted by the connection; heap, or NULL
 * with err */
static char *
qrel(struct pg_conn *c, const struct sync_section *s, struct p2o_err *e)
{
	char *a, *b, *q;

	if ((a = pgconn_ident(c, s->schema, e)) == NULL)
		return NULL;
	if ((b = pgconn_ident(c, s->table, e)) == NULL) {
		free(a);
		return NULL;
	}
	q = xmalloc(strlen(a) + strlen(b) + 2);
	sprintf(q, "%s.%s", a, b);
	free(a);
	free(b);
	return q;
}

static const char *
tls_text(PGconn *c, char *buf, size_t len)
{
	PQconninfoOption *o, *all = PQconninfo(c);
	const char *mode = "prefer";

	for (o = all; o && o->keyword; o++)
		if (strcmp(o->keyword, "sslmode") == 0 && o->val)
			mode = o->val;
	if (PQsslInUse(c))
		snprintf(buf, len, "TLS %s, sslmode %s",
		    PQsslAttribute(c, "protocol") ? PQsslAttribute(c,
		    "protocol") : "", mode);
	else
		snprintf(buf, len, "no TLS, sslmode %s", mode);
	PQconninfoFree(all);
	return buf;
}

static char *
quote(void *arg, const char *s, int ident)
{
	struct p2o_err e;

	return ident ? pgconn_ident(arg, s, &e) : pgconn_literal(arg, s, &e);
}

/* every column the section names is in the table; 1 when all are */
static int
named_columns(struct check_report *r, const struct pgcat_table *t)
{
	struct named_col v[MAX_NAMED];
	const struct pgcat_column *pc;
	int n = section_columns(t->sec, v, MAX_NAMED), i, all = 1;

	for (i = 0; i < n; i++)
		if ((pc = pgcat_column(t, v[i].col)) == NULL) {
			check_fail(r, "table '%s': 'sync.%s.%s' names column "
			    "'%s', which the table does not have", t->sec->rel,
			    t->sec->name, v[i].key, v[i].col);
			all = 0;
		}
	return all;
}

static void
readable(struct check_report *r, const struct pgcat_table *t,
    const char *role)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		if (t->cols[i].sent && !t->cols[i].readable) {
			check_fail(r, "table '%s': role '%s' may not read column "
			    "'%s' (GRANT SELECT ON %s TO %s)", t->sec->rel, role,
			    t->cols[i].name, t->sec->rel, role);
			return;
		}
}

static void
filter(struct check_report *r, struct pg_conn *c, const struct pgcat_table *t)
{
	const struct sync_section *s = t->sec;
	const struct sync_more *more = sync_more(s);
	struct sbuf cond = SBUF_INIT;
	struct p2o_err e;
	char why[512], *rel;
	int rc;

	if (more->where_expr == NULL)
		return;
	p2o_err_clear(&e);
	if ((rel = qrel(c, s, &e)) == NULL ||
	    where_sql(more->where_expr, &cond, quote, c) == -1) {
		check_fail(r, "table '%s': the filter could not be quoted",
		    s->rel);
		goto out;
	}
	rc = pgsrv_where_compiles(c, rel, cond.buf, why, sizeof(why), &e);
	check_where(r, s, rc, why, &e);
out:
	free(rel);
	sbuf_release(&cond);
}

/* a refusal of the source layer's, which names its table already */
static void
table_fail(struct check_report *r, const struct sync_section *s,
    const struct p2o_err *e)
{
	if (strncmp(e->msg, "table '", 7) == 0)
		check_fail(r, "%s", e->msg);
	else
		check_fail(r, "table '%s': %s", s->rel, e->msg);
}

/* one section's table: 1 when it is there and usable */
static int
table(struct check_report *r, struct pg_conn *c, const struct config *cfg,
    const struct sync_section *s, struct pgcat_table *t, const char *role)
{
	struct p2o_err e;
	char key[512] = "";
	int i, ok = 1, named;

	p2o_err_clear(&e);
	if (pgcat_describe(c, cfg->publication, s, t, &e) == -1) {
		table_fail(r, s, &e);
		return 0;
	}
	if (pgcat_check_overlap(cfg, t, &e) == -1) {
		table_fail(r, s, &e);
		ok = 0;
	}
	if (!(named = named_columns(r, t)))
		ok = 0;
	else if (!s->append_only && pgcat_check_images(t, &e) == -1) {
		table_fail(r, s, &e);
		ok = 0;
	}
	/* a publication publishing updates and deletes of a table without
	 * a replica identity makes the application's own UPDATE fail */
	if (!s->append_only && !pgcat_tree_has_identity(t)) {
		for (i = 0; i < t->nrels; i++)
			if (t->rels[i].ident == 'n' || (t->rels[i].ident == 'd' &&
			    t->rels[i].nidkey == 0))
				check_fail(r, "table '%s' (under '%s') has no "
				    "replica identity: in the publication its "
				    "UPDATE and DELETE would fail (ALTER TABLE "
				    "%s REPLICA IDENTITY FULL)",
				    t->rels[i].qname, s->rel, t->rels[i].qname);
		ok = 0;
	}
	readable(r, t, role);
	ok &= check_toast(r, t, cfg);
	/* a filter naming a missing column is said once, above */
	if (named)
		filter(r, c, t);
	for (i = 0; i < t->nkey; i++)
		snprintf(key + strlen(key), sizeof(key) - strlen(key), "%s%s",
		    i ? ", " : "", t->cols[t->key[i]].name);
	if (ok)
		check_ok(r, "table '%s': %d column(s), %s%s%s, replica identity "
		    "%s%s", s->rel, t->ncols, t->nkey ? "key (" : "no key: "
		    "append_only", key, t->nkey ? ")" : "",
		    t->ident == 'f' ? "full" : t->ident == 'i' ? "index" :
		    t->ident == 'n' ? "nothing" : "default",
		    t->nrels ? " (and the tables under it)" : "");
	return ok;
}

/* poll mode's soft delete, compiled as its filter is */
static void
soft_delete(struct check_report *r, struct pg_conn *c,
    const struct sync_section *s)
{
	struct sbuf cond = SBUF_INIT;
	struct p2o_err e;
	char why[512], *rel;
	int rc;

	p2o_err_clear(&e);
	if ((rel = qrel(c, s, &e)) == NULL ||
	    where_sql(sync_more(s)->soft_delete_expr, &cond, quote, c) == -1)
		check_fail(r, "table '%s': the soft_delete could not be quoted",
		    s->rel);
	else if ((rc = pgsrv_where_compiles(c, rel, cond.buf, why,
	    sizeof(why), &e)) == -1)
		check_fail(r, "table '%s': %s", s->rel, e.msg);
	else if (rc == 1)
		check_fail(r, "table '%s': 'sync.%s.soft_delete' is refused by "
		    "the server: %s", s->rel, s->name, why);
	free(rel);
	sbuf_release(&cond);
}

/*
 * Poll mode reads the tables with plain queries: no slot, no publication,
 * no replication connection, no replica identity is asked for. Each table
 * needs its key, its poll column and the role's SELECT.
 */
static void
poll_tables(struct check_report *r, struct pg_conn *c,
    const struct config *cfg, const char *role)
{
	const struct sync_section *s;
	struct pgcat_table t;
	struct p2o_err e;
	const char *pc;
	int i, ok;

	for (i = 0; i < cfg->nsyncs; i++) {
		s = &cfg->syncs[i];
		pc = config_poll_column(cfg, s);
		memset(&t, 0, sizeof(t));
		p2o_err_clear(&e);
		if (pgcat_describe(c, "", s, &t, &e) == -1) {
			table_fail(r, s, &e);
			continue;
		}
		ok = named_columns(r, &t);
		if (pgcat_column(&t, pc) == NULL) {
			check_fail(r, "table '%s' has no column '%s' (its "
			    "poll_column)", s->rel, pc);
			ok = 0;
		}
		if (t.nkey == 0) {
			check_fail(r, "table '%s' has no key: a page resumes "
			    "after the key of its last row", s->rel);
			ok = 0;
		}
		readable(r, &t, role);
		if (ok) {
			filter(r, c, &t);
			if (sync_more(s)->soft_delete_expr != NULL)
				soft_delete(r, c, s);
			check_ok(r, "table '%s': %d column(s), polled in the "
			    "order of '%s' and its key, every %d s once caught "
			    "up", s->rel, t.ncols, pc, cfg->poll_interval_secs);
		}
		pgcat_table_release(&t);
	}
}

/* the slot, the tables, the publications: read, then judged */
static void
contract(struct check_report *r, struct pg_conn *c, struct pgsrv_contract *k)
{
	const struct config *cfg = k->cfg;
	enum pgsrv_which w;
	struct p2o_err e;
	int i;

	p2o_err_clear(&e);
	if (pgsrv_read_slot(c, k, &e) == -1)
		check_fail(r, "slot '%s': %s", cfg->slot_name, e.msg);
	else
		pgsrv_judge_slot(k, check_verdict, r);
	for (i = 0; i < cfg->nsyncs; i++)
		k->usable[i] = table(r, c, cfg, &cfg->syncs[i], &k->tables[i],
		    k->facts.role);
	pgsrv_place(k);
	for (w = PGSRV_MAIN; w <= (k->nappend ? PGSRV_APPEND : PGSRV_MAIN);
	    w++) {
		if (pgsrv_read_pub(c, k, w, &e) == -1)
			check_fail(r, "publication '%s': %s", k->pubname[w],
			    e.msg);
		else
			pgsrv_judge_pub(k, w, check_verdict, r);
	}
}

void
validate_pg(struct check_report *r, const struct config *cfg)
{
	struct pgsrv_contract k;
	struct pg_conn *c, *repl;
	struct p2o_err e;
	char tls[128];

	p2o_err_clear(&e);
	if ((c = pgconn_open(cfg, PGCONN_ADMIN, "pg2osync validate", &e)) ==
	    NULL) {
		check_fail(r, "source: %s", e.msg);
		check_skip(r, "source: the server, the slot, the publication "
		    "and the tables: not checked without a connection");
		return;
	}
	pgsrv_contract_init(&k, cfg);
	if (pgsrv_facts(c, &k.facts, &e) == -1) {
		check_fail(r, "source: %s", e.msg);
		goto out;
	}
	check_ok(r, "source: connected to PostgreSQL %s as '%s', database "
	    "'%s' (%s%s)", k.facts.version_text, k.facts.role, k.facts.db,
	    tls_text((PGconn *)c, tls, sizeof(tls)), cfg->source_admin_url ?
	    "; through source.admin_url_env, for the catalogue and setup" :
	    "");
	if (cfg->poll) {
		poll_tables(r, c, cfg, k.facts.role);
		goto out;
	}
	pgsrv_judge_server(&k.facts, check_verdict, r);
	/* the stream never goes through the admin url: its own url must
	 * take the replication connection, whoever the admin role is */
	if (k.facts.replication || k.facts.superuser ||
	    cfg->source_admin_url != NULL) {
		/* pg_hba.conf has its own lines for replication */
		if ((repl = pgconn_open(cfg, PGCONN_REPLICATION,
		    "pg2osync validate", &e)) == NULL)
			check_fail(r, "source: %s", e.msg);
		else {
			check_ok(r, "source: a replication connection is "
			    "accepted%s", cfg->source_admin_url ? " on the "
			    "source url (direct, for the stream)" : "");
			pgconn_close(repl);
		}
	}
	contract(r, c, &k);
out:
	pgsrv_contract_release(&k);
	pgconn_close(c);
}
