/*
 * pglist.h - the PostgreSQL catalogue as `pg2osync init` reads it
 * (lib/source_cat.h): the tables the role may read, and the index field
 * each column's values need. Reads only; never exits.
 */
#ifndef PGLIST_H
#define PGLIST_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "source_cat.h"

struct config;

/* pglist.c */

/* the tables cf's role may read into cat, those named in want chosen
 * (every one when n is 0), each chosen one's fields by mo when mo is not
 * NULL: 0, 1 when a name is not eligible (why in err, cat lists the
 * eligible ones), -1 with err */
int	pglist_catalogue(const struct config *, const char *const *want,
	    int n, const struct mapping_opts *mo, struct source_cat *,
	    struct p2o_err *);
/* the kind of index field a column of type format_type() text (typoid
 * its pg_type oid) needs, into out's kind and factor; a note for the
 * operator in note (or "") */
void	pglist_field(const char *type, uint32_t typoid,
	    const struct mapping_opts *, struct target_field *out, char *note,
	    size_t notelen);

#endif
