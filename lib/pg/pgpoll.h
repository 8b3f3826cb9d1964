/*
 * pgpoll.h - what poll mode (source.mode: poll) shares between its
 * capture (capture-pg/poll.c) and the pg2osync command: the order a
 * table is read in and the test "after a cursor" in SQL, the form of its
 * position text, and the facts `pg2osync status` shows of it.
 *
 * The position text of poll mode names every table's cursor and the last
 * round that ended:
 *   {"poll":N,"at":{"public.t":{"by":["rev","id"],"v":["7","3"]},...},
 *    "round":{"end":<ms since the epoch>,"ms":<its duration>,"rows":R}}
 */
#ifndef PGPOLL_H
#define PGPOLL_H

#include <stdint.h>

#include "err.h"

struct pgcat_table;
struct sbuf;
struct source_ckpt;
struct source_status;
struct config;

#define PGPOLL_TEXT	"{\"poll\":"	/* how its position text begins */
/* status counts the rows behind a cursor up to this many: a bound on
 * what one look costs on a table far behind */
#define PGPOLL_BEHIND_CAP	100000

/* pgpoll.c */

/* "(pc, key...) op ($n::type, ...)": the row's place in the order of
 * the poll column, then the key, against a cursor given as parameters
 * from $*n on (*n is advanced past them) */
void	pgpoll_cmp(struct sbuf *, const struct pgcat_table *, const char *pc,
	    const char *op, int *n);
/* status: the tables and the last row of each now (source_ops.h) */
int	pgpoll_status(const struct config *, struct source_status *,
	    struct p2o_err *);
/* status: a checkpoint's cursors against the tables, each table's rows
 * behind, and its last round */
int	pgpoll_status_ckpt(const struct source_status *, const char *text,
	    uint64_t pos, struct source_ckpt *, struct p2o_err *);

#endif
