/*
 * pgcat.h - what the PostgreSQL catalogue says about a synced table, for
 * every program that reads one (capture-pg, the loader): its columns and
 * their types, its replica identity, the tables a publication of it
 * carries with it (inheritance children, partitions), the one rule placing
 * it in <publication> or <publication>_append (pgcat_in_append), and the
 * one rule for the key a row is filed by:
 *
 *   the section's primary_key when it names one (every column in the
 *   replica identity, unless that is FULL), else the replica identity's
 *   columns (its index, or the primary key), else none for an
 *   append_only section; anything else is refused (69).
 */
#ifndef PGCAT_H
#define PGCAT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct config;
struct pg_conn;
struct sync_section;

struct pgcat_column {
	char	*name;
	uint32_t typoid;	/* pg_attribute.atttypid: what pgoutput sends */
	char	*type;		/* format_type(): the exact type, for a cast */
	int	 sent;		/* pgoutput sends it: not generated, and in
				 * the publication's column list if any */
	int	 toastable;	/* may be stored out of line, and then left
				 * out of an update that does not change it */
	int	 readable;	/* the role may SELECT it */
};

/* a table a publication of the section's table carries with it */
struct pgcat_rel {
	char	*qname;		/* "schema.table" */
	uint32_t oid;
	char	 kind;		/* relkind: 'r', or 'p' for a partitioned
				 * partition, which holds no rows itself */
	int	 partition;	/* a partition: published as its root (the
				 * publication's publish_via_partition_root);
				 * else an inheritance child, published under
				 * its own name */
	char	 ident;		/* relreplident */
	int	 nidkey;
	char	**idkey;	/* its replica identity's columns */
	int	 ncols;
	char	**cols;		/* its columns, by attnum */
};

struct pgcat_table {
	const struct sync_section *sec;
	uint32_t oid;
	char	 kind;		/* relkind: 'r' or 'p' */
	char	 ident;		/* relreplident: 'd', 'n', 'f' or 'i' */
	int	 ncols;
	struct pgcat_column *cols;	/* by attnum, dropped ones left out */
	int	 nidkey;
	int	*idkey;		/* the replica identity (the identity index,
				 * or the primary key), in key order: indexes
				 * into cols */
	int	 nkey;
	int	*key;		/* the key rows carry (the rule above); none
				 * for an append_only table without one */
	int	 nrels;
	struct pgcat_rel *rels;	/* every descendant, by name */
	int	 nchildren;	/* of them inheritance children */
};

/* a column (pg_attribute a) whose values may be stored out of line: a
 * variable length type whose storage allows it, unless a varchar(n) or
 * char(n) too short to ever reach the TOAST threshold, about 2 kB at 4
 * bytes a character. Such a value is left out of an UPDATE that does not
 * change it, unless the table's replica identity is FULL */
#define PGCAT_TOASTABLE \
    "a.attlen = -1 AND a.attstorage IN ('x', 'e') " \
    "AND NOT (a.atttypid IN ('pg_catalog.varchar'::pg_catalog.regtype, " \
    "'pg_catalog.bpchar'::pg_catalog.regtype) " \
    "AND a.atttypmod BETWEEN 5 AND 504)"

/* pgcat.c */

/*
 * The table of sec: its columns (pub: the publication whose column list
 * decides which are sent; "" none), identity, key and descendants. 69
 * when it is missing, not a table, has REPLICA IDENTITY NOTHING or no key
 * (unless append_only), or a primary_key names a column it does not have
 * or that its replica identity does not carry.
 */
int	pgcat_describe(struct pg_conn *, const char *pub,
	    const struct sync_section *, struct pgcat_table *,
	    struct p2o_err *);
struct sbuf;
/* s as the next element of the array literal in b ("{" so far, or
 * "{...": "}" closes it), quoted, '"' and '\\' escaped */
void	pgcat_array_add(struct sbuf *b, const char *s);
/* tables described together at most: a few questions for each batch
 * instead of four for each table, and what a batch holds stays small */
#define PGCAT_BATCH	256
/*
 * The same for the n tables of secs[] into t[], in a few questions for all
 * of them. 0 when every one is described; else -1 with the error of the
 * first that is not (the one pgcat_describe of each in turn would have
 * named), *ndone the tables before it, described (the caller releases
 * those; the rest are released).
 */
int	pgcat_describe_many(struct pg_conn *, const char *pub,
	    const struct sync_section *const *secs, int n,
	    struct pgcat_table *t, int *ndone, struct p2o_err *);
void	pgcat_table_release(struct pgcat_table *);
/* the column named name, or NULL */
const struct pgcat_column *pgcat_column(const struct pgcat_table *,
	    const char *name);
/* 1 when every table of the tree (the table and each descendant) has a
 * replica identity, so that a publication publishing its updates and
 * deletes leaves the application's UPDATE and DELETE working */
int	pgcat_tree_has_identity(const struct pgcat_table *);
/*
 * The one placement rule: 1 when the table goes in the publication
 * <publication>_append, which publishes inserts and truncates only - an
 * append_only table whose tree lacks a replica identity somewhere, so
 * that the application's own UPDATE and DELETE of it keep working - and
 * 0 when it goes in <publication>.
 */
int	pgcat_in_append(const struct pgcat_table *);
/* pgcat_tree_has_identity of the table whose oid the SQL expression oid
 * gives, as an SQL expression: for a script that places tables on the
 * server (setup-sql) by the same rule */
struct sbuf;
void	pgcat_tree_identity_sql(struct sbuf *, const char *oid);
/*
 * Every column a document's identity or filter reads from a row's
 * before-image (id, index, routing, join.column, fan_out.column, where)
 * exists and is carried by the replica identity (or FULL), a join parent's
 * id names its key and nothing else, and the same holds for every
 * descendant, whose rows are filed under this table: each table that
 * fails is logged with the ALTER TABLE that fixes it, and err names them.
 * 0, or -1 with err (69).
 */
int	pgcat_check_images(const struct pgcat_table *, struct p2o_err *);
/* no table under this one is a sync section of its own (its rows are
 * this table's): 0, or -1 with err (69) */
int	pgcat_check_overlap(const struct config *, const struct pgcat_table *,
	    struct p2o_err *);

/* a table a sync section could name (pgcat_tables) */
struct pgcat_name {
	char	*schema, *name;
	int	 has_key;	/* a primary key or a replica identity index:
				 * without one a section must be append_only */
};

/* every table the role may read that a section could name: ordinary and
 * partitioned tables outside the system schemas, partitions left out
 * (their rows arrive under their root's name), by schema and name. 0
 * with *v (pgcat_names_free) and *n, or -1 with err */
int	pgcat_tables(struct pg_conn *, struct pgcat_name **v, int *n,
	    struct p2o_err *);
void	pgcat_names_free(struct pgcat_name *, int n);

/* one heap of a table (itself, an inheritance child, a leaf partition):
 * the planner's numbers and the pages it has now */
struct pgcat_heap {
	double	 tuples;	/* reltuples: -1 from PostgreSQL 14 when
				 * never analysed */
	long long relpages;	/* the pages reltuples was counted in */
	long long pages;	/* the pages it has now */
};

/* every heap of the table oid: 0 with *v (free()) and *n, or -1 */
int	pgcat_heaps(struct pg_conn *, uint32_t oid, struct pgcat_heap **v,
	    int *n, struct p2o_err *);

#endif
