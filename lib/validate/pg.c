/*
 * validate/pg.c - validate's PostgreSQL checks: the connection and its
 * TLS, the server's settings, the role, a replication connection, the
 * slot, every table (through lib/pg/pgcat.c, the rules the capture and
 * the loader apply) and the publications. Read-only: a filter is
 * compiled with LIMIT 0, nothing is created.
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

char *
pg_qrel(struct pg_conn *c, const struct sync_section *s, struct p2o_err *e)
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

static void
server(struct check_report *r, const struct pgsrv_facts *f)
{
	if (strcmp(f->wal_level, "logical") == 0)
		check_ok(r, "source: wal_level = logical");
	else
		check_fail(r, "source: wal_level is '%s'; logical replication "
		    "needs wal_level = logical (%s)", f->wal_level,
		    wal_remedy(f->managed));
	if (f->in_recovery && f->version < 160000)
		check_fail(r, "source: the server is a standby, which cannot "
		    "decode before PostgreSQL 16: point the url at the "
		    "primary");
	if (f->replication || f->superuser)
		check_ok(r, "source: role '%s' has %s", f->role,
		    f->superuser ? "SUPERUSER" : "REPLICATION");
	else
		check_fail(r, "source: role '%s' has neither REPLICATION nor "
		    "SUPERUSER (ALTER ROLE %s REPLICATION%s)", f->role, f->role,
		    strcmp(f->managed, "rds") == 0 || strcmp(f->managed,
		    "aurora") == 0 ? "; on RDS: GRANT rds_replication TO "
		    "the role" : "");
	if (f->max_senders < 1)
		check_fail(r, "source: max_wal_senders is 0: no replication "
		    "connection can be made (ALTER SYSTEM SET max_wal_senders "
		    "= 10; then restart)");
}

static void
slot(struct check_report *r, struct pg_conn *c, const struct config *cfg,
    const struct pgsrv_facts *f)
{
	const struct pgsrv_slot *s;
	struct pgsrv_slot *v;
	struct p2o_err e;
	uint64_t now;
	char mb[32];
	int n;

	p2o_err_clear(&e);
	if (pgsrv_slots(c, &v, &n, &now, &e) == -1) {
		check_fail(r, "slot '%s': %s", cfg->slot_name, e.msg);
		return;
	}
	if ((s = pgsrv_slot_find(v, n, cfg->slot_name)) == NULL) {
		if (!f->replication && !f->superuser)
			check_fail(r, "slot '%s' does not exist, and role '%s' "
			    "may not create it (it needs REPLICATION)",
			    cfg->slot_name, f->role);
		else if (f->used_slots >= f->max_slots)
			check_fail(r, "slot '%s' does not exist, and all %d of "
			    "max_replication_slots are in use (raise it, or "
			    "drop a slot nothing reads: pg2osync status lists "
			    "them)", cfg->slot_name, f->max_slots);
		else
			check_ok(r, "slot '%s' does not exist yet; role '%s' may "
			    "create it (the capture does at its first start, "
			    "pg2osync bootstrap does now)", cfg->slot_name,
			    f->role);
	} else if (!s->logical)
		check_fail(r, "slot '%s' is a physical slot, not a logical one: "
		    "name another source.slot_name", cfg->slot_name);
	else if (strcmp(s->plugin, "pgoutput") != 0)
		check_fail(r, "slot '%s' uses plugin '%s', not 'pgoutput': name "
		    "another source.slot_name", cfg->slot_name, s->plugin);
	else if (strcmp(s->database, f->db) != 0)
		check_fail(r, "slot '%s' belongs to database '%s', not '%s'",
		    cfg->slot_name, s->database, f->db);
	else if (strcmp(s->wal_status, "lost") == 0)
		check_fail(r, "slot '%s' has lost WAL it needs (wal_status "
		    "'lost'): it can never stream again; drop it (pg2osync "
		    "drop-slot) and load the tables again", cfg->slot_name);
	else
		check_ok(r, "slot '%s' exists (pgoutput, %s, retains %s of WAL%s"
		    "%s)", cfg->slot_name, s->active ? "active" : "inactive",
		    check_mb(s->retained, mb, sizeof(mb)),
		    s->wal_status[0] ? ", wal_status " : "", s->wal_status);
	pgsrv_slots_free(v, n);
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
	struct sbuf cond = SBUF_INIT;
	struct p2o_err e;
	char why[512], *rel;
	int rc;

	if (s->where_expr == NULL)
		return;
	p2o_err_clear(&e);
	if ((rel = pg_qrel(c, s, &e)) == NULL ||
	    where_sql(s->where_expr, &cond, quote, c) == -1) {
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

/* the publication's statements, for a DBA */
static void
create_stmt(struct sbuf *b, const struct config *cfg, const char *name,
    const int *append, int want)
{
	int i, n = 0;

	sbuf_addf(b, "CREATE PUBLICATION %s", name);
	for (i = 0; i < cfg->nsyncs; i++)
		if (append[i] == want)
			sbuf_addf(b, "%s%s", n++ ? ", " : " FOR TABLE ",
			    cfg->syncs[i].rel);
	sbuf_adds(b, want ? " WITH (publish = 'insert, truncate', "
	    "publish_via_partition_root = true)" :
	    " WITH (publish_via_partition_root = true)");
}

/* one publication: the tables whose append[i] is want */
static void
publication(struct check_report *r, struct pg_conn *c,
    const struct config *cfg, const char *name, const int *append, int want,
    const struct pgcat_table *t, const int *usable,
    const struct pgsrv_facts *f)
{
	struct pgsrv_pub p;
	struct p2o_err e;
	struct sbuf stmt = SBUF_INIT;
	int i, k, rc, may = f->superuser || f->db_create, bad = 0;

	p2o_err_clear(&e);
	if (pgsrv_publication(c, name, &p, &e) == -1) {
		check_fail(r, "publication '%s': %s", name, e.msg);
		return;
	}
	if (!p.exists) {
		for (i = 0; may && i < cfg->nsyncs; i++)
			if (append[i] == want && usable[i] &&
			    pgsrv_owns(c, t[i].oid, &e) != 1)
				may = 0;
		create_stmt(&stmt, cfg, name, append, want);
		if (may)
			check_ok(r, "publication '%s' does not exist yet; role "
			    "'%s' may create it (the capture does at its first "
			    "start, pg2osync bootstrap does now)", name,
			    f->role);
		else
			check_fail(r, "publication '%s' does not exist, and role "
			    "'%s' may not create it (it needs CREATE on the "
			    "database and to own the tables): a DBA runs %s "
			    "(pg2osync setup-sql prints the whole script)",
			    name, f->role, stmt.buf);
		sbuf_release(&stmt);
		return;
	}
	if (!p.ins || (!want && (!p.upd || !p.del))) {
		check_fail(r, "publication '%s' does not publish %s; the index "
		    "would miss those changes", name, !p.ins ? "inserts" :
		    !p.upd ? "updates" : "deletes");
		bad = 1;
	}
	if (want && (p.upd || p.del)) {
		check_fail(r, "publication '%s' publishes updates or deletes of "
		    "tables without a replica identity, which makes their "
		    "UPDATE and DELETE fail: it must publish 'insert, "
		    "truncate' only", name);
		bad = 1;
	}
	for (i = 0; i < cfg->nsyncs; i++) {
		if (!usable[i])
			continue;
		rc = pgsrv_publishes(c, name, t[i].oid, &e);
		if (append[i] == want && rc == 0 && r->pub_adds != NULL) {
			char *q = pg_qrel(c, &cfg->syncs[i], &e);

			if (q == NULL) {
				check_fail(r, "table '%s': %s", cfg->syncs[i].rel,
				    e.msg);
				bad = 1;
				continue;
			}
			sbuf_addf(r->pub_adds, "%s\t%s\n", name, q);
			free(q);
			check_ok(r, "publication '%s' does not include table "
			    "'%s' yet: the reload adds it", name,
			    cfg->syncs[i].rel);
			continue;
		}
		if (append[i] == want && rc == 0) {
			check_fail(r, "publication '%s' does not include table "
			    "'%s' (ALTER PUBLICATION %s ADD TABLE %s)", name,
			    cfg->syncs[i].rel, name, cfg->syncs[i].rel);
			bad = 1;
		} else if (append[i] != want && rc == 1 && !want) {
			check_fail(r, "publication '%s' includes table '%s', "
			    "which has no replica identity: its UPDATE and "
			    "DELETE fail while it is there (ALTER PUBLICATION "
			    "%s DROP TABLE %s; as append_only it is read "
			    "through '%s_append')", name, cfg->syncs[i].rel,
			    name, cfg->syncs[i].rel, cfg->publication);
			bad = 1;
		}
		if (append[i] != want || rc != 1)
			continue;
		for (k = 0; k < t[i].nrels; k++)
			if (!t[i].rels[k].partition && pgsrv_publishes(c, name,
			    t[i].rels[k].oid, &e) == 0) {
				check_fail(r, "publication '%s' does not include "
				    "table '%s', which inherits from '%s': its "
				    "changes would never reach the index (ALTER "
				    "PUBLICATION %s ADD TABLE %s)", name,
				    t[i].rels[k].qname, cfg->syncs[i].rel, name,
				    t[i].rels[k].qname);
				bad = 1;
			}
	}
	if (!bad)
		check_ok(r, "publication '%s' exists and carries the configured "
		    "tables%s", name, p.trunc ? "" : " (it does not publish "
		    "truncate: a TRUNCATE will not clear the index)");
}

void
validate_pg(struct check_report *r, const struct config *cfg)
{
	struct pgsrv_facts f;
	struct pgcat_table *t;
	struct pg_conn *c, *repl;
	struct p2o_err e;
	char tls[128], apub[80];
	int *usable, *append, i, nappend = 0;

	p2o_err_clear(&e);
	if ((c = pgconn_open(cfg, PGCONN_SQL, "pg2osync validate", &e)) ==
	    NULL) {
		check_fail(r, "source: %s", e.msg);
		check_skip(r, "source: the server, the slot, the publication "
		    "and the tables: not checked without a connection");
		return;
	}
	if (pgsrv_facts(c, &f, &e) == -1) {
		check_fail(r, "source: %s", e.msg);
		pgconn_close(c);
		return;
	}
	check_ok(r, "source: connected to PostgreSQL %s as '%s', database "
	    "'%s' (%s)", f.version_text, f.role, f.db,
	    tls_text((PGconn *)c, tls, sizeof(tls)));
	server(r, &f);
	if (f.replication || f.superuser) {
		/* pg_hba.conf has its own lines for replication */
		if ((repl = pgconn_open(cfg, PGCONN_REPLICATION,
		    "pg2osync validate", &e)) == NULL)
			check_fail(r, "source: %s", e.msg);
		else {
			check_ok(r, "source: a replication connection is "
			    "accepted");
			pgconn_close(repl);
		}
	}
	slot(r, c, cfg, &f);

	t = xcalloc((size_t)cfg->nsyncs + 1, sizeof(*t));
	usable = xcalloc((size_t)cfg->nsyncs + 1, sizeof(int));
	append = xcalloc((size_t)cfg->nsyncs + 1, sizeof(int));
	for (i = 0; i < cfg->nsyncs; i++) {
		usable[i] = table(r, c, cfg, &cfg->syncs[i], &t[i], f.role);
		/* capture-pg's placement: an append-only tree without a
		 * replica identity is read through <publication>_append */
		if (t[i].sec != NULL && cfg->syncs[i].append_only &&
		    !pgcat_tree_has_identity(&t[i])) {
			append[i] = 1;
			nappend++;
		}
	}
	publication(r, c, cfg, cfg->publication, append, 0, t, usable, &f);
	if (nappend) {
		snprintf(apub, sizeof(apub), "%s_append", cfg->publication);
		publication(r, c, cfg, apub, append, 1, t, usable, &f);
	}
	for (i = 0; i < cfg->nsyncs; i++)
		pgcat_table_release(&t[i]);
	free(t);
	free(usable);
	free(append);
	pgconn_close(c);
}
