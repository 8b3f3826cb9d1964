/*
 * mysrc.c - what the loader asks a MySQL or MariaDB server: the
 * connection (capture-mysql's: the same url, TLS and authentication), the
 * session every value's text is read in, a table's columns and key (the
 * capture's catalogue code, so both decide a column's JSON form from the
 * same declaration), its row estimate, and one chunk: the coordinate it
 * is versioned by and its rows as copy rows on stdout. Never decides
 * which chunk comes next (myload.c does) and never exits.
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
 * resumes with. See mysrc_base for why a copy versioned in an older
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
#include "../capture-mysql/server.h"
#include "loader.h"

/* MySQL's ER_LOCK_NOWAIT, missing from libmariadb's error list */
#define MY_ER_LOCK_NOWAIT	3572
/* a chunk whose rows stay locked: retried after this long at most */
#define LOCKED_RETRY_MAX_MS	1000
#define LOCKED_LOG_MS		10000
/*
 * The server gives up on a client that reads nothing for
 * net_write_timeout (60 s by default). A chunk's rows reach stdout at
 * the target's pace, and a target that is down holds them: 10 minutes
 * covers an outage the writer waits out, and a longer one ends the
 * chunk, which is read again from the last mark.
 */
#define NET_WRITE_TIMEOUT_S	600

/* a failed statement: privileges are refused (69), everything else is a
 * connection or a server that may come back (75) */
static int
sql_fail(struct loader *ld, const char *what)
{
	MYSQL *m = ld->my->sql;
	unsigned e = mysql_errno(m);
	int refused = e == ER_TABLEACCESS_DENIED_ERROR ||
	    e == ER_COLUMNACCESS_DENIED_ERROR ||
	    e == ER_DBACCESS_DENIED_ERROR ||
	    e == ER_SPECIFIC_ACCESS_DENIED_ERROR;

	return ld_fail(&ld->err, refused ? P2O_EXIT_REFUSED :
	    P2O_EXIT_TEMPFAIL, "%s: %s", what, mysql_error(m));
}

static int
exec(struct loader *ld, const char *sql, const char *what)
{
	if (mysql_real_query(ld->my->sql, sql, strlen(sql)) != 0)
		return sql_fail(ld, what);
	return 0;
}

int
mysrc_open(struct loader *ld)
{
	char set[128];

	ld->my = xcalloc(1, sizeof(*ld->my));
	src_init(ld->my);
	if (src_connect_sql(ld->my, ld->cfg) == -1)
		return ld_fail(&ld->err, ld->my->exit_code, "%s", ld->my->err);
	/*
	 * The session myval_text reads values in: timestamps in UTC, text
	 * in UTF-8, and no sql_mode (PAD_CHAR_TO_FULL_LENGTH would pad a
	 * CHAR the binlog holds trimmed; NO_BACKSLASH_ESCAPES would change
	 * what a quoted literal means).
	 */
	snprintf(set, sizeof(set), "SET time_zone = '+00:00', sql_mode = '', "
	    "net_write_timeout = %d", NET_WRITE_TIMEOUT_S);
	if (exec(ld, "SET NAMES utf8mb4", "setting the session") == -1 ||
	    exec(ld, set, "setting the session") == -1)
		return -1;
	return 0;
}

void
mysrc_close(struct loader *ld)
{
	if (ld->my == NULL)
		return;
	src_release(ld->my);
	free(ld->my);
	ld->my = NULL;
}

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

/*
 * The capture versions by base + coordinate, base being the checkpoint's
 * position less its text's coordinate; the loader takes the same base
 * from the same checkpoint. The capture may open a new generation (a
 * failover: the new server's coordinates are lower) that the loader does
 * not know of: its copies then carry the older generation's base. That
 * is safe because such a copy only ever loses to the stream:
 * - every change the stream carries from the new server is in the new
 *   generation, whose base is past every version of the old one, so it
 *   outranks any copy whatever the copy read;
 * - a copy that loses to an old-generation version leaves that version's
 *   document, written by the stream up to the checkpoint the new server
 *   resumed from, and every later change streams again in the new
 *   generation;
 * - a copy that wins holds the row as the server it was read from had
 *   it, which holds every transaction up to the point it was read.
 * The next run reads the new generation's checkpoint and versions by it.
 */
int
mysrc_base(struct loader *ld)
{
	struct mypos p;
	uint64_t coord;
	char err[256];

	ld->my_base = 0;
	if (!ld->cp_present)
		return 0;
	memset(&p, 0, sizeof(p));
	if (ld->cp_text == NULL || mypos_parse(&p, ld->cp_text, err,
	    sizeof(err)) == -1 || coord_of(p.file, p.offset, &coord) == -1) {
		mypos_release(&p);
		return ld_fail(&ld->err, P2O_EXIT_DATA, "control fd 3: the "
		    "load frame's checkpoint is not a binlog position");
	}
	mypos_release(&p);
	if (ld->cp_pos < coord)
		return ld_fail(&ld->err, P2O_EXIT_CHECKPOINT, "the stored "
		    "checkpoint's position %llu is below the coordinate of its "
		    "own text (%llu): refusing a checkpoint that disagrees "
		    "with itself", (unsigned long long)ld->cp_pos,
		    (unsigned long long)coord);
	ld->my_base = ld->cp_pos - coord;
	return 0;
}

int
mysrc_describe(struct loader *ld, const struct sync_section *sec,
    struct my_table *t, uint64_t *estimate)
{
	struct sbuf q = SBUF_INIT;
	MYSQL_RES *r;
	MYSQL_ROW row;
	char err[768];
	int rc, i;

	rc = src_reload(ld->my, sec->schema, sec->table, t, err, sizeof(err));
	if (rc == 1)
		return ld_fail(&ld->err, P2O_EXIT_REFUSED, "table '%s' (sync "
		    "'%s') does not exist, is not a base table, or the user "
		    "may not read it", sec->rel, sec->name);
	if (rc == -1)
		return ld_fail(&ld->err, ld->my->exit_code ==
		    P2O_EXIT_TEMPFAIL ? P2O_EXIT_TEMPFAIL : P2O_EXIT_REFUSED,
		    "%s", err);
	for (i = 0; i < t->nkeys; i++) {
		const struct my_col *k = &t->cols[t->keys[i]];

		if (!mychunk_pageable(k))
			return ld_fail(&ld->err, P2O_EXIT_REFUSED, "table "
			    "'%s': key column '%s' is %s, whose order the "
			    "server's comparisons do not follow: the table "
			    "cannot be read in key order", t->rel, k->name,
			    k->column_type);
	}

	sbuf_adds(&q, "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE "
	    "TABLE_SCHEMA = ");
	mysrc_quote(ld, &q, t->db, strlen(t->db));
	sbuf_adds(&q, " AND TABLE_NAME = ");
	mysrc_quote(ld, &q, t->name, strlen(t->name));
	rc = exec(ld, q.buf, "reading the row estimate");
	sbuf_release(&q);
	if (rc == -1)
		return -1;
	if ((r = mysql_store_result(ld->my->sql)) == NULL)
		return sql_fail(ld, "reading the row estimate");
	*estimate = 0;
	if ((row = mysql_fetch_row(r)) != NULL && row[0] != NULL)
		*estimate = strtoull(row[0], NULL, 10);
	mysql_free_result(r);
	return 0;
}

void
mysrc_quote(void *arg, struct sbuf *out, const char *s, size_t n)
{
	struct loader *ld = arg;

	sbuf_grow(out, 2 * n + 3);
	out->buf[out->len++] = '\'';
	out->len += mysql_real_escape_string(ld->my->sql, out->buf + out->len,
	    s, (unsigned long)n);
	out->buf[out->len++] = '\'';
	out->buf[out->len] = '\0';
}

void
mysrc_row_frame(struct sbuf *out, struct sbuf *j, const struct my_table *t,
    uint64_t v, const char *const *vals, const unsigned long *lens)
{
	int i;

	/* the stream's builders, names, order and value mapping: an
	 * inserted row's new image and its copy are the same bytes */
	msg_row_begin(j, 'c', t->rel, strlen(t->rel), v);
	msg_list_begin(j, ML_KEY);
	for (i = 0; i < t->nkeys; i++)
		msg_list_item(j, t->cols[t->keys[i]].name,
		    strlen(t->cols[t->keys[i]].name));
	msg_list_end(j);
	msg_image_begin(j, MI_NEW);
	for (i = 0; i < t->ncols; i++) {
		msg_column(j, t->cols[i].name, strlen(t->cols[i].name));
		if (vals[i] == NULL)
			sbuf_adds(j, "null");
		else
			myval_text(&t->cols[i], vals[i], lens[i], j);
	}
	msg_image_end(j);
	msg_end(out, j);
}

/* MariaDB: a snapshot and the binlog position it corresponds to */
static int
snapshot_begin(struct loader *ld, uint64_t *coord)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	char file[MYPOS_FILE_MAX] = "";
	unsigned long long pos = 0;
	int have = 0;

	if (exec(ld, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
	    "starting a snapshot") == -1 ||
	    exec(ld, "SHOW STATUS LIKE 'binlog_snapshot_%'", "reading the "
	    "snapshot's binlog position") == -1)
		return -1;
	if ((r = mysql_store_result(ld->my->sql)) == NULL)
		return sql_fail(ld, "reading the snapshot's binlog position");
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
		return ld_fail(&ld->err, P2O_EXIT_REFUSED, "the server reports "
		    "no binlog position for a snapshot (binlog_snapshot_file "
		    "'%s'): is log_bin on?", file);
	return 0;
}

/* MySQL: the coordinate now; the chunk's locking read does the rest */
static int
coordinate_now(struct loader *ld, uint64_t *coord)
{
	if (src_master_status(ld->my) == -1)
		return ld_fail(&ld->err, ld->my->exit_code, "%s", ld->my->err);
	if (coord_of(ld->my->file, ld->my->offset, coord) == -1)
		return ld_fail(&ld->err, P2O_EXIT_REFUSED, "the binlog file "
		    "'%s' has no number", ld->my->file);
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
static int
chunk_once(struct loader *ld, const struct my_table *t, const char *sql,
    uint64_t *rows, struct copy_field *last)
{
	MYSQL *m = ld->my->sql;
	MYSQL_RES *r;
	MYSQL_ROW row;
	unsigned long *lens;
	uint64_t coord = 0, v, n = 0;
	unsigned e;
	char what[600];

	snprintf(what, sizeof(what), "reading a chunk of '%s'", t->rel);
	if (ld->my->mariadb ? snapshot_begin(ld, &coord) :
	    coordinate_now(ld, &coord))
		return -1;
	v = ld->my_base + coord;
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
			if (out_flush(ld) == -1) {
				mysql_free_result(r);
				return -1;
			}
			meter_rows(&ld->meter, n - *rows);
			control_stat(ld, t->rel)->rows += n - *rows;
			ld->stats_dirty = 1;
			*rows = n;
			if (control_stats(ld, 0) == -1) {
				mysql_free_result(r);
				return -1;
			}
		}
	}
	e = mysql_errno(m);
	mysql_free_result(r);
	meter_rows(&ld->meter, n - *rows);
	control_stat(ld, t->rel)->rows += n - *rows;
	ld->stats_dirty = 1;
	*rows = n;
	if (e != 0)
		goto failed;
	/* the snapshot ends with its one SELECT */
	if (ld->my->mariadb && exec(ld, "COMMIT", "ending a snapshot") == -1)
		return -1;
	return 1;
failed:
	e = mysql_errno(m);
	if (e == MY_ER_LOCK_NOWAIT || e == ER_LOCK_WAIT_TIMEOUT ||
	    e == ER_LOCK_DEADLOCK)
		return 0;
	return sql_fail(ld, what);
}

int
mysrc_chunk(struct loader *ld, const struct my_table *t,
    const struct copy_field *after, uint64_t limit, uint64_t *rows,
    struct copy_field *last)
{
	struct sbuf sql = SBUF_INIT;
	long long t0 = now_ms(), logged = t0;
	int rc, wait_ms = 10;

	/* MariaDB reads a snapshot; MySQL reads past nothing that is
	 * still being committed (see the top of this file) */
	if (mychunk_sql(&sql, t, after, limit, ld->my->mariadb ? "" :
	    "FOR SHARE NOWAIT", mysrc_quote, ld) == -1) {
		sbuf_release(&sql);
		return ld_fail(&ld->err, P2O_EXIT_DATA, "table '%s': the "
		    "stored progress holds a key value that is not of its "
		    "column's form", t->rel);
	}
	for (;;) {
		*rows = 0;
		if ((rc = chunk_once(ld, t, sql.buf, rows, last)) != 0)
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
	sbuf_release(&sql);
	if (rc == 1)
		rc = out_flush(ld);
	return rc == -1 ? -1 : 0;
}
