/*
 * loader.h - loader: reads the rows a table already holds and writes them
 * as copy rows and load marks (framing.md §4) for the shaper's load
 * descriptor, beside the change stream. PostgreSQL tables are read in key
 * ranges sampled in advance, MySQL and MariaDB tables in key-ordered
 * chunks; each source's code stays in its own modules and main.c picks
 * by the configuration's source kind.
 *
 * Modules (PostgreSQL):
 *   copytext.c  COPY's text format: one row into its fields (pure)
 *   range.c     how many ranges, the sample, the boundaries, the WHERE
 *               clause of a range (pure)
 *   progress.c  the progress object a mark carries and a load resumes
 *               from (pure)
 *   conn.c      the connections, their session, what a failed statement
 *               means as an exit code
 *   table.c     the catalogue: a table's columns and key, its row
 *               estimate, the sampled boundaries
 *   visible.c   the position a wave is versioned with, and the wait that
 *               makes it safe
 *   walgate.c   the replication slot's wal_status: pause while it is not
 *               reserved
 *   wave.c      reading a wave of ranges in parallel: COPY in, row
 *               frames out
 *   meter.c     progress people can see: a terminal line or a log line
 *               per range
 *   control.c   fd 3: the load frame, confirmations, stats
 *   load.c      one table from its first unfinished range to its last
 *               mark; the mark itself, for both sources
 * Modules (MySQL, MariaDB):
 *   mychunk.c   the chunk statement: columns, the key comparison after
 *               the last key written, literals (pure)
 *   myprogress.c  the progress object of a chunked table (pure)
 *   mysrc.c     the connection through capture-mysql's code, the
 *               session, the table, the coordinate a chunk is versioned
 *               by, reading a chunk into copy rows
 *   myload.c    one table chunk by chunk, each followed by its mark
 *   main.c      the command line, the configuration, exit codes
 */
#ifndef LOADER_H
#define LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "ctl.h"
#include "jscan.h"
#include "sbuf.h"

struct config;
struct sync_section;
struct where;
struct pg_conn;			/* libpq's PGconn */
struct my_source;		/* capture-mysql's connections */
struct my_table;
struct my_col;

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
/* frames wait in memory until this much is buffered for stdout */
#define LOAD_OUT_CAP		(256 * 1024)

/* ---- errors: library code returns -1 and fills one of these ---- */

struct ld_err {
	int	 code;		/* framing.md §8 exit code */
	char	 msg[1024];	/* no secret: never the connection string */
};
int	ld_fail(struct ld_err *, int code, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

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
};

struct ld_key {
	char	*name;
	char	*ident;		/* the name quoted for SQL */
	char	*type;		/* format_type(): the cast for a boundary */
};

struct ld_table {
	char	*rel;		/* "schema.table", as frames name it */
	char	*from;		/* [ONLY] "schema"."table", quoted */
	char	*select;	/* the copied columns, quoted, comma-separated */
	uint32_t oid;
	int	 ncols;
	struct ld_column *cols;	/* what the stream sends, in attnum order */
	int	 nkeys;
	struct ld_key *keys;	/* the key, in key order */
	uint64_t estimate;	/* rows */
	uint64_t pages;		/* heap pages now, for the sample */
	const struct where *where;	/* the section's filter, or NULL */
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

/* ---- conn.c ---- */

struct ld_conn {
	struct pg_conn *pg;
	int	 version;	/* server_version_num */
};
/* one connection with the session every value's text is read in */
int	conn_open(struct ld_conn *, const struct config *, struct ld_err *);
void	conn_close(struct ld_conn *);
/* a statement that must return tuples (params may be NULL); the result
 * (PGresult *) or NULL with err set */
void	*conn_query(struct ld_conn *, const char *what, const char *sql,
	    int nparams, const char *const *params, struct ld_err *);
/* err for a failed statement or a lost connection; res may be NULL */
int	conn_failed(struct ld_conn *, void *res, const char *what,
	    struct ld_err *);
/* PQescapeLiteral as a range_quote_fn (arg: the struct ld_conn) */
char	*conn_quote(void *arg, const char *s);

/* ---- table.c ---- */

/* the table, its copied columns, its key (the replica identity's, the
 * section's primary_key, or none for an append-only table), its size, its
 * filter; 69 when it is missing, has no key or may not be read */
int	table_describe(struct ld_conn *, const struct config *,
	    const struct sync_section *, struct ld_table *, struct ld_err *);
/* a fresh progress: the table cut into ranges of about range_rows rows */
int	table_cut(struct ld_conn *, const struct ld_table *,
	    uint64_t range_rows, struct progress *, struct ld_err *);
/* 1 if progress was written for this key (same names and types) */
int	table_key_matches(const struct ld_table *, const struct progress *);
/* COPY (SELECT ... WHERE range r AND (filter)) TO STDOUT into sql */
int	table_copy_sql(struct sbuf *sql, struct ld_conn *,
	    const struct ld_table *, const struct progress *, int r,
	    struct ld_err *);

/* ---- control.c, meter.c, load.c: the running loader ---- */

/* per table, what stats report */
struct ld_tstat {
	char	*rel;
	uint64_t rows;		/* read by this process */
	uint64_t estimate;
	int	 done, of;	/* ranges */
};

struct meter {
	int	 tty;		/* one updating line instead of log lines */
	const char *unit;	/* what a log line counts: "range" (NULL),
				 * "chunk" */
	const char *rel;
	uint64_t estimate;	/* rows in the table */
	uint64_t before;	/* rows of ranges done by an earlier run */
	uint64_t rows;		/* rows read by this run */
	int	 of;
	long long t0, drawn;	/* ms */
};

struct loader {
	const struct config *cfg;
	struct ctl *ctl;
	int	 supervised;
	uint64_t range_rows;	/* PostgreSQL: per range; MySQL: per chunk */

	/* the checkpoint the load frame carried (MySQL versions by it) */
	int	 cp_present;
	uint64_t cp_pos;
	char	*cp_text;

	/* MySQL */
	struct my_source *my;
	uint64_t my_base;	/* generation base: version = base + coord */

	struct ld_conn *conns;	/* conns[0] also asks every question */
	int	 nconns;

	int	 slot_known;	/* 1 present, -1 missing (warned), 0 unasked */
	int	 wal_paused;

	int	 out_fd;
	struct sbuf out;	/* frames not yet on stdout */
	struct sbuf json;	/* one frame being built */

	struct meter meter;
	struct ld_tstat *stats;
	int	 nstats;
	long long stats_ms;	/* last sent */
	int	 stats_dirty;

	struct ld_err err;
	/* the mark written and not yet confirmed ("" when none): the next
	 * wave is read while it is stored, the next mark waits for it */
	char	 pending[512];
};

/* control.c */
/* supervised: the load frame's tables and progress (heap copies;
 * progress NULL when absent) */
struct ld_job {
	char	*table;
	char	*progress;
};
int	control_read_load(struct loader *, struct ld_job **, int *njobs);
/* wait for the confirmation of the pending mark, if one is pending; 0, or
 * -1 with err (75 when fd 3 closed, 65 on a confirmation of another mark
 * or of none) */
int	control_wait_confirm(struct loader *);
/* sleep ms, watching fd 3 and sending stats; -1 with err when fd 3 is
 * gone */
int	control_idle(struct loader *, int ms);
struct ld_tstat *control_stat(struct loader *, const char *rel);
/* a stats frame if one is due (or force), on fd 3 */
int	control_stats(struct loader *, int force);

/* meter.c */
void	meter_start(struct meter *, const char *rel, uint64_t estimate,
	    uint64_t before, int of);
void	meter_rows(struct meter *, uint64_t n);
/* range r (0-based) finished with rows rows in ms milliseconds */
void	meter_range(struct meter *, int r, uint64_t rows, long long ms);
void	meter_end(struct meter *);
/* end a terminal line before a log line is written */
void	meter_break(struct meter *);

/* wave.c */
/* stdout: write what is buffered; 0 or -1 with err (75) */
int	out_flush(struct loader *);
/* the copy row for one COPY row's fields, appended to out */
void	wave_row_frame(struct sbuf *out, struct sbuf *j,
	    const struct ld_table *, uint64_t v, const struct copy_field *);
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

/* load.c */
int	load_table(struct loader *, const struct sync_section *,
	    const char *progress_json);
/* the mark "<rel>#<n>" carrying progress, after (supervised) the
 * confirmation of the mark before it; the mark is then pending: the
 * caller reads on, or waits with control_wait_confirm */
int	load_mark(struct loader *, const char *rel, int n,
	    const struct sbuf *progress, int done);

/* ---- MySQL and MariaDB ---- */

/* mychunk.c */
/* a key value as the text protocol returned it (copy_field: p, n) */
/* 1 when rows can be paged by this column: the server's ORDER BY and its
 * > agree on it, and its text reads back as the same value */
int	mychunk_pageable(const struct my_col *);
/* append s[0..n) as a quoted string literal for the connection */
typedef void (*myquote_fn)(void *arg, struct sbuf *out, const char *s,
	    size_t n);
/*
 * The chunk statement: SELECT every column (FLOAT as a DOUBLE) FROM
 * `db`.`table`, the keys after `after` (NULL: from the first), ORDER BY
 * the key, LIMIT limit, then tail (a locking clause, or ""). 0, or -1
 * when a key value is not of its column's form.
 */
int	mychunk_sql(struct sbuf *sql, const struct my_table *,
	    const struct copy_field *after, uint64_t limit, const char *tail,
	    myquote_fn, void *arg);

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
/* the connection and its session (time zone, character set, sql_mode) */
int	mysrc_open(struct loader *);
void	mysrc_close(struct loader *);
/* a myquote_fn quoting for the connection (arg: the struct loader) */
void	mysrc_quote(void *arg, struct sbuf *out, const char *s, size_t n);
/* the generation base from the load frame's checkpoint (0 without) */
int	mysrc_base(struct loader *);
/* the table's columns and key from information_schema (69 when it is
 * missing, has no key, or a key column cannot be paged), its row
 * estimate */
int	mysrc_describe(struct loader *, const struct sync_section *,
	    struct my_table *, uint64_t *estimate);
/*
 * One chunk: the rows after `after` (NULL: from the first), at most
 * limit, as copy rows versioned by the coordinate they were read at.
 * *rows gets how many; the last row's key goes into *last (heap copies,
 * nkeys of them, when *rows > 0).
 */
int	mysrc_chunk(struct loader *, const struct my_table *,
	    const struct copy_field *after, uint64_t limit, uint64_t *rows,
	    struct copy_field *last);
/* the copy row for one row of a chunk, appended to out */
void	mysrc_row_frame(struct sbuf *out, struct sbuf *j,
	    const struct my_table *, uint64_t v, const char *const *vals,
	    const unsigned long *lens);

/* myload.c */
int	myload_table(struct loader *, const struct sync_section *,
	    const char *progress_json);

#endif
