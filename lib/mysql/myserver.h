/*
 * myserver.h - what a MySQL or MariaDB server says about itself, for the
 * programs that look before or beside the stream (the pg2osync command's
 * validate and status): the binary log settings a capture needs, the
 * server's own id, what the user may do, the binlog files it still holds.
 * Reads variables and SHOW output only; never writes and never exits.
 */
#ifndef MYSERVER_H
#define MYSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct st_mysql;

struct mysrv_facts {
	char	 version[96];
	int	 mariadb;
	char	 log_bin[16];		/* "ON", "OFF" */
	char	 binlog_format[32];	/* "ROW" */
	char	 row_image[32];		/* "FULL" */
	char	 value_options[64];	/* MySQL: "" or "PARTIAL_JSON" */
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
/* 0 when "SELECT 1 FROM qrel WHERE (cond) LIMIT 0" compiles, 1 when the
 * server refuses it (its words in why), -1 when it could not be asked */
int	mysrv_where_compiles(struct st_mysql *, const char *qrel,
	    const char *cond, char *why, size_t whylen, struct p2o_err *);

#endif
