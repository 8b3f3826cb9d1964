/*
 * nest.h - a parent document's embedded collections, from rows a source
 * has already converted (lib/pg/pgnest.c aggregates them in SQL, a MySQL
 * source in C). Source-agnostic: it owns the shapes of docs/config.md
 * "children" - the array ordered as the rows come, single's object or
 * null, flatten's lifted columns, max_rows' _truncated and _total, an
 * aggregate's number - and the warnings about them: one line per batch
 * and collection for parents with a second single row, one per parent
 * whose array passes the target's nested limit.
 */
#ifndef NEST_H
#define NEST_H

#include <stdint.h>

#include "config.h"
#include "err.h"
#include "sbuf.h"

/* OpenSearch's index.mapping.nested_objects.limit default */
#define NEST_ARRAY_WARN	10000

/* 1 when child column col is in the embedded rows */
int	nest_keeps(const struct sync_child *, const char *col);
/* the name col has in the embedded rows */
const char *nest_name(const struct sync_child *, const char *col);

/* the second-row tally of one single child over a batch */
struct nest_dups {
	uint64_t parents;	/* parents with more than one row */
	uint64_t worst;		/* the most rows one of them had */
	char	*worst_key;	/* its key, as text */
};

/*
 * One collection's members, appended to a row image being built with
 * msg_column (lib/msg.h): rows holds nrows JSON objects separated by
 * commas, in the child's key order, the first nrows of total rows naming
 * the parent; the first of them is first bytes long. key is the parent's key as text, for the warnings. dups
 * (for a single child) tallies a second row.
 */
void	nest_put_child(struct sbuf *img, const struct sync_child *,
	    const char *rows, size_t len, size_t first, uint64_t nrows,
	    uint64_t total, const char *key, const char *rel,
	    struct nest_dups *dups);
/* an aggregate's member: its count */
void	nest_put_count(struct sbuf *img, const struct sync_aggregate *,
	    uint64_t n);
/* the batch's warning about child c of section rel, then the tally
 * reset */
void	nest_dups_flush(struct nest_dups *, const char *rel,
	    const struct sync_child *);
/* err for a column section sec's collection names that table rel lacks
 * (what: which setting names it): 69, returns -1 */
int	nest_no_column(const struct sync_section *sec, const char *rel,
	    const char *col, const char *what, struct p2o_err *e);

#endif
