/*
 * pgconn.h - a connection to a PostgreSQL source, for every program that
 * talks to one (capture-pg, the loader), or to a PostgreSQL target (its
 * module, lib/target/postgres*.c): the url or conninfo string, TLS,
 * keepalives, the time a connection attempt may take, the session every
 * value is read in, and what a failed statement or attempt means as a
 * framing.md §8 exit code. The connection string may hold a password: it
 * reaches libpq as a keyword value only (never an argv), and no message
 * quotes it.
 */
#ifndef PGCONN_H
#define PGCONN_H

#include <stddef.h>

#include "err.h"

struct config;
struct pg_conn;			/* libpq's PGconn */
struct pg_result;		/* libpq's PGresult */

/* a whole connection attempt, every host of a multi-host url included */
#define PGCONN_TIMEOUT_MS	30000

enum pgconn_kind {
	PGCONN_SQL,		/* a plain connection on the source url: the
				 * load's reads */
	PGCONN_REPLICATION,	/* a walsender: replication=database */
	PGCONN_ADMIN,		/* a plain connection for the catalogue,
				 * setup, the re-reads of nested parents,
				 * validate and the verbs: on source.admin_url
				 * when set (it may go through a pooler), else
				 * the source url */
};

/* pgconn.c */

/*
 * One connection, named app in pg_stat_activity unless the url names
 * one, in the session pgtypes.h's mapping reads values in, with a search
 * path no user schema can shadow pg_catalog in. NULL with err: 78 a url
 * libpq cannot parse, 77 authentication, 75 unreachable or refused for
 * now, 69 refused for good.
 */
struct pg_conn *pgconn_open(const struct config *, enum pgconn_kind,
	    const char *app, struct p2o_err *);
/*
 * A connection to a PostgreSQL target (lib/target/postgres*.c): the url
 * alone says where and how (its own sslmode and files), in the same
 * session, with the server's search path (the target's tables are named
 * as the operator's DDL names them). NULL with err, as pgconn_open.
 */
struct pg_conn *pgconn_open_target(const char *url, const char *app,
	    struct p2o_err *);
void	pgconn_close(struct pg_conn *);
/* the exit code for a SQLSTATE: what a restart can fix is temporary */
int	pgconn_state_code(const char *sqlstate);
/* err for a statement that failed, or a lost connection (res may be
 * NULL); returns -1 */
int	pgconn_failed(struct pg_conn *, struct pg_result *res,
	    const char *what, struct p2o_err *);
/*
 * A statement whose result must have status want (an ExecStatusType;
 * PQexec without params, as a walsender requires, PQexecParams with):
 * the result, or NULL with err. pgconn_query wants tuples.
 */
struct pg_result *pgconn_run(struct pg_conn *, int want, const char *what,
	    const char *sql, int nparams, const char *const *params,
	    struct p2o_err *);
struct pg_result *pgconn_query(struct pg_conn *, const char *what,
	    const char *sql, int nparams, const char *const *params,
	    struct p2o_err *);
/* a command without rows; 0 or -1 with err */
int	pgconn_exec(struct pg_conn *, const char *what, const char *sql,
	    struct p2o_err *);
/* name quoted as an SQL identifier / s as a string literal, heap copies;
 * NULL with err */
char	*pgconn_ident(struct pg_conn *, const char *name, struct p2o_err *);
char	*pgconn_literal(struct pg_conn *, const char *s, struct p2o_err *);
/* the same, appended to b without a connection: for text no server
 * quotes (a replication command's own grammar, a script printed for a
 * DBA). The literal doubles quotes only: standard_conforming_strings,
 * on since PostgreSQL 9.1, keeps backslashes plain */
struct sbuf;
void	pgconn_put_ident(struct sbuf *b, const char *name);
/* schema.table, each quoted as an identifier */
void	pgconn_put_qname(struct sbuf *b, const char *schema,
	    const char *table);
void	pgconn_put_literal(struct sbuf *b, const char *s);

#endif
