/*
 * slot.c - everything capture-pg asks the server before streaming starts:
 * the two connections, the checks that refuse a server or a table we
 * cannot stream from, the publication, the replication slot and the
 * START_REPLICATION command. Owns every SQL and replication command the
 * tool sends.
 *
 * It never reads the stream and never exits. The connection string may
 * hold a password: it reaches libpq only as a keyword value (nothing on
 * argv), and messages name host, port and database, never the string.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "capture.h"
#include "config.h"
#include "log.h"
#include "p2o.h"
#include "sbuf.h"
#include "where.h"
#include "xio.h"

/* a whole connection attempt, every host of a multi-host url included */
#define CONNECT_TIMEOUT_MS	30000

/*
 * The walsender runs the types' output functions with its own session
 * settings, and role or database defaults can change them; types.c parses
 * exactly these forms. Settings from the startup packet win over
 * ALTER ROLE/DATABASE ... SET.
 */
static const char repl_options[] = "-c DateStyle=ISO -c TimeZone=UTC "
    "-c extra_float_digits=3 -c IntervalStyle=iso_8601 -c bytea_output=hex";

static int
fail(struct pg_source *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(struct pg_source *s, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	s->exit_code = code;
	return -1;
}

/* a libpq message on one line: LOCATION lines dropped, no trailing LF */
static const char *
pq_message(const char *msg, char *buf, size_t len)
{
	const char *p, *nl;
	size_t n, used = 0;

	buf[0] = '\0';
	for (p = msg; p != NULL && *p != '\0'; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		if (n == 0 || strncmp(p, "LOCATION:", 9) == 0)
			continue;
		if (used > 0 && used + 1 < len)
			buf[used++] = ' ';
		if (n >= len - used)
			n = len - used - 1;
		memcpy(buf + used, p, n);
		used += n;
		buf[used] = '\0';
	}
	for (n = 0; n < used; n++)
		if (buf[n] == '\t')
			buf[n] = ' ';
	while (used > 0 && buf[used - 1] == ' ')
		buf[--used] = '\0';
	return buf;
}

/*
 * The SQLSTATE in a message libpq built with PQERRORS_VERBOSE
 * ("FATAL:  28P01: password ..."): the only place a failed connection
 * attempt exposes it.
 */
static int
sqlstate_in(const char *msg, char state[6])
{
	const char *p;
	int i;

	for (p = msg; (p = strstr(p, ":  ")) != NULL; p++) {
		for (i = 0; i < 5; i++) {
			char c = p[3 + i];

			if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')))
				break;
		}
		if (i == 5 && p[8] == ':') {
			memcpy(state, p + 3, 5);
			state[5] = '\0';
			return 1;
		}
	}
	return 0;
}

/* the exit code for a failed statement, from its SQLSTATE class */
static int
code_for_state(const char *state)
{
	if (state == NULL || strlen(state) != 5)
		return P2O_EXIT_TEMPFAIL;
	if (strncmp(state, "28", 2) == 0)
		return P2O_EXIT_AUTH;
	/* connection, resources, shutdown, system, rollback, slot in use */
	if (strncmp(state, "08", 2) == 0 || strncmp(state, "53", 2) == 0 ||
	    strncmp(state, "57", 2) == 0 || strncmp(state, "58", 2) == 0 ||
	    strncmp(state, "40", 2) == 0 || strcmp(state, "55006") == 0)
		return P2O_EXIT_TEMPFAIL;
	/* created meanwhile (a publication or slot whose CREATE outlived
	 * the capture that sent it): the next start finds and checks it */
	if (strcmp(state, "42710") == 0 || strcmp(state, "23505") == 0)
		return P2O_EXIT_TEMPFAIL;
	return P2O_EXIT_REFUSED;
}

/* s->err and exit_code for a statement that did not return want */
static int
stmt_failed(struct pg_source *s, PGconn *c, PGresult *res, const char *what)
{
	char msg[512];
	const char *state;

	if (PQstatus(c) == CONNECTION_BAD)
		return fail(s, P2O_EXIT_TEMPFAIL, "connection lost %s: %s",
		    what, pq_message(PQerrorMessage(c), msg, sizeof(msg)));
	state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	return fail(s, code_for_state(state), "%s: %s", what,
	    pq_message(res ? PQresultErrorMessage(res) : PQerrorMessage(c),
	    msg, sizeof(msg)));
}

static PGresult *
run(struct pg_source *s, PGconn *c, ExecStatusType want, const char *what,
    const char *sql, int nparams, const char *const *params)
{
	PGresult *res;

	if (nparams > 0)
		res = PQexecParams(c, sql, nparams, NULL, params, NULL, NULL, 0);
	else
		res = PQexec(c, sql);
	if (PQresultStatus(res) == want)
		return res;
	stmt_failed(s, c, res, what);
	PQclear(res);
	return NULL;
}

/* "x" for a replication command, where PQescapeIdentifier cannot be
 * used (the walsender grammar has its own quoting) */
static void
repl_ident(struct sbuf *b, const char *s)
{
	sbuf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			sbuf_addc(b, '"');
		sbuf_addc(b, *s);
	}
	sbuf_addc(b, '"');
}

/* 'x' for a replication command option value */
static void
repl_literal(struct sbuf *b, const char *s)
{
	sbuf_addc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sbuf_addc(b, '\'');
		sbuf_addc(b, *s);
	}
	sbuf_addc(b, '\'');
}

void
slot_init(struct pg_source *s)
{
	memset(s, 0, sizeof(*s));
}

void
slot_release(struct pg_source *s)
{
	if (s->sql != NULL)
		PQfinish(s->sql);
	if (s->repl != NULL)
		PQfinish(s->repl);
	s->sql = s->repl = NULL;
	free(s->append);
	s->append = NULL;
	s->nappend = 0;
}

static PGconn *
pg_connect(struct pg_source *s, const struct config *cfg, int replication)
{
	const char *kw[16], *val[16];
	const char *kind = replication ? "replication" : "catalogue";
	char msg[512], state[6];
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	PQconninfoOption *opts;
	struct pollfd pfd;
	long long deadline, left;
	PGconn *c;
	PGresult *res;
	int n = 0, code, rc;

	/* parse first: libpq's parse errors can quote the password */
	if ((opts = PQconninfoParse(cfg->source_url, NULL)) == NULL) {
		fail(s, P2O_EXIT_CONFIG, "%s: the source url is not a valid "
		    "postgres url or conninfo string", cfg->path);
		return NULL;
	}
	PQconninfoFree(opts);

	/* before dbname, so that the url can override them */
	kw[n] = "fallback_application_name", val[n++] = "capture-pg";
	kw[n] = "keepalives_idle", val[n++] = "30";
	kw[n] = "keepalives_interval", val[n++] = "10";
	kw[n] = "keepalives_count", val[n++] = "3";
	kw[n] = "dbname", val[n++] = cfg->source_url;
	/* after it: the configuration's own keys win */
	if (replication) {
		kw[n] = "replication", val[n++] = "database";
		kw[n] = "options", val[n++] = repl_options;
	}
	if (cfg->sslmode)
		kw[n] = "sslmode", val[n++] = cfg->sslmode;
	if (cfg->sslrootcert)
		kw[n] = "sslrootcert", val[n++] = cfg->sslrootcert;
	if (cfg->sslcert)
		kw[n] = "sslcert", val[n++] = cfg->sslcert;
	if (cfg->sslkey)
		kw[n] = "sslkey", val[n++] = cfg->sslkey;
	kw[n] = NULL, val[n] = NULL;

	if ((c = PQconnectStartParams(kw, val, 1)) == NULL) {
		fail(s, P2O_EXIT_INTERNAL, "out of memory");
		return NULL;
	}
	/* the verbose form carries the SQLSTATE that tells a wrong
	 * password (permanent) from a server that is starting (temporary) */
	PQsetErrorVerbosity(c, PQERRORS_VERBOSE);
	deadline = now_ms() + CONNECT_TIMEOUT_MS;
	while (PQstatus(c) != CONNECTION_BAD && st != PGRES_POLLING_OK &&
	    st != PGRES_POLLING_FAILED) {
		if ((left = deadline - now_ms()) <= 0) {
			fail(s, P2O_EXIT_TEMPFAIL, "%s connection to %s:%s: "
			    "no answer within %d s", kind, PQhost(c),
			    PQport(c), CONNECT_TIMEOUT_MS / 1000);
			PQfinish(c);
			return NULL;
		}
		pfd.fd = PQsocket(c);
		pfd.events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT;
		pfd.revents = 0;
		rc = poll(&pfd, 1, (int)left);
		if (rc < 0 && errno != EINTR) {
			fail(s, P2O_EXIT_INTERNAL, "poll: %s", strerror(errno));
			PQfinish(c);
			return NULL;
		}
		if (rc > 0)
			st = PQconnectPoll(c);
	}

	if (PQstatus(c) != CONNECTION_OK) {
		pq_message(PQerrorMessage(c), msg, sizeof(msg));
		code = P2O_EXIT_TEMPFAIL;
		if (PQconnectionNeedsPassword(c))
			fail(s, P2O_EXIT_AUTH, "authentication failed: the "
			    "server asks for a password and the source url "
			    "has none");
		else if (sqlstate_in(msg, state) &&
		    (code = code_for_state(state)) == P2O_EXIT_AUTH)
			fail(s, code, "authentication failed: %s", msg);
		else if (code == P2O_EXIT_TEMPFAIL)
			fail(s, code, "could not open the %s connection: %s",
			    kind, msg);
		else
			fail(s, code, "the server refused the %s connection: "
			    "%s", kind, msg);
		PQfinish(c);
		return NULL;
	}
	PQsetErrorVerbosity(c, PQERRORS_DEFAULT);

	/* no schema a user can create objects in may shadow pg_catalog */
	res = run(s, c, PGRES_TUPLES_OK, "setting a secure search_path",
	    "SELECT pg_catalog.set_config('search_path', '', false)", 0, NULL);
	if (res == NULL) {
		PQfinish(c);
		return NULL;
	}
	PQclear(res);
	log_info("%s connection to %s:%s database '%s' (server %d)", kind,
	    PQhost(c), PQport(c), PQdb(c), PQserverVersion(c));
	return c;
}

int
slot_connect_sql(struct pg_source *s, const struct config *cfg)
{
	if ((s->sql = pg_connect(s, cfg, 0)) == NULL)
		return -1;
	return 0;
}

int
slot_connect_repl(struct pg_source *s, const struct config *cfg)
{
	if ((s->repl = pg_connect(s, cfg, 1)) == NULL)
		return -1;
	return 0;
}

int
slot_check_server(struct pg_source *s)
{
	PGresult *res;
	const char *v;

	res = run(s, s->sql, PGRES_TUPLES_OK, "reading wal_level",
	    "SHOW wal_level", 0, NULL);
	if (res == NULL)
		return -1;
	v = PQgetvalue(res, 0, 0);
	if (strcmp(v, "logical") != 0) {
		fail(s, P2O_EXIT_REFUSED, "wal_level is '%s'; logical "
		    "replication needs wal_level = logical", v);
		PQclear(res);
		return -1;
	}
	PQclear(res);

	res = run(s, s->sql, PGRES_TUPLES_OK, "reading the role's attributes",
	    "SELECT r.rolreplication OR r.rolsuper, current_user, "
	    "pg_catalog.current_database() FROM pg_catalog.pg_roles r "
	    "WHERE r.rolname = current_user", 0, NULL);
	if (res == NULL)
		return -1;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return fail(s, P2O_EXIT_REFUSED, "the current role is not "
		    "in pg_roles");
	}
	snprintf(s->dbname, sizeof(s->dbname), "%s", PQgetvalue(res, 0, 2));
	if (strcmp(PQgetvalue(res, 0, 0), "t") != 0) {
		fail(s, P2O_EXIT_REFUSED, "role '%s' has neither REPLICATION "
		    "nor SUPERUSER; logical replication needs ALTER ROLE ... "
		    "REPLICATION", PQgetvalue(res, 0, 1));
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return 0;
}

/*
 * One row per key column in key order: the primary key, or the replica
 * identity index when the table uses one (that is what pgoutput sends as
 * the old key). A table without either yields one row with a NULL name.
 */
static const char table_sql[] =
    "SELECT c.relkind, c.relreplident, a.attname, c.oid "
    "FROM pg_catalog.pg_class c "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "LEFT JOIN pg_catalog.pg_index i ON i.indrelid = c.oid AND "
    "  CASE c.relreplident WHEN 'i' THEN i.indisreplident "
    "  ELSE i.indisprimary END "
    "LEFT JOIN LATERAL pg_catalog.unnest(i.indkey::pg_catalog.int2[]) "
    "  WITH ORDINALITY AS k(attnum, ord) ON true "
    "LEFT JOIN pg_catalog.pg_attribute a "
    "  ON a.attrelid = c.oid AND a.attnum = k.attnum "
    "WHERE n.nspname = $1 AND c.relname = $2 "
    "ORDER BY k.ord";

/*
 * The table's columns, and whether a value of each may be stored out of
 * line (then an UPDATE leaving it unchanged does not send it): a variable
 * length type whose storage allows it, unless a varchar(n) or char(n) too
 * short to ever reach the TOAST threshold (about 2 kB, at 4 bytes a
 * character).
 */
static const char columns_sql[] =
    "SELECT a.attname, a.attlen = -1 AND a.attstorage IN ('x', 'e') "
    "AND NOT (a.atttypid IN ('pg_catalog.varchar'::pg_catalog.regtype, "
    "'pg_catalog.bpchar'::pg_catalog.regtype) "
    "AND a.atttypmod BETWEEN 5 AND 504) "
    "FROM pg_catalog.pg_attribute a WHERE a.attrelid = $1 "
    "AND a.attnum > 0 AND NOT a.attisdropped";

/* what the checks of one table know */
struct table_info {
	const struct sync_section *sec;
	char	 ident;		/* relreplident */
	char	**key;		/* the key documents are filed by */
	int	 nkey;
	char	**idkey;	/* the replica identity's columns */
	int	 nidkey;
	PGresult *cols;		/* columns_sql */
};

static void
table_info_release(struct table_info *t)
{
	int i;

	for (i = 0; i < t->nkey; i++)
		free(t->key[i]);
	for (i = 0; i < t->nidkey; i++)
		free(t->idkey[i]);
	free(t->key);
	free(t->idkey);
	if (t->cols)
		PQclear(t->cols);
	memset(t, 0, sizeof(*t));
}

static int
in_names(char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return 1;
	return 0;
}

/* the row of column name in t->cols, or -1 */
static int
column_row(const struct table_info *t, const char *name)
{
	int i;

	for (i = 0; i < PQntuples(t->cols); i++)
		if (strcmp(PQgetvalue(t->cols, i, 0), name) == 0)
			return i;
	return -1;
}

/*
 * A column the shaper reads from a before-image (to delete or move a
 * document) or from every update (a filter column whose value may be
 * left out as unchanged TOAST): it must exist, and with the default
 * identity it must be in the replica identity.
 */
static int
need_column(struct pg_source *s, const struct table_info *t,
    const char *key, const char *col, int toastable_only)
{
	const char *rel = t->sec->rel;
	int row;

	if ((row = column_row(t, col)) == -1)
		return fail(s, P2O_EXIT_REFUSED, "table '%s' (sync section "
		    "'%s'): '%s' names column '%s', which the table does not "
		    "have", rel, t->sec->name, key, col);
	if (t->ident == 'f' || in_names(t->idkey, t->nidkey, col))
		return 0;
	if (toastable_only && strcmp(PQgetvalue(t->cols, row, 1), "t") != 0)
		return 0;
	return fail(s, P2O_EXIT_REFUSED, "table '%s' (sync section '%s'): "
	    "'%s' names column '%s', which is not in its replica identity: "
	    "%s needs the row's before-image (ALTER TABLE %s REPLICA "
	    "IDENTITY FULL)", rel, t->sec->name, key, col, toastable_only ?
	    "an update that leaves its out-of-line value unchanged does not "
	    "send it, so filtering it" : "deleting or moving a document by "
	    "it", rel);
}

static int
need_template(struct pg_source *s, const struct table_info *t,
    const char *key, const struct tmpl *tm)
{
	int i;

	for (i = 0; i < tm->nparts; i++)
		if (tm->parts[i].column && need_column(s, t, key,
		    tm->parts[i].text, 0) == -1)
			return -1;
	return 0;
}

/* every column an identity or the filter reads */
static int
check_columns(struct pg_source *s, const struct table_info *t)
{
	const struct sync_section *sec = t->sec;
	int i;

	if (sec->id && need_template(s, t, "id", &sec->id_t) == -1)
		return -1;
	if (sec->index_templated &&
	    need_template(s, t, "index", &sec->index_t) == -1)
		return -1;
	if (sec->routing && need_column(s, t, "routing", sec->routing,
	    0) == -1)
		return -1;
	if (sec->has_join && sec->join.column &&
	    need_column(s, t, "join.column", sec->join.column, 0) == -1)
		return -1;
	/* an element that went is found in the before-image */
	if (sec->has_fan_out && need_column(s, t, "fan_out.column",
	    sec->fan_out.column, 0) == -1)
		return -1;
	for (i = 0; sec->where_expr && i < where_ncolumns(sec->where_expr);
	    i++)
		if (need_column(s, t, "where", where_column(sec->where_expr, i),
		    1) == -1)
			return -1;
	return 0;
}

/* the key, the identity and the columns of one table */
static int
describe(struct pg_source *s, const struct sync_section *sec,
    struct table_info *t)
{
	const char *params[2], *kind;
	char oid[16];
	PGresult *res;
	int j, n;

	memset(t, 0, sizeof(*t));
	t->sec = sec;
	params[0] = sec->schema;
	params[1] = sec->table;
	res = run(s, s->sql, PGRES_TUPLES_OK, "reading the catalogue",
	    table_sql, 2, params);
	if (res == NULL)
		return -1;
	if ((n = PQntuples(res)) == 0) {
		PQclear(res);
		return fail(s, P2O_EXIT_REFUSED, "table '%s' does not exist "
		    "(sync section '%s')", sec->rel, sec->name);
	}
	kind = PQgetvalue(res, 0, 0);
	t->ident = PQgetvalue(res, 0, 1)[0];
	if (strcmp(kind, "r") != 0 && strcmp(kind, "p") != 0) {
		fail(s, P2O_EXIT_REFUSED, "'%s' is not a table (relkind '%s'); "
		    "only tables have rows in the WAL", sec->rel, kind);
		PQclear(res);
		return -1;
	}
	if (!PQgetisnull(res, 0, 2)) {
		t->idkey = xcalloc(n, sizeof(char *));
		for (j = 0; j < n; j++)
			t->idkey[t->nidkey++] = xstrdup(PQgetvalue(res, j, 2));
	}
	snprintf(oid, sizeof(oid), "%s", PQgetvalue(res, 0, 3));
	PQclear(res);
	params[0] = oid;
	t->cols = run(s, s->sql, PGRES_TUPLES_OK, "reading the table's "
	    "columns", columns_sql, 1, params);
	return t->cols == NULL ? -1 : 0;
}

/*
 * The key rows are filed by: the replica identity's (the primary key or
 * the identity index), or the section's primary_key, whose columns a
 * delete's before-image must carry. A table with neither is refused
 * unless it is append-only.
 */
static int
choose_key(struct pg_source *s, struct table_info *t)
{
	const struct sync_section *sec = t->sec;
	int j;

	if (sec->primary_key == NULL) {
		if (t->nidkey == 0)
			return fail(s, P2O_EXIT_REFUSED, "table '%s' has no "
			    "primary key (sync section '%s'): declare "
			    "'append_only: true' for an insert-only table, or "
			    "name its key with 'primary_key'", sec->rel,
			    sec->name);
		t->key = xcalloc(t->nidkey, sizeof(char *));
		for (j = 0; j < t->nidkey; j++)
			t->key[t->nkey++] = xstrdup(t->idkey[j]);
		return 0;
	}
	t->key = xcalloc(sec->nprimary_key, sizeof(char *));
	for (j = 0; j < sec->nprimary_key; j++) {
		if (column_row(t, sec->primary_key[j]) == -1)
			return fail(s, P2O_EXIT_REFUSED, "table '%s' (sync "
			    "section '%s'): 'primary_key' names column '%s', "
			    "which the table does not have", sec->rel,
			    sec->name, sec->primary_key[j]);
		if (t->ident != 'f' && !in_names(t->idkey, t->nidkey,
		    sec->primary_key[j]))
			return fail(s, P2O_EXIT_REFUSED, "table '%s' (sync "
			    "section '%s'): 'primary_key' names column '%s', "
			    "which is not in its replica identity: a delete "
			    "sends only those columns (ALTER TABLE %s REPLICA "
			    "IDENTITY FULL)", sec->rel, sec->name,
			    sec->primary_key[j], sec->rel);
		t->key[t->nkey++] = xstrdup(sec->primary_key[j]);
	}
	return 0;
}

/* a join child computes its parent's id from one column: the parent's
 * id must name its key, and its key only */
static int
check_join_parent(struct pg_source *s, const struct table_info *t)
{
	const struct sync_section *sec = t->sec;
	const char *col = NULL;
	int i;

	for (i = 0; i < sec->id_t.nparts; i++)
		if (sec->id_t.parts[i].column)
			col = sec->id_t.parts[i].text;
	if (t->nkey != 1 || col == NULL || strcmp(t->key[0], col) != 0)
		return fail(s, P2O_EXIT_REFUSED, "table '%s' (sync section "
		    "'%s') is a join parent: its 'id' must name its key, a "
		    "single column, and nothing else, since a child computes "
		    "its parent's id from one column", sec->rel, sec->name);
	return 0;
}

/* which publication a table goes in: an append-only table without a
 * replica identity in <publication>_append, which publishes no update or
 * delete, so that the source's own UPDATE and DELETE keep working */
static void
place(struct pg_source *s, const struct config *cfg, int i,
    const struct table_info *t)
{
	if (s->append == NULL)
		s->append = xcalloc((size_t)cfg->nsyncs + 1, sizeof(int));
	if (cfg->syncs[i].append_only && t->ident != 'f' && t->nidkey == 0) {
		s->append[i] = 1;
		s->nappend++;
	}
}

int
slot_check_tables(struct pg_source *s, const struct config *cfg,
    struct pgo_decoder *dec)
{
	const struct sync_section *sec;
	struct table_info t;
	int i, rc = -1;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < cfg->nsyncs; i++) {
		sec = &cfg->syncs[i];
		if (describe(s, sec, &t) == -1)
			goto out;
		if (t.ident == 'n' && !sec->append_only) {
			fail(s, P2O_EXIT_REFUSED, "table '%s' has REPLICA "
			    "IDENTITY NOTHING; publishing it would make its "
			    "updates and deletes fail", sec->rel);
			goto out;
		}
		place(s, cfg, i, &t);
		if (sec->append_only) {
			/* filed by its content: no key, no before-image */
			pgo_allow_keyless(dec, sec->rel);
			if (s->append[i])
				log_info("table '%s' has no replica identity: "
				    "synced append-only through publication "
				    "'%s_append', which publishes inserts and "
				    "truncates only; its updates and deletes "
				    "cannot be seen", sec->rel,
				    cfg->publication);
		} else if (choose_key(s, &t) == -1 ||
		    check_columns(s, &t) == -1 ||
		    (sec->has_join && sec->join.parent == NULL &&
		    check_join_parent(s, &t) == -1))
			goto out;
		else
			/* with REPLICA IDENTITY FULL pgoutput flags every
			 * column: the decoder needs the real key */
			pgo_set_key(dec, sec->rel,
			    (const char *const *)t.key, t.nkey);
		log_debug("table '%s': replica identity '%c', %d key "
		    "column(s)", sec->rel, t.ident, t.nkey);
		table_info_release(&t);
	}
	rc = 0;
out:
	table_info_release(&t);
	return rc;
}

/* "schema"."table", quoted for SQL; 0 or -1 with s->err */
static int
add_qualified(struct pg_source *s, struct sbuf *b,
    const struct sync_section *sec)
{
	char *q;

	if ((q = PQescapeIdentifier(s->sql, sec->schema,
	    strlen(sec->schema))) == NULL)
		return stmt_failed(s, s->sql, NULL, "quoting a schema name");
	sbuf_adds(b, q);
	PQfreemem(q);
	sbuf_addc(b, '.');
	if ((q = PQescapeIdentifier(s->sql, sec->table,
	    strlen(sec->table))) == NULL)
		return stmt_failed(s, s->sql, NULL, "quoting a table name");
	sbuf_adds(b, q);
	PQfreemem(q);
	return 0;
}

/* "<publication>_append" (the configuration keeps it within 63 bytes) */
static void
append_name(const struct config *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "%s_append", cfg->publication);
}

/* CREATE PUBLICATION name FOR TABLE the sections whose s->append is
 * append, or without tables when there are none */
static int
create_publication(struct pg_source *s, const struct config *cfg,
    const char *name, int append)
{
	struct sbuf sql = SBUF_INIT;
	PGresult *res;
	char *q;
	int i, n = 0, rc = -1;

	if ((q = PQescapeIdentifier(s->sql, name, strlen(name))) == NULL)
		return stmt_failed(s, s->sql, NULL, "quoting the publication");
	sbuf_adds(&sql, "CREATE PUBLICATION ");
	sbuf_adds(&sql, q);
	PQfreemem(q);
	for (i = 0; i < cfg->nsyncs; i++) {
		if (s->append[i] != append)
			continue;
		sbuf_adds(&sql, n++ == 0 ? " FOR TABLE " : ", ");
		if (add_qualified(s, &sql, &cfg->syncs[i]) == -1)
			goto out;
	}
	/* a partitioned table's rows then arrive under its own name; the
	 * append publication publishes no update or delete, so a table
	 * without a replica identity may be in it and still be updated */
	sbuf_adds(&sql, append ? " WITH (publish = 'insert, truncate', "
	    "publish_via_partition_root = true)" :
	    " WITH (publish_via_partition_root = true)");
	res = run(s, s->sql, PGRES_COMMAND_OK, "creating the publication",
	    sql.buf, 0, NULL);
	if (res == NULL)
		goto out;
	PQclear(res);
	log_info("created publication '%s' for %d table(s)", name, n);
	rc = 0;
out:
	sbuf_release(&sql);
	return rc;
}

/* 1 if the publication holds schema.table */
static int
publishes(struct pg_source *s, const char *pub,
    const struct sync_section *sec)
{
	const char *params[3] = { pub, sec->schema, sec->table };
	PGresult *res;
	int found;

	res = run(s, s->sql, PGRES_TUPLES_OK,
	    "reading the publication's tables",
	    "SELECT 1 FROM pg_catalog.pg_publication_tables "
	    "WHERE pubname = $1 AND schemaname = $2 AND tablename = $3",
	    3, params);
	if (res == NULL)
		return -1;
	found = PQntuples(res) > 0;
	PQclear(res);
	return found;
}

/* the publication's actions (insert, update, delete, truncate), or
 * NULL when it does not exist; -1 on a failed read */
static int
pub_actions(struct pg_source *s, const char *name, int act[4])
{
	const char *params[1] = { name };
	PGresult *res;
	int i;

	res = run(s, s->sql, PGRES_TUPLES_OK, "reading the publication",
	    "SELECT p.pubinsert, p.pubupdate, p.pubdelete, p.pubtruncate "
	    "FROM pg_catalog.pg_publication p WHERE p.pubname = $1",
	    1, params);
	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return 0;
	}
	for (i = 0; i < 4; i++)
		act[i] = strcmp(PQgetvalue(res, 0, i), "t") == 0;
	PQclear(res);
	return 1;
}

/* the append publication: inserts, no update or delete, every keyless
 * append-only table */
static int
ensure_append(struct pg_source *s, const struct config *cfg)
{
	char name[80];
	int act[4], i, r;

	append_name(cfg, name, sizeof(name));
	if ((r = pub_actions(s, name, act)) == -1)
		return -1;
	if (r == 0) {
		/* a slot older than it cannot decode what it holds from
		 * before: drop the slot and load again (stream.c says so) */
		return create_publication(s, cfg, name, 1);
	}
	if (!act[0] || act[1] || act[2])
		return fail(s, P2O_EXIT_REFUSED, "publication '%s' must publish "
		    "inserts and no update or delete: the tables in it have "
		    "no replica identity, and the source's own updates of "
		    "them would fail", name);
	for (i = 0; i < cfg->nsyncs; i++) {
		if (!s->append[i])
			continue;
		if ((r = publishes(s, name, &cfg->syncs[i])) == -1)
			return -1;
		if (!r)
			return fail(s, P2O_EXIT_REFUSED, "publication '%s' does "
			    "not include table '%s' (sync section '%s'); add "
			    "it with ALTER PUBLICATION", name,
			    cfg->syncs[i].rel, cfg->syncs[i].name);
	}
	return 0;
}

int
slot_ensure_publication(struct pg_source *s, const struct config *cfg)
{
	static const char *const ops[] = { "insert", "update", "delete" };
	const struct sync_section *sec;
	int act[4], i, r;

	if ((r = pub_actions(s, cfg->publication, act)) == -1)
		return -1;
	if (r == 0) {
		if (create_publication(s, cfg, cfg->publication, 0) == -1)
			return -1;
		return s->nappend ? ensure_append(s, cfg) : 0;
	}
	/* one the operator made: check it, never change it */
	for (i = 0; i < 3; i++)
		if (!act[i])
			return fail(s, P2O_EXIT_REFUSED, "publication '%s' does "
			    "not publish %s; the index would miss those "
			    "changes", cfg->publication, ops[i]);
	if (!act[3])
		log_warnx("publication '%s' does not publish truncate; a "
		    "TRUNCATE will not clear the index", cfg->publication);

	for (i = 0; i < cfg->nsyncs; i++) {
		sec = &cfg->syncs[i];
		if ((r = publishes(s, cfg->publication, sec)) == -1)
			return -1;
		if (s->append[i] && r)
			return fail(s, P2O_EXIT_REFUSED, "publication '%s' "
			    "includes table '%s', which has no replica "
			    "identity: its own UPDATE and DELETE fail while a "
			    "publication publishes them. Remove it (ALTER "
			    "PUBLICATION %s DROP TABLE %s): as an append_only "
			    "table it is read through '%s_append'",
			    cfg->publication, sec->rel, cfg->publication,
			    sec->rel, cfg->publication);
		if (!s->append[i] && !r)
			return fail(s, P2O_EXIT_REFUSED, "publication '%s' does "
			    "not include table '%s' (sync section '%s'); add "
			    "it with ALTER PUBLICATION or configure another "
			    "publication", cfg->publication, sec->rel,
			    sec->name);
	}
	log_info("publication '%s' covers the %d configured table(s)",
	    cfg->publication, cfg->nsyncs - s->nappend);
	return s->nappend ? ensure_append(s, cfg) : 0;
}

static int
create_slot(struct pg_source *s, const struct config *cfg)
{
	struct sbuf cmd = SBUF_INIT;
	PGresult *res;
	int rc = -1;

	sbuf_adds(&cmd, "CREATE_REPLICATION_SLOT ");
	repl_ident(&cmd, cfg->slot_name);
	sbuf_adds(&cmd, " LOGICAL \"pgoutput\"");
	/* no snapshot: the initial load does not read from one */
	if (PQserverVersion(s->repl) >= 150000)
		sbuf_adds(&cmd, " (SNAPSHOT 'nothing')");
	else
		sbuf_adds(&cmd, " NOEXPORT_SNAPSHOT");
	res = run(s, s->repl, PGRES_TUPLES_OK, "creating the replication slot",
	    cmd.buf, 0, NULL);
	if (res == NULL)
		goto out;
	if (PQntuples(res) != 1 || PQnfields(res) < 2 ||
	    lsn_parse(PQgetvalue(res, 0, 1), &s->confirmed) == -1) {
		fail(s, P2O_EXIT_TEMPFAIL, "CREATE_REPLICATION_SLOT returned "
		    "no consistent point");
		PQclear(res);
		goto out;
	}
	log_info("created replication slot '%s' at %s", cfg->slot_name,
	    PQgetvalue(res, 0, 1));
	PQclear(res);
	rc = 0;
out:
	sbuf_release(&cmd);
	return rc;
}

int
slot_ensure_slot(struct pg_source *s, const struct config *cfg)
{
	const char *params[1] = { cfg->slot_name };
	const char *type, *plugin, *db, *status;
	PGresult *res;
	long long retained;

	res = run(s, s->sql, PGRES_TUPLES_OK, "reading the replication slot",
	    "SELECT slot_type, plugin, database, confirmed_flush_lsn, "
	    "wal_status, pg_catalog.pg_wal_lsn_diff("
	    "pg_catalog.pg_current_wal_lsn(), restart_lsn)::bigint "
	    "FROM pg_catalog.pg_replication_slots WHERE slot_name = $1",
	    1, params);
	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return create_slot(s, cfg);
	}
	type = PQgetvalue(res, 0, 0);
	plugin = PQgetvalue(res, 0, 1);
	db = PQgetvalue(res, 0, 2);
	status = PQgetvalue(res, 0, 4);
	if (strcmp(type, "logical") != 0)
		fail(s, P2O_EXIT_REFUSED, "replication slot '%s' is a %s "
		    "slot, not a logical one", cfg->slot_name, type);
	else if (strcmp(plugin, "pgoutput") != 0)
		fail(s, P2O_EXIT_REFUSED, "replication slot '%s' uses plugin "
		    "'%s', not 'pgoutput'", cfg->slot_name, plugin);
	else if (strcmp(db, s->dbname) != 0)
		fail(s, P2O_EXIT_REFUSED, "replication slot '%s' belongs to "
		    "database '%s', not '%s'", cfg->slot_name, db, s->dbname);
	else if (strcmp(status, "lost") == 0)
		fail(s, P2O_EXIT_REFUSED, "replication slot '%s' has lost "
		    "WAL it needs (wal_status 'lost'); drop it and load the "
		    "tables again", cfg->slot_name);
	else if (lsn_parse(PQgetvalue(res, 0, 3), &s->confirmed) == -1)
		fail(s, P2O_EXIT_REFUSED, "replication slot '%s' has no "
		    "confirmed position", cfg->slot_name);
	else {
		retained = PQgetisnull(res, 0, 5) ? 0 :
		    strtoll(PQgetvalue(res, 0, 5), NULL, 10);
		log_info("replication slot '%s' at %s retains %lld MiB of WAL "
		    "(wal_status '%s')", cfg->slot_name, PQgetvalue(res, 0, 3),
		    retained / (1024 * 1024), status);
		PQclear(res);
		return 0;
	}
	PQclear(res);
	return -1;
}

int
slot_start(struct pg_source *s, const struct config *cfg, uint64_t start_lsn)
{
	struct sbuf cmd = SBUF_INIT, pubs = SBUF_INIT;
	char at[32], slotpos[32], name[80];
	PGresult *res;
	char *q;
	int rc = -1;

	lsn_format(s->confirmed, slotpos);
	if (start_lsn != 0 && s->confirmed > start_lsn) {
		lsn_format(start_lsn, at);
		return fail(s, P2O_EXIT_CHECKPOINT, "checkpoint %s is behind "
		    "slot '%s' (confirmed %s): refusing to skip changes; the "
		    "changes in between are no longer in the slot, so the "
		    "index must be loaded again (or the slot recreated)", at,
		    cfg->slot_name, slotpos);
	}
	/* 0/0 asks the server for the slot's own position */
	s->start = start_lsn != 0 ? start_lsn : s->confirmed;
	lsn_format(start_lsn, at);

	/* publication_names is an identifier list inside a string */
	if ((q = PQescapeIdentifier(s->repl, cfg->publication,
	    strlen(cfg->publication))) == NULL)
		return stmt_failed(s, s->repl, NULL, "quoting the publication");
	sbuf_adds(&pubs, q);
	PQfreemem(q);
	if (s->nappend) {
		append_name(cfg, name, sizeof(name));
		if ((q = PQescapeIdentifier(s->repl, name,
		    strlen(name))) == NULL)
			return stmt_failed(s, s->repl, NULL, "quoting the "
			    "publication");
		sbuf_addc(&pubs, ',');
		sbuf_adds(&pubs, q);
		PQfreemem(q);
	}

	sbuf_adds(&cmd, "START_REPLICATION SLOT ");
	repl_ident(&cmd, cfg->slot_name);
	sbuf_addf(&cmd, " LOGICAL %s (\"proto_version\" '1', "
	    "\"publication_names\" ", at);
	repl_literal(&cmd, pubs.buf);
	if (PQserverVersion(s->repl) >= 140000)
		sbuf_adds(&cmd, ", \"messages\" 'true'");
	sbuf_addc(&cmd, ')');

	res = run(s, s->repl, PGRES_COPY_BOTH, "starting replication",
	    cmd.buf, 0, NULL);
	if (res == NULL)
		goto out;
	PQclear(res);
	lsn_format(s->start, at);
	log_info("streaming slot '%s' publication '%s' from %s (slot "
	    "confirmed %s)", cfg->slot_name, cfg->publication, at, slotpos);
	/* the catalogue connection has nothing left to do */
	if (s->sql != NULL)
		PQfinish(s->sql);
	s->sql = NULL;
	rc = 0;
out:
	sbuf_release(&cmd);
	sbuf_release(&pubs);
	return rc;
}
