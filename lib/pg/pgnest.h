/*
 * pgnest.h - a PostgreSQL parent's embedded collections (sync.<name>.
 * children and aggregates): the one SQL builder both the load's COPY and
 * capture-pg's commit-time re-read use, and what its results become. Each
 * collection is one correlated subquery in the parent's select list, so a
 * range and a set of parents are read with the same text: the server
 * filters, orders by the child's key, caps and counts. A child's values
 * come back as their output-function text and are converted by
 * pgtypes.c, the code that converts every other value, so a value inside
 * an array is byte-identical to the same value at the top level.
 */
#ifndef PGNEST_H
#define PGNEST_H

#include <stdint.h>

#include "config.h"
#include "err.h"
#include "nest.h"
#include "sbuf.h"

struct nestread;
struct pg_conn;
struct pgcat_table;

/* the parent's alias in the SQL: its key is read as PGNEST_PARENT.key */
#define PGNEST_PARENT	"p2o_p"

struct pgnest_col {
	char	*name;		/* the column, as the table names it */
	uint32_t typoid;
	int	 key;		/* part of the primary key (position + 1) */
};

struct pgnest_coll {
	const struct sync_child *child;		/* one of these */
	const struct sync_aggregate *agg;
	int	 ncols;		/* a child's columns, in attnum order */
	struct pgnest_col *cols;
	int	 nemb;		/* those embedded (the projection) */
	int	*emb;		/* their indexes in cols */
	struct nest_dups dups;	/* single: this batch's second rows */
};

struct pgnest {
	const struct sync_section *sec;
	char	*key;		/* the parent's key column */
	int	 n;
	struct pgnest_coll *coll;	/* children first, then aggregates */
	char	*select;	/* ", (subquery), ..." after the parent's
				 * columns, one per collection */
};

/* pgnest.c */
/* the collections of sec, their tables described from the catalogue;
 * key is the parent's one key column. 0, or -1 with err (69 a child
 * without a primary key, or a named column it lacks) */
int	pgnest_describe(struct pg_conn *, const struct sync_section *,
	    const char *key, struct pgnest *, struct p2o_err *);
/* the select list from the described columns (pgnest_describe calls
 * it; a test fills the columns itself) */
int	pgnest_build(struct pgnest *, struct p2o_err *);
/*
 * The members for one parent row whose collection values (n of them, in
 * order, as the server sent them: JSON text, or NULL) are vals[i] of
 * lens[i] bytes, appended to an image being built with msg_column. key
 * is the parent's key as text, rel its table, for warnings. 0, or -1 with
 * err (65: a value that is not what the subquery returns).
 */
int	pgnest_put(struct pgnest *, struct sbuf *img, const char *const *vals,
	    const size_t *lens, const char *key, const char *rel,
	    struct p2o_err *);
/* the batch's warnings (single children matching twice) */
void	pgnest_flush(struct pgnest *);
void	pgnest_release(struct pgnest *);

/* pgnestread.c */
/*
 * capture-pg's commit-time re-read (lib/nestread.h) over PostgreSQL, on a
 * connection of its own; tables are the capture's, one per sync section.
 * NULL with err clear when no section has collections, NULL with err when
 * a table cannot be read (69: a parent without one key column, a child
 * the publication cannot describe, a junction without the named columns).
 */
struct nestread *pgnestread_open(const struct config *,
	    const struct pgcat_table *tables, struct p2o_err *);

#endif
