/*
 * mysource.c - MySQL's and MariaDB's operations table (source_ops.h): the
 * catalogue init reads (mylist.c), and what the pg2osync command and the
 * supervisor do to the server, over myserver.c's contract and facts. The server keeps no slot and no publication: a
 * reload applies nothing to it, bootstrap creates nothing, drop-slot has
 * nothing to drop; the stream's position is the binlog's own coordinate.
 *
 * It owns the script setup-sql prints for an administrator (the my.cnf
 * block, the settings for the running server, the user and its grants)
 * and the facts status shows. It never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "config.h"
#include "myconn.h"
#include "mygtid.h"
#include "mylist.h"
#include "myserver.h"
#include "p2o.h"
#include "sbuf.h"
#include "source.h"
#include "source_ops.h"
#include "validate/check.h"

static int
my_bootstrap(const struct config *cfg, FILE *out, struct p2o_err *e)
{
	fprintf(out, "a MySQL source has no slot or publication to create\n");
	return 0;
}

/* ---- status, the stream, the position now ---- */

/* the server's binlog now, for judging a checkpoint against it */
struct my_now {
	char	 file[MYPOS_FILE_MAX];
	uint32_t off;
	char	**files;	/* the files it holds, oldest first */
	uint64_t *sizes;
	int	 n;
};

static void
now_free(void *p)
{
	struct my_now *now = p;

	if (now == NULL)
		return;
	mysrv_binlogs_free(now->files, now->sizes, now->n);
	free(now);
}

static int
my_status(const struct config *cfg, struct source_status *st,
    struct p2o_err *e)
{
	struct my_now *now = xcalloc(1, sizeof(*now));
	MYSQL *m;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	st->priv = now;
	st->priv_free = now_free;
	if ((m = myconn_open(cfg, "catalogue", e)) == NULL)
		return -1;
	if (myconn_binlog_now(m, now->file, sizeof(now->file), &now->off,
	    e) == -1 || mysrv_binlogs(m, &now->files, &now->sizes, &now->n,
	    e) == -1)
		goto out;
	st->kind = cfg->source->kind;
	snprintf(st->engine, sizeof(st->engine), "%s", myconn_mariadb(m) ?
	    "MariaDB" : "MySQL");
	snprintf(st->pos_text, sizeof(st->pos_text), "%s:%u", now->file,
	    now->off);
	snprintf(st->where, sizeof(st->where), "binlog at %s:%u (%d file(s), "
	    "from %s)", now->file, now->off, now->n, now->n ? now->files[0] :
	    "-");
	rc = 0;
out:
	myconn_close(m);
	return rc;
}

/* bytes from file:off to the server's end, from the files' sizes; -1
 * when the file is not among them */
static int64_t
behind(const struct my_now *now, const char *file, uint32_t off)
{
	int64_t b = 0;
	int i, k;

	for (k = 0; k < now->n && strcmp(now->files[k], file) != 0; k++)
		;
	if (k == now->n)
		return -1;
	if (strcmp(file, now->file) == 0)
		return now->off > off ? (int64_t)(now->off - off) : 0;
	b = (int64_t)now->sizes[k] - off;
	for (i = k + 1; i < now->n && strcmp(now->files[i], now->file) != 0;
	    i++)
		b += (int64_t)now->sizes[i];
	return b + now->off;
}

static int
my_status_ckpt(const struct source_status *st, const char *text,
    uint64_t pos, struct source_ckpt *ck, struct p2o_err *e)
{
	const struct my_now *now = st->priv;
	struct mypos p;
	char err[128];
	long long a, b;

	(void)pos;
	(void)e;
	memset(ck, 0, sizeof(*ck));
	ck->lag_bytes = -1;
	if (mypos_parse(&p, text, err, sizeof(err)) == -1)
		return 0;
	ck->parsed = 1;
	a = binlog_file_index(p.file, strlen(p.file));
	b = binlog_file_index(now->file, strlen(now->file));
	ck->reached = a > b || (a == b && p.offset >= now->off);
	ck->lag_bytes = behind(now, p.file, p.offset);
	ck->gone = ck->lag_bytes < 0;
	snprintf(ck->resume_file, sizeof(ck->resume_file), "%s", p.file);
	snprintf(ck->resume, sizeof(ck->resume), "binlog file '%s'", p.file);
	mypos_release(&p);
	return 0;
}

/* a binlog dump thread of the user the source url names (the server does
 * not say which replica id a dump thread serves) */
static int
my_stream_live(const struct config *cfg, char *why, size_t len,
    struct p2o_err *e)
{
	char id[32];
	MYSQL *m;
	int n, rc = 0;

	if ((m = myconn_open(cfg, "reindex", e)) == NULL)
		return -1;
	if (mysrv_dump_threads(m, &n, id, sizeof(id), e) == -1)
		rc = -1;
	else if (n > 0) {
		snprintf(why, len, "binlog dump thread %s of this source's user "
		    "is running", id);
		rc = 1;
	}
	myconn_close(m);
	return rc;
}

/* the binlog's file and offset now: the capture's positions follow every
 * event outside a transaction, so a quiet server's is reached too */
static int
my_pos_now(const struct config *cfg, void **conn, struct sbuf *text,
    struct p2o_err *e)
{
	char file[MYPOS_FILE_MAX];
	uint32_t off;

	if (*conn == NULL && (*conn = myconn_open(cfg, "synced", e)) == NULL)
		return -1;
	if (myconn_binlog_now(*conn, file, sizeof(file), &off, e) == -1) {
		myconn_close(*conn);
		*conn = NULL;
		return -1;
	}
	sbuf_addf(text, "%s:%u", file, (unsigned)off);
	return 0;
}

static void
my_pos_close(void *conn)
{
	if (conn != NULL)
		myconn_close(conn);
}

/* ---- setup-sql ---- */

/* the url's user, when its variable is set (never its password) */
static void
my_url_user(const struct config *cfg, char *user, size_t len)
{
	const char *url = cfg->source_url_env ? getenv(cfg->source_url_env) :
	    cfg->source_url;
	struct my_url u;
	char err[128];

	user[0] = '\0';
	if (url == NULL || *url == '\0' ||
	    my_url_parse(url, &u, err, sizeof(err)) != 0)
		return;
	snprintf(user, len, "%s", u.user ? u.user : "");
	my_url_release(&u);
}

static void
grant_select(struct sbuf *b, const char *db, const char *table,
    const char *role)
{
	sbuf_adds(b, "GRANT SELECT ON ");
	myconn_ident(b, db);
	sbuf_addc(b, '.');
	myconn_ident(b, table);
	sbuf_addf(b, " TO '%s'@'%%';\n", role);
}

static void
my_setup_sql(struct sbuf *b, const struct config *cfg, const char *role)
{
	const char **nest, *dot;
	char *db;
	int i, k, seen, nnest;

	sbuf_addf(b, "-- pg2osync setup-sql for '%s' (MySQL, MariaDB)\n"
	    "-- Run as an administrator: mysql < setup.sql\n\n"
	    "-- 1. In my.cnf (log_bin takes a restart; MariaDB's is off by "
	    "default):\n"
	    "--   [mysqld]\n"
	    "--   log_bin          = binlog\n"
	    "--   binlog_format    = ROW\n"
	    "--   binlog_row_image = FULL     # MINIMAL and NOBLOB lose "
	    "unchanged columns\n"
	    "--   server_id        = 1        # the server's own: not %lu, "
	    "which is pg2osync's\n"
	    "--   binlog_expire_logs_seconds = 604800   # longer than the "
	    "pipeline may be down\n"
	    "--   # MySQL 8, to resume on a promoted replica: gtid_mode = ON, "
	    "enforce_gtid_consistency = ON\n\n"
	    "-- 2. The same for the running server, until it restarts:\n"
	    "SET GLOBAL binlog_format = 'ROW';\n"
	    "SET GLOBAL binlog_row_image = 'FULL';\n"
	    "-- MySQL 8 only: SET GLOBAL binlog_row_value_options = '';\n\n"
	    "-- 3. The user pg2osync connects as; its password is never "
	    "written in a file:\n"
	    "--    ALTER USER '%s'@'%%' IDENTIFIED BY '...';\n"
	    "CREATE USER IF NOT EXISTS '%s'@'%%';\n", cfg->path,
	    cfg->server_id, role, role);
	for (i = 0; i < cfg->nsyncs; i++) {
		for (seen = 0, k = 0; k < i; k++)
			seen |= strcmp(cfg->syncs[k].rel, cfg->syncs[i].rel) == 0;
		if (!seen)
			grant_select(b, cfg->syncs[i].schema,
			    cfg->syncs[i].table, role);
	}
	/* what collections read: the load's statements and the capture's
	 * re-reads */
	nnest = config_nest_tables(cfg, &nest);
	for (i = 0; i < nnest; i++) {
		dot = strchr(nest[i], '.');
		db = xstrndup(nest[i], (size_t)(dot - nest[i]));
		grant_select(b, db, dot + 1, role);
		free(db);
	}
	free(nest);
	sbuf_addf(b, "-- REPLICATION CLIENT is called BINLOG MONITOR on MariaDB "
	    "10.5 and later\nGRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* "
	    "TO '%s'@'%%';\n", role);
}

const struct source_ops mysource_ops = {
	.what = "a MySQL source",
	.catalogue = mylist_catalogue,
	.validate = validate_my,
	.reload_apply = NULL,
	.url_user = my_url_user,
	.setup_sql = my_setup_sql,
	.bootstrap = my_bootstrap,
	.drop_stream = NULL,
	.status = my_status,
	.status_ckpt = my_status_ckpt,
	.stream_live = my_stream_live,
	.pos_now = my_pos_now,
	.pos_close = my_pos_close,
};
