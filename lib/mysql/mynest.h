/*
 * mynest.h - a MySQL or MariaDB parent's embedded collections (sync.
 * <name>.children and aggregates): the one reader both the load and
 * capture-mysql's commit-time re-read use. Per collection one statement
 * for a set of parents (a key list, or a key range), its rows read as
 * ordinary rows and converted by myval_text, the code that converts the
 * same column at the top level; then lib/nest.c shapes them. Not
 * JSON_ARRAYAGG: the server's JSON rendering of decimals, dates, bits,
 * bytes and big unsigned numbers is not the one the stream and the load
 * give the same column, and a value inside an array must be byte-identical
 * to the same value at the top level.
 */
#ifndef MYNEST_H
#define MYNEST_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "jscan.h"
#include "nest.h"
#include "sbuf.h"
#include "mysql/mycat.h"
#include "mysql/myval.h"

struct nestread;
struct st_mysql;

/* one parent's rows of one collection, from the last read */
struct mynest_got {
	struct mynest_got *next;
	struct sbuf rows;	/* child: JSON objects, comma-separated */
	size_t	 first;		/* the first one's length */
	uint64_t nrows;		/* rows kept (max_rows, single: 1) */
	uint64_t total;		/* rows naming the parent; the count */
	size_t	 n;
	char	 key[];
};

struct mynest_coll {
	const struct sync_child *child;		/* one of these */
	const struct sync_aggregate *agg;
	struct my_table t;	/* the child's (or counted) table */
	int	 nemb;
	int	*emb;		/* the embedded columns: indexes in t.cols */
	char	*head;		/* the statement up to the parents' condition */
	char	*tail;		/* after it: the order, or the grouping */
	struct mynest_got **got;	/* the last read, by parent key */
	size_t	 ngot;		/* buckets */
	struct nest_dups dups;	/* single: this batch's second rows */
};

struct mynest {
	const struct sync_section *sec;
	char	*key;		/* the parent's one key column */
	enum my_kind key_kind;
	int	 n;
	struct mynest_coll *coll;	/* children first, then aggregates */
	uint64_t queries;	/* statements run */
};

/* mynest.c */
/*
 * The collections of sec, whose table parent was described with the key
 * rule: their tables described from the catalogue. 0, or -1 with err (69
 * a parent without one key column of a kind a list can name, a child
 * without a primary key, a named column a table lacks).
 */
int	mynest_describe(struct st_mysql *, int mariadb,
	    const struct sync_section *, const struct my_table *parent,
	    struct mynest *, struct p2o_err *);
/*
 * A collection whose table k->t is described (mynest_describe reads it
 * from the catalogue) of parents in table parent (its one key column
 * keys[0]): the columns it embeds and its statement, which joins the
 * parent so that each row carries the key of the parent the server
 * matches it to. 0, or -1 with err (69 a child without a primary key, a
 * named column the table lacks). m only quotes the strings of an
 * aggregate's filter.
 */
int	mynest_plan(struct st_mysql *, const struct sync_section *,
	    const struct my_table *parent, struct mynest_coll *,
	    struct p2o_err *);
/* 1 when a key column of this kind can name rows by its text */
int	mynest_keyable(enum my_kind);
/* a key value s[0..n) of a column of kind k (as the text protocol prints
 * it) as the SQL literal that means it, appended: 0, or -1 (not of its
 * form) */
int	mynest_literal(enum my_kind k, struct st_mysql *, struct sbuf *out,
	    const char *s, size_t n);
/*
 * Every collection of the parents whose key satisfies cond (SQL after
 * the key's name: "IN (1,2)", ">= 1 AND ... <= 9"), lock appended to each
 * statement ("", "LOCK IN SHARE MODE", "FOR SHARE NOWAIT"), what the last
 * read held forgotten first. 0, or -1 with err (mysql_errno says why).
 */
int	mynest_read(struct mynest *, struct st_mysql *, const char *cond,
	    const char *lock, struct p2o_err *);
/* what the last read held, forgotten (mynest_read does it first) */
void	mynest_forget(struct mynest *);
/*
 * One row of collection k's statement as its result set gives it, the
 * reader of every row mynest_read fetches: vals[0] the parent's own key
 * (the parent row's bytes, not the child's foreign key), then
 * a child's embedded columns (as k->emb lists them, converted by the kind
 * of each in k->t.cols) or an aggregate's count; vals[i] of lens[i]
 * bytes, NULL for NULL. A parent's rows are kept in the order they come,
 * which the statement makes the child's key order.
 */
void	mynest_take(struct mynest_coll *k, const char *const *vals,
	    const unsigned long *lens);
/* the parent with key text key[0..n)'s members, from the last read,
 * appended to an image being built with msg_column */
void	mynest_put(struct mynest *, struct sbuf *img, const char *key,
	    size_t n);
/* the batch's warnings (single children matching twice) */
void	mynest_flush(struct mynest *);
void	mynest_release(struct mynest *);

/*
 * A row of table t as a row frame (op 'c' a copy, 'u' a re-read parent)
 * at version v, its values vals[i] of lens[i] bytes (NULL is NULL) as a
 * SELECT of every column returned them, through myval_text; with nest,
 * the parent's columns that a collection replaces are left out and its
 * collections (from the last mynest_read) are added.
 */
void	mynest_row_frame(struct sbuf *out, struct sbuf *j, char op,
	    const struct my_table *t, uint64_t v, const char *const *vals,
	    const unsigned long *lens, struct mynest *nest);
/* the select list of every column of t (FLOAT as a DOUBLE: exact, and
 * myval_text narrows it back), each name prefixed by alias. when set */
void	mynest_select_cols(struct sbuf *out, const struct my_table *t,
	    const char *alias);

/* mynestread.c */
/*
 * capture-mysql's commit-time re-read (lib/nestread.h) over MySQL or
 * MariaDB, on a connection of its own (locking reads, READ COMMITTED).
 * *tables holds the assembler's tables, one per sync section first; every
 * table a collection reads that none of them is gets appended, described
 * on the catalogue connection cat (*ntables counts them): the assembler
 * must see their rows. NULL with err clear when no section has
 * collections, NULL with err on a failure (69 a collection it cannot
 * read). The reader reads the tables through tables at each commit (a
 * shape the assembler re-read included): tables must outlive it.
 */
struct nestread *mynestread_open(const struct config *, struct st_mysql *cat,
	    int mariadb, struct my_table **tables, int *ntables,
	    struct p2o_err *);
/*
 * The assembler's hooks, ctx the struct nestread: row has the images of a
 * row of (*tables)[ti] as JSON objects (p NULL when absent; op 'i', 'u'
 * or 'd') and answers nestread_row's 1 or 0; commit is nestread_commit;
 * truncate is nestread_truncate of (*tables)[ti].
 */
int	mynestread_row(void *ctx, int ti, char op, struct jspan newi,
	    struct jspan oldi);
int	mynestread_commit(void *ctx, uint64_t v, struct sbuf *out,
	    uint64_t *nrows, struct p2o_err *);
void	mynestread_truncate(void *ctx, int ti);

#endif
