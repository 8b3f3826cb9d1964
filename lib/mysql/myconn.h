/*
 * myconn.h - a connection to a MySQL or MariaDB source, for every program
 * that talks to one (capture-mysql, the loader): the url, TLS as sslmode
 * promises it, connecting, what a failed attempt or statement means as a
 * framing.md §8 exit code, the session values are read in, and the
 * server's binlog position now. The password reaches libmariadb as an
 * argument only (never an argv), and no message quotes the url.
 */
#ifndef MYCONN_H
#define MYCONN_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "sbuf.h"

struct config;
struct st_mysql;		/* libmariadb's MYSQL */
struct st_mysql_res;		/* MYSQL_RES */

/* myconn.c */

/* the source url, "mysql://user:pass@host:port/db" (or mariadb:), with
 * percent escapes: 0, or -1 with err, which never quotes the url */
struct my_url {
	char	*user, *password, *host, *db;
	unsigned port;
};
int	my_url_parse(const char *url, struct my_url *, char *err,
	    size_t errlen);
void	my_url_release(struct my_url *);

/*
 * One connection (kind names it in messages: "catalogue", "dump"), in
 * utf8mb4, with TLS as cfg's sslmode promises (checked on the open
 * connection). NULL with err: 78 a bad url or sslmode, 77 authentication,
 * 69 refused for good (an unknown database, TLS that does not verify),
 * 75 unreachable for now.
 */
struct st_mysql *myconn_open(const struct config *, const char *kind,
	    struct p2o_err *);
void	myconn_close(struct st_mysql *);
/* 1 when the server is MariaDB */
int	myconn_mariadb(struct st_mysql *);
/* err for a statement that failed: a missing privilege is refused (69),
 * anything else a connection or server that may come back (75);
 * returns -1 */
int	myconn_failed(struct st_mysql *, const char *what, struct p2o_err *);
/* a statement without rows / with rows (stored): 0, the result, or
 * -1 / NULL with err */
int	myconn_exec(struct st_mysql *, const char *sql, const char *what,
	    struct p2o_err *);
struct st_mysql_res *myconn_query(struct st_mysql *, const char *sql,
	    const char *what, struct p2o_err *);
/* a statement answering one number (a count): 0 with *n (0 for no row
 * or NULL), or -1 with err */
int	myconn_query_u64(struct st_mysql *, const char *sql, const char *what,
	    uint64_t *n, struct p2o_err *);
/* s[0..n) as a quoted string literal for the connection, appended */
void	myconn_quote(struct st_mysql *, struct sbuf *out, const char *s,
	    size_t n);
/* `name`, a backtick inside doubled, appended */
void	myconn_ident(struct sbuf *out, const char *name);
/*
 * The session myval_text reads values in: timestamps in UTC, text in
 * UTF-8, and no sql_mode (PAD_CHAR_TO_FULL_LENGTH would pad a CHAR the
 * binlog holds trimmed; NO_BACKSLASH_ESCAPES would change what a quoted
 * literal means). 0 or -1 with err.
 */
int	myconn_value_session(struct st_mysql *, struct p2o_err *);
/* SHOW MASTER STATUS (SHOW BINARY LOG STATUS on MySQL 8.4): the file and
 * offset the server writes at now; 69 without REPLICATION CLIENT */
int	myconn_binlog_now(struct st_mysql *, char *file, size_t filelen,
	    uint32_t *offset, struct p2o_err *);

#endif
