/*
 * where.h - a sync section's row filter: a subset of SQL that both
 * PostgreSQL and MySQL run the same way, parsed once when the
 * configuration loads, evaluated by the shaper on every row (stream and
 * load) and written back as SQL by the loader, which adds it to its range
 * predicates.
 *
 * The subset: comparisons (= <> != < <= > >=) between column names and
 * string ('it''s'), number (-12.5e3) or boolean (TRUE, FALSE) literals,
 * AND, OR, NOT, IN (literal, ...), NOT IN, IS NULL, IS NOT NULL and
 * parentheses; keywords in any letter case. SQL's three-valued logic: NULL
 * (or a missing column) is unknown, and only TRUE matches. Strings compare
 * byte-wise; a number against a string that holds a number compares
 * numerically, exactly (numeric and DECIMAL arrive as strings). A boolean
 * value against TRUE/FALSE compares as a boolean; against anything else
 * TRUE and FALSE are 1 and 0, as MySQL reads them (where.c says the rest).
 */
#ifndef WHERE_H
#define WHERE_H

#include <stddef.h>

#include "jscan.h"
#include "sbuf.h"

struct where;

#define WHERE_SUPPORTED "comparisons (= <> != < <= > >=) between column " \
	"names and string, number or boolean (TRUE, FALSE) literals, AND, " \
	"OR, NOT, IN (...), IS [NOT] NULL and parentheses"

/* the expression, or NULL with why (the byte offset and what is wrong,
 * then the list of what is supported) */
struct where *where_parse(const char *s, char *why, size_t len);
/* whether s parses, as a configuration key's check: 0, or -1 with why */
int	where_check(const char *s, char *why, size_t len);
void	where_free(struct where *);

/* the column names the expression reads, each once */
int	where_ncolumns(const struct where *);
const char *where_column(const struct where *, int i);

/* a column's value in the row: 1 and *val, or 0 when the row has none
 * (which is NULL) */
typedef int (*where_get_fn)(void *arg, const char *name, struct jspan *val);
/* 1 if the row matches (the expression is TRUE), 0 if FALSE or unknown */
int	where_match(const struct where *, where_get_fn get, void *arg);

/* a quoted SQL identifier (ident 1) or string literal (ident 0) of s, as a
 * heap string, or NULL when quoting failed */
typedef char *(*where_quote_fn)(void *arg, const char *s, int ident);
/* the expression as SQL, fully parenthesised, appended to out: 0, or -1
 * when a quote failed */
int	where_sql(const struct where *, struct sbuf *out, where_quote_fn q,
	    void *arg);

/* the numeric comparison where_match uses, for tests: -1, 0, 1, or 2 when
 * either is not a number */
int	where_numcmp(const char *a, size_t alen, const char *b, size_t blen);

#endif
