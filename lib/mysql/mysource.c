/*
 * mysource.c - a MySQL or MariaDB source's operations (source_ops.h): what
 * the pg2osync command and the supervisor do to it, over myserver.c's
 * contract and facts. The server keeps no slot and no publication: a
 * reload applies nothing to it, bootstrap creates nothing, drop-slot has
 * nothing to drop; the stream's position is the binlog's own coordinate.
 *
 * It never exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "config.h"
#include "myconn.h"
#include "mygtid.h"
#include "myserver.h"
#include "p2o.h"
#include "sbuf.h"
#include "source_ops.h"
#include "validate/check.h"

static int
my_bootstrap(const struct config *cfg, FILE *out, struct p2o_err *e)
{
	fprintf(out, "a MySQL source has no slot or publication to create\n");
	return 0;
}

/* ---- the stream, the position now ---- */

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

const struct source_ops my_source_ops = {
	.kind = "mysql",
	.title = "MySQL",
	.validate = validate_my,
	.reload_apply = NULL,
	.bootstrap = my_bootstrap,
	.drop_stream = NULL,
	.stream_live = my_stream_live,
	.pos_now = my_pos_now,
	.pos_close = my_pos_close,
};
