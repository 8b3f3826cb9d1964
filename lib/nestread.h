/*
 * nestread.h - the one commit-time re-read of nested parents (docs/
 * config.md "children"), whatever the source: a transaction's rows of a
 * child, junction or counted table are reduced to the parent keys their
 * after- and before-images name, a parent's own insert or update to its
 * key, and at the commit those parents are read again whole and written
 * as row frames ahead of the commit frame. The driver owns that order and
 * its bookkeeping; what differs per source (the connection, the SQL, the
 * values, when a commit is visible) is a struct nestread_ops, which
 * lib/pg/pgnestread.c and lib/mysql/mynestread.c implement, as
 * loader/load.c sits over struct load_ops.
 */
#ifndef NESTREAD_H
#define NESTREAD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "keyset.h"
#include "sbuf.h"

/*
 * What a source does for the driver. src is the source's state (given to
 * nestread_open), a parent its reader of one section with collections.
 * Every int-returning operation returns 0, or -1 with err.
 */
struct nestread_ops {
	/* the source's connection(s), once some section has collections */
	int	(*open)(void *src, const struct config *, struct p2o_err *);
	/* the reader of sync section si (sec), its collections described:
	 * *parent, and *key its one key column as the rows of the stream
	 * name it (owned by *parent). On -1 nothing is left to free */
	int	(*parent)(void *src, int si, const struct sync_section *sec,
		    void **parent, const char **key, struct p2o_err *);
	/* collection k of parent (the section's children, then its
	 * aggregates), its tables made readable and checked; for a child
	 * read through a junction, the column of the child's rows whose
	 * values the junction maps appended to via_col */
	int	(*collection)(void *src, void *parent, int k,
		    struct sbuf *via_col, struct p2o_err *);
	/* optional: return once the transactions txns[0..n) (nestread_hold)
	 * are visible to a new read, so that the reads see their rows */
	int	(*visible)(void *src, const uint64_t *txns, size_t n,
		    struct p2o_err *);
	/* the parents of the child keys in keys (emptied) through the
	 * junction of collection k, added to parents; *queries counts the
	 * statements run */
	int	(*resolve)(void *src, void *parent, int k, struct keyset *keys,
		    struct keyset *parents, uint64_t *queries,
		    struct p2o_err *);
	/* the parents keys names (emptied), read whole with their
	 * collections and appended to out as 'u' row frames at version v;
	 * *docs counts the frames, *queries the statements. A parent no
	 * longer there was deleted later: its delete follows in the stream */
	int	(*read)(void *src, void *parent, struct keyset *keys,
		    uint64_t v, struct sbuf *out, uint64_t *docs,
		    uint64_t *queries, struct p2o_err *);
	/* what rebuilds parent's documents after a truncate of a table one
	 * of its collections reads, appended to out */
	void	(*rewrite_hint)(void *parent, struct sbuf *out);
	void	(*parent_free)(void *parent);
	/* src released, whether open ran or not */
	void	(*close)(void *src);
};

/* one image of a changed row, as its capture decoded it: text appends
 * the value of column col as the source's text form prints it (the form
 * the read's key literals take), 1; 0 when the image has no such value
 * (no column, NULL, not sent) */
struct nest_image {
	int	(*text)(const void *img, const char *col, struct sbuf *out);
	const void *img;
};

struct nestread_counts {
	uint64_t queries;	/* junction, parent and collection reads */
	uint64_t documents;	/* parents written again */
	uint64_t child_rows;	/* images that named a parent */
};

struct nestread;

/*
 * The reader over ops and src for every section of cfg with collections
 * (cfg outlives it). NULL with err clear when no section has any, NULL
 * with err on a failure; src closed (ops->close) in both cases.
 */
struct nestread *nestread_open(const struct config *,
	    const struct nestread_ops *, void *src, struct p2o_err *);
/* the counts said in one line, every reader released, src closed */
void	nestread_close(struct nestread *);
/* the source state given to nestread_open */
void	*nestread_source(const struct nestread *);
/*
 * A decoded row of table rel: newi NULL for a delete, oldi NULL without a
 * before-image. Its parent keys noted; 1 when its frame goes out as
 * usual, 0 when its parents' rewrite at the commit stands for it (a
 * parent's own insert or update, unless its key changed: the old
 * document must go; a row of a table only collections read).
 */
int	nestread_row(struct nestread *, const char *rel,
	    const struct nest_image *newi, const struct nest_image *oldi);
/* 1 when some noted parent waits for a commit */
int	nestread_pending(const struct nestread *);
/*
 * The commit of transaction txn is held, its parents read later with
 * those of the commits after it (ops->visible waits for all of them): 1
 * when so many commits or keys wait that the read should run now.
 */
int	nestread_hold(struct nestread *, uint64_t txn);
/* every noted parent read and appended to out as row frames at version v
 * (*nrows counts them), the held transactions visible first; nothing
 * when none is noted */
int	nestread_commit(struct nestread *, uint64_t v, struct sbuf *out,
	    uint64_t *nrows, struct p2o_err *);
/* a truncate of rel: said when a collection reads it, with what
 * rebuilds the parents (they are not rewritten) */
void	nestread_truncate(struct nestread *, const char *rel);
const struct nestread_counts *nestread_counts(const struct nestread *);

#endif
