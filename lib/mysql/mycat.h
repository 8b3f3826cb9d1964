/*
 * mycat.h - what a MySQL or MariaDB catalogue (information_schema) says
 * about a synced table, for every program that reads one (capture-mysql,
 * the loader): its columns as declared, which decide their JSON form
 * (myval.h), and the one rule for the key a row is filed by:
 *
 *   the section's primary_key when it names one (the binlog's full row
 *   images carry every column), else the table's primary key, else none
 *   for an append_only section; anything else is refused (69).
 */
#ifndef MYCAT_H
#define MYCAT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct st_mysql;
struct sync_section;
struct my_col;

/* a synced table as the catalogue describes it */
struct my_table {
	char	*db, *name;
	char	*rel;		/* "db.table", as row frames name it */
	int	 ncols;
	struct my_col *cols;	/* in ordinal order */
	int	 npk;
	int	*pk;		/* the table's primary key: column indexes */
	int	 nkeys;
	int	*keys;		/* the key rows carry (the rule above): column
				 * indexes; none for a keyless append_only */
};

/* mycat.c */

/*
 * The table db.name (mariadb: the server is MariaDB, whose JSON columns
 * are longtext with a json_valid check): 0, 1 when it does not exist or
 * the user may not read it, 2 when it is not a base table, -1 with err.
 * Its key is its primary key.
 */
int	mycat_table(struct st_mysql *, int mariadb, const char *db,
	    const char *name, struct my_table *, struct p2o_err *);
/* the key rule above, on a table mycat_table read: 0, or -1 with err */
int	mycat_key(struct my_table *, const struct sync_section *,
	    struct p2o_err *);
/* the table of sec, with the key rule applied: 0, or -1 with err (69
 * when it is missing, not a base table, or has no key to file rows by) */
int	mycat_describe(struct st_mysql *, int mariadb,
	    const struct sync_section *, struct my_table *, struct p2o_err *);
void	my_table_release(struct my_table *);
/* the column named name, or -1 */
int	mycat_column(const struct my_table *, const char *name);

/* a base table of a database (mycat_tables) */
struct mycat_name {
	char	*name;
	int	 has_key;	/* a primary key */
};
/* every base table of database db the user may see, by name: 0 with *v
 * (mycat_names_free) and *n, or -1 with err */
int	mycat_tables(struct st_mysql *, const char *db, struct mycat_name **v,
	    int *n, struct p2o_err *);
void	mycat_names_free(struct mycat_name *, int n);
/* the server's estimate of a table's rows (information_schema's
 * TABLE_ROWS, 0 when it has none): 0, or -1 with err */
int	mycat_row_estimate(struct st_mysql *, const char *db,
	    const char *table, uint64_t *rows, struct p2o_err *);

#endif
