/*
 * myserver.c - the server's settings and the user's rights (myserver.h),
 * read with SHOW and SELECT @@: the same variables capture-mysql refuses
 * to stream without. Never writes; never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mysql.h>

#include "myconn.h"
#include "myserver.h"
#include "p2o.h"
#include "sbuf.h"

static void
copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

static int
settings(MYSQL *m, struct mysrv_facts *f, struct p2o_err *e)
{
	MYSQL_RES *r;
	MYSQL_ROW row;

	r = myconn_query(m, "SHOW GLOBAL VARIABLES WHERE Variable_name IN "
	    "('log_bin', 'binlog_format', 'binlog_row_image', "
	    "'binlog_row_value_options', 'server_id', 'expire_logs_days', "
	    "'binlog_expire_logs_seconds', 'aurora_version', 'basedir')",
	    "reading the server's settings", e);
	if (r == NULL)
		return -1;
	while ((row = mysql_fetch_row(r)) != NULL) {
		const char *k = row[0], *v = row[1] ? row[1] : "";

		if (strcasecmp(k, "log_bin") == 0)
			copy(f->log_bin, sizeof(f->log_bin), v);
		else if (strcasecmp(k, "binlog_format") == 0)
			copy(f->binlog_format, sizeof(f->binlog_format), v);
		else if (strcasecmp(k, "binlog_row_image") == 0)
			copy(f->row_image, sizeof(f->row_image), v);
		else if (strcasecmp(k, "binlog_row_value_options") == 0)
			copy(f->value_options, sizeof(f->value_options), v);
		else if (strcasecmp(k, "server_id") == 0)
			f->server_id = strtoul(v, NULL, 10);
		else if (strcasecmp(k, "binlog_expire_logs_seconds") == 0 &&
		    strcmp(v, "0") != 0)
			snprintf(f->expire, sizeof(f->expire),
			    "binlog_expire_logs_seconds = %s", v);
		else if (strcasecmp(k, "expire_logs_days") == 0 &&
		    f->expire[0] == '\0' && strtod(v, NULL) > 0)
			snprintf(f->expire, sizeof(f->expire),
			    "expire_logs_days = %s", v);
		else if (strcasecmp(k, "aurora_version") == 0)
			copy(f->managed, sizeof(f->managed), "aurora");
		else if (strcasecmp(k, "basedir") == 0 &&
		    strstr(v, "rdsdbbin") != NULL && f->managed[0] == '\0')
			copy(f->managed, sizeof(f->managed), "rds");
	}
	mysql_free_result(r);
	return 0;
}

/* the user's global grants name REPLICATION SLAVE (or ALL) */
static int
grants(MYSQL *m, struct mysrv_facts *f, struct p2o_err *e)
{
	MYSQL_RES *r;
	MYSQL_ROW row;

	if ((r = myconn_query(m, "SHOW GRANTS", "reading the user's grants",
	    e)) == NULL)
		return -1;
	while ((row = mysql_fetch_row(r)) != NULL)
		if (row[0] != NULL && strstr(row[0], " ON *.* ") != NULL &&
		    (strcasestr(row[0], "REPLICATION SLAVE") != NULL ||
		    strcasestr(row[0], "REPLICATION REPLICA") != NULL ||
		    strncasecmp(row[0], "GRANT ALL PRIVILEGES ON *.*", 27) == 0))
			f->repl_slave = 1;
	mysql_data_seek(r, 0);
	while ((row = mysql_fetch_row(r)) != NULL)
		if (row[0] != NULL && strstr(row[0], " ON *.* ") != NULL &&
		    (strcasestr(row[0], "REPLICATION CLIENT") != NULL ||
		    strcasestr(row[0], "BINLOG MONITOR") != NULL ||
		    strncasecmp(row[0], "GRANT ALL PRIVILEGES ON *.*", 27) == 0))
			f->repl_client = 1;
	mysql_free_result(r);
	return 0;
}

int
mysrv_facts(MYSQL *m, struct mysrv_facts *f, struct p2o_err *e)
{
	struct p2o_err ignored;
	char file[256];
	uint32_t off;

	memset(f, 0, sizeof(*f));
	copy(f->version, sizeof(f->version), mysql_get_server_info(m));
	f->mariadb = myconn_mariadb(m);
	f->tls = mysql_get_ssl_cipher(m) != NULL;
	if (settings(m, f, e) == -1 || grants(m, f, e) == -1)
		return -1;
	/* a refusal here is an answer (no REPLICATION CLIENT), not a
	 * failure; without a binary log it answers nothing either way */
	if (myconn_binlog_now(m, file, sizeof(file), &off, &ignored) == 0)
		f->repl_client = 1;
	return 0;
}

int
mysrv_binlogs(MYSQL *m, char ***files, uint64_t **sizes, int *n,
    struct p2o_err *e)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	size_t rows;

	*files = NULL;
	*sizes = NULL;
	*n = 0;
	if ((r = myconn_query(m, "SHOW BINARY LOGS", "listing the binary logs",
	    e)) == NULL)
		return -1;
	rows = mysql_num_rows(r);
	*files = xcalloc(rows + 1, sizeof(char *));
	*sizes = xcalloc(rows + 1, sizeof(uint64_t));
	while ((row = mysql_fetch_row(r)) != NULL) {
		if (row[0] == NULL)
			continue;
		(*files)[*n] = xstrdup(row[0]);
		(*sizes)[*n] = row[1] ? strtoull(row[1], NULL, 10) : 0;
		(*n)++;
	}
	mysql_free_result(r);
	return 0;
}

void
mysrv_binlogs_free(char **files, uint64_t *sizes, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(files[i]);
	free(files);
	free(sizes);
}

int
mysrv_where_compiles(MYSQL *m, const char *qrel, const char *cond, char *why,
    size_t whylen, struct p2o_err *e)
{
	struct sbuf q = SBUF_INIT;
	MYSQL_RES *r;
	unsigned err;
	int rc;

	sbuf_addf(&q, "SELECT 1 FROM %s WHERE (%s) LIMIT 0", qrel, cond);
	rc = mysql_real_query(m, q.buf, (unsigned long)q.len);
	sbuf_release(&q);
	if (rc == 0) {
		if ((r = mysql_store_result(m)) != NULL)
			mysql_free_result(r);
		return 0;
	}
	err = mysql_errno(m);
	/* 2000-2999 are the client's own: the connection, not the filter */
	if (err >= 2000 && err < 3000)
		return myconn_failed(m, "compiling a filter", e);
	snprintf(why, whylen, "%s", mysql_error(m));
	return 1;
}
