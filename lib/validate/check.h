/*
 * validate/check.h - what `pg2osync validate` checks against the live
 * servers, in lib so that the supervisor's reload runs the same checks
 * before it takes a new file: the report (check.c: one line per check,
 * every failure with what fixes it), and the checks of each side (pg.c,
 * my.c, target.c). A source server's contract is its kind's own
 * (lib/pg/pgcontract.c, lib/mysql/myserver.c): the report prints its
 * verdicts. Nothing here creates, changes or drops anything.
 */
#ifndef VALIDATE_CHECK_H
#define VALIDATE_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "err.h"
#include "sbuf.h"

#define CHECK_FAILED	1	/* check_end: a check failed */

/* check.c: the report */
struct check_report {
	int	 passed, failed, skipped;
	FILE	*out;
	/* a reload's checks (supervisor/reload.c): a failure the source
	 * can mend itself (a verdict with apply: a new table not yet in
	 * its publication) is no failure but one line here, the remedy,
	 * for the source's reload_apply; NULL for pg2osync validate */
	struct sbuf *applies;
};
void	check_init(struct check_report *, FILE *out);
/* one line each: "ok    what", "FAIL  what: why", "skip  what: why" */
void	check_ok(struct check_report *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	check_fail(struct check_report *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	check_skip(struct check_report *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* a verdict of a source's contract (source_ops.h) as its line: "ok"
 * but for a failure, prefixed by its subject; a source_emit, always 0 */
struct source_verdict;
int	check_verdict(void *report, const struct source_verdict *);
/* the closing line: "all checks passed" or "N of M checks failed";
 * returns 0 or CHECK_FAILED */
int	check_end(struct check_report *);
/* the line for compiling sec's 'where' on the server: rc 0 it compiles,
 * 1 the server refused it (why), -1 it could not be asked (err) */
void	check_where(struct check_report *, const struct sync_section *,
	    int rc, const char *why, const struct p2o_err *err);

/* a column a sync section names, and the key that names it first */
struct named_col {
	const char *col;
	const char *key;	/* "columns", "where", "id", … */
};
/* every column sec names (columns, exclude_columns, primary_key, routing,
 * transform, fields, where, the id and index templates, fan_out and join
 * columns), each once: how many, at most max */
int	section_columns(const struct sync_section *, struct named_col *,
	    int max);

/* 1 when section i is the first of cfg's sections writing its index (an
 * index shared by several is created and checked once) */
int	section_first_of_index(const struct config *, int i);

/* bytes as "12.3 MB" (MB = 1000000 bytes, as a byte count in the
 * configuration) */
const char *check_mb(int64_t bytes, char *buf, size_t len);

/* pg.c: the PostgreSQL checks (cfg holds the source's secret) */
void	validate_pg(struct check_report *, const struct config *);

/* pg_toast.c: a table whose updates the target cannot complete */
struct pgcat_table;
/* the tables of t (itself, each table under it that holds rows) whose
 * replica identity must be FULL because cfg's target cannot complete a
 * document an UPDATE sends without its unchanged out-of-line (TOAST)
 * values: named in tables, their TOAST-able columns in cols, the ALTERs
 * in alter (each a comma or "; " list); how many, 0 for none */
int	pg_toast_needs_full(const struct pgcat_table *, const struct config *,
	    struct sbuf *tables, struct sbuf *cols, struct sbuf *alter);
/* validate's line for it: a failure naming the table, the columns and
 * the ALTER (0), or nothing (1) */
int	check_toast(struct check_report *, const struct pgcat_table *,
	    const struct config *);
/* setup-sql: the statements that make each section's tables FULL where
 * such a column exists, decided on the server; nothing when cfg's target
 * completes documents */
void	pg_toast_script(struct sbuf *, const struct config *);

/* my.c: the MySQL and MariaDB checks (cfg holds the source's secret) */
void	validate_my(struct check_report *, const struct config *);

/* target.c: the target's checks (cfg holds the target's secret) */
void	validate_target(struct check_report *, const struct config *);

#endif
