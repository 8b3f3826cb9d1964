/*
 * server.c - everything capture-mysql asks the server: the connection url,
 * TLS, the catalogue connection and its checks (binary log settings,
 * tables, keys, column types from information_schema), the checkpoint's
 * place in the server's binlog, the dump command and the dump's packets.
 *
 * libmariadb connects, authenticates (mysql_native_password,
 * caching_sha2_password with the server's RSA key over plaintext, TLS)
 * and carries packets; the dump command is written by hand and its events
 * are read raw, never through libmariadb's binlog event parser.
 *
 * The password reaches libmariadb only as an argument (never argv, never
 * a message); messages name host and port, never the url. Never exits.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>
/* the layout of libmariadb's TLS handle, to see what OpenSSL holds */
#define HAVE_TLS
typedef unsigned char uchar;
#include <ma_pvio.h>
#include <openssl/ssl.h>

#include "config.h"
#include "hex.h"
#include "log.h"
#include "p2o.h"
#include "sbuf.h"
#include "server.h"

#define CONNECT_TIMEOUT_S	30
#define IO_TIMEOUT_S		120
#define COM_BINLOG_DUMP_CMD	0x12
#define COM_BINLOG_DUMP_GTID_CMD 0x1e
#define BINLOG_THROUGH_GTID	4

static int
fail(struct my_source *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(struct my_source *s, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	s->exit_code = code;
	return -1;
}

void
src_init(struct my_source *s)
{
	memset(s, 0, sizeof(*s));
}

void
src_release(struct my_source *s)
{
	if (s->sql != NULL)
		mysql_close(s->sql);
	if (s->dump != NULL)
		mysql_close(s->dump);
	free(s->first);
	free(s->held);
	s->sql = s->dump = NULL;
	s->first = s->held = NULL;
}

/* ---- the url ---- */

/* a percent-decoded copy of s[0..n); NULL on a bad escape or a NUL */
static char *
pct_dup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	size_t i, o = 0;
	int hi, lo;

	for (i = 0; i < n; i++) {
		if (s[i] != '%') {
			d[o++] = s[i];
			continue;
		}
		if (i + 2 >= n || (hi = hex_value(s[i + 1])) < 0 ||
		    (lo = hex_value(s[i + 2])) < 0 || (hi == 0 && lo == 0))
			goto bad;
		d[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	d[o] = '\0';
	return d;
bad:
	free(d);
	return NULL;
}

void
my_url_release(struct my_url *u)
{
	if (u->password != NULL)
		explicit_bzero(u->password, strlen(u->password));
	free(u->user);
	free(u->password);
	free(u->host);
	free(u->db);
	memset(u, 0, sizeof(*u));
}

int
my_url_parse(const char *url, struct my_url *u, char *err, size_t errlen)
{
	const char *p, *auth, *end, *at, *colon, *h, *he;
	unsigned long port;
	char *e;

	memset(u, 0, sizeof(*u));
	if (strncmp(url, "mysql://", 8) == 0)
		p = url + 8;
	else if (strncmp(url, "mariadb://", 10) == 0)
		p = url + 10;
	else {
		snprintf(err, errlen, "the source url is not a mysql:// or "
		    "mariadb:// url");
		return -1;
	}
	auth = p;
	end = auth + strcspn(auth, "/?#");
	if (*end == '?' || *end == '#' || (*end == '/' &&
	    strpbrk(end, "?#") != NULL)) {
		snprintf(err, errlen, "the source url takes no parameters "
		    "(TLS is set with source.sslmode and its keys)");
		return -1;
	}
	/* the last '@' of the authority ends the user info */
	for (at = NULL, h = auth; h < end; h++)
		if (*h == '@')
			at = h;
	if (at != NULL) {
		colon = memchr(auth, ':', (size_t)(at - auth));
		u->user = pct_dup(auth, (size_t)((colon ? colon : at) - auth));
		if (colon != NULL)
			u->password = pct_dup(colon + 1,
			    (size_t)(at - colon - 1));
		if (u->user == NULL || (colon != NULL && u->password == NULL))
			goto bad;
		h = at + 1;
	} else
		h = auth;
	if (*h == '[') {
		if ((he = memchr(h, ']', (size_t)(end - h))) == NULL)
			goto bad;
		u->host = xstrndup(h + 1, (size_t)(he - h - 1));
		he++;
	} else {
		for (he = h; he < end && *he != ':'; he++)
			;
		u->host = xstrndup(h, (size_t)(he - h));
	}
	u->port = 3306;
	if (he < end) {
		if (*he != ':' || he + 1 == end)
			goto bad;
		errno = 0;
		port = strtoul(he + 1, &e, 10);
		if (errno || e != end || port < 1 || port > 65535)
			goto bad;
		u->port = (unsigned)port;
	}
	if (u->host[0] == '\0') {
		free(u->host);
		u->host = xstrdup("localhost");
	}
	if (*end == '/' && end[1] != '\0' &&
	    (u->db = pct_dup(end + 1, strlen(end + 1))) == NULL)
		goto bad;
	return 0;
bad:
	my_url_release(u);
	snprintf(err, errlen, "the source url is not a valid mysql url "
	    "(mysql://user:password@host:port/database)");
	return -1;
}

/* ---- connecting ---- */

/* the exit code for a libmariadb or server error */
static int
code_for(unsigned int e)
{
	switch (e) {
	case ER_ACCESS_DENIED_ERROR: case ER_DBACCESS_DENIED_ERROR:
	case ER_ACCESS_DENIED_NO_PASSWORD_ERROR: case ER_HOST_NOT_PRIVILEGED:
	case ER_NOT_SUPPORTED_AUTH_MODE: case CR_AUTH_PLUGIN_CANNOT_LOAD:
		return P2O_EXIT_AUTH;
	case ER_BAD_DB_ERROR: case CR_SSL_CONNECTION_ERROR:
	case ER_SPECIFIC_ACCESS_DENIED_ERROR:
		return P2O_EXIT_REFUSED;
	default:
		return P2O_EXIT_TEMPFAIL;
	}
}

/* sslmode onto libmariadb's options (libpq's names, libpq's meaning) */
static int
set_tls(struct my_source *s, MYSQL *m, const struct config *cfg)
{
	const char *mode = cfg->sslmode ? cfg->sslmode : "prefer";
	my_bool yes = 1, no = 0;
	int verify_ca = 0, verify_host = 0, enforce = 0;

	if (strcmp(mode, "disable") == 0) {
		if (cfg->sslcert || cfg->sslrootcert)
			log_warnx("sslmode 'disable': sslcert and sslrootcert "
			    "are not used");
		return 0;
	}
	if (strcmp(mode, "require") == 0)
		enforce = 1;
	else if (strcmp(mode, "verify-ca") == 0)
		enforce = verify_ca = 1;
	else if (strcmp(mode, "verify-full") == 0)
		enforce = verify_ca = verify_host = 1;
	else if (strcmp(mode, "allow") != 0 && strcmp(mode, "prefer") != 0)
		return fail(s, P2O_EXIT_CONFIG, "%s: sslmode '%s' is not one "
		    "of disable, allow, prefer, require, verify-ca, "
		    "verify-full", cfg->path, mode);
	if (verify_ca && cfg->sslrootcert == NULL)
		return fail(s, P2O_EXIT_CONFIG, "%s: sslmode '%s' needs "
		    "source.sslrootcert, the CA that signed the server's "
		    "certificate", cfg->path, mode);
	/* allow and prefer: TLS when the server offers it, unverified */
	mysql_ssl_set(m, cfg->sslkey, cfg->sslcert, verify_ca ?
	    cfg->sslrootcert : NULL, NULL, NULL);
	mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, enforce ? &yes : &no);
	/* libmariadb checks the chain whenever it has a CA, and the host
	 * name only with this option */
	mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, verify_host ?
	    &yes : &no);
	return 0;
}

/*
 * What sslmode promised, checked on the open connection rather than
 * trusted to the library's options: require and stronger must have TLS;
 * verify-ca and verify-full a server certificate that verified against
 * sslrootcert (libmariadb loads the CA into the context; OpenSSL records
 * the chain's result even when the library does not act on it).
 */
static int
check_tls(struct my_source *s, MYSQL *m, const struct config *cfg,
    const char *host, unsigned port)
{
	const char *mode = cfg->sslmode ? cfg->sslmode : "prefer";
	MARIADB_PVIO *pv = m->net.pvio;
	SSL *ssl;
	X509 *peer;
	long v;

	if (strcmp(mode, "require") != 0 && strcmp(mode, "verify-ca") != 0 &&
	    strcmp(mode, "verify-full") != 0)
		return 0;
	if (mysql_get_ssl_cipher(m) == NULL || pv == NULL || pv->ctls == NULL ||
	    (ssl = pv->ctls->ssl) == NULL)
		return fail(s, P2O_EXIT_REFUSED, "sslmode '%s': the server at "
		    "%s:%u did not set up TLS", mode, host, port);
	if (strcmp(mode, "require") == 0)
		return 0;
	peer = SSL_get_peer_certificate(ssl);
	v = SSL_get_verify_result(ssl);
	if (peer != NULL)
		X509_free(peer);
	if (peer == NULL || v != X509_V_OK)
		return fail(s, P2O_EXIT_REFUSED, "sslmode '%s': the server "
		    "certificate of %s:%u does not verify against sslrootcert: "
		    "%s", mode, host, port, peer == NULL ? "none was sent" :
		    X509_verify_cert_error_string(v));
	return 0;
}

static MYSQL *
connect_one(struct my_source *s, const struct config *cfg, const char *kind)
{
	struct my_url u;
	unsigned int t = CONNECT_TIMEOUT_S, io = IO_TIMEOUT_S;
	char err[256];
	MYSQL *m;
	unsigned e;

	if (my_url_parse(cfg->source_url, &u, err, sizeof(err)) == -1) {
		fail(s, P2O_EXIT_CONFIG, "%s: %s", cfg->path, err);
		return NULL;
	}
	if ((m = mysql_init(NULL)) == NULL) {
		my_url_release(&u);
		fail(s, P2O_EXIT_INTERNAL, "out of memory");
		return NULL;
	}
	mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &t);
	mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &io);
	mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &io);
	mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (set_tls(s, m, cfg) == -1)
		goto bad;
	/* no password in the url: libmariadb reads MYSQL_PWD, as the
	 * mysql client does */
	if (mysql_real_connect(m, u.host, u.user, u.password, u.db, u.port,
	    NULL, 0) == NULL) {
		e = mysql_errno(m);
		if (code_for(e) == P2O_EXIT_AUTH)
			fail(s, P2O_EXIT_AUTH, "authentication failed at "
			    "%s:%u: %s", u.host, u.port, mysql_error(m));
		else
			fail(s, code_for(e), "could not open the %s connection "
			    "to %s:%u: %s", kind, u.host, u.port,
			    mysql_error(m));
		goto bad;
	}
	if (check_tls(s, m, cfg, u.host, u.port) == -1)
		goto bad;
	log_info("%s connection to %s:%u (server %s%s)", kind, u.host, u.port,
	    mysql_get_server_info(m), mysql_get_ssl_cipher(m) ? ", TLS" : "");
	my_url_release(&u);
	return m;
bad:
	my_url_release(&u);
	mysql_close(m);
	return NULL;
}

static int
sql_failed(struct my_source *s, MYSQL *m, const char *what)
{
	unsigned e = mysql_errno(m);

	return fail(s, e == ER_SPECIFIC_ACCESS_DENIED_ERROR ||
	    e == ER_DBACCESS_DENIED_ERROR || e == 1142 ? P2O_EXIT_REFUSED :
	    P2O_EXIT_TEMPFAIL, "%s: %s", what, mysql_error(m));
}

static int
exec(struct my_source *s, MYSQL *m, const char *sql, const char *what)
{
	if (mysql_real_query(m, sql, strlen(sql)) != 0)
		return sql_failed(s, m, what);
	return 0;
}

static MYSQL_RES *
query(struct my_source *s, MYSQL *m, const char *sql, const char *what)
{
	MYSQL_RES *r;

	if (exec(s, m, sql, what) == -1)
		return NULL;
	if ((r = mysql_store_result(m)) == NULL) {
		sql_failed(s, m, what);
		return NULL;
	}
	return r;
}

int
src_connect_sql(struct my_source *s, const struct config *cfg)
{
	if ((s->sql = connect_one(s, cfg, "catalogue")) == NULL)
		return -1;
	snprintf(s->version, sizeof(s->version), "%s",
	    mysql_get_server_info(s->sql));
	s->mariadb = strstr(s->version, "MariaDB") != NULL;
	return 0;
}

int
src_check_server(struct my_source *s)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	char log_bin[16] = "", format[32] = "", image[32] = "";
	char value_opts[64] = "", checksum[16] = "";
	char gtid[32] = "";

	r = query(s, s->sql, "SHOW GLOBAL VARIABLES WHERE Variable_name IN "
	    "('log_bin', 'binlog_format', 'binlog_row_image', "
	    "'binlog_row_value_options', 'binlog_checksum', "
	    "'gtid_mode')", "reading the server's "
	    "settings");
	if (r == NULL)
		return -1;
	while ((row = mysql_fetch_row(r)) != NULL) {
		const char *v = row[1] ? row[1] : "";
		char *dst = NULL;
		size_t n = 0;

		if (strcasecmp(row[0], "log_bin") == 0)
			dst = log_bin, n = sizeof(log_bin);
		else if (strcasecmp(row[0], "binlog_format") == 0)
			dst = format, n = sizeof(format);
		else if (strcasecmp(row[0], "binlog_row_image") == 0)
			dst = image, n = sizeof(image);
		else if (strcasecmp(row[0], "binlog_row_value_options") == 0)
			dst = value_opts, n = sizeof(value_opts);
		else if (strcasecmp(row[0], "binlog_checksum") == 0)
			dst = checksum, n = sizeof(checksum);
		else if (strcasecmp(row[0], "gtid_mode") == 0)
			dst = gtid, n = sizeof(gtid);
		if (dst != NULL)
			snprintf(dst, n, "%s", v);
	}
	mysql_free_result(r);
	if (strcasecmp(log_bin, "ON") != 0 && strcmp(log_bin, "1") != 0)
		return fail(s, P2O_EXIT_REFUSED, "the server writes no binary "
		    "log (log_bin is %s): start it with log_bin enabled",
		    log_bin[0] ? log_bin : "missing");
	if (strcasecmp(format, "ROW") != 0)
		return fail(s, P2O_EXIT_REFUSED, "binlog_format is %s: "
		    "row-based logging is required (SET GLOBAL binlog_format "
		    "= ROW, and binlog_format = ROW in my.cnf)", format);
	if (strcasecmp(image, "FULL") != 0)
		return fail(s, P2O_EXIT_REFUSED, "binlog_row_image is %s: "
		    "MINIMAL and NOBLOB leave unchanged columns out of an "
		    "update, which would lose them (SET GLOBAL "
		    "binlog_row_image = FULL, and in my.cnf)", image);
	if (strcasestr(value_opts, "PARTIAL_JSON") != NULL)
		return fail(s, P2O_EXIT_REFUSED, "binlog_row_value_options is "
		    "PARTIAL_JSON: the server would log JSON updates as diffs "
		    "in an event this tool does not apply, and those updates "
		    "would be lost (SET GLOBAL binlog_row_value_options = '')");
	s->crc = strcasecmp(checksum, "CRC32") == 0;
	s->gtid_mode_on = s->mariadb || strcasecmp(gtid, "ON") == 0;
	return 0;
}

/* 'x' with the connection's escaping */
static void
lit(MYSQL *m, struct sbuf *b, const char *v)
{
	size_t n = strlen(v);

	sbuf_grow(b, 2 * n + 3);
	b->buf[b->len++] = '\'';
	b->len += mysql_real_escape_string(m, b->buf + b->len, v,
	    (unsigned long)n);
	b->buf[b->len++] = '\'';
	b->buf[b->len] = '\0';
}

/* MariaDB's JSON is a longtext with CHECK (json_valid(`col`)) */
static int
json_checked(char **clauses, int n, const char *col)
{
	char want[256];
	int i;

	snprintf(want, sizeof(want), "json_valid(`%s`)", col);
	for (i = 0; i < n; i++)
		if (strcmp(clauses[i], want) == 0)
			return 1;
	return 0;
}

/* one table's shape: 0, 1 not there (or not a base table), -1 error */
static int
load_table(struct my_source *s, const char *db, const char *name,
    struct my_table *tb)
{
	struct sbuf q = SBUF_INIT, where = SBUF_INIT;
	MYSQL_RES *r = NULL;
	MYSQL_ROW row;
	char **clauses = NULL, err[256];
	int nclauses = 0, i, rc = -1, k;

	memset(tb, 0, sizeof(*tb));
	sbuf_adds(&where, " WHERE TABLE_SCHEMA = ");
	lit(s->sql, &where, db);
	sbuf_adds(&where, " AND TABLE_NAME = ");
	lit(s->sql, &where, name);

	sbuf_addf(&q, "SELECT TABLE_TYPE FROM information_schema.TABLES%s",
	    where.buf);
	if ((r = query(s, s->sql, q.buf, "reading information_schema")) ==
	    NULL)
		goto done;
	row = mysql_fetch_row(r);
	if (row == NULL || row[0] == NULL ||
	    strcmp(row[0], "BASE TABLE") != 0) {
		rc = row == NULL ? 1 : 2;
		goto done;
	}
	mysql_free_result(r);
	r = NULL;

	if (s->mariadb) {
		sbuf_reset(&q);
		sbuf_addf(&q, "SELECT CHECK_CLAUSE FROM "
		    "information_schema.CHECK_CONSTRAINTS WHERE "
		    "CONSTRAINT_SCHEMA = ");
		lit(s->sql, &q, db);
		sbuf_adds(&q, " AND TABLE_NAME = ");
		lit(s->sql, &q, name);
		if ((r = query(s, s->sql, q.buf, "reading information_schema"))
		    == NULL)
			goto done;
		clauses = xcalloc(mysql_num_rows(r) + 1, sizeof(char *));
		while ((row = mysql_fetch_row(r)) != NULL)
			if (row[0] != NULL)
				clauses[nclauses++] = xstrdup(row[0]);
		mysql_free_result(r);
		r = NULL;
	}

	sbuf_reset(&q);
	sbuf_addf(&q, "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, "
	    "CHARACTER_SET_NAME FROM information_schema.COLUMNS%s ORDER BY "
	    "ORDINAL_POSITION", where.buf);
	if ((r = query(s, s->sql, q.buf, "reading information_schema")) ==
	    NULL)
		goto done;
	tb->db = xstrdup(db);
	tb->name = xstrdup(name);
	tb->rel = xmalloc(strlen(db) + strlen(name) + 2);
	snprintf(tb->rel, strlen(db) + strlen(name) + 2, "%s.%s", db, name);
	tb->cols = xcalloc(mysql_num_rows(r) + 1, sizeof(*tb->cols));
	while ((row = mysql_fetch_row(r)) != NULL) {
		if (row[0] == NULL || row[1] == NULL || row[2] == NULL)
			continue;
		if (my_col_init(&tb->cols[tb->ncols], row[0], row[1], row[2],
		    row[3], json_checked(clauses, nclauses, row[0]), err,
		    sizeof(err)) == -1) {
			my_col_release(&tb->cols[tb->ncols]);
			fail(s, P2O_EXIT_REFUSED, "table '%s.%s': %s", db, name,
			    err);
			goto done;
		}
		tb->ncols++;
	}
	mysql_free_result(r);
	r = NULL;

	sbuf_reset(&q);
	sbuf_addf(&q, "SELECT COLUMN_NAME FROM "
	    "information_schema.KEY_COLUMN_USAGE%s AND CONSTRAINT_NAME = "
	    "'PRIMARY' ORDER BY ORDINAL_POSITION", where.buf);
	if ((r = query(s, s->sql, q.buf, "reading information_schema")) ==
	    NULL)
		goto done;
	tb->keys = xcalloc(tb->ncols + 1, sizeof(int));
	while ((row = mysql_fetch_row(r)) != NULL)
		for (k = 0; k < tb->ncols; k++)
			if (row[0] != NULL && strcmp(tb->cols[k].name,
			    row[0]) == 0 && tb->nkeys < tb->ncols)
				tb->keys[tb->nkeys++] = k;
	rc = 0;
done:
	if (r != NULL)
		mysql_free_result(r);
	for (i = 0; i < nclauses; i++)
		free(clauses[i]);
	free(clauses);
	sbuf_release(&q);
	sbuf_release(&where);
	if (rc != 0 && tb->cols != NULL)
		my_table_release(tb);
	return rc;
}

int
src_load_tables(struct my_source *s, const struct config *cfg,
    struct my_table **tables)
{
	struct my_table *t = xcalloc(cfg->nsyncs + 1, sizeof(*t));
	const struct sync_section *sy;
	int i, rc;

	*tables = t;
	for (i = 0; i < cfg->nsyncs; i++) {
		sy = &cfg->syncs[i];
		rc = load_table(s, sy->schema, sy->table, &t[i]);
		if (rc == -1)
			return -1;
		if (rc == 1)
			return fail(s, P2O_EXIT_REFUSED, "table '%s' (sync "
			    "'%s') does not exist, or the user may not read "
			    "it", sy->rel, sy->name);
		if (rc == 2)
			return fail(s, P2O_EXIT_REFUSED, "'%s' (sync '%s') is "
			    "not a base table: only tables have rows in the "
			    "binlog", sy->rel, sy->name);
		if (t[i].nkeys == 0)
			return fail(s, P2O_EXIT_REFUSED, "table '%s' (sync "
			    "'%s') has no primary key: a document's id is its "
			    "row's key", sy->rel, sy->name);
		log_debug("table '%s': %d columns, %d key columns", sy->rel,
		    t[i].ncols, t[i].nkeys);
	}
	return 0;
}

int
src_reload(void *ctx, const char *db, const char *table,
    struct my_table *out, char *err, size_t errlen)
{
	struct my_source *s = ctx;
	int rc = load_table(s, db, table, out);

	if (rc == -1) {
		snprintf(err, errlen, "re-reading '%s.%s': %s", db, table,
		    s->err);
		return -1;
	}
	if (rc != 0)
		return 1;
	if (out->nkeys == 0) {
		my_table_release(out);
		snprintf(err, errlen, "table '%s.%s' has no primary key any "
		    "more", db, table);
		return -1;
	}
	return 0;
}

int
src_master_status(struct my_source *s)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	const char *sql = "SHOW MASTER STATUS";
	unsigned e;

	if (mysql_real_query(s->sql, sql, strlen(sql)) != 0) {
		/* MySQL 8.4 has only the new name */
		sql = "SHOW BINARY LOG STATUS";
		if (mysql_errno(s->sql) != ER_PARSE_ERROR ||
		    mysql_real_query(s->sql, sql, strlen(sql)) != 0) {
			e = mysql_errno(s->sql);
			if (e == ER_SPECIFIC_ACCESS_DENIED_ERROR)
				return fail(s, P2O_EXIT_REFUSED, "reading the "
				    "binlog position needs the REPLICATION "
				    "CLIENT privilege (BINLOG MONITOR on "
				    "MariaDB): %s", mysql_error(s->sql));
			return sql_failed(s, s->sql, "reading the binlog "
			    "position");
		}
	}
	if ((r = mysql_store_result(s->sql)) == NULL)
		return sql_failed(s, s->sql, "reading the binlog position");
	row = mysql_fetch_row(r);
	if (row == NULL || row[0] == NULL || row[1] == NULL ||
	    binlog_file_index(row[0], strlen(row[0])) < 0) {
		mysql_free_result(r);
		return fail(s, P2O_EXIT_REFUSED, "the server reports no "
		    "binlog position (is log_bin on?)");
	}
	snprintf(s->file, sizeof(s->file), "%s", row[0]);
	s->offset = (uint32_t)strtoul(row[1], NULL, 10);
	mysql_free_result(r);
	return 0;
}

int
src_check_resume(struct my_source *s, const struct mypos *p)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	long long idx = binlog_file_index(p->file, strlen(p->file));
	uint64_t want = mypos_coord((uint64_t)idx, p->offset), have;
	int found = 0;
	unsigned long long size = 0;

	if ((r = query(s, s->sql, "SHOW BINARY LOGS", "listing the binlogs"))
	    == NULL)
		return -1;
	while ((row = mysql_fetch_row(r)) != NULL)
		if (row[0] != NULL && strcmp(row[0], p->file) == 0) {
			found = 1;
			size = row[1] ? strtoull(row[1], NULL, 10) : 0;
		}
	mysql_free_result(r);
	if (src_master_status(s) == -1)
		return -1;
	have = mypos_coord((uint64_t)binlog_file_index(s->file,
	    strlen(s->file)), s->offset);
	if ((found && size < p->offset) || (!found && have < want))
		return fail(s, P2O_EXIT_CHECKPOINT, "the checkpoint %s:%u is "
		    "past the end of the server's binlog (%s:%u): its history "
		    "restarted, or this is another server, and the index holds "
		    "versions from a numbering that no longer exists; sync "
		    "into a fresh index (a new index name) without the "
		    "checkpoint", p->file, p->offset, s->file, s->offset);
	/* a purged file: the dump reports it, in the server's words */
	return 0;
}

/* ---- the dump ---- */

static void
put_le(struct sbuf *b, uint64_t v, int n)
{
	while (n-- > 0) {
		sbuf_addc(b, (char)(v & 0xff));
		v >>= 8;
	}
}

/* the first packet of a dump the server refused: why, and the code */
static int
dump_refused(struct my_source *s, const char *how)
{
	unsigned e = mysql_errno(s->dump);

	if (e == ER_UNKNOWN_COM_ERROR || e == ER_NOT_SUPPORTED_YET)
		return fail(s, P2O_EXIT_REFUSED, "the server did not accept "
		    "the binlog dump (%s): the source url must reach the "
		    "server directly, not through a proxy",
		    mysql_error(s->dump));
	if (e == ER_SPECIFIC_ACCESS_DENIED_ERROR)
		return fail(s, P2O_EXIT_REFUSED, "the binlog dump needs the "
		    "REPLICATION SLAVE privilege: %s", mysql_error(s->dump));
	if (e == ER_MASTER_FATAL_ERROR_READING_BINLOG)
		return fail(s, P2O_EXIT_REFUSED, "the server cannot send the "
		    "binlog %s: %s", how, mysql_error(s->dump));
	return fail(s, P2O_EXIT_TEMPFAIL, "the binlog dump %s failed: %s",
	    how, e ? mysql_error(s->dump) : "connection closed");
}

int
src_start_dump(struct my_source *s, const struct config *cfg,
    const struct mypos *p)
{
	struct sbuf cmd = SBUF_INIT, set = SBUF_INIT;
	char how[MYPOS_FILE_MAX + 64];
	const unsigned char *ev;
	size_t len;
	int command, rc = -1;

	if ((s->dump = connect_one(s, cfg, "dump")) == NULL)
		return -1;
	/* declared before the dump: without it a server that checksums
	 * ends the dump, and the first events would not carry one */
	if (exec(s, s->dump, "SET @master_binlog_checksum = "
	    "@@global.binlog_checksum, @source_binlog_checksum = "
	    "@@global.binlog_checksum", "declaring the checksum") == -1)
		goto done;
	sbuf_addf(&set, "SET @master_heartbeat_period = %llu, "
	    "@source_heartbeat_period = %llu",
	    (unsigned long long)SRC_HEARTBEAT_S * 1000000000ULL,
	    (unsigned long long)SRC_HEARTBEAT_S * 1000000000ULL);
	if (exec(s, s->dump, set.buf, "asking for heartbeats") == -1)
		goto done;
	/*
	 * The dump thread gives up on a reader that takes nothing for
	 * net_write_timeout (60 s by default). This reader stops reading
	 * whenever stdout does not drain - a target that is down holds the
	 * whole pipeline - and waits that out; the server must too. A dead
	 * reader is still noticed: its socket closes, and a new dump with
	 * the same replica id ends the old one.
	 */
	sbuf_reset(&set);
	sbuf_addf(&set, "SET SESSION net_write_timeout = %d",
	    SRC_DUMP_WRITE_TIMEOUT_S);
	if (exec(s, s->dump, set.buf, "setting the dump's write timeout") ==
	    -1)
		goto done;
	/* 4: send GTID events as they are, not rewritten as BEGIN */
	if (s->mariadb && exec(s, s->dump, "SET @mariadb_slave_capability = "
	    "4", "declaring MariaDB's capabilities") == -1)
		goto done;

	command = COM_BINLOG_DUMP_CMD;
	if (p != NULL && p->has_gtid && s->mariadb) {
		sbuf_reset(&set);
		sbuf_adds(&set, "SET @slave_connect_state = '");
		gtid_set_format(&p->gtid, &set);
		sbuf_adds(&set, "', @slave_gtid_strict_mode = 0, "
		    "@slave_gtid_ignore_duplicates = 0");
		if (exec(s, s->dump, set.buf, "setting the GTID position") ==
		    -1)
			goto done;
		put_le(&cmd, 4, 4);
		put_le(&cmd, 0, 2);
		put_le(&cmd, cfg->server_id, 4);
		snprintf(how, sizeof(how), "after the GTID position of "
		    "%s:%u", p->file, p->offset);
	} else if (p != NULL && p->has_gtid) {
		sbuf_reset(&set);
		gtid_set_encode(&p->gtid, &set);
		command = COM_BINLOG_DUMP_GTID_CMD;
		put_le(&cmd, BINLOG_THROUGH_GTID, 2);
		put_le(&cmd, cfg->server_id, 4);
		put_le(&cmd, 0, 4);		/* no file name */
		put_le(&cmd, 4, 8);
		put_le(&cmd, set.len, 4);
		sbuf_add(&cmd, set.buf, set.len);
		snprintf(how, sizeof(how), "after the GTID set of %s:%u",
		    p->file, p->offset);
	} else {
		const char *file = p ? p->file : s->file;
		uint32_t off = p ? p->offset : 4;

		put_le(&cmd, off, 4);
		put_le(&cmd, 0, 2);
		put_le(&cmd, cfg->server_id, 4);
		sbuf_adds(&cmd, file);
		snprintf(how, sizeof(how), "from %s:%u", file, off);
	}
	if (s->dump->methods->db_command(s->dump, command, cmd.len ? cmd.buf :
	    "", cmd.len, 1, NULL) != 0) {
		dump_refused(s, how);
		goto done;
	}
	if (src_read_event(s, &ev, &len) == -1) {
		/* the server's refusal, in its words, with what was asked */
		if (mysql_errno(s->dump))
			dump_refused(s, how);
		goto done;
	}
	s->first = xmalloc(len);
	memcpy(s->first, ev, len);
	s->firstlen = len;
	log_info("binlog dump %s (replica id %lu)", how, cfg->server_id);
	rc = 0;
done:
	sbuf_release(&cmd);
	sbuf_release(&set);
	return rc;
}

int
src_socket(const struct my_source *s)
{
	return (int)mysql_get_socket(s->dump);
}

int
src_buffered(const struct my_source *s)
{
	MARIADB_PVIO *pv = s->dump->net.pvio;

	if (s->first != NULL)
		return 1;
	if (pv == NULL)
		return 0;
	if (pv->cache != NULL && pv->cache_pos < pv->cache + pv->cache_size)
		return 1;
	/* TLS: records OpenSSL decrypted and holds */
	if (pv->ctls != NULL && pv->ctls->ssl != NULL &&
	    SSL_pending((SSL *)pv->ctls->ssl) > 0)
		return 1;
	return 0;
}

int
src_read_event(struct my_source *s, const unsigned char **ev, size_t *len)
{
	unsigned long n;
	const unsigned char *p;

	free(s->held);
	s->held = NULL;
	if (s->first != NULL) {
		/* handed out once; freed at the next call */
		s->held = s->first;
		*ev = s->held;
		*len = s->firstlen;
		s->first = NULL;
		return 1;
	}
	n = mysql_net_read_packet(s->dump);
	if (n == packet_error || n == 0) {
		unsigned e = mysql_errno(s->dump);

		if (e == ER_MASTER_FATAL_ERROR_READING_BINLOG)
			return fail(s, P2O_EXIT_REFUSED, "the server stopped "
			    "sending the binlog: %s", mysql_error(s->dump));
		return fail(s, P2O_EXIT_TEMPFAIL, "dump connection lost: %s",
		    e ? mysql_error(s->dump) : "connection closed");
	}
	p = s->dump->net.read_pos;
	if (p[0] == 0xfe && n < 9)
		return fail(s, P2O_EXIT_TEMPFAIL, "the server ended the binlog "
		    "dump");
	if (p[0] != 0x00 || n < 1 + BL_HEADER_LEN || le32(p + 1 + 9) !=
	    n - 1)
		return fail(s, P2O_EXIT_TEMPFAIL, "dump protocol error: a "
		    "packet of %lu bytes that is not an event", n);
	*ev = p + 1;
	*len = n - 1;
	return 1;
}
