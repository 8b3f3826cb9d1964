/*
 * loader.h - loader: reads the rows a table already holds and writes them
 * as copy rows and load marks (framing.md §4) for the shaper's load
 * descriptor, beside the change stream. One driver (load.c) loads every
 * table the same way, describe, resume, count, then read a unit and mark
 * it until the table is done, over a table of operations each source
 * implements: PostgreSQL reads key ranges sampled in advance, in waves;
 * MySQL and MariaDB read key-ordered chunks.
 *
 * Modules (every source):
 *   load.c      the driver: the order rows -> mark -> confirmation, the
 *               mark, stdout
 *   control.c   fd 3: the load frame, confirmations, stats
 *   meter.c     progress people can see: a terminal line or a log line
 *               per unit
 *   pace.c      engine.load_max_rows_per_sec: the token bucket (pure)
 *   copytext.c  COPY's text format: one row into its fields (pure)
 * Modules (PostgreSQL, the operations in pgload.c):
 *   pgload.c    the operations: connections and their session, a table's
 *               units (waves of ranges) and its progress
 *   range.c     how many ranges, the sample, the boundaries, the WHERE
 *               clause of a range (pure)
 *   progress.c  the progress object a mark carries and a load resumes
 *               from (pure)
 *   table.c     a table as the load reads it (its catalogue is
 *               lib/pg/pgcat.c's), its row estimate, the sampled
 *               boundaries, the COPY text
 *   visible.c   the position a wave is versioned with, and the wait that
 *               makes it safe
 *   walgate.c   the replication slot's wal_status: pause while it is not
 *               reserved
 *   wave.c      reading a wave of ranges in parallel: COPY in, row
 *               frames out
 * Modules (MySQL, MariaDB, the operations in myload.c):
 *   myload.c    the operations: the connection and its session, a
 *               table's units (chunks) and its progress
 *   mychunk.c   the chunk statement: columns, the filter, the key
 *               comparison after the last key written, literals (pure)
 *   myprogress.c  the progress object of a chunked table (pure)
 *   mysrc.c     the coordinate a chunk is versioned by, reading a chunk
 *               into copy rows
 *   main.c      the command line, the configuration, exit codes
 */
#ifndef LOADER_H
#define LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "ctl.h"
#include "err.h"
#include "jscan.h"
#include "msg.h"
#include "sbuf.h"
#include "strindex.h"
#include "pg/pgnest.h"

struct msg_rowtpl;

struct config;
struct sync_section;
struct where;
struct pg_conn;			/* libpq's PGconn */
struct pgcat_table;
struct st_mysql;		/* libmariadb's MYSQL */
struct my_table;
struct my_col;
struct mynest;

/*
 * Rows per range, when the table is cut. Each range ends with a mark; the
 * next wave is read while that mark is stored (load.c), so a mark costs
 * the pipeline little, but a crash redoes the ranges whose marks were not
 * stored yet, so smaller ranges lose less. A key that is not physically
 * ordered also makes every range read pages all over the table. 250,000
 * rows is some 17 s of loading to redo at most at the 15,000 rows/s a
 * busy target allows. A table at most this big is one range and is not
 * sampled.
 */
#define LOAD_RANGE_ROWS		250000
/* but a table worth resuming is cut at least this fine, so a crash half
 * way through its load keeps half of it; no range under the minimum */
#define LOAD_RANGES_MIN		8
#define LOAD_RANGE_ROWS_MIN	20000
/* the progress object carries every boundary and every mark carries the
 * progress: this keeps it to tens of kilobytes for ordinary keys (a table
 * of more than 500M rows gets larger ranges instead) */
#define LOAD_RANGES_MAX		2000
/*
 * Rows per chunk of a MySQL table: one statement each, and one mark.
 * The statement's read view lives as long as its rows take to reach the
 * pipe, which the target's pace sets (some 15,000 rows/s measured): 50,000
 * rows keep it to seconds, and a mark every 50,000 rows costs about 5 %
 * of the load in drained pipeline (see LOAD_RANGE_ROWS).
 */
#define LOAD_CHUNK_ROWS		50000
/*
 * Marks written and not yet confirmed, at most: a mark waits for the one
 * before it of its own table (its progress is stored in order), the marks
 * of other tables only for room here. One mark at a time cost a table one
 * round trip to the target and back (the writer's bulk request, ckpt's
 * write, 20 ms at 1,000 tables of one row, issue 38) while the loader
 * needed 8 ms of its own; with several open, ckpt stores those that
 * arrive together in one request. It bounds how many small tables a crash
 * reads again.
 */
#define LOAD_MARKS_OPEN		64
/* frames wait in memory until this much is buffered for stdout */
#define LOAD_OUT_CAP		(256 * 1024)

/* ---- copytext.c ---- */

struct copy_field {
	const char *p;		/* NULL: SQL NULL */
	size_t	 n;
};
/*
 * One row of COPY's text format (fields separated by tabs, \N for NULL,
 * the row ending in one LF) split into exactly nf fields, each unescaped
 * in place in row[0..len) (\b \f \n \r \t \v \\, \ooo, \xhh). The server
 * writes only what COPY FROM reads back, so anything else (an unknown
 * escape, a lone backslash, \N inside a value, a NUL, a field count that
 * is not nf) is an error: 0, or -1 with err set.
 */
int	copy_split(char *row, size_t len, struct copy_field *f, int nf,
	    char *err, size_t errlen);

/* ---- the table (table.c fills it) ---- */

struct ld_column {
	char	*name;
	uint32_t typoid;	/* pg_attribute.atttypid: what pgoutput sends */
	int	 hidden;	/* a collection's member has its name and
				 * wins: the column is not sent */
};

struct ld_key {
	char	*name;
	char	*ident;		/* the name quoted for SQL */
	char	*type;		/* format_type(): the cast for a boundary */
};

struct ld_table {
	char	*rel;		/* "schema.table", as frames name it */
	char	*from;		/* "schema"."table", quoted: its inheritance
				 * children and partitions are its rows */
	char	*select;	/* the copied columns, quoted, comma-separated */
	uint32_t oid;
	int	 ncols;
	struct ld_column *cols;	/* what the stream sends, in attnum order */
	int	 nkeys;
	struct ld_key *keys;	/* the key, in key order */
	uint64_t estimate;	/* rows */
	uint64_t pages;		/* heap pages now, for the sample */
	const struct where *where;	/* the section's filter, or NULL */
	const struct where *scope;	/* --where: the rows to read, or NULL */
	/* the section's embedded collections: n fields after the
	 * columns, and the key column naming the parent in warnings */
	struct pgnest nest;
	int	 nest_key;
	/* its row frames' shared bytes (table_template); NULL: each row is
	 * built name by name, as a table put together by hand is */
	struct msg_rowtpl *tpl;
};
void	table_release(struct ld_table *);

/* ---- progress.c ---- */

/*
 * How far a table's load is: the boundaries it was cut at (a second
 * sample would cut it elsewhere) and how many leading ranges are written.
 * Range i (0-based) holds the keys from boundary i-1 (inclusive; none for
 * the first) up to boundary i (exclusive; none for the last).
 */
struct progress {
	int	 of;		/* ranges */
	int	 done;		/* leading ranges written and marked */
	uint64_t rows;		/* rows in those ranges */
	int	 nkeys;
	char	**key;		/* key column names the boundaries are for */
	char	**types;	/* and their types */
	char	**bounds;	/* (of - 1) * nkeys texts, boundary by boundary */
};
void	progress_init(struct progress *);
void	progress_release(struct progress *);
/* the boundary values of boundary b (0 .. of-2): nkeys texts */
const char *const *progress_bound(const struct progress *, int b);
/* the JSON object */
void	progress_put(struct sbuf *out, const struct progress *);
/* read an object progress_put wrote: 0, or -1 with err */
int	progress_parse(struct jspan obj, struct progress *, char *err,
	    size_t errlen);
/* helpers both progress objects use: a JSON array of n strings; an array
 * of at most max strings into v[0..) as heap copies, their number in *n,
 * -1 when it is not one (what was copied stays in v); free n strings and
 * the array (NULL: nothing) */
void	progress_put_strings(struct sbuf *out, char *const *v, int n);
int	progress_get_strings(struct jspan arr, char **v, int max, int *n);
void	progress_free_strings(char **v, size_t n);

/* ---- range.c ---- */

/* how many ranges a table of `rows` is cut into */
int	range_count(uint64_t rows, uint64_t range_rows);
/* the TABLESAMPLE SYSTEM percentage that returns enough keys for
 * nranges ranges from a table of rows rows in pages pages */
double	range_sample_percent(uint64_t rows, uint64_t pages, int nranges);
/*
 * The boundaries of nranges ranges from nsample sorted sample keys: the
 * sample indexes, strictly increasing, into idx (room for nranges - 1).
 * Returns how many (fewer when the sample is small; 0 = one range).
 */
int	range_pick(size_t nsample, int nranges, size_t *idx);
/* a quoted SQL literal of s (a heap string), or NULL on failure */
typedef char *(*range_quote_fn)(void *arg, const char *s);
/*
 * " WHERE ..." selecting the keys from lo (inclusive) up to hi
 * (exclusive), either NULL for an open end; nothing when both are. Values
 * go in as quoted literals cast to the key's type. 0, or -1 when quoting
 * failed.
 */
int	range_where(struct sbuf *sql, const struct ld_key *keys, int nkeys,
	    const char *const *lo, const char *const *hi, range_quote_fn q,
	    void *arg);

/* ---- the driver and what it drives ---- */

struct loader;

/* what the driver knows of a table being loaded: the first member of
 * every source's own table state */
struct load_view {
	const char *rel;	/* "schema.table", as frames name it */
	uint64_t estimate;	/* rows in the table */
	int	 done;		/* units read and marked */
	int	 of;		/* units in all (MySQL: an estimate) */
	uint64_t rows;		/* rows in the units done */
	int	 finished;	/* the last unit is done */
};

/*
 * A source's operations, in the order the driver calls them. Each returns
 * 0 (resume: 1 or 0) or -1 with ld->err; none of them writes a mark or
 * waits for one.
 */
struct load_ops {
	const char *unit;	/* what a log line counts: "range", "chunk" */
	uint64_t rows_default;	/* rows a unit, without --range-rows */
	/* the next unit is read while the mark before it is being stored
	 * (load.c says why that is safe for waves) */
	int	 overlap;
	/* connections, for the tables of one run */
	int	(*open)(struct loader *);
	void	(*close)(struct loader *);
	/* the table as the stream sends it: columns, key, filter; a heap
	 * state whose first member is the view */
	int	(*describe)(struct loader *, const struct sync_section *,
		    struct load_view **);
	/* an earlier run's progress (JSON), when it still applies: 1, or 0
	 * to start afresh (the reason logged) */
	int	(*resume)(struct loader *, struct load_view *, const char *);
	/* how many rows there are and, starting afresh, the units */
	int	(*count)(struct loader *, struct load_view *, int fresh);
	/* the next unit(s) as copy rows, advancing the view */
	int	(*read)(struct loader *, struct load_view *);
	/* the progress a mark carries */
	void	(*progress)(const struct load_view *, struct sbuf *out);
	/* the rows a read of the whole table would copy now (its filters
	 * applied), counted by the server: --count, for pg2osync reindex */
	int	(*exact)(struct loader *, struct load_view *, uint64_t *n);
	void	(*release)(struct load_view *);
};

/* per table, what stats report */
struct ld_tstat {
	char	*rel;
	uint64_t rows;		/* read by this process */
	uint64_t estimate;
	int	 done, of;	/* units */
};

struct meter {
	int	 tty;		/* one updating line instead of log lines */
	const char *unit;	/* what a log line counts: "range", "chunk" */
	int	 cap;		/* engine.load_max_rows_per_sec, 0: none */
	const char *rel;
	uint64_t estimate;	/* rows in the table */
	uint64_t before;	/* rows of ranges done by an earlier run */
	uint64_t rows;		/* rows read by this run */
	int	 of;
	long long t0, drawn;	/* ms */
};

/* the rows a load may read, engine.load_max_rows_per_sec (pace.c) */
struct pace {
	int	 rate;		/* rows a second; 0: no cap */
	double	 tokens;	/* rows that may be read now; below 0, owed */
	long long at_us;	/* when tokens was last brought up to date */
};

struct loader {
	const struct config *cfg;
	struct ctl *ctl;
	int	 supervised;
	/* stand-alone scope (pg2osync resnapshot): one table, and a filter
	 * that only narrows what is read - it is not the section's where,
	 * which the shaper would turn into deletes of the rows it leaves */
	const char *only;	/* --table, or NULL: every table */
	int	 count_only;	/* --count: print the rows, read none */
	struct where *scope;	/* --where, or NULL */
	char	*scope_text;
	uint64_t range_rows;	/* rows a unit */
	const struct load_ops *ops;
	void	*src;		/* the source's state (pgload.c, myload.c) */
	/* the sections to load, in order: a source may read ahead what it
	 * asks of each (PostgreSQL's catalogue, a batch at a time) */
	const struct sync_section **ahead;
	int	 nahead;

	/* the checkpoint the load frame carried (MySQL versions by it) */
	int	 cp_present;
	uint64_t cp_pos;
	char	*cp_text;

	int	 paused;	/* the source holds the load back (WAL) */

	int	 out_fd;
	struct sbuf out;	/* frames not yet on stdout */
	struct sbuf json;	/* one frame being built */
	struct msg_in row_in;	/* a PostgreSQL copy row, built in out */

	struct meter meter;
	struct pace pace;
	long long owed_us;	/* the wait the rows read so far owe */
	struct ld_tstat *stats;
	int	 nstats;
	/* stats by rel: rows are counted per read, and a walk of every
	 * table started grew with the tables (issue 38) */
	struct strindex statidx;
	long long stats_ms;	/* last sent */
	int	 stats_dirty;

	struct p2o_err err;
	/* the marks written and not yet confirmed, oldest first (a ring of
	 * heap ids): the next wave is read while they are stored, the next
	 * mark of their table waits for them (control.c) */
	char	*pending[LOAD_MARKS_OPEN];
	int	 pend_first, npending;
};

/* load.c */
/* the operations of a kind of source, or NULL */
const struct load_ops *load_ops_for(const struct source_module *);
int	load_table(struct loader *, const struct sync_section *,
	    const char *progress_json);
/* stdout: write what is buffered; 0 or -1 with err (75) */
int	load_flush(struct loader *);

/* control.c */
/* supervised: the load frame's tables and progress (heap copies;
 * progress NULL when absent) */
struct ld_job {
	char	*table;
	char	*progress;
};
int	control_read_load(struct loader *, struct ld_job **, int *njobs);
/* wait for the confirmation of every pending mark; 0, or -1 with err (75
 * when fd 3 closed, 65 on a confirmation of another mark than the oldest
 * pending, or of none) */
int	control_wait_confirm(struct loader *);
/* before a mark of rel: wait until no mark of rel is pending and there
 * is room for one more (LOAD_MARKS_OPEN); 0, or -1 with err as above */
int	control_wait_room(struct loader *, const char *rel);
/* a mark written (supervised): its confirmation is awaited */
void	control_pending(struct loader *, const char *id);
/* sleep ms, watching fd 3 and sending stats; -1 with err when fd 3 is
 * gone */
int	control_idle(struct loader *, int ms);
struct ld_tstat *control_stat(struct loader *, const char *rel);
/* n more rows of rel read: the meter, the stats and the rate cap's
 * bucket (what they owe is paid by control_pace) */
void	control_rows(struct loader *, const char *rel, uint64_t n);
/* under engine.load_max_rows_per_sec: wait what the rows read owe, after
 * writing out what is buffered (the rows flow on at the capped pace and
 * fd 3 is watched meanwhile); 0, or -1 with err */
int	control_pace(struct loader *);
/* a stats frame if one is due (or force), on fd 3 */
int	control_stats(struct loader *, int force);

/* pace.c */
void	pace_init(struct pace *, int rate, long long now_us);
/* n rows read at now_us: the microseconds to wait before reading on
 * (0: none), the bucket debited */
long long pace_take(struct pace *, uint64_t n, long long now_us);

/* meter.c */
void	meter_start(struct meter *, const char *rel, uint64_t estimate,
	    uint64_t before, int of);
void	meter_rows(struct meter *, uint64_t n);
/* unit r (0-based) finished with rows rows in ms milliseconds */
void	meter_range(struct meter *, int r, uint64_t rows, long long ms);
void	meter_end(struct meter *);
/* end a terminal line before a log line is written */
void	meter_break(struct meter *);

/* ---- PostgreSQL ---- */

/* pgload.c */
struct pgload {
	struct pg_conn **conns;	/* one a range of a wave; conns[0] also
				 * asks every question */
	int	 nconns;
	/* the catalogue's answers for the next tables of the load, read
	 * PGCAT_BATCH at a time: pre[k] is ahead[pre_at + k], the first
	 * pre_ok of them described, the next one failed with pre_err */
	struct pgcat_table *pre;
	int	 pre_at, pre_n, pre_ok, next;
	long long pre_when;	/* when they were read (now_ms) */
	int	 want;		/* how many to ask next (pgload.c) */
	struct p2o_err pre_err;
	int	 version;	/* server_version_num */
	int	 slot_known;	/* 1 present, -1 missing (warned), 0 unasked */
};
extern const struct load_ops pgload_ops;

/* table.c */
/* the table, its copied columns, its key (lib/pg/pgcat.h's rule), its
 * filter; 69 when it is missing, has no key, may not be read, or a table
 * under it is a sync section of its own (pub: the publication, whose
 * column list says what is sent; pre: the catalogue's answers read
 * already, taken over and released, or NULL to ask) */
int	table_describe(struct pg_conn *, const char *pub,
	    const struct config *, const struct sync_section *,
	    struct pgcat_table *pre, struct ld_table *, struct p2o_err *);
/* the rows and heap pages there are now, into t */
int	table_size(struct pg_conn *, struct ld_table *, struct p2o_err *);
/* a fresh progress: the table cut into ranges of about range_rows rows */
int	table_cut(struct pg_conn *, const struct ld_table *,
	    uint64_t range_rows, struct progress *, struct p2o_err *);
/* the rows the filters keep, counted now */
int	table_count(struct pg_conn *, const struct ld_table *, uint64_t *n,
	    struct p2o_err *);
/* 1 if progress was written for this key (same names and types) */
int	table_key_matches(const struct ld_table *, const struct progress *);
/* t->tpl, from its key and the columns that are sent (table_describe
 * builds it; a table put together by hand may) */
void	table_template(struct ld_table *t);
/* COPY (SELECT ... WHERE range r AND (filter)) TO STDOUT into sql */
int	table_copy_sql(struct sbuf *sql, struct pg_conn *,
	    const struct ld_table *, const struct progress *, int r,
	    struct p2o_err *);

/* wave.c */
/* the copy row for one COPY row's fields, appended to out: 0, or -1
 * with err when its collections are not what was asked for */
int	wave_row_frame(struct sbuf *out, struct msg_in *,
	    const struct ld_table *, uint64_t v, const struct copy_field *,
	    struct p2o_err *);
/* ranges first .. first+n-1, read at once, each on its own connection;
 * rows[i] gets the rows of range first+i */
int	wave_run(struct loader *, const struct ld_table *,
	    const struct progress *, int first, int n, uint64_t v,
	    uint64_t *rows);

/* visible.c */
/* the version of the next wave's rows; returns once it is safe */
int	visible_position(struct loader *, const char *rel, int range,
	    uint64_t *v);
/* the snapshot text "xmin:xmax:xip,..." and the next xid: the ids whose
 * end the wave waits for (heap array in *xids); -1 if malformed */
int	visible_wait_set(const char *snapshot, uint64_t next, uint64_t **xids,
	    size_t *n);

/* walgate.c */
/* between waves: return when the slot's WAL is reserved */
int	walgate_pass(struct loader *);

/* ---- MySQL and MariaDB ---- */

/* myload.c */
struct myload {
	struct st_mysql *conn;
	int	 mariadb;
	uint64_t base;		/* generation base: version = base + coord */
};
extern const struct load_ops myload_ops;

/* mychunk.c */
/* 1 when rows can be paged by this column: the server's ORDER BY and its
 * > agree on it, and its text reads back as the same value */
int	mychunk_pageable(const struct my_col *);
/* append s[0..n) as a quoted string literal for the connection */
typedef void (*myquote_fn)(void *arg, struct sbuf *out, const char *s,
	    size_t n);
/*
 * The section's filter as MySQL must evaluate it to agree with the
 * shaper wherever the shaper's answer is TRUE or FALSE (lib/where.h): a
 * column as the SQL expression that has the value's document form
 * (myval_filter_sql), compared byte-wise. 0 and the condition in out; 1
 * when the filter cannot be written so (why says what stands in the way:
 * then every row is read, and the shaper filters); -1 when quoting
 * failed.
 */
int	mychunk_filter(struct sbuf *out, const struct my_table *,
	    const struct where *, myquote_fn, void *arg, char *why,
	    size_t whylen);
/*
 * The chunk statement: SELECT every column (FLOAT as a DOUBLE) FROM
 * `db`.`table`, the rows matching filter (a condition, or NULL) whose key
 * comes after `after` (NULL: from the first), ORDER BY the key, LIMIT
 * limit, then tail (a locking clause, or ""). A table without a key is
 * read whole in one statement. 0, or -1 when a key value is not of its
 * column's form.
 */
int	mychunk_sql(struct sbuf *sql, const struct my_table *,
	    const char *filter, const struct copy_field *after,
	    uint64_t limit, const char *tail, myquote_fn, void *arg);

/* myprogress.c */
/*
 * How far a chunked table is: chunks and rows written, and the key of
 * the last row written (after), which the next chunk starts past.
 *   {"chunks":3,"rows":150000,"key":["id"],"types":["int(11)"],
 *    "after_hex":["313530303030"],"finished":false}
 * Key values are stored as the hex of the bytes the server returned: a
 * binary key is not text.
 */
struct myprogress {
	int	 chunks;
	uint64_t rows;
	int	 finished;
	int	 nkeys;
	char	**key, **types;
	int	 have_after;
	struct copy_field *after;	/* nkeys heap copies when have_after */
};
void	myprogress_init(struct myprogress *);
void	myprogress_release(struct myprogress *);
/* a fresh progress for the key names and types */
void	myprogress_start(struct myprogress *, int nkeys,
	    const char *const *names, const char *const *types);
/* the last key written becomes the values (copied) */
void	myprogress_after(struct myprogress *, const struct copy_field *);
void	myprogress_put(struct sbuf *out, const struct myprogress *);
int	myprogress_parse(struct jspan obj, struct myprogress *, char *err,
	    size_t errlen);

/* mysrc.c */
/* a myquote_fn quoting for the connection (arg: the struct myload) */
void	mysrc_quote(void *arg, struct sbuf *out, const char *s, size_t n);
/*
 * One chunk of sql's rows (at most limit), as copy rows versioned by the
 * coordinate they were read at. *rows gets how many; the last row's key
 * goes into *last (heap copies, nkeys of them, when *rows > 0). With
 * nest (a parent's collections) the rows carry them, read for the chunk's
 * key range at the same version.
 */
int	mysrc_chunk(struct loader *, const struct my_table *, const char *sql,
	    struct mynest *nest, uint64_t *rows, struct copy_field *last);
/* the copy row for one row of a chunk, appended to out */
void	mysrc_row_frame(struct sbuf *out, struct sbuf *j,
	    const struct my_table *, uint64_t v, const char *const *vals,
	    const unsigned long *lens);

#endif
