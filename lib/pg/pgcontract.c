/*
 * pgcontract.c - the contract a PostgreSQL server must keep for a pipeline
 * to stream from it, as lists of checks (pgserver.h): the server and the
 * role; each publication the tables are placed in - by the one rule,
 * pgcat_in_append - with the one CREATE PUBLICATION that makes it; the
 * slot. What they judge is read first (pgsrv_read_*, through pgserver.c's
 * answers); the judges themselves read nothing and write nothing, so what
 * capture-pg refuses, validate reports and bootstrap applies are the same
 * verdicts. Never exits.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "p2o.h"
#include "pgcat.h"
#include "pgconn.h"
#include "pgserver.h"
#include "sbuf.h"
#include "source_ops.h"

void
pgsrv_contract_init(struct pgsrv_contract *k, const struct config *cfg)
{
	memset(k, 0, sizeof(*k));
	k->cfg = cfg;
	k->tables = xcalloc((size_t)cfg->nsyncs + 1, sizeof(*k->tables));
	k->usable = xcalloc((size_t)cfg->nsyncs + 1, sizeof(int));
	k->append = xcalloc((size_t)cfg->nsyncs + 1, sizeof(int));
	k->nnest = config_nest_tables(cfg, &k->nest);
	snprintf(k->pubname[PGSRV_MAIN], PGSRV_PUB_MAX, "%s", cfg->publication);
	pgsrv_append_name(cfg->publication, k->pubname[PGSRV_APPEND],
	    PGSRV_PUB_MAX);
}

void
pgsrv_contract_forget_tables(struct pgsrv_contract *k)
{
	int i;

	for (i = 0; k->tables != NULL && i < k->cfg->nsyncs; i++)
		pgcat_table_release(&k->tables[i]);
	free(k->tables);
	k->tables = NULL;
}

void
pgsrv_contract_release(struct pgsrv_contract *k)
{
	pgsrv_contract_forget_tables(k);
	free(k->usable);
	free(k->append);
	free(k->nest);
	pgsrv_pub_release(&k->pub[PGSRV_MAIN]);
	pgsrv_pub_release(&k->pub[PGSRV_APPEND]);
	pgsrv_slot_release(&k->slot);
	memset(k, 0, sizeof(*k));
}

/* the tables placed in publication which: what it is created with */
static int
placed_in(const struct pgsrv_contract *k, enum pgsrv_which which, int i)
{
	return k->usable[i] && k->append[i] == (int)which;
}

void
pgsrv_create_pub_sql(struct sbuf *b, const struct pgsrv_contract *k,
    enum pgsrv_which which)
{
	int i, n = 0;

	pgsrv_create_pub_head(b, k->pubname[which]);
	for (i = 0; i < k->cfg->nsyncs; i++) {
		if (!placed_in(k, which, i))
			continue;
		sbuf_adds(b, n++ == 0 ? " FOR TABLE " : ", ");
		pgconn_put_qname(b, k->cfg->syncs[i].schema,
		    k->cfg->syncs[i].table);
	}
	/* a collection's tables: their changes rewrite the parents */
	for (i = 0; which == PGSRV_MAIN && i < k->nnest; i++) {
		sbuf_adds(b, n++ == 0 ? " FOR TABLE " : ", ");
		pgsrv_qname_sql(b, k->nest[i]);
	}
	sbuf_adds(b, pgsrv_pub_options(which));
}

int
pgsrv_create_pub(struct pg_conn *c, const struct pgsrv_contract *k,
    enum pgsrv_which which, struct p2o_err *e)
{
	struct sbuf sql = SBUF_INIT;
	int rc;

	pgsrv_create_pub_sql(&sql, k, which);
	rc = pgconn_exec(c, "creating the publication", sql.buf, e);
	sbuf_release(&sql);
	return rc;
}

/* one check of a list: fills v, whose kind says the verdict */
struct pgsrv_check {
	const char *name;
	void	(*judge)(const struct pgsrv_facts *, struct source_verdict *);
};

/* what a managed service calls the switch for logical decoding */
static const char *
wal_remedy(const char *managed)
{
	if (strcmp(managed, "rds") == 0)
		return "on Amazon RDS set rds.logical_replication = 1 in the "
		    "instance's DB parameter group and reboot it";
	if (strcmp(managed, "aurora") == 0)
		return "on Aurora PostgreSQL set rds.logical_replication = 1 in "
		    "the DB cluster parameter group and reboot the writer";
	if (strcmp(managed, "cloudsql") == 0)
		return "on Cloud SQL set the flag cloudsql.logical_decoding = "
		    "on (the instance restarts)";
	if (strcmp(managed, "azure") == 0)
		return "on Azure Database for PostgreSQL set the server "
		    "parameter wal_level = logical and restart the server";
	if (strcmp(managed, "supabase") == 0)
		return "Supabase runs wal_level = logical already: this is "
		    "not the project's primary database";
	return "ALTER SYSTEM SET wal_level = logical; then restart the server";
}

static void
remedy(struct source_verdict *v, const char *text)
{
	snprintf(v->remedy, sizeof(v->remedy), "%s", text);
}

static void
judge_wal_level(const struct pgsrv_facts *f, struct source_verdict *v)
{
	if (strcmp(f->wal_level, "logical") == 0) {
		source_verdict_set(v, SV_OK, 0, "source", "wal_level = logical");
		return;
	}
	source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source",
	    "wal_level is '%s'; logical replication needs wal_level = logical "
	    "(%s)", f->wal_level, wal_remedy(f->managed));
	remedy(v, wal_remedy(f->managed));
}

static void
judge_standby(const struct pgsrv_facts *f, struct source_verdict *v)
{
	if (f->in_recovery && f->version < 160000) {
		source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source", "the "
		    "server is a standby, which cannot decode before PostgreSQL "
		    "16: point the url at the primary");
		remedy(v, "point source.url at the primary");
	} else if (f->in_recovery)
		source_verdict_set(v, SV_OK, 0, "source", "a standby, which "
		    "decodes from PostgreSQL 16 on");
	else
		source_verdict_set(v, SV_OK, 0, "source", "a primary, not a "
		    "standby");
}

static void
judge_senders(const struct pgsrv_facts *f, struct source_verdict *v)
{
	static const char fix[] = "ALTER SYSTEM SET max_wal_senders = 10; "
	    "then restart the server";

	if (f->max_senders > 0) {
		source_verdict_set(v, SV_OK, 0, "source", "max_wal_senders = %d",
		    f->max_senders);
		return;
	}
	source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source",
	    "max_wal_senders is 0: no replication connection can be made "
	    "(%s)", fix);
	remedy(v, fix);
}

static void
judge_role(const struct pgsrv_facts *f, struct source_verdict *v)
{
	struct sbuf fix = SBUF_INIT;

	if (f->superuser || f->replication) {
		source_verdict_set(v, SV_OK, 0, "source", "role '%s' has %s",
		    f->role, f->superuser ? "SUPERUSER" : "REPLICATION");
		return;
	}
	sbuf_adds(&fix, "ALTER ROLE ");
	pgconn_put_ident(&fix, f->role);
	sbuf_adds(&fix, " REPLICATION");
	if (strcmp(f->managed, "rds") == 0 || strcmp(f->managed, "aurora") == 0) {
		sbuf_adds(&fix, "; on RDS: GRANT rds_replication TO ");
		pgconn_put_ident(&fix, f->role);
	}
	source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source", "role '%s' "
	    "has neither REPLICATION nor SUPERUSER, which logical replication "
	    "needs (%s)", f->role, fix.buf);
	remedy(v, fix.buf);
	sbuf_release(&fix);
}

static const struct pgsrv_check server_checks[] = {
	{ "wal_level", judge_wal_level },
	{ "standby", judge_standby },
	{ "max_wal_senders", judge_senders },
	{ "role", judge_role },
};

int
pgsrv_judge_server(const struct pgsrv_facts *f, source_emit emit, void *arg)
{
	struct source_verdict v;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(server_checks) / sizeof(server_checks[0]); i++) {
		memset(&v, 0, sizeof(v));
		server_checks[i].judge(f, &v);
		if ((rc = emit(arg, &v)) != 0)
			return rc;
	}
	return 0;
}

void
pgsrv_place(struct pgsrv_contract *k)
{
	int i;

	k->nappend = 0;
	for (i = 0; i < k->cfg->nsyncs; i++) {
		k->append[i] = k->usable[i] && pgcat_in_append(&k->tables[i]);
		k->nappend += k->append[i];
	}
}

/* 1 when the role may make a publication of every table of the array
 * literal qrels (quoted names): it owns each or is a superuser; 0 not (a
 * table that is not there: not), -1. One question for them all: one a
 * table was seconds at start with thousands of tables */
static int
owns(struct pg_conn *c, const char *qrels, struct p2o_err *e)
{
	const char *params[1] = { qrels };
	PGresult *res;
	int yes;

	if ((res = pgconn_query(c, "reading the tables' owners",
	    "SELECT pg_catalog.bool_and(COALESCE("
	    "pg_catalog.pg_has_role(c.relowner, 'USAGE') OR "
	    "(SELECT rolsuper FROM pg_catalog.pg_roles "
	    " WHERE rolname = current_user), false)) "
	    "FROM pg_catalog.unnest($1::pg_catalog.text[]) AS q(name) "
	    "LEFT JOIN pg_catalog.pg_class c "
	    "ON c.oid = pg_catalog.to_regclass(q.name)", 1, params, e)) == NULL)
		return -1;
	/* no table at all: nothing stands in the way */
	yes = PQntuples(res) == 1 && (PQgetisnull(res, 0, 0) ||
	    PQgetvalue(res, 0, 0)[0] == 't');
	PQclear(res);
	return yes;
}

/* the role may create publication which: CREATE on the database, and it
 * owns every table the publication would be created with */
static int
may_create(struct pg_conn *c, const struct pgsrv_contract *k,
    enum pgsrv_which which, struct p2o_err *e)
{
	struct sbuf q = SBUF_INIT, arr = SBUF_INIT;
	int i, r;

	if (k->facts.superuser)
		return 1;
	if (!k->facts.db_create)
		return 0;
	sbuf_addc(&arr, '{');
	for (i = 0; i < k->cfg->nsyncs; i++) {
		if (!placed_in(k, which, i))
			continue;
		sbuf_reset(&q);
		pgsrv_qname_sql(&q, k->cfg->syncs[i].rel);
		pgcat_array_add(&arr, q.buf);
	}
	for (i = 0; which == PGSRV_MAIN && i < k->nnest; i++) {
		sbuf_reset(&q);
		pgsrv_qname_sql(&q, k->nest[i]);
		pgcat_array_add(&arr, q.buf);
	}
	sbuf_addc(&arr, '}');
	r = owns(c, arr.buf, e);
	sbuf_release(&q);
	sbuf_release(&arr);
	return r;
}

int
pgsrv_read_pub(struct pg_conn *c, struct pgsrv_contract *k,
    enum pgsrv_which which, struct p2o_err *e)
{
	int r;

	pgsrv_pub_release(&k->pub[which]);
	if (pgsrv_publication(c, k->pubname[which], &k->pub[which], e) == -1)
		return -1;
	k->may_create[which] = 0;
	if (k->pub[which].exists)
		return 0;
	if ((r = may_create(c, k, which, e)) == -1)
		return -1;
	k->may_create[which] = r;
	return 0;
}

/* a publication check: emits its verdicts, stops when emit says */
struct pgsrv_pub_check {
	const char *name;
	int	(*judge)(const struct pgsrv_contract *, enum pgsrv_which,
		    source_emit, void *);
};

/* the publication exists, or may be created; and publishes what it must */
static int
pub_state(const struct pgsrv_contract *k, enum pgsrv_which which,
    source_emit emit, void *arg)
{
	const struct pgsrv_pub *p = &k->pub[which];
	const char *name = k->pubname[which];
	struct source_verdict v;
	struct sbuf stmt = SBUF_INIT;
	int rc;

	memset(&v, 0, sizeof(v));
	if (!p->exists) {
		pgsrv_create_pub_sql(&stmt, k, which);
		if (k->may_create[which])
			source_verdict_set(&v, SV_ABSENT, 0, NULL, "publication "
			    "'%s' does not exist yet; role '%s' may create it "
			    "(the capture does at its first start, pg2osync "
			    "bootstrap does now)", name, k->facts.role);
		else
			source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL,
			    "publication '%s' does not exist, and role '%s' may "
			    "not create it (it needs CREATE on the database and "
			    "to own the tables): a DBA runs %.600s (pg2osync "
			    "setup-sql prints the whole script)", name,
			    k->facts.role, stmt.buf);
		remedy(&v, stmt.buf);
		sbuf_release(&stmt);
		return emit(arg, &v);
	}
	if (!p->ins || (which == PGSRV_MAIN && (!p->upd || !p->del))) {
		source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL,
		    "publication '%s' does not publish %s; the index would miss "
		    "those changes", name, !p->ins ? "inserts" : !p->upd ?
		    "updates" : "deletes");
		pgsrv_set_publish_sql(&stmt, name, which);
		remedy(&v, stmt.buf);
	} else if (which == PGSRV_APPEND && (p->upd || p->del)) {
		source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL,
		    "publication '%s' publishes updates or deletes of tables "
		    "without a replica identity, which makes their UPDATE and "
		    "DELETE fail: it must publish 'insert, truncate' only", name);
		pgsrv_set_publish_sql(&stmt, name, which);
		remedy(&v, stmt.buf);
	} else
		source_verdict_set(&v, SV_OK, 0, NULL, "publication '%s' exists "
		    "and publishes %s", name, which == PGSRV_APPEND ? "inserts "
		    "and no update or delete" : "inserts, updates and deletes");
	sbuf_release(&stmt);
	if ((rc = emit(arg, &v)) != 0 || v.kind == SV_FAIL || p->trunc)
		return rc;
	source_verdict_set(&v, SV_NOTE, 0, NULL, "publication '%s' does not "
	    "publish truncate: a TRUNCATE will not clear the index", name);
	return emit(arg, &v);
}

/* a table the publication lacks: the verdict and the statement adding
 * it (which a reload may run when the table is a section's own) */
static int
lacks(source_emit emit, void *arg, const char *pub, const char *qname,
    int apply, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int
lacks(source_emit emit, void *arg, const char *pub, const char *qname,
    int apply, const char *fmt, ...)
{
	struct source_verdict v;
	struct sbuf fix = SBUF_INIT;
	char text[P2O_ERR_MAX];
	va_list ap;
	int rc;

	memset(&v, 0, sizeof(v));
	pgsrv_add_table_sql(&fix, pub, qname);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL, "%.700s (%s)",
	    text, fix.buf);
	remedy(&v, fix.buf);
	v.apply = apply;
	rc = emit(arg, &v);
	sbuf_release(&fix);
	return rc;
}

/* each table placed in the publication is in it, with its inheritance
 * children (a publication holds the children a table had when it was
 * added: one created since would be loaded but never streamed); no table
 * placed in <publication>_append is in <publication>; and <publication>
 * carries the tables collections read */
static int
pub_tables(const struct pgsrv_contract *k, enum pgsrv_which which,
    source_emit emit, void *arg)
{
	const struct pgsrv_pub *p = &k->pub[which];
	const char *name = k->pubname[which];
	const struct sync_section *sec;
	const struct pgcat_table *t;
	struct source_verdict v;
	struct sbuf fix = SBUF_INIT;
	int i, j, in, rc = 0, bad = 0;

	memset(&v, 0, sizeof(v));
	for (i = 0; rc == 0 && i < k->cfg->nsyncs; i++) {
		if (!k->usable[i])
			continue;
		sec = &k->cfg->syncs[i];
		t = &k->tables[i];
		in = pgsrv_pub_has(p, t->oid);
		if (k->append[i] == (int)which && !in) {
			bad++;
			rc = lacks(emit, arg, name, sec->rel, 1, "publication "
			    "'%s' does not include table '%s' (sync section "
			    "'%s'): its changes would never reach the index",
			    name, sec->rel, sec->name);
			continue;
		}
		if (which == PGSRV_MAIN && k->append[i] && in) {
			bad++;
			sbuf_reset(&fix);
			pgsrv_drop_table_sql(&fix, name, sec->rel);
			source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL,
			    "publication '%s' includes table '%s', which has no "
			    "replica identity: its own UPDATE and DELETE fail "
			    "while a publication publishes them. Remove it (%s): "
			    "as an append_only table it is read through '%s'",
			    name, sec->rel, fix.buf, k->pubname[PGSRV_APPEND]);
			remedy(&v, fix.buf);
			rc = emit(arg, &v);
			continue;
		}
		if (k->append[i] != (int)which)
			continue;
		for (j = 0; rc == 0 && j < t->nrels; j++) {
			if (t->rels[j].partition ||
			    pgsrv_pub_has(p, t->rels[j].oid))
				continue;
			bad++;
			rc = lacks(emit, arg, name, t->rels[j].qname, 0,
			    "publication '%s' does not include table '%s', "
			    "which inherits from '%s' (sync section '%s'): its "
			    "changes would never reach the index", name,
			    t->rels[j].qname, sec->rel, sec->name);
		}
	}
	for (i = 0; rc == 0 && which == PGSRV_MAIN && i < k->nnest; i++) {
		if (pgsrv_pub_has_name(p, k->nest[i]))
			continue;
		bad++;
		rc = lacks(emit, arg, name, k->nest[i], 0, "publication '%s' "
		    "does not include table '%s', which a collection reads: its "
		    "changes would never rewrite the parents", name, k->nest[i]);
	}
	sbuf_release(&fix);
	if (rc != 0 || bad)
		return rc;
	source_verdict_set(&v, SV_OK, 0, NULL, "publication '%s' carries the "
	    "configured tables", name);
	return emit(arg, &v);
}

static const struct pgsrv_pub_check pub_checks[] = {
	{ "state", pub_state },
	{ "tables", pub_tables },
};

int
pgsrv_judge_pub(const struct pgsrv_contract *k, enum pgsrv_which which,
    source_emit emit, void *arg)
{
	size_t i;
	int rc;

	for (i = 0; i < sizeof(pub_checks) / sizeof(pub_checks[0]); i++) {
		/* the rest judge a publication that is there */
		if (i > 0 && !k->pub[which].exists)
			break;
		if ((rc = pub_checks[i].judge(k, which, emit, arg)) != 0)
			return rc;
	}
	return 0;
}

int
pgsrv_read_slot(struct pg_conn *c, struct pgsrv_contract *k,
    struct p2o_err *e)
{
	pgsrv_slot_release(&k->slot);
	return pgsrv_slot_get(c, k->cfg->slot_name, &k->slot, &k->slot_found,
	    e);
}

/*
 * What a failover slot's changes wait for: PostgreSQL sends them only once
 * every physical slot synchronized_standby_slots names has received their
 * WAL. A name that is no physical slot of this server - the setting a
 * promoted standby copied from its old primary - stalls decoding with no
 * more than a server warning, so the capture says so and waits for the
 * setting to be fixed (a reload of the server is enough).
 */
int
pgsrv_judge_standby(const struct pgsrv_contract *k, source_emit emit,
    void *arg)
{
	const struct pgsrv_facts *f = &k->facts;
	struct source_verdict v;

	/* only a failover slot waits, and only a primary decodes for it */
	if (f->version < 170000 || f->in_recovery || !(k->cfg->slot_failover ||
	    (k->slot_found && k->slot.failover)))
		return 0;
	memset(&v, 0, sizeof(v));
	if (f->standby_missing[0] != '\0') {
		source_verdict_set(&v, SV_FAIL, P2O_EXIT_TEMPFAIL, "source",
		    "synchronized_standby_slots names '%s', which is no "
		    "physical slot of this server: the changes of failover "
		    "slot '%s' wait for it, and nothing reaches the index (a "
		    "promoted standby keeps the setting its base backup "
		    "copied). Name this server's standby slots there, or reset "
		    "it: ALTER SYSTEM RESET synchronized_standby_slots; SELECT "
		    "pg_reload_conf();", f->standby_missing, k->cfg->slot_name);
		snprintf(v.remedy, sizeof(v.remedy), "ALTER SYSTEM RESET "
		    "synchronized_standby_slots; SELECT pg_reload_conf();");
	} else if (f->standby_slots[0] == '\0')
		source_verdict_set(&v, SV_NOTE, 0, "source", "synchronized_"
		    "standby_slots is empty: a change may reach the index before "
		    "a standby has it, and after a failover the index would hold "
		    "changes the promoted server never had (name the standby's "
		    "physical slot there)");
	else if (f->standby_idle[0] != '\0')
		source_verdict_set(&v, SV_NOTE, 0, "source", "synchronized_"
		    "standby_slots names '%s', which no standby streams from "
		    "now: the changes of failover slot '%s' wait until it "
		    "does", f->standby_idle, k->cfg->slot_name);
	else
		source_verdict_set(&v, SV_OK, 0, "source", "synchronized_"
		    "standby_slots = '%s': a change reaches the index once "
		    "the standby has it", f->standby_slots);
	return emit(arg, &v);
}

int
pgsrv_judge_slot(const struct pgsrv_contract *k, source_emit emit,
    void *arg)
{
	const struct pgsrv_facts *f = &k->facts;
	const struct pgsrv_slot *s = &k->slot;
	const char *name = k->cfg->slot_name;
	struct source_verdict v;
	struct sbuf drop = SBUF_INIT;
	int rc;

	memset(&v, 0, sizeof(v));
	if (!k->slot_found) {
		if (!f->replication && !f->superuser)
			source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL,
			    "replication slot '%s' does not exist, and role '%s' "
			    "may not create it (it needs REPLICATION)", name,
			    f->role);
		else if (f->used_slots >= f->max_slots)
			source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL,
			    "replication slot '%s' does not exist, and all %d of "
			    "max_replication_slots are in use (raise it, or drop "
			    "a slot nothing reads: pg2osync status lists them)",
			    name, f->max_slots);
		else
			source_verdict_set(&v, SV_ABSENT, 0, NULL, "replication "
			    "slot '%s' does not exist yet; role '%s' may create "
			    "it (the capture does at its first start, pg2osync "
			    "bootstrap does now)", name, f->role);
	} else if (!s->logical)
		source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL,
		    "replication slot '%s' is a physical slot, not a logical "
		    "one: name another source.slot_name", name);
	else if (strcmp(s->plugin, "pgoutput") != 0)
		source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL,
		    "replication slot '%s' uses plugin '%s', not 'pgoutput': "
		    "name another source.slot_name", name, s->plugin);
	else if (strcmp(s->database, f->db) != 0)
		source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL,
		    "replication slot '%s' belongs to database '%s', not '%s': "
		    "name another source.slot_name", name, s->database, f->db);
	else if (strcmp(s->wal_status, "lost") == 0) {
		pgsrv_drop_slot_sql(&drop, name);
		source_verdict_set(&v, SV_FAIL, P2O_EXIT_LOST, NULL,
		    "replication slot '%s' has lost WAL it needs (wal_status "
		    "'lost', max_slot_wal_keep_size): the changes since its "
		    "position are gone and it can never stream again; drop it "
		    "(pg2osync drop-slot) and load the tables again", name);
		remedy(&v, drop.buf);
	} else if (s->confirmed == 0)
		source_verdict_set(&v, SV_FAIL, P2O_EXIT_REFUSED, NULL,
		    "replication slot '%s' has no confirmed position", name);
	else if (k->cfg->slot_failover && !s->failover && !s->synced) {
		/* it streams; only a failover would lose it */
		source_verdict_set(&v, SV_NOTE, 0, NULL, "replication slot '%s' "
		    "is not marked failover (source.slot_failover): a promoted "
		    "standby will not have it. Mark it while nothing streams "
		    "from it, on a replication connection: psql \"dbname=%s "
		    "replication=database\" -c 'ALTER_REPLICATION_SLOT %s "
		    "(FAILOVER true)'", name, f->db, name);
		snprintf(v.remedy, sizeof(v.remedy), "ALTER_REPLICATION_SLOT "
		    "%s (FAILOVER true)", name);
	} else
		source_verdict_set(&v, SV_OK, 0, NULL, "replication slot '%s' "
		    "exists (pgoutput, %s%s, retains %.1f MB of WAL%s%s)", name,
		    s->active ? "active" : "inactive", s->synced ?
		    ", synchronized from a primary" : s->failover ?
		    ", failover" : "", (double)s->retained / 1e6,
		    s->wal_status[0] ? ", wal_status " : "", s->wal_status);
	sbuf_release(&drop);
	if ((rc = emit(arg, &v)) != 0)
		return rc;
	return pgsrv_judge_standby(k, emit, arg);
}
