/*
 * myserver.h - a MySQL or MariaDB server's side of the pipeline, with one
 * owner: what the server says about itself (the binary log settings, the
 * server's own id, what the user may do, the binlog files it still holds,
 * its position now, the binlog dumps it serves) and the contract a
 * pipeline needs it to keep, as a list of checks over those facts, each
 * yielding verdicts (source_ops.h). capture-mysql refuses at the first
 * failure of the checks marked as its own; validate reports every one;
 * setup-sql prints the block that keeps them.
 *
 * Reads variables and SHOW output only; never writes and never exits.
 */
#ifndef MYSERVER_H
#define MYSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "source_ops.h"

struct config;
struct st_mysql;

struct mysrv_facts {
	char	 version[96];
	int	 mariadb;
	char	 log_bin[16];		/* "ON", "OFF" */
	char	 binlog_format[32];	/* "ROW" */
	char	 row_image[32];		/* "FULL" */
	char	 value_options[64];	/* MySQL: "" or "PARTIAL_JSON" */
	char	 checksum[16];		/* binlog_checksum: "CRC32", "NONE" */
	char	 gtid_mode[32];		/* MySQL: "ON", "OFF"; MariaDB: "" */
	char	 expire[64];		/* the retention setting, as text */
	unsigned long server_id;	/* the server's own */
	int	 repl_slave;		/* the user holds REPLICATION SLAVE */
	int	 repl_client;		/* REPLICATION CLIENT (BINLOG MONITOR) is
					 * granted, or SHOW MASTER STATUS answers */
	int	 tls;			/* the connection is encrypted */
	char	 managed[16];		/* "rds", "aurora" or "" */
};

/* myserver.c */

/* 0, or -1 with err */
int	mysrv_facts(struct st_mysql *, struct mysrv_facts *, struct p2o_err *);
/* SHOW BINARY LOGS: the files the server holds, oldest first, with their
 * sizes: 0 with *files (mysrv_binlogs_free), or -1 with err (69 without
 * the privilege) */
int	mysrv_binlogs(struct st_mysql *, char ***files, uint64_t **sizes,
	    int *n, struct p2o_err *);
void	mysrv_binlogs_free(char **files, uint64_t *sizes, int n);
/* the binlog dumps of the user the connection runs as, running now (the
 * server does not say which replica id a dump serves): 0 with *n and the
 * first one's thread id in id, or -1 with err */
int	mysrv_dump_threads(struct st_mysql *, int *n, char *id, size_t idlen,
	    struct p2o_err *);
/*
 * The contract: log_bin, binlog_format ROW, binlog_row_image FULL, no
 * PARTIAL_JSON, a replica id (cfg's server_id) other than the server's,
 * the user's replication grants. A capture judges only the checks it
 * cannot stream without (at_start: what it refused by before the list
 * was one); validate every one.
 */
int	mysrv_judge(const struct mysrv_facts *, const struct config *,
	    int at_start, source_emit, void *);
/* 0 when "SELECT 1 FROM qrel WHERE (cond) LIMIT 0" compiles, 1 when the
 * server refuses it (its words in why), -1 when it could not be asked */
int	mysrv_where_compiles(struct st_mysql *, const char *qrel,
	    const char *cond, char *why, size_t whylen, struct p2o_err *);

#endif
