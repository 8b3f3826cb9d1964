/*
 * mysrc.c - one chunk of a MySQL or MariaDB table: the coordinate it is
 * versioned by and its rows as copy rows on stdout, their values through
 * the source layer's myval_text, the same JSON as the stream's. Never
 * decides which chunk comes next (myload.c does) and never exits.
 *
 * The version of a chunk's rows. A streamed row is versioned by the
 * binlog position of its transaction (generation base + coordinate); a
 * copied row must never outrank the stream with an older value, or the
 * copy wins at the target and the change is lost. So a chunk's version
 * must not be above the position of any change the chunk did not see:
 *
 * - MariaDB: the chunk runs in START TRANSACTION WITH CONSISTENT
 *   SNAPSHOT, and the server reports the binlog position that snapshot
 *   corresponds to (binlog_snapshot_file/_position): the snapshot holds
 *   exactly the transactions written to the binlog before it, the
 *   server's own guarantee. The version is that position. The snapshot
 *   lives for the one SELECT.
 * - MySQL has no such report. The coordinate is read first (SHOW MASTER
 *   STATUS); a transaction written to the binlog before it may still be
 *   committing in the engine, and a plain read would miss it. So the
 *   chunk is a locking read (FOR SHARE), which reads the latest committed
 *   row and cannot pass a row such a transaction holds: it still holds
 *   its row locks until the engine commit. NOWAIT: the loader never
 *   waits inside the server, so it never holds up the application's
 *   writes or becomes half of a deadlock; a locked row makes the chunk
 *   start again a moment later. Whatever it reads that is newer than the
 *   coordinate is newer in the stream too, which then wins.
 *
 * The generation base comes from the checkpoint the load frame carries:
 * base = its position - the coordinate of its text, what the capture
 * resumes with. myload.c argues why a copy versioned in an older
 * generation than the capture's is still safe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>

#include "config.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "xio.h"
#include "mysql/mycat.h"
#include "mysql/myconn.h"
#include "mysql/mygtid.h"
#include "mysql/mynest.h"
#include "mysql/myval.h"
#include "loader.h"

/* MySQL's ER_LOCK_NOWAIT, missing from libmariadb's error list */
#define MY_ER_LOCK_NOWAIT	3572
/* a chunk whose rows stay locked: retried after this long at most */
#define LOCKED_RETRY_MAX_MS	1000
#define LOCKED_LOG_MS		10000
/* the coordinate of a binlog file and offset; -1 for a file without a
 * number */
static int
coord_of(const char *file, uint32_t offset, uint64_t *coord)
{
	long long idx = binlog_file_index(file, strlen(file));

	if (idx < 0)
		return -1;
	*coord = mypos_coord((uint64_t)idx, offset);
	return 0;
}

void
mysrc_quote(void *arg, struct sbuf *out, const char *s, size_t n)
{
	struct myload *my = arg;

	myconn_quote(my->conn, out, s, n);
}

void
mysrc_row_frame(struct sbuf *out, struct sbuf *j, const struct my_table *t,
    uint64_t v, const char *const *vals, const unsigned long *lens)
{
	mynest_row_frame(out, j, 'c', t, v, vals, lens, NULL);
}

/* MariaDB: a snapshot and the binlog position it corresponds to */
static int
snapshot_begin(struct loader *ld, uint64_t *coord)
{
	struct myload *my = ld->src;
	MYSQL_RES *r;
	MYSQL_ROW row;
	char file[MYPOS_FILE_MAX] = "";
	unsigned long long pos = 0;
	int have = 0;

	if (myconn_exec(my->conn, "START TRANSACTION WITH CONSISTENT "
	    "SNAPSHOT, READ ONLY", "starting a snapshot", &ld->err) == -1 ||
	    (r = myconn_query(my->conn, "SHOW STATUS LIKE 'binlog_snapshot_%'",
	    "reading the snapshot's binlog position", &ld->err)) == NULL)
		return -1;
	while ((row = mysql_fetch_row(r)) != NULL) {
		if (row[0] == NULL || row[1] == NULL)
			continue;
		if (strcasecmp(row[0], "binlog_snapshot_file") == 0) {
			snprintf(file, sizeof(file), "%s", row[1]);
			have |= 1;
		} else if (strcasecmp(row[0], "binlog_snapshot_position") ==
		    0) {
			pos = strtoull(row[1], NULL, 10);
			have |= 2;
		}
	}
	mysql_free_result(r);
	if (have != 3 || pos > 0xffffffffu || coord_of(file,
	    (uint32_t)pos, coord) == -1)
		return p2o_fail(&ld->err, P2O_EXIT_REFUSED, "the server "
		    "reports no binlog position for a snapshot "
		    "(binlog_snapshot_file '%s'): is log_bin on?", file);
	return 0;
}

/* MySQL: the coordinate now; the chunk's locking read does the rest */
static int
coordinate_now(struct loader *ld, uint64_t *coord)
{
	struct myload *my = ld->src;
	char file[MYPOS_FILE_MAX];
	uint32_t offset;

	if (myconn_binlog_now(my->conn, file, sizeof(file), &offset,
	    &ld->err) == -1)
		return -1;
	if (coord_of(file, offset, coord) == -1)
		return p2o_fail(&ld->err, P2O_EXIT_REFUSED, "the binlog file "
		    "'%s' has no number", file);
	return 0;
}

/* keep the last row's key: heap copies in last[] */
static void
keep_key(const struct my_table *t, MYSQL_ROW row, const unsigned long *lens,
    struct copy_field *last)
{
	char *c;
	int k, i;

	for (k = 0; k < t->nkeys; k++) {
		i = t->keys[k];
		free((char *)last[k].p);
		c = xmalloc(lens[i] + 1);
		memcpy(c, row[i], lens[i]);
		c[lens[i]] = '\0';
		last[k] = (struct copy_field){ c, lens[i] };
	}
}

/*
 * One attempt at a chunk: 1 done, 0 rows were locked (MySQL: try again),
 * -1 with err.
 */
/*
 * A parent's chunk (nest: its collections): the rows are stored, then
 * each collection is read for the chunk's key range in the same snapshot
 * (MariaDB) or with the same locking read (MySQL), so the children are
 * no older than the chunk's version; then the rows go out whole.
 */
static int
chunk_nested(struct loader *ld, const struct my_table *t, MYSQL_RES *r,
    struct mynest *nest, uint64_t v, uint64_t *rows, struct copy_field *last)
{
	struct myload *my = ld->src;
	struct sbuf cond = SBUF_INIT;
	MYSQL_ROW row;
	unsigned long *lens;
	my_ulonglong nr = mysql_num_rows(r);
	int kc = t->keys[0], rc = 0;

	if (nr == 0)
		return 0;
	sbuf_adds(&cond, "BETWEEN ");
	mysql_data_seek(r, 0);
	row = mysql_fetch_row(r);
	lens = mysql_fetch_lengths(r);
	rc |= mynest_literal(nest->key_kind, my->conn, &cond, row[kc], lens[kc]);
	sbuf_adds(&cond, " AND ");
	mysql_data_seek(r, nr - 1);
	row = mysql_fetch_row(r);
	lens = mysql_fetch_lengths(r);
	rc |= mynest_literal(nest->key_kind, my->conn, &cond, row[kc], lens[kc]);
	if (rc != 0) {
		sbuf_release(&cond);
		return p2o_fail(&ld->err, P2O_EXIT_DATA, "table '%s': a key "
		    "value the server returned is not of its column's form",
		    t->rel);
	}
	rc = mynest_read(nest, my->conn, cond.buf, my->mariadb ? "" :
	    "FOR SHARE NOWAIT", &ld->err);
	sbuf_release(&cond);
	if (rc == -1)
		return -1;
	mysql_data_seek(r, 0);
	while ((row = mysql_fetch_row(r)) != NULL) {
		lens = mysql_fetch_lengths(r);
		mynest_row_frame(&ld->out, &ld->json, 'c', t, v,
		    (const char *const *)row, lens, nest);
		keep_key(t, row, lens, last);
		if (ld->out.len >= LOAD_OUT_CAP && load_flush(ld) == -1)
			return -1;
	}
	mynest_flush(nest);
	control_rows(ld, t->rel, nr);
	*rows = nr;
	return control_pace(ld);
}

static int
chunk_once(struct loader *ld, const struct my_table *t, const char *sql,
    struct mynest *nest, uint64_t *rows, struct copy_field *last)
{
	struct myload *my = ld->src;
	MYSQL *m = my->conn;
	MYSQL_RES *r;
	MYSQL_ROW row;
	unsigned long *lens;
	uint64_t coord = 0, v, n = 0;
	unsigned e;
	int rc;
	char what[600];

	snprintf(what, sizeof(what), "reading a chunk of '%s'", t->rel);
	if (my->mariadb ? snapshot_begin(ld, &coord) :
	    coordinate_now(ld, &coord))
		return -1;
	v = my->base + coord;
	if (nest != NULL) {
		if (mysql_real_query(m, sql, strlen(sql)) != 0 ||
		    (r = mysql_store_result(m)) == NULL)
			goto failed;
		rc = chunk_nested(ld, t, r, nest, v, rows, last);
		mysql_free_result(r);
		if (rc == -1) {
			e = mysql_errno(m);
			if (e == MY_ER_LOCK_NOWAIT || e ==
			    ER_LOCK_WAIT_TIMEOUT || e == ER_LOCK_DEADLOCK)
				return 0;
			return -1;
		}
		goto done;
	}
	if (mysql_real_query(m, sql, strlen(sql)) != 0 ||
	    (r = mysql_use_result(m)) == NULL)
		goto failed;
	while ((row = mysql_fetch_row(r)) != NULL) {
		lens = mysql_fetch_lengths(r);
		mysrc_row_frame(&ld->out, &ld->json, t, v,
		    (const char *const *)row, lens);
		keep_key(t, row, lens, last);
		n++;
		if (ld->out.len >= LOAD_OUT_CAP) {
			if (load_flush(ld) == -1) {
				mysql_free_result(r);
				return -1;
			}
			control_rows(ld, t->rel, n - *rows);
			*rows = n;
			if (control_stats(ld, 0) == -1) {
				mysql_free_result(r);
				return -1;
			}
		}
	}
	e = mysql_errno(m);
	mysql_free_result(r);
	control_rows(ld, t->rel, n - *rows);
	*rows = n;
	if (e != 0)
		goto failed;
	/* the rate cap waits between chunks: a server streaming a result
	 * gives up on a reader that stops (net_write_timeout) */
	if (control_pace(ld) == -1)
		return -1;
done:
	/* the snapshot ends with its one SELECT (and a parent's
	 * collections) */
	if (my->mariadb && myconn_exec(m, "COMMIT", "ending a snapshot",
	    &ld->err) == -1)
		return -1;
	return 1;
failed:
	e = mysql_errno(m);
	if (e == MY_ER_LOCK_NOWAIT || e == ER_LOCK_WAIT_TIMEOUT ||
	    e == ER_LOCK_DEADLOCK)
		return 0;
	return myconn_failed(m, what, &ld->err);
}

int
mysrc_chunk(struct loader *ld, const struct my_table *t, const char *sql,
    struct mynest *nest, uint64_t *rows, struct copy_field *last)
{
	long long t0 = now_ms(), logged = t0;
	int rc, wait_ms = 10;

	for (;;) {
		*rows = 0;
		if ((rc = chunk_once(ld, t, sql, nest, rows, last)) != 0)
			break;
		if (now_ms() - logged >= LOCKED_LOG_MS) {
			log_warnx("table '%s': rows locked by open "
			    "transactions have held the load up for %llds",
			    t->rel, (now_ms() - t0) / 1000);
			logged = now_ms();
		}
		if (control_idle(ld, wait_ms) == -1) {
			rc = -1;
			break;
		}
		wait_ms = wait_ms * 2 > LOCKED_RETRY_MAX_MS ?
		    LOCKED_RETRY_MAX_MS : wait_ms * 2;
	}
	if (rc == 1)
		rc = load_flush(ld);
	return rc == -1 ? -1 : 0;
}
