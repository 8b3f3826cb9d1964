/*
 * validate/my.c - validate's MySQL and MariaDB checks: the connection and
 * its TLS, the server's contract (lib/mysql/myserver.c's verdicts: the
 * binary log settings capture-mysql refuses to stream without, the
 * replica id, the user's replication grants), and every table
 * (lib/mysql/mycat.c's rules, the columns a section names, its 'where'
 * compiled with LIMIT 0). Read-only.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mysql.h>

#include "validate/check.h"
#include "mysql/mycat.h"
#include "mysql/myconn.h"
#include "mysql/myserver.h"
#include "p2o.h"
#include "where.h"

#define MAX_NAMED	256

static char *
quote(void *arg, const char *s, int ident)
{
	struct sbuf b = SBUF_INIT;

	if (ident)
		myconn_ident(&b, s);
	else
		myconn_quote(arg, &b, s, strlen(s));
	return b.buf ? b.buf : xstrdup("");
}

static void
filter(struct check_report *r, MYSQL *m, const struct sync_section *s)
{
	const struct sync_more *more = sync_more(s);
	struct sbuf rel = SBUF_INIT, cond = SBUF_INIT;
	struct p2o_err e;
	char why[512];
	int rc;

	if (more->where_expr == NULL)
		return;
	p2o_err_clear(&e);
	myconn_ident(&rel, s->schema);
	sbuf_addc(&rel, '.');
	myconn_ident(&rel, s->table);
	if (where_sql(more->where_expr, &cond, quote, m) == -1)
		check_fail(r, "table '%s': the filter could not be quoted",
		    s->rel);
	else {
		rc = mysrv_where_compiles(m, rel.buf, cond.buf, why,
		    sizeof(why), &e);
		check_where(r, s, rc, why, &e);
	}
	sbuf_release(&rel);
	sbuf_release(&cond);
}

static void
table(struct check_report *r, MYSQL *m, int mariadb,
    const struct sync_section *s)
{
	struct named_col v[MAX_NAMED];
	struct my_table t;
	struct p2o_err e;
	int n, i, ok = 1;

	p2o_err_clear(&e);
	if (mycat_describe(m, mariadb, s, &t, &e) == -1) {
		if (strncmp(e.msg, "table '", 7) == 0)
			check_fail(r, "%s", e.msg);
		else
			check_fail(r, "table '%s': %s", s->rel, e.msg);
		return;
	}
	n = section_columns(s, v, MAX_NAMED);
	for (i = 0; i < n; i++)
		if (mycat_column(&t, v[i].col) < 0) {
			check_fail(r, "table '%s': 'sync.%s.%s' names column "
			    "'%s', which the table does not have", s->rel,
			    s->name, v[i].key, v[i].col);
			ok = 0;
		}
	if (ok) {
		check_ok(r, "table '%s': %d column(s), %s", s->rel, t.ncols,
		    t.nkeys ? "a key" : "no key: append_only");
		filter(r, m, s);
	}
	my_table_release(&t);
}

void
validate_my(struct check_report *r, const struct config *cfg)
{
	struct mysrv_facts f;
	struct p2o_err e;
	MYSQL *m;
	int i;

	p2o_err_clear(&e);
	if ((m = myconn_open(cfg, "catalogue", &e)) == NULL) {
		check_fail(r, "source: %s", e.msg);
		check_skip(r, "source: the binlog settings and the tables: not "
		    "checked without a connection");
		return;
	}
	if (mysrv_facts(m, &f, &e) == -1) {
		check_fail(r, "source: %s", e.msg);
		myconn_close(m);
		return;
	}
	check_ok(r, "source: connected to %s %s (%s, sslmode %s)",
	    f.mariadb ? "MariaDB" : "MySQL", f.version, f.tls ? "TLS" :
	    "no TLS", cfg->sslmode ? cfg->sslmode : "prefer");
	mysrv_judge(&f, cfg, 0, check_verdict, r);
	for (i = 0; i < cfg->nsyncs; i++)
		table(r, m, f.mariadb, &cfg->syncs[i]);
	myconn_close(m);
}
