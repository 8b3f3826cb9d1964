/*
 * myconn.c - opening a connection to a MySQL or MariaDB source and
 * reading what its failures mean (myconn.h). Owns the url's grammar, how
 * sslmode (libpq's names, libpq's meaning) maps onto libmariadb's options
 * and what each mode is checked to have delivered, the timeouts, and the
 * error numbers that make a failure permanent.
 *
 * libmariadb connects and authenticates (mysql_native_password,
 * caching_sha2_password with the server's RSA key over plaintext, TLS).
 * The password reaches it only as an argument; messages name host and
 * port, never the url. Never exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>
/* the layout of libmariadb's TLS handle, to see what OpenSSL holds */
#define HAVE_TLS
typedef unsigned char uchar;
#include <ma_pvio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "config.h"
#include "hex.h"
#include "log.h"
#include "myconn.h"
#include "mygtid.h"
#include "p2o.h"
#include "sbuf.h"

#define CONNECT_TIMEOUT_S	30
#define IO_TIMEOUT_S		120

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

/* the exit code for a libmariadb or server error */
static int
code_for(unsigned int no)
{
	switch (no) {
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

/*
 * What a failed TLS handshake (CR_SSL_CONNECTION_ERROR) means. libmariadb
 * says it only in text, "TLS/SSL error: " and then one of:
 * - the chain's verification result, X509_verify_cert_error_string's
 *   text ("self-signed certificate in certificate chain"), or its own
 *   "Validation of SSL server certificate failed" for a host name the
 *   certificate does not carry: the server certificate does not verify;
 * - a system error with its errno ("... (104)"), or OpenSSL's reason for
 *   a peer that closed mid-handshake: the network;
 * - anything else (the server offers no TLS, a client certificate or key
 *   that does not load): the configuration or the server's.
 * The texts are compared with what OpenSSL itself says they are.
 */
enum tls_failure { TLS_REFUSED, TLS_UNVERIFIED, TLS_NETWORK };

static enum tls_failure
tls_failure(const char *msg)
{
	const char *tail = strrchr(msg, ':'), *p, *eof;
	size_t n = strlen(msg);
	long v;

	if (strstr(msg, "Validation of SSL server certificate failed") != NULL)
		return TLS_UNVERIFIED;
	for (v = X509_V_ERR_UNSPECIFIED; tail != NULL && v < 256; v++) {
		/* out of memory is no verdict on the certificate */
		if (v == X509_V_ERR_OUT_OF_MEM)
			continue;
		if (strcmp(tail + 1 + (tail[1] == ' '),
		    X509_verify_cert_error_string(v)) == 0)
			return TLS_UNVERIFIED;
	}
	if (n > 3 && msg[n - 1] == ')') {
		for (p = msg + n - 2; p > msg && *p >= '0' && *p <= '9'; p--)
			;
		if (*p == '(' && p < msg + n - 2 && p > msg && p[-1] == ' ')
			return TLS_NETWORK;
	}
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
	eof = ERR_reason_error_string(ERR_PACK(ERR_LIB_SSL, 0,
	    SSL_R_UNEXPECTED_EOF_WHILE_READING));
#else
	eof = NULL;
#endif
	if (strstr(msg, eof ? eof : "unexpected eof while reading") != NULL)
		return TLS_NETWORK;
	return TLS_REFUSED;
}

/* the one message of a server certificate that does not verify (as
 * lib/pg/pgconn.c says it) */
static int
unverified(struct p2o_err *e, const struct config *cfg, const char *host,
    unsigned port, const char *why)
{
	return p2o_fail(e, P2O_EXIT_REFUSED, "sslmode '%s': the server "
	    "certificate of %s:%u does not verify: %s (source.sslrootcert "
	    "must hold the CA that signed it, and under verify-full the url's "
	    "host must be a name it carries)", cfg->sslmode ? cfg->sslmode :
	    "prefer", host, port, why);
}

/* sslmode onto libmariadb's options (libpq's names, libpq's meaning) */
static int
set_tls(MYSQL *m, const struct config *cfg, struct p2o_err *e)
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
		return p2o_fail(e, P2O_EXIT_CONFIG, "%s: sslmode '%s' is not "
		    "one of disable, allow, prefer, require, verify-ca, "
		    "verify-full", cfg->path, mode);
	if (verify_ca && cfg->sslrootcert == NULL)
		return p2o_fail(e, P2O_EXIT_CONFIG, "%s: sslmode '%s' needs "
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
check_tls(MYSQL *m, const struct config *cfg, const char *host,
    unsigned port, struct p2o_err *e)
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
		return p2o_fail(e, P2O_EXIT_REFUSED, "sslmode '%s': the server "
		    "at %s:%u did not set up TLS", mode, host, port);
	if (strcmp(mode, "require") == 0)
		return 0;
	peer = SSL_get_peer_certificate(ssl);
	v = SSL_get_verify_result(ssl);
	if (peer != NULL)
		X509_free(peer);
	if (peer == NULL || v != X509_V_OK)
		return unverified(e, cfg, host, port, peer == NULL ?
		    "none was sent" : X509_verify_cert_error_string(v));
	return 0;
}

struct st_mysql *
myconn_open(const struct config *cfg, const char *kind, struct p2o_err *e)
{
	struct my_url u;
	unsigned int t = CONNECT_TIMEOUT_S, io = IO_TIMEOUT_S;
	char err[256];
	MYSQL *m;
	unsigned no;
	enum tls_failure tf;

	if (my_url_parse(cfg->source_url, &u, err, sizeof(err)) == -1) {
		p2o_fail(e, P2O_EXIT_CONFIG, "%s: %s", cfg->path, err);
		return NULL;
	}
	if ((m = mysql_init(NULL)) == NULL) {
		my_url_release(&u);
		p2o_fail(e, P2O_EXIT_INTERNAL, "out of memory");
		return NULL;
	}
	mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &t);
	mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &io);
	mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &io);
	mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (set_tls(m, cfg, e) == -1)
		goto bad;
	/* no password in the url: libmariadb reads MYSQL_PWD, as the
	 * mysql client does */
	if (mysql_real_connect(m, u.host, u.user, u.password, u.db, u.port,
	    NULL, 0) == NULL) {
		no = mysql_errno(m);
		tf = no == CR_SSL_CONNECTION_ERROR ? tls_failure(mysql_error(m)) :
		    TLS_REFUSED;
		if (no == CR_SSL_CONNECTION_ERROR && tf == TLS_UNVERIFIED) {
			/* the same certificate fails the same check at every
			 * attempt: configuration, refused for good */
			const char *why = mysql_error(m), *p;
			char name[300];

			/* the host name is checked after the chain verified */
			if (strstr(why, "Validation of SSL server certificate") !=
			    NULL) {
				snprintf(name, sizeof(name), "it does not name "
				    "the host '%s'", u.host);
				why = name;
			} else if ((p = strrchr(why, ':')) != NULL)
				why = p + 1 + (p[1] == ' ');
			unverified(e, cfg, u.host, u.port, why);
		}
		else if (no == CR_SSL_CONNECTION_ERROR && tf == TLS_NETWORK)
			p2o_fail(e, P2O_EXIT_TEMPFAIL, "could not open the %s "
			    "connection to %s:%u: the TLS handshake failed: %s",
			    kind, u.host, u.port, mysql_error(m));
		else if (code_for(no) == P2O_EXIT_AUTH)
			p2o_fail(e, P2O_EXIT_AUTH, "authentication failed at "
			    "%s:%u: %s", u.host, u.port, mysql_error(m));
		else
			p2o_fail(e, code_for(no), "could not open the %s "
			    "connection to %s:%u: %s", kind, u.host, u.port,
			    mysql_error(m));
		goto bad;
	}
	if (check_tls(m, cfg, u.host, u.port, e) == -1)
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

void
myconn_close(struct st_mysql *m)
{
	if (m != NULL)
		mysql_close(m);
}

int
myconn_mariadb(struct st_mysql *m)
{
	return strstr(mysql_get_server_info(m), "MariaDB") != NULL;
}

int
myconn_failed(struct st_mysql *m, const char *what, struct p2o_err *e)
{
	unsigned err = mysql_errno(m);
	int refused = err == ER_TABLEACCESS_DENIED_ERROR ||
	    err == ER_COLUMNACCESS_DENIED_ERROR ||
	    err == ER_DBACCESS_DENIED_ERROR ||
	    err == ER_SPECIFIC_ACCESS_DENIED_ERROR;

	return p2o_fail(e, refused ? P2O_EXIT_REFUSED : P2O_EXIT_TEMPFAIL,
	    "%s: %s", what, mysql_error(m));
}

int
myconn_exec(struct st_mysql *m, const char *sql, const char *what,
    struct p2o_err *e)
{
	if (mysql_real_query(m, sql, strlen(sql)) != 0)
		return myconn_failed(m, what, e);
	return 0;
}

struct st_mysql_res *
myconn_query(struct st_mysql *m, const char *sql, const char *what,
    struct p2o_err *e)
{
	MYSQL_RES *r;

	if (myconn_exec(m, sql, what, e) == -1)
		return NULL;
	if ((r = mysql_store_result(m)) == NULL) {
		myconn_failed(m, what, e);
		return NULL;
	}
	return r;
}

int
myconn_query_u64(struct st_mysql *m, const char *sql, const char *what,
    uint64_t *n, struct p2o_err *e)
{
	MYSQL_RES *r;
	MYSQL_ROW row;

	if ((r = myconn_query(m, sql, what, e)) == NULL)
		return -1;
	*n = 0;
	if ((row = mysql_fetch_row(r)) != NULL && row[0] != NULL)
		*n = strtoull(row[0], NULL, 10);
	mysql_free_result(r);
	return 0;
}

void
myconn_quote(struct st_mysql *m, struct sbuf *out, const char *s, size_t n)
{
	sbuf_grow(out, 2 * n + 3);
	out->buf[out->len++] = '\'';
	out->len += mysql_real_escape_string(m, out->buf + out->len, s,
	    (unsigned long)n);
	out->buf[out->len++] = '\'';
	out->buf[out->len] = '\0';
}

void
myconn_ident(struct sbuf *out, const char *name)
{
	const char *p;

	sbuf_addc(out, '`');
	for (p = name; *p; p++) {
		if (*p == '`')
			sbuf_addc(out, '`');
		sbuf_addc(out, *p);
	}
	sbuf_addc(out, '`');
}

int
myconn_value_session(struct st_mysql *m, struct p2o_err *e)
{
	return myconn_exec(m, "SET NAMES utf8mb4, time_zone = '+00:00', "
	    "sql_mode = ''", "setting the session", e);
}

int
myconn_binlog_now(struct st_mysql *m, char *file, size_t filelen,
    uint32_t *offset, struct p2o_err *e)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	const char *sql = "SHOW MASTER STATUS";

	if (mysql_real_query(m, sql, strlen(sql)) != 0) {
		/* MySQL 8.4 has only the new name */
		sql = "SHOW BINARY LOG STATUS";
		if (mysql_errno(m) != ER_PARSE_ERROR ||
		    mysql_real_query(m, sql, strlen(sql)) != 0) {
			if (mysql_errno(m) == ER_SPECIFIC_ACCESS_DENIED_ERROR)
				return p2o_fail(e, P2O_EXIT_REFUSED, "reading "
				    "the binlog position needs the REPLICATION "
				    "CLIENT privilege (BINLOG MONITOR on "
				    "MariaDB): %s", mysql_error(m));
			return myconn_failed(m, "reading the binlog position",
			    e);
		}
	}
	if ((r = mysql_store_result(m)) == NULL)
		return myconn_failed(m, "reading the binlog position", e);
	row = mysql_fetch_row(r);
	if (row == NULL || row[0] == NULL || row[1] == NULL ||
	    binlog_file_index(row[0], strlen(row[0])) < 0) {
		mysql_free_result(r);
		return p2o_fail(e, P2O_EXIT_REFUSED, "the server reports no "
		    "binlog position (is log_bin on?)");
	}
	snprintf(file, filelen, "%s", row[0]);
	*offset = (uint32_t)strtoul(row[1], NULL, 10);
	mysql_free_result(r);
	return 0;
}
