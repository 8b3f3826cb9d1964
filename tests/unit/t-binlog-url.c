/*
 * t-binlog-url.c - capture-mysql's source url (server.c my_url_parse):
 * users, percent-escaped passwords, IPv6 hosts, ports, databases, and
 * what is refused without quoting the url; and that libmariadb can load
 * the authentication plugins a MySQL 8 server asks for.
 */
#include <stdio.h>
#include <string.h>

#include <mysql.h>

/* from mysql/client_plugin.h, which includes a header the package lacks */
#define MYSQL_CLIENT_AUTHENTICATION_PLUGIN	2
struct st_mysql_client_plugin;
struct st_mysql_client_plugin *mysql_client_find_plugin(MYSQL *,
	    const char *, int);

#include "tap.h"
#include "mysql/myconn.h"

static int
parses(const char *url, const char *user, const char *pw, const char *host,
    unsigned port, const char *db)
{
	struct my_url u;
	char err[256];
	int good;

	if (my_url_parse(url, &u, err, sizeof(err)) == -1) {
		printf("# %s\n", err);
		return 0;
	}
	good = ((user == NULL && u.user == NULL) || (user && u.user &&
	    strcmp(user, u.user) == 0)) &&
	    ((pw == NULL && u.password == NULL) || (pw && u.password &&
	    strcmp(pw, u.password) == 0)) && strcmp(host, u.host) == 0 &&
	    port == u.port && ((db == NULL && u.db == NULL) || (db && u.db &&
	    strcmp(db, u.db) == 0));
	my_url_release(&u);
	return good;
}

static int
refused(const char *url, const char *secret)
{
	struct my_url u;
	char err[256];

	if (my_url_parse(url, &u, err, sizeof(err)) == 0) {
		my_url_release(&u);
		return 0;
	}
	return secret == NULL || strstr(err, secret) == NULL;
}

int
main(void)
{
	MYSQL *m;

	ok(parses("mysql://sync:s%40cr%3At@db.example:3307/app", "sync",
	    "s@cr:t", "db.example", 3307, "app"), "user, escaped password, "
	    "host, port, database");
	ok(parses("mariadb://u@10.0.0.1/", "u", NULL, "10.0.0.1", 3306, NULL),
	    "mariadb://, no password (MYSQL_PWD then), default port");
	ok(parses("mysql://u:p@q@h", "u", "p@q", "h", 3306, NULL),
	    "the last '@' ends the user info");
	ok(parses("mysql://u:pw@[::1]:4000/d", "u", "pw", "::1", 4000, "d"),
	    "an IPv6 host in brackets");
	ok(parses("mysql://h", NULL, NULL, "h", 3306, NULL), "a host alone");
	ok(refused("postgres://u:secret@h/db", "secret"), "another scheme");
	ok(refused("mysql://u:secret@h:99999/db", "secret"), "a port out of "
	    "range, and the message has no password");
	ok(refused("mysql://u:secret@h/db?ssl-mode=REQUIRED", "secret"),
	    "parameters are refused (sslmode is configured)");
	ok(refused("mysql://u:se%zzret@h/db", "se%zzret"), "a bad escape");
	ok(refused("mysql://u:a%00b@h/db", NULL), "an escaped NUL");
	ok(refused("mysql://u@[::1/db", NULL), "an unclosed IPv6 bracket");

	/* MySQL 8 asks for caching_sha2_password; sha256_password and
	 * mysql_native_password are the others a server may name */
	m = mysql_init(NULL);
	ok(m != NULL && mysql_client_find_plugin(m, "caching_sha2_password",
	    MYSQL_CLIENT_AUTHENTICATION_PLUGIN) != NULL,
	    "libmariadb loads caching_sha2_password");
	ok(m != NULL && mysql_client_find_plugin(m, "mysql_native_password",
	    MYSQL_CLIENT_AUTHENTICATION_PLUGIN) != NULL,
	    "libmariadb has mysql_native_password");
	if (m != NULL)
		mysql_close(m);
	return done_testing();
}
