/*
 * conn.c - the loader's connections to the source: opening one (through
 * capture-pg's connection code, so the url, TLS options, timeouts and the
 * meaning of a failed attempt are the capture's), the session every value
 * is read in, and what a failed statement means as an exit code.
 *
 * It never reads a table and never exits. Messages name what failed and
 * the server's words, never the connection string.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "../capture-pg/capture.h"
#include "config.h"
#include "p2o.h"
#include "loader.h"

/*
 * The settings capture-pg's walsender runs with: a value's text here must
 * be the text pgoutput sends, since both go through pgtype_to_json and a
 * copy row must equal the streamed row. The client encoding is left as
 * the walsender's is (the role's or database's default), for the same
 * reason. Then what a range read needs: READ COMMITTED, so each COPY takes its
 * snapshot when it starts (visible.c relies on that); no statement
 * timeout, because a range read waits on the pipeline behind it; and a
 * local commit, because the only thing the loader commits is the
 * transaction id visible.c takes, which no standby needs to see.
 */
static const char session_sql[] =
    "SET DateStyle = ISO; SET TimeZone = UTC; SET extra_float_digits = 3; "
    "SET IntervalStyle = iso_8601; SET bytea_output = hex; "
    "SET default_transaction_isolation = 'read committed'; "
    "SET statement_timeout = 0; SET synchronous_commit = local";

int
ld_fail(struct ld_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->code = code;
	return -1;
}

/* a server message on one line, without its trailing newline */
static void
one_line(char *buf, size_t len, const char *msg)
{
	size_t n, i;

	snprintf(buf, len, "%s", msg ? msg : "");
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	for (i = 0; i < n; i++)
		if (buf[i] == '\n' || buf[i] == '\t')
			buf[i] = ' ';
}

/* the exit code for a SQLSTATE: what a restart can fix is temporary */
static int
state_code(const char *state)
{
	static const char *const temporary[] = {
		"08",	/* connection */
		"40",	/* rollback: serialization, deadlock */
		"53",	/* resources */
		"57",	/* operator intervention: canceled, shutting down */
		"58",	/* system */
		"55P03", "55006",	/* lock not available, object in use */
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
conn_failed(struct ld_conn *c, void *resp, const char *what,
    struct ld_err *e)
{
	PGresult *res = resp;
	const char *state;
	char msg[600];

	if (PQstatus(c->pg) == CONNECTION_BAD) {
		one_line(msg, sizeof(msg), PQerrorMessage(c->pg));
		return ld_fail(e, P2O_EXIT_TEMPFAIL, "connection lost %s: %s",
		    what, msg);
	}
	state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	one_line(msg, sizeof(msg), res ? PQresultErrorMessage(res) :
	    PQerrorMessage(c->pg));
	return ld_fail(e, state_code(state), "%s: %s", what, msg);
}

void *
conn_query(struct ld_conn *c, const char *what, const char *sql,
    int nparams, const char *const *params, struct ld_err *e)
{
	PGresult *res;

	res = PQexecParams(c->pg, sql, nparams, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) == PGRES_TUPLES_OK)
		return res;
	conn_failed(c, res, what, e);
	PQclear(res);
	return NULL;
}

int
conn_open(struct ld_conn *c, const struct config *cfg, struct ld_err *e)
{
	struct pg_source src;
	PGresult *res;
	const char *app;

	memset(c, 0, sizeof(*c));
	slot_init(&src);
	if (slot_connect_sql(&src, cfg) == -1) {
		ld_fail(e, src.exit_code, "%s", src.err);
		slot_release(&src);
		return -1;
	}
	c->pg = src.sql;
	src.sql = NULL;
	slot_release(&src);

	c->version = PQserverVersion(c->pg);
	if (c->version < 120000) {
		ld_fail(e, P2O_EXIT_REFUSED, "the server is PostgreSQL %d; "
		    "the loader needs 12 or later", c->version / 10000);
		goto fail;
	}
	res = PQexec(c->pg, session_sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		conn_failed(c, res, "setting up the session", e);
		PQclear(res);
		goto fail;
	}
	PQclear(res);
	/* the connection code names itself the capture unless the url
	 * names the application; a DBA looking at pg_stat_activity should
	 * see which is which */
	app = PQparameterStatus(c->pg, "application_name");
	if (app != NULL && strcmp(app, "capture-pg") == 0) {
		res = PQexec(c->pg, "SET application_name = 'loader'");
		PQclear(res);
	}
	return 0;
fail:
	conn_close(c);
	return -1;
}

void
conn_close(struct ld_conn *c)
{
	if (c->pg != NULL)
		PQfinish(c->pg);
	c->pg = NULL;
}

char *
conn_quote(void *arg, const char *s)
{
	struct ld_conn *c = arg;
	char *q, *copy;

	if ((q = PQescapeLiteral(c->pg, s, strlen(s))) == NULL)
		return NULL;
	copy = xstrdup(q);
	PQfreemem(q);
	return copy;
}
