/*
 * pgserver.c - what a PostgreSQL server says (settings, the role, slots,
 * publications, the WAL position now), each answer one statement so that
 * a slot's retained WAL and the position it is measured against come from
 * the same instant; and the statements that create, change or drop a
 * publication or a slot, built here and nowhere else. The contract judged
 * on these answers is pgcontract.c's. Never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "lsn.h"
#include "p2o.h"
#include "pgconn.h"
#include "pgserver.h"
#include "sbuf.h"

static void
copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

static int
is_true(PGresult *res, int row, int col)
{
	return !PQgetisnull(res, row, col) &&
	    PQgetvalue(res, row, col)[0] == 't';
}

static const char facts_sql[] =
    "SELECT pg_catalog.current_setting('server_version'), "
    "pg_catalog.current_setting('wal_level'), current_user, "
    "pg_catalog.current_database(), r.rolreplication, r.rolsuper, "
    "pg_catalog.has_database_privilege(pg_catalog.current_database(), "
    "'CREATE'), pg_catalog.pg_is_in_recovery(), "
    "pg_catalog.current_setting('max_replication_slots')::int, "
    "(SELECT count(*) FROM pg_catalog.pg_replication_slots)::int, "
    "pg_catalog.current_setting('max_wal_senders')::int, "
    /* what only a managed service has: its settings, functions, roles */
    "CASE WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_proc "
    "  WHERE proname = 'aurora_version') THEN 'aurora' "
    "WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_settings "
    "  WHERE name = 'rds.logical_replication') THEN 'rds' "
    "WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_settings "
    "  WHERE name = 'cloudsql.logical_decoding') THEN 'cloudsql' "
    "WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_settings "
    "  WHERE name LIKE 'azure.%') THEN 'azure' "
    "WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_roles "
    "  WHERE rolname = 'supabase_admin') THEN 'supabase' ELSE '' END "
    "FROM pg_catalog.pg_roles r WHERE r.rolname = current_user";

int
pgsrv_facts(struct pg_conn *c, struct pgsrv_facts *f, struct p2o_err *e)
{
	PGresult *res;

	memset(f, 0, sizeof(*f));
	f->version = PQserverVersion(c);
	if ((res = pgconn_query(c, "reading the server's settings",
	    facts_sql, 0, NULL, e)) == NULL)
		return -1;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return p2o_fail(e, P2O_EXIT_REFUSED, "the current role is not "
		    "in pg_roles");
	}
	copy(f->version_text, sizeof(f->version_text), PQgetvalue(res, 0, 0));
	copy(f->wal_level, sizeof(f->wal_level), PQgetvalue(res, 0, 1));
	copy(f->role, sizeof(f->role), PQgetvalue(res, 0, 2));
	copy(f->db, sizeof(f->db), PQgetvalue(res, 0, 3));
	f->replication = is_true(res, 0, 4);
	f->superuser = is_true(res, 0, 5);
	f->db_create = is_true(res, 0, 6);
	f->in_recovery = is_true(res, 0, 7);
	f->max_slots = atoi(PQgetvalue(res, 0, 8));
	f->used_slots = atoi(PQgetvalue(res, 0, 9));
	f->max_senders = atoi(PQgetvalue(res, 0, 10));
	copy(f->managed, sizeof(f->managed), PQgetvalue(res, 0, 11));
	PQclear(res);
	return 0;
}

#define WAL_NOW "CASE WHEN pg_catalog.pg_is_in_recovery() THEN " \
    "pg_catalog.pg_last_wal_receive_lsn() ELSE " \
    "pg_catalog.pg_current_wal_lsn() END"

int
pgsrv_wal_now(struct pg_conn *c, uint64_t *lsn, struct p2o_err *e)
{
	PGresult *res;
	int rc = 0;

	if ((res = pgconn_query(c, "reading the WAL position",
	    "SELECT " WAL_NOW "::text", 0, NULL, e)) == NULL)
		return -1;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0) ||
	    lsn_parse(PQgetvalue(res, 0, 0), lsn) == -1)
		rc = p2o_fail(e, P2O_EXIT_TEMPFAIL, "the server did not say "
		    "where its WAL is");
	PQclear(res);
	return rc;
}

/* wal_status and safe_wal_size exist from PostgreSQL 13 */
#define SLOTS_HEAD \
    "SELECT s.slot_name, coalesce(s.plugin, ''), " \
    "coalesce(s.database, ''), s.slot_type, s.active, s.temporary, " \
    "coalesce(s.active_pid, 0), " \
    "pg_catalog.pg_wal_lsn_diff(w.now, s.restart_lsn)::bigint, "
#define SLOTS_TAIL \
    ", coalesce(s.confirmed_flush_lsn::text, ''), " \
    "extract(epoch FROM r.flush_lag), w.now::text " \
    "FROM (SELECT " WAL_NOW " AS now) w " \
    "LEFT JOIN pg_catalog.pg_replication_slots s " \
    "ON ($1::pg_catalog.text IS NULL OR " \
    "s.slot_name::pg_catalog.text = $1::pg_catalog.text) " \
    "LEFT JOIN pg_catalog.pg_stat_replication r ON r.pid = s.active_pid " \
    "ORDER BY s.slot_name"
static const char slots13_sql[] = SLOTS_HEAD
    "s.safe_wal_size, coalesce(s.wal_status, '')" SLOTS_TAIL;
static const char slots10_sql[] = SLOTS_HEAD
    "NULL::bigint, ''" SLOTS_TAIL;

/* the slots named name, or every one (name NULL), with the position now */
static int
read_slots(struct pg_conn *c, const char *name, struct pgsrv_slot **v,
    int *n, uint64_t *now, struct p2o_err *e)
{
	const char *params[1] = { name };
	struct pgsrv_slot *s;
	PGresult *res;
	int i, rows;

	*v = NULL;
	*n = 0;
	if ((res = pgconn_query(c, "reading the replication slots",
	    PQserverVersion(c) >= 130000 ? slots13_sql : slots10_sql, 1,
	    params, e)) == NULL)
		return -1;
	rows = PQntuples(res);
	if (rows < 1 || PQgetisnull(res, 0, 12) ||
	    lsn_parse(PQgetvalue(res, 0, 12), now) == -1) {
		PQclear(res);
		return p2o_fail(e, P2O_EXIT_TEMPFAIL, "the server did not say "
		    "where its WAL is");
	}
	*v = xcalloc((size_t)rows + 1, sizeof(**v));
	for (i = 0; i < rows; i++) {
		/* the left join's one row when there is no slot */
		if (PQgetisnull(res, i, 0))
			continue;
		s = &(*v)[(*n)++];
		s->name = xstrdup(PQgetvalue(res, i, 0));
		s->plugin = xstrdup(PQgetvalue(res, i, 1));
		s->database = xstrdup(PQgetvalue(res, i, 2));
		s->logical = strcmp(PQgetvalue(res, i, 3), "logical") == 0;
		s->active = is_true(res, i, 4);
		s->temporary = is_true(res, i, 5);
		s->active_pid = atoi(PQgetvalue(res, i, 6));
		if ((s->has_retained = !PQgetisnull(res, i, 7)))
			s->retained = strtoll(PQgetvalue(res, i, 7), NULL, 10);
		if ((s->has_safe = !PQgetisnull(res, i, 8)))
			s->safe_wal_size = strtoll(PQgetvalue(res, i, 8),
			    NULL, 10);
		s->wal_status = xstrdup(PQgetvalue(res, i, 9));
		if (PQgetvalue(res, i, 10)[0] != '\0')
			(void)lsn_parse(PQgetvalue(res, i, 10), &s->confirmed);
		if ((s->has_lag_s = !PQgetisnull(res, i, 11)))
			s->lag_s = strtod(PQgetvalue(res, i, 11), NULL);
	}
	PQclear(res);
	return 0;
}

int
pgsrv_slots(struct pg_conn *c, struct pgsrv_slot **v, int *n, uint64_t *now,
    struct p2o_err *e)
{
	return read_slots(c, NULL, v, n, now, e);
}

int
pgsrv_slot_get(struct pg_conn *c, const char *name, struct pgsrv_slot *s,
    int *found, struct p2o_err *e)
{
	struct pgsrv_slot *v;
	uint64_t now;
	int n;

	memset(s, 0, sizeof(*s));
	*found = 0;
	if (read_slots(c, name, &v, &n, &now, e) == -1)
		return -1;
	if (n > 0) {
		*s = v[0];
		*found = 1;
	}
	free(v);
	return 0;
}

void
pgsrv_slot_release(struct pgsrv_slot *s)
{
	free(s->name);
	free(s->plugin);
	free(s->database);
	free(s->wal_status);
	memset(s, 0, sizeof(*s));
}

void
pgsrv_slots_free(struct pgsrv_slot *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		pgsrv_slot_release(&v[i]);
	free(v);
}

const struct pgsrv_slot *
pgsrv_slot_find(const struct pgsrv_slot *v, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

void
pgsrv_drop_slot_sql(struct sbuf *b, const char *name)
{
	sbuf_adds(b, "SELECT pg_drop_replication_slot(");
	pgconn_put_literal(b, name);
	sbuf_adds(b, ");");
}

/* pubviaroot exists from PostgreSQL 13 */
#define PUB_HEAD "SELECT pubinsert, pubupdate, pubdelete, pubtruncate, "
#define PUB_TAIL ", puballtables FROM pg_catalog.pg_publication " \
    "WHERE pubname = $1"
static const char pub13_sql[] = PUB_HEAD "pubviaroot" PUB_TAIL;
static const char pub10_sql[] = PUB_HEAD "false" PUB_TAIL;
static const char members_sql[] =
    "SELECT c.oid, pt.schemaname || '.' || pt.tablename "
    "FROM pg_catalog.pg_publication_tables pt "
    "JOIN pg_catalog.pg_namespace n ON n.nspname = pt.schemaname "
    "JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid "
    "AND c.relname = pt.tablename WHERE pt.pubname = $1";

int
pgsrv_publication(struct pg_conn *c, const char *name, struct pgsrv_pub *p,
    struct p2o_err *e)
{
	const char *params[1] = { name };
	PGresult *res;
	int i;

	memset(p, 0, sizeof(*p));
	if ((res = pgconn_query(c, "reading the publication",
	    PQserverVersion(c) >= 130000 ? pub13_sql : pub10_sql, 1, params,
	    e)) == NULL)
		return -1;
	if (PQntuples(res) == 1) {
		p->exists = 1;
		p->ins = is_true(res, 0, 0);
		p->upd = is_true(res, 0, 1);
		p->del = is_true(res, 0, 2);
		p->trunc = is_true(res, 0, 3);
		p->via_root = is_true(res, 0, 4);
		p->all_tables = is_true(res, 0, 5);
	}
	PQclear(res);
	if (!p->exists)
		return 0;
	if ((res = pgconn_query(c, "reading the publication's tables",
	    members_sql, 1, params, e)) == NULL)
		return -1;
	p->members = xcalloc((size_t)PQntuples(res) + 1, sizeof(*p->members));
	for (i = 0; i < PQntuples(res); i++) {
		p->members[i].oid = (uint32_t)strtoul(PQgetvalue(res, i, 0),
		    NULL, 10);
		p->members[i].qname = xstrdup(PQgetvalue(res, i, 1));
	}
	p->nmembers = PQntuples(res);
	PQclear(res);
	return 0;
}

void
pgsrv_pub_release(struct pgsrv_pub *p)
{
	int i;

	for (i = 0; i < p->nmembers; i++)
		free(p->members[i].qname);
	free(p->members);
	memset(p, 0, sizeof(*p));
}

int
pgsrv_pub_has(const struct pgsrv_pub *p, uint32_t oid)
{
	int i;

	for (i = 0; i < p->nmembers; i++)
		if (p->members[i].oid == oid)
			return 1;
	return 0;
}

int
pgsrv_pub_has_name(const struct pgsrv_pub *p, const char *qname)
{
	int i;

	for (i = 0; i < p->nmembers; i++)
		if (strcmp(p->members[i].qname, qname) == 0)
			return 1;
	return 0;
}

void
pgsrv_append_name(const char *pub, char *buf, size_t len)
{
	snprintf(buf, len, "%s_append", pub);
}

int
pgsrv_where_compiles(struct pg_conn *c, const char *qrel, const char *cond,
    char *why, size_t whylen, struct p2o_err *e)
{
	struct sbuf sql = SBUF_INIT;
	PGresult *res;
	const char *msg;
	int rc;

	sbuf_addf(&sql, "SELECT 1 FROM %s WHERE (%s) LIMIT 0", qrel, cond);
	res = PQexec(c, sql.buf);
	sbuf_release(&sql);
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK) {
		PQclear(res);
		return 0;
	}
	if (res == NULL || PQstatus(c) != CONNECTION_OK) {
		pgconn_failed(c, res, "compiling a filter", e);
		PQclear(res);
		return -1;
	}
	/* the server's primary message: it names the operator or column */
	msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	snprintf(why, whylen, "%s", msg ? msg : "refused");
	PQclear(res);
	rc = 1;
	return rc;
}

int
pgsrv_mark(struct pg_conn *c, struct sbuf *text, struct p2o_err *e)
{
	PGresult *res;

	if ((res = pgconn_query(c, "writing a logical message to wait for",
	    "SELECT pg_catalog.pg_logical_emit_message(false, 'pg2osync', "
	    "'synced')::pg_catalog.text", 0, NULL, e)) == NULL)
		return -1;
	sbuf_adds(text, PQgetvalue(res, 0, 0));
	PQclear(res);
	return 0;
}

/* ---- the statements ---- */

void
pgsrv_qname_sql(struct sbuf *b, const char *qname)
{
	const char *dot = strchr(qname, '.');
	char *schema;

	if (dot == NULL) {
		pgconn_put_ident(b, qname);
		return;
	}
	schema = xstrndup(qname, (size_t)(dot - qname));
	pgconn_put_ident(b, schema);
	free(schema);
	sbuf_addc(b, '.');
	pgconn_put_ident(b, dot + 1);
}

void
pgsrv_create_pub_head(struct sbuf *b, const char *name)
{
	sbuf_adds(b, "CREATE PUBLICATION ");
	pgconn_put_ident(b, name);
}

const char *
pgsrv_pub_options(enum pgsrv_which which)
{
	/* a partitioned table's rows then arrive under its own name; the
	 * append publication publishes no update or delete, so a table
	 * without a replica identity may be in it and still be updated */
	return which == PGSRV_APPEND ? " WITH (publish = 'insert, truncate', "
	    "publish_via_partition_root = true)" :
	    " WITH (publish_via_partition_root = true)";
}

void
pgsrv_add_table_sql(struct sbuf *b, const char *pub, const char *qname)
{
	sbuf_adds(b, "ALTER PUBLICATION ");
	pgconn_put_ident(b, pub);
	sbuf_adds(b, " ADD TABLE ");
	pgsrv_qname_sql(b, qname);
}

void
pgsrv_set_publish_sql(struct sbuf *b, const char *pub, enum pgsrv_which which)
{
	sbuf_adds(b, "ALTER PUBLICATION ");
	pgconn_put_ident(b, pub);
	sbuf_adds(b, which == PGSRV_APPEND ? " SET (publish = 'insert, "
	    "truncate')" : " SET (publish = 'insert, update, delete, "
	    "truncate')");
}

void
pgsrv_drop_table_sql(struct sbuf *b, const char *pub, const char *qname)
{
	sbuf_adds(b, "ALTER PUBLICATION ");
	pgconn_put_ident(b, pub);
	sbuf_adds(b, " DROP TABLE ");
	pgsrv_qname_sql(b, qname);
}

/* ---- the writes ---- */

int
pgsrv_create_slot(struct pg_conn *c, const char *name, uint64_t *lsn,
    struct p2o_err *e)
{
	const char *params[1] = { name };
	PGresult *res;
	int rc = 0;

	res = pgconn_query(c, "creating the replication slot",
	    "SELECT lsn::text FROM pg_catalog.pg_create_logical_replication_slot"
	    "($1, 'pgoutput')", 1, params, e);
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1 || lsn_parse(PQgetvalue(res, 0, 0), lsn) == -1)
		rc = p2o_fail(e, P2O_EXIT_TEMPFAIL, "creating slot '%s' "
		    "returned no consistent point", name);
	PQclear(res);
	return rc;
}

int
pgsrv_drop_slot(struct pg_conn *c, const char *name, struct p2o_err *e)
{
	const char *params[1] = { name };
	PGresult *res;

	res = pgconn_run(c, PGRES_TUPLES_OK, "dropping the replication slot",
	    "SELECT pg_catalog.pg_drop_replication_slot($1)", 1, params, e);
	if (res == NULL)
		return -1;
	PQclear(res);
	return 0;
}

int
pgsrv_drop_pub(struct pg_conn *c, const char *name, struct p2o_err *e)
{
	struct sbuf sql = SBUF_INIT;
	int rc;

	sbuf_adds(&sql, "DROP PUBLICATION ");
	pgconn_put_ident(&sql, name);
	rc = pgconn_exec(c, "dropping the publication", sql.buf, e);
	sbuf_release(&sql);
	return rc;
}

int
pgsrv_apply(struct pg_conn *c, const char *lines, struct sbuf *done,
    struct p2o_err *e)
{
	const char *p, *nl;
	char *stmt;
	int rc = 0;

	for (p = lines; rc == 0 && *p; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p) - 1;
		stmt = xstrndup(p, (size_t)(nl - p + (*nl != '\n')));
		if ((rc = pgconn_exec(c, "applying a reload's change", stmt,
		    e)) == 0)
			sbuf_addf(done, "%s%s", done->len ? "; " : "ran ", stmt);
		else
			p2o_err_prefix(e, "%s", stmt);
		free(stmt);
	}
	return rc;
}
