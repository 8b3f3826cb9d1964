/*
 * mylist.h - the MySQL/MariaDB catalogue as `pg2osync init` reads it
 * (lib/source_cat.h): the base tables of the url's database, and the index
 * field each column's values need. Reads only; never exits.
 */
#ifndef MYLIST_H
#define MYLIST_H

#include <stddef.h>

#include "err.h"
#include "source_cat.h"

struct config;

/* mylist.c */

/* as pglist_catalogue (lib/pg/pglist.h), the tables of the url's
 * database */
int	mylist_catalogue(const struct config *, const char *const *want,
	    int n, const struct mapping_opts *mo, struct source_cat *,
	    struct p2o_err *);
/* the kind of index field a column needs (information_schema DATA_TYPE
 * and COLUMN_TYPE; json: a JSON column, MariaDB's longtext included) */
void	mylist_field(const char *data_type, const char *column_type,
	    int json, const struct mapping_opts *, struct target_field *out,
	    char *note, size_t notelen);

#endif
