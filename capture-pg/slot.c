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
    "SELECT c.relkind, c.relreplident, a.attname "
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

int
slot_check_tables(struct pg_source *s, const struct config *cfg,
    struct pgo_decoder *dec)
{
	const struct sync_section *sec;
	const char *params[2], *kind, *ident;
	const char **cols;
	PGresult *res;
	int i, j, n;

	for (i = 0; i < cfg->nsyncs; i++) {
		sec = &cfg->syncs[i];
		params[0] = sec->schema;
		params[1] = sec->table;
		res = run(s, s->sql, PGRES_TUPLES_OK, "reading the catalogue",
		    table_sql, 2, params);
		if (res == NULL)
			return -1;
		if ((n = PQntuples(res)) == 0) {
			PQclear(res);
			return fail(s, P2O_EXIT_REFUSED, "table '%s' does not "
			    "exist (sync section '%s')", sec->rel, sec->name);
		}
		kind = PQgetvalue(res, 0, 0);
		ident = PQgetvalue(res, 0, 1);
		if (strcmp(kind, "r") != 0 && strcmp(kind, "p") != 0) {
			fail(s, P2O_EXIT_REFUSED, "'%s' is not a table "
			    "(relkind '%s'); only tables have rows in the WAL",
			    sec->rel, kind);
			PQclear(res);
			return -1;
		}
		if (strcmp(ident, "n") == 0) {
			PQclear(res);
			return fail(s, P2O_EXIT_REFUSED, "table '%s' has "
			    "REPLICA IDENTITY NOTHING; publishing it would make "
			    "its updates and deletes fail", sec->rel);
		}
		if (PQgetisnull(res, 0, 2)) {
			PQclear(res);
			return fail(s, P2O_EXIT_REFUSED, "table '%s' has no "
			    "primary key", sec->rel);
		}
		cols = xcalloc(n, sizeof(*cols));
		for (j = 0; j < n; j++)
			cols[j] = PQgetvalue(res, j, 2);
		/* with REPLICA IDENTITY FULL pgoutput flags every column:
		 * the decoder needs the real key for the document id */
		pgo_set_key(dec, sec->rel, cols, n);
		free(cols);
		log_debug("table '%s': replica identity '%s', %d key "
		    "column(s)", sec->rel, ident, n);
		PQclear(res);
	}
	return 0;
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

static int
create_publication(struct pg_source *s, const struct config *cfg)
{
	struct sbuf sql = SBUF_INIT;
	PGresult *res;
	char *q;
	int i, rc = -1;

	if ((q = PQescapeIdentifier(s->sql, cfg->publication,
	    strlen(cfg->publication))) == NULL)
		return stmt_failed(s, s->sql, NULL, "quoting the publication");
	sbuf_adds(&sql, "CREATE PUBLICATION ");
	sbuf_adds(&sql, q);
	PQfreemem(q);
	sbuf_adds(&sql, " FOR TABLE ");
	for (i = 0; i < cfg->nsyncs; i++) {
		if (i > 0)
			sbuf_adds(&sql, ", ");
		if (add_qualified(s, &sql, &cfg->syncs[i]) == -1)
			goto out;
	}
	/* a partitioned table's rows then arrive under its own name */
	sbuf_adds(&sql, " WITH (publish_via_partition_root = true)");
	res = run(s, s->sql, PGRES_COMMAND_OK, "creating the publication",
	    sql.buf, 0, NULL);
	if (res == NULL)
		goto out;
	PQclear(res);
	log_info("created publication '%s' for %d table(s)", cfg->publication,
	    cfg->nsyncs);
	rc = 0;
out:
	sbuf_release(&sql);
	return rc;
}

int
slot_ensure_publication(struct pg_source *s, const struct config *cfg)
{
	static const char *const ops[] = { "insert", "update", "delete" };
	const struct sync_section *sec;
	const char *params[3];
	PGresult *res;
	int i, found;

	params[0] = cfg->publication;
	res = run(s, s->sql, PGRES_TUPLES_OK, "reading the publication",
	    "SELECT p.pubinsert, p.pubupdate, p.pubdelete, p.pubtruncate "
	    "FROM pg_catalog.pg_publication p WHERE p.pubname = $1",
	    1, params);
	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0) {
		PQclear(res);
		return create_publication(s, cfg);
	}
	/* one the operator made: check it, never change it */
	for (i = 0; i < 3; i++)
		if (strcmp(PQgetvalue(res, 0, i), "t") != 0) {
			fail(s, P2O_EXIT_REFUSED, "publication '%s' does not "
			    "publish %s; the index would miss those changes",
			    cfg->publication, ops[i]);
			PQclear(res);
			return -1;
		}
	if (strcmp(PQgetvalue(res, 0, 3), "t") != 0)
		log_warnx("publication '%s' does not publish truncate; a "
		    "TRUNCATE will not clear the index", cfg->publication);
	PQclear(res);

	for (i = 0; i < cfg->nsyncs; i++) {
		sec = &cfg->syncs[i];
		params[1] = sec->schema;
		params[2] = sec->table;
		res = run(s, s->sql, PGRES_TUPLES_OK,
		    "reading the publication's tables",
		    "SELECT 1 FROM pg_catalog.pg_publication_tables "
		    "WHERE pubname = $1 AND schemaname = $2 AND tablename = $3",
		    3, params);
		if (res == NULL)
			return -1;
		found = PQntuples(res) > 0;
		PQclear(res);
		if (!found)
			return fail(s, P2O_EXIT_REFUSED, "publication '%s' does "
			    "not include table '%s' (sync section '%s'); add "
			    "it with ALTER PUBLICATION or configure another "
			    "publication", cfg->publication, sec->rel,
			    sec->name);
	}
	log_info("publication '%s' covers the %d configured table(s)",
	    cfg->publication, cfg->nsyncs);
	return 0;
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
	char at[32], slotpos[32];
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
