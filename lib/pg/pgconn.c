/*
 * pgconn.c - opening a connection to a PostgreSQL source and reading
 * what its failures mean. Owns the keywords every connection is opened
 * with, the deadline of an attempt, the SQLSTATE classes that make a
 * failure temporary, and the one-line form of a server message.
 *
 * It runs no query of its own but the search path and never exits. The
 * connection string may hold a password: it is parsed before anything
 * else (libpq's parse errors may quote it) and messages name host, port
 * and database, never the string.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "config.h"
#include "log.h"
#include "p2o.h"
#include "pgconn.h"
#include "pgtypes.h"
#include "sbuf.h"
#include "xio.h"

/* a libpq message on one line: LOCATION lines dropped, no trailing LF */
static const char *
one_line(const char *msg, char *buf, size_t len)
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

int
pgconn_state_code(const char *state)
{
	static const char *const temporary[] = {
		"08",	/* connection */
		"40",	/* rollback: serialization, deadlock */
		"53",	/* resources */
		"57",	/* operator intervention: canceled, shutting down */
		"58",	/* system */
		"55P03", "55006",	/* lock not available, object in use
					 * (a slot another walsender holds) */
		/* created meanwhile: a publication or slot whose CREATE
		 * outlived the capture that sent it; the next start finds
		 * and checks it */
		"42710", "23505",
	};
	size_t i;

	if (state == NULL || strlen(state) != 5)
		return P2O_EXIT_TEMPFAIL;
	if (strncmp(state, "28", 2) == 0)
		return P2O_EXIT_AUTH;
	for (i = 0; i < sizeof(temporary) / sizeof(temporary[0]); i++)
		if (strncmp(state, temporary[i], strlen(temporary[i])) == 0)
			return P2O_EXIT_TEMPFAIL;
	return P2O_EXIT_REFUSED;
}

int
pgconn_failed(struct pg_conn *c, struct pg_result *res, const char *what,
    struct p2o_err *e)
{
	char msg[600];
	const char *state;

	if (PQstatus(c) == CONNECTION_BAD)
		return p2o_fail(e, P2O_EXIT_TEMPFAIL, "connection lost %s: %s",
		    what, one_line(PQerrorMessage(c), msg, sizeof(msg)));
	state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	return p2o_fail(e, pgconn_state_code(state), "%s: %s", what,
	    one_line(res ? PQresultErrorMessage(res) : PQerrorMessage(c), msg,
	    sizeof(msg)));
}

struct pg_result *
pgconn_run(struct pg_conn *c, int want, const char *what, const char *sql,
    int nparams, const char *const *params, struct p2o_err *e)
{
	PGresult *res;

	if (nparams > 0)
		res = PQexecParams(c, sql, nparams, NULL, params, NULL, NULL,
		    0);
	else
		res = PQexec(c, sql);
	if (PQresultStatus(res) == (ExecStatusType)want)
		return res;
	pgconn_failed(c, res, what, e);
	PQclear(res);
	return NULL;
}

struct pg_result *
pgconn_query(struct pg_conn *c, const char *what, const char *sql,
    int nparams, const char *const *params, struct p2o_err *e)
{
	return pgconn_run(c, PGRES_TUPLES_OK, what, sql, nparams, params, e);
}

int
pgconn_exec(struct pg_conn *c, const char *what, const char *sql,
    struct p2o_err *e)
{
	PGresult *res = pgconn_run(c, PGRES_COMMAND_OK, what, sql, 0, NULL, e);

	if (res == NULL)
		return -1;
	PQclear(res);
	return 0;
}

/* libpq's quoting of s, as a heap copy */
static char *
quoted(struct pg_conn *c, const char *s, int ident, struct p2o_err *e)
{
	char *q, *copy;

	q = ident ? PQescapeIdentifier(c, s, strlen(s)) :
	    PQescapeLiteral(c, s, strlen(s));
	if (q == NULL) {
		pgconn_failed(c, NULL, ident ? "quoting a name" :
		    "quoting a value", e);
		return NULL;
	}
	copy = xstrdup(q);
	PQfreemem(q);
	return copy;
}

char *
pgconn_ident(struct pg_conn *c, const char *name, struct p2o_err *e)
{
	return quoted(c, name, 1, e);
}

char *
pgconn_literal(struct pg_conn *c, const char *s, struct p2o_err *e)
{
	return quoted(c, s, 0, e);
}

/* poll until the attempt ends or the deadline passes; 0 or -1 with err */
static int
finish_connect(PGconn *c, const char *kind, struct p2o_err *e)
{
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	struct pollfd pfd;
	long long deadline = now_ms() + PGCONN_TIMEOUT_MS, left;
	int rc;

	while (PQstatus(c) != CONNECTION_BAD && st != PGRES_POLLING_OK &&
	    st != PGRES_POLLING_FAILED) {
		if ((left = deadline - now_ms()) <= 0)
			return p2o_fail(e, P2O_EXIT_TEMPFAIL, "%s connection "
			    "to %s:%s: no answer within %d s", kind, PQhost(c),
			    PQport(c), PGCONN_TIMEOUT_MS / 1000);
		pfd.fd = PQsocket(c);
		pfd.events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT;
		pfd.revents = 0;
		rc = poll(&pfd, 1, (int)left);
		if (rc < 0 && errno != EINTR)
			return p2o_fail(e, P2O_EXIT_INTERNAL, "poll: %s",
			    strerror(errno));
		if (rc > 0)
			st = PQconnectPoll(c);
	}
	return 0;
}

/*
 * Whether a failed attempt's message says the server certificate did not
 * verify: its chain against the root certificate, the host name under
 * verify-full, or no root certificate to verify it with. libpq says so
 * only in text (the server never got to speak, so there is no SQLSTATE):
 * its own sentences, in English since no program here sets a locale, and
 * for a chain OpenSSL's reason, read from OpenSSL itself. A handshake the
 * network cut ("SSL SYSCALL error: EOF detected") is none of these.
 */
static int
unverified(const char *msg)
{
	static const char *const libpq[] = {
		"does not match host name",
		"could not get server's host name from server certificate",
		"SSL certificate's name entry is missing",
		"SSL certificate's name contains embedded null",
		"SSL certificate's address entry is missing",
		"root certificate file",
	};
	const char *chain = ERR_reason_error_string(ERR_PACK(ERR_LIB_SSL, 0,
	    SSL_R_CERTIFICATE_VERIFY_FAILED));
	size_t i;

	if (strstr(msg, chain ? chain : "certificate verify failed") != NULL)
		return 1;
	for (i = 0; i < sizeof(libpq) / sizeof(libpq[0]); i++)
		if (strstr(msg, libpq[i]) != NULL)
			return 1;
	return 0;
}

/* the sslmode the attempt ran with: the configuration's, or the url's */
static void
attempt_sslmode(PGconn *c, char *buf, size_t len)
{
	PQconninfoOption *o, *all = PQconninfo(c);

	snprintf(buf, len, "prefer");
	for (o = all; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, "sslmode") == 0 && o->val != NULL)
			snprintf(buf, len, "%s", o->val);
	PQconninfoFree(all);
}

/* err for an attempt that did not end in CONNECTION_OK; side names the
 * configuration's section ("source", "target") */
static void
refused(PGconn *c, const char *kind, const char *side, struct p2o_err *e)
{
	char msg[512], state[6], mode[32];
	const char *why;
	int code = P2O_EXIT_TEMPFAIL;

	one_line(PQerrorMessage(c), msg, sizeof(msg));
	if (unverified(msg)) {
		/*
		 * The same certificate fails the same check at every
		 * attempt: configuration, refused for good rather than
		 * retried (capture-mysql says the same, in the same words)
		 */
		if ((why = strstr(msg, " failed: ")) != NULL)
			why += 9;
		else
			why = msg;
		if (strncmp(why, "SSL error: ", 11) == 0)
			why += 11;
		attempt_sslmode(c, mode, sizeof(mode));
		p2o_fail(e, P2O_EXIT_REFUSED, "sslmode '%s': the server "
		    "certificate of %s:%s does not verify: %s (%s must hold "
		    "the CA that signed it, and under verify-full the url's "
		    "host must be a name it carries)", mode, PQhost(c),
		    PQport(c), why, strcmp(side, "source") == 0 ?
		    "source.sslrootcert" : "the url's sslrootcert");
		return;
	}
	if (PQconnectionNeedsPassword(c))
		p2o_fail(e, P2O_EXIT_AUTH, "authentication failed: the server "
		    "asks for a password and the %s url has none", side);
	else if (sqlstate_in(msg, state) &&
	    (code = pgconn_state_code(state)) == P2O_EXIT_AUTH)
		p2o_fail(e, code, "authentication failed: %s", msg);
	else if (code == P2O_EXIT_TEMPFAIL)
		p2o_fail(e, code, "could not open the %s connection: %s", kind,
		    msg);
	else
		p2o_fail(e, code, "the server refused the %s connection: %s",
		    kind, msg);
}

/* the TLS files and mode a source configuration adds to its url */
struct tls_keys {
	const char *sslmode, *sslrootcert, *sslcert, *sslkey;
};

/*
 * The one way a connection is opened. secure_path: a search path no user
 * schema can shadow pg_catalog in (a source, whose catalog we read); a
 * target keeps the server's, since its tables are named as the
 * operator's DDL names them.
 */
static struct pg_conn *
open_conn(const char *url, const char *side, const char *path,
    const struct tls_keys *tls, enum pgconn_kind kind, const char *app,
    int secure_path, struct p2o_err *e)
{
	const char *kw[16], *val[16];
	const char *what = kind == PGCONN_REPLICATION ? "replication" :
	    kind == PGCONN_ADMIN ? "admin" : "sql";
	PQconninfoOption *opts;
	PGconn *c;
	PGresult *res;
	int n = 0;

	/* parse first: libpq's parse errors can quote the password */
	if ((opts = PQconninfoParse(url, NULL)) == NULL) {
		p2o_fail(e, P2O_EXIT_CONFIG, "%s: the %s url is not a "
		    "valid postgres url or conninfo string", path, side);
		return NULL;
	}
	PQconninfoFree(opts);

	/* before dbname, so that the url can override them */
	kw[n] = "fallback_application_name", val[n++] = app;
	kw[n] = "keepalives_idle", val[n++] = "30";
	kw[n] = "keepalives_interval", val[n++] = "10";
	kw[n] = "keepalives_count", val[n++] = "3";
	kw[n] = "dbname", val[n++] = url;
	/*
	 * After it: the configuration's own keys win. Values are read in
	 * the session the type mapping expects on every connection, and
	 * settings from the startup packet win over role or database
	 * defaults (ALTER ROLE ... SET), which SET after connecting would
	 * have to fight.
	 */
	kw[n] = "options", val[n++] = PGTYPES_SESSION_OPTIONS;
	if (kind == PGCONN_REPLICATION)
		kw[n] = "replication", val[n++] = "database";
	if (tls->sslmode)
		kw[n] = "sslmode", val[n++] = tls->sslmode;
	if (tls->sslrootcert)
		kw[n] = "sslrootcert", val[n++] = tls->sslrootcert;
	if (tls->sslcert)
		kw[n] = "sslcert", val[n++] = tls->sslcert;
	if (tls->sslkey)
		kw[n] = "sslkey", val[n++] = tls->sslkey;
	kw[n] = NULL, val[n] = NULL;

	if ((c = PQconnectStartParams(kw, val, 1)) == NULL) {
		p2o_fail(e, P2O_EXIT_INTERNAL, "out of memory");
		return NULL;
	}
	/* the verbose form carries the SQLSTATE that tells a wrong
	 * password (permanent) from a server that is starting (temporary) */
	PQsetErrorVerbosity(c, PQERRORS_VERBOSE);
	if (finish_connect(c, what, e) == -1)
		goto bad;
	if (PQstatus(c) != CONNECTION_OK) {
		refused(c, what, side, e);
		goto bad;
	}
	PQsetErrorVerbosity(c, PQERRORS_DEFAULT);

	if (secure_path) {
		/* no schema a user can create objects in may shadow
		 * pg_catalog */
		res = pgconn_query(c, "setting a secure search_path",
		    "SELECT pg_catalog.set_config('search_path', '', false)",
		    0, NULL, e);
		if (res == NULL)
			goto bad;
		PQclear(res);
	}
	log_info("%s connection to %s:%s database '%s' (server %d)%s%s", what,
	    PQhost(c), PQport(c), PQdb(c), PQserverVersion(c),
	    secure_path ? "" : " for the ", secure_path ? "" : side);
	return c;
bad:
	PQfinish(c);
	return NULL;
}

struct pg_conn *
pgconn_open(const struct config *cfg, enum pgconn_kind kind, const char *app,
    struct p2o_err *e)
{
	struct tls_keys tls = { cfg->sslmode, cfg->sslrootcert, cfg->sslcert,
	    cfg->sslkey };

	/* the admin url, where one is given, for what may go through a
	 * pooler; the stream and the load keep the direct one */
	if (kind == PGCONN_ADMIN && cfg->source_admin_url != NULL)
		return open_conn(cfg->source_admin_url, "source admin",
		    cfg->path, &tls, kind, app, 1, e);
	if (kind == PGCONN_ADMIN)
		kind = PGCONN_SQL;	/* no second url: the one connection */
	return open_conn(cfg->source_url, "source", cfg->path, &tls, kind, app,
	    1, e);
}

struct pg_conn *
pgconn_open_target(const char *url, const char *app, struct p2o_err *e)
{
	static const struct tls_keys none;

	return open_conn(url, "target", "target", &none, PGCONN_SQL, app, 0,
	    e);
}

void
pgconn_close(struct pg_conn *c)
{
	if (c != NULL)
		PQfinish(c);
}

static void
put_quoted(struct sbuf *b, const char *s, char q)
{
	sbuf_addc(b, q);
	for (; *s; s++) {
		if (*s == q)
			sbuf_addc(b, q);
		sbuf_addc(b, *s);
	}
	sbuf_addc(b, q);
}

void
pgconn_put_ident(struct sbuf *b, const char *name)
{
	put_quoted(b, name, '"');
}

void
pgconn_put_qname(struct sbuf *b, const char *schema, const char *table)
{
	pgconn_put_ident(b, schema);
	sbuf_addc(b, '.');
	pgconn_put_ident(b, table);
}

void
pgconn_put_literal(struct sbuf *b, const char *s)
{
	put_quoted(b, s, '\'');
}
