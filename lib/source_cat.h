/*
 * source_cat.h - a source's catalogue as `pg2osync init` reads it: the
 * tables a sync section could name, and for the chosen ones the kind of
 * index field each column needs (so that a mapping file, not the first
 * document, decides a field's type). The per-kind listing is the source's
 * (lib/pg/pglist.c, lib/mysql/mylist.c, through source_ops.h); the rule
 * that resolves the names an operator gave, and the field kinds both
 * kinds share, are here, once.
 */
#ifndef SOURCE_CAT_H
#define SOURCE_CAT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "target.h"

/* how columns a dynamic mapping would guess at are mapped */
struct mapping_opts {
	int	 decimal_scaled;	/* numeric/decimal as scaled_float (else
					 * keyword: exact) */
	int	 json_flat;		/* JSON as flat_object (else object) */
};

/* a table a section could name */
struct source_cat_table {
	char	*schema, *name;	/* schema (PostgreSQL) or database */
	int	 has_key;	/* without one a section is append_only */
	/* described (source_cat_describe): the field of every column,
	 * their names and a note for the operator each ("" none) */
	int	 nfields;
	struct target_field *fields;
	char	**colnames, **notes;
};

struct source_cat {
	char	 from[512];	/* "the catalogue of database 'app'" */
	int	 n;
	struct source_cat_table *t;	/* every eligible table, by name */
	int	 nchosen;
	int	*chosen;	/* indexes into t, in the order asked */
};

/* source_cat.c */

void	source_cat_init(struct source_cat *);
void	source_cat_release(struct source_cat *);
/* append an eligible table (a kind's listing) */
struct source_cat_table *source_cat_add(struct source_cat *,
	    const char *schema, const char *name, int has_key);
/*
 * Choose the tables named in want (every table when n is 0): a name
 * "schema.table" as it is, a bare name in whichever schema holds it. 0,
 * or 1 when a name is not eligible or is ambiguous (the reason in why,
 * one line; the eligible tables are cat's to list), -1 never.
 */
int	source_cat_choose(struct source_cat *, const char *const *want, int n,
	    char *why, size_t whylen);
/* a chosen table's field for column i, set by a kind's describe */
void	source_cat_field(struct source_cat_table *, int i, const char *col,
	    enum target_field_kind kind, long long factor, const char *note);
/* the field kinds both kinds share: a numeric of precision prec and
 * scale scale (known 0: unconstrained) by the options, a timestamp of
 * fsp fraction digits, JSON by the options; the numbers in a type's
 * "(p)" or "(p,s)" (how many were found) */
void	source_cat_decimal(int prec, int scale, int known,
	    const struct mapping_opts *, struct target_field *out,
	    char *note, size_t notelen);
enum target_field_kind source_cat_timestamp(int fsp);
enum target_field_kind source_cat_json(const struct mapping_opts *);
int	source_cat_typmods(const char *type, int *a, int *b);

#endif
