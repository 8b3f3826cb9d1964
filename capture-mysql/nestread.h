/*
 * nestread.h - capture-mysql's commit-time re-read of the parents whose
 * collections a transaction changed (nestread.c), behind the assembler's
 * struct txn_nest hooks.
 */
#ifndef NESTREAD_H
#define NESTREAD_H

#include <stdint.h>

#include "err.h"
#include "jscan.h"
#include "sbuf.h"

struct config;
struct server;
struct my_table;
struct nestread;

/*
 * NULL with err clear when no section has collections. Otherwise its own
 * connection, each parent's collections described, and every table a
 * collection reads that no section syncs appended to *tables (*ntables
 * counts them): the assembler must see their rows. NULL with err on a
 * failure (69 a collection it cannot read).
 */
struct nestread *nestread_open(const struct config *, struct server *,
	    struct my_table **tables, int *ntables, struct p2o_err *);
void	nestread_close(struct nestread *);
/* the struct txn_nest hooks (binlog.h), ctx the struct nestread */
int	nestread_row(void *ctx, int ti, char op, struct jspan newi,
	    struct jspan oldi);
int	nestread_commit(void *ctx, uint64_t v, struct sbuf *out,
	    uint64_t *nrows, struct p2o_err *);
void	nestread_truncate(void *ctx, int ti);
/* statements run so far */
uint64_t nestread_queries(const struct nestread *);

#endif
