/*
 * myserver.c - the server's settings and the user's rights (myserver.h),
 * read with SHOW and SELECT @@, and the contract judged on them: the one
 * list of checks capture-mysql refuses by and validate reports. The
 * judges read nothing themselves. Never writes; never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mysql.h>

#include "config.h"
#include "myconn.h"
#include "myserver.h"
#include "p2o.h"
#include "sbuf.h"
#include "source_ops.h"

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
	    "'binlog_row_value_options', 'binlog_checksum', 'gtid_mode', "
	    "'server_id', 'expire_logs_days', 'binlog_expire_logs_seconds', "
	    "'aurora_version', 'basedir')",
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
		else if (strcasecmp(k, "binlog_checksum") == 0)
			copy(f->checksum, sizeof(f->checksum), v);
		else if (strcasecmp(k, "gtid_mode") == 0)
			copy(f->gtid_mode, sizeof(f->gtid_mode), v);
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
mysrv_dump_threads(MYSQL *m, int *n, char *id, size_t idlen,
    struct p2o_err *e)
{
	MYSQL_RES *r;
	MYSQL_ROW row;

	*n = 0;
	if ((r = myconn_query(m, "SELECT ID FROM information_schema.PROCESSLIST "
	    "WHERE COMMAND LIKE 'Binlog Dump%' AND "
	    "USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1)",
	    "looking for a binlog dump thread", e)) == NULL)
		return -1;
	while ((row = mysql_fetch_row(r)) != NULL)
		if ((*n)++ == 0)
			snprintf(id, idlen, "%s", row[0] ? row[0] : "?");
	mysql_free_result(r);
	return 0;
}

/* ---- the contract ---- */

struct mysrv_check {
	const char *name;
	int	 at_start;	/* the capture refuses by it */
	void	(*judge)(const struct mysrv_facts *, const struct config *,
		    struct source_verdict *);
};

/* where a managed service keeps the binlog settings */
static const char *
where_set(const struct mysrv_facts *f)
{
	if (strcmp(f->managed, "aurora") == 0)
		return "on Aurora MySQL: in the DB cluster parameter group, "
		    "then reboot the writer";
	if (strcmp(f->managed, "rds") == 0)
		return "on Amazon RDS: in the DB parameter group (and automated "
		    "backups on, which enables the binary log)";
	return "in my.cnf under [mysqld] (pg2osync setup-sql prints the "
	    "block)";
}

static void
judge_log_bin(const struct mysrv_facts *f, const struct config *cfg,
    struct source_verdict *v)
{
	if (strcasecmp(f->log_bin, "ON") == 0 || strcmp(f->log_bin, "1") == 0) {
		source_verdict_set(v, SV_OK, 0, "source", "log_bin = ON");
		return;
	}
	source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source", "the server "
	    "writes no binary log (log_bin is %s): set log_bin = binlog %s, "
	    "and restart the server", f->log_bin[0] ? f->log_bin : "missing",
	    where_set(f));
	snprintf(v->remedy, sizeof(v->remedy), "log_bin = binlog");
}

static void
judge_format(const struct mysrv_facts *f, const struct config *cfg,
    struct source_verdict *v)
{
	if (strcasecmp(f->binlog_format, "ROW") == 0) {
		source_verdict_set(v, SV_OK, 0, "source", "binlog_format = ROW");
		return;
	}
	source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source",
	    "binlog_format is %s: row-based logging is required (SET GLOBAL "
	    "binlog_format = ROW, and binlog_format = ROW %s)",
	    f->binlog_format, where_set(f));
	snprintf(v->remedy, sizeof(v->remedy), "SET GLOBAL binlog_format = "
	    "'ROW';");
}

static void
judge_image(const struct mysrv_facts *f, const struct config *cfg,
    struct source_verdict *v)
{
	if (strcasecmp(f->row_image, "FULL") == 0) {
		source_verdict_set(v, SV_OK, 0, "source",
		    "binlog_row_image = FULL");
		return;
	}
	source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source",
	    "binlog_row_image is %s: MINIMAL and NOBLOB leave unchanged "
	    "columns out of an update, which would lose them (SET GLOBAL "
	    "binlog_row_image = FULL, and %s)", f->row_image, where_set(f));
	snprintf(v->remedy, sizeof(v->remedy), "SET GLOBAL binlog_row_image = "
	    "'FULL';");
}

static void
judge_value_options(const struct mysrv_facts *f, const struct config *cfg,
    struct source_verdict *v)
{
	if (strcasestr(f->value_options, "PARTIAL_JSON") == NULL) {
		source_verdict_set(v, SV_OK, 0, "source", "JSON updates are "
		    "logged whole (binlog_row_value_options without "
		    "PARTIAL_JSON)");
		return;
	}
	source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source",
	    "binlog_row_value_options is PARTIAL_JSON: the server would log "
	    "JSON updates as diffs in an event this tool does not apply, and "
	    "those updates would be lost (SET GLOBAL binlog_row_value_options "
	    "= '')");
	snprintf(v->remedy, sizeof(v->remedy), "SET GLOBAL "
	    "binlog_row_value_options = '';");
}

static void
judge_server_id(const struct mysrv_facts *f, const struct config *cfg,
    struct source_verdict *v)
{
	if (f->server_id != cfg->server_id) {
		source_verdict_set(v, SV_OK, 0, "source", "replica id %lu differs "
		    "from the server's own (%lu)", cfg->server_id, f->server_id);
		return;
	}
	source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source",
	    "source.server_id %lu is the server's own server_id: choose "
	    "another replica id", cfg->server_id);
	snprintf(v->remedy, sizeof(v->remedy), "another source.server_id");
}

static void
judge_client(const struct mysrv_facts *f, const struct config *cfg,
    struct source_verdict *v)
{
	if (f->repl_client) {
		source_verdict_set(v, SV_OK, 0, "source", "the user may read the "
		    "binlog position (REPLICATION CLIENT)");
		return;
	}
	source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source", "SHOW "
	    "MASTER STATUS is refused: GRANT REPLICATION CLIENT ON *.* TO the "
	    "user%s", f->mariadb ? " (BINLOG MONITOR on MariaDB 10.5 and "
	    "later)" : "");
	snprintf(v->remedy, sizeof(v->remedy), "GRANT REPLICATION CLIENT ON "
	    "*.* TO the user");
}

static void
judge_slave(const struct mysrv_facts *f, const struct config *cfg,
    struct source_verdict *v)
{
	if (f->repl_slave) {
		source_verdict_set(v, SV_OK, 0, "source", "the user may dump the "
		    "binlog (REPLICATION SLAVE)");
		return;
	}
	source_verdict_set(v, SV_FAIL, P2O_EXIT_REFUSED, "source", "the user "
	    "lacks REPLICATION SLAVE: GRANT REPLICATION SLAVE ON *.* TO the "
	    "user");
	snprintf(v->remedy, sizeof(v->remedy), "GRANT REPLICATION SLAVE ON "
	    "*.* TO the user");
}

/*
 * The grants and the replica id are validate's to report: the capture
 * learns of a missing grant from the server's own refusal (SHOW GRANTS
 * does not show what a role grants), and a replica id equal to the
 * server's is a mistake the dump itself does not refuse.
 */
static const struct mysrv_check checks[] = {
	{ "log_bin", 1, judge_log_bin },
	{ "binlog_format", 1, judge_format },
	{ "binlog_row_image", 1, judge_image },
	{ "binlog_row_value_options", 1, judge_value_options },
	{ "server_id", 0, judge_server_id },
	{ "replication client", 0, judge_client },
	{ "replication slave", 0, judge_slave },
};

int
mysrv_judge(const struct mysrv_facts *f, const struct config *cfg,
    int at_start, source_emit emit, void *arg)
{
	struct source_verdict v;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		if (at_start && !checks[i].at_start)
			continue;
		memset(&v, 0, sizeof(v));
		checks[i].judge(f, cfg, &v);
		if ((rc = emit(arg, &v)) != 0)
			return rc;
	}
	return 0;
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
