/*
 * myval.h - the document form of a MySQL or MariaDB column value, decided
 * by the column's declared type: from a binlog row image cell (the
 * stream) and from the text a SELECT returns (the initial load), the same
 * JSON for the same stored value. Shared by capture-mysql and the loader.
 */
#ifndef MYVAL_H
#define MYVAL_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "myscalar.h"
#include "sbuf.h"

/*
 * One binlog column: its type and metadata. meta is kept the way the
 * tools that print table maps show it: STRING, ENUM, SET and NEWDECIMAL
 * big-endian (first byte high), VARCHAR and BIT little-endian, one-byte
 * metadata as is.
 */
struct bl_col {
	uint8_t	 type;		/* as written (STRING for char/enum/set) */
	uint8_t	 real;		/* STRING's real type: STRING, ENUM or SET */
	uint16_t meta;
	int	 nullable;
	/* optional metadata, when the server sent it */
	char	*name;
	int	 is_unsigned;	/* -1 unknown */
	int	 charset;	/* collation id; -1 unknown */
	int	 nlabels;	/* enum/set labels, -1 none */
	char	**labels;
	int	 visible;	/* -1 unknown */
	int	 geometry;	/* geometry subtype, -1 unknown */
};

/* myval.c */

enum my_kind {
	MK_INT, MK_UINT, MK_FLOAT, MK_DOUBLE, MK_DECIMAL, MK_YEAR,
	MK_BIT, MK_ENUM, MK_SET, MK_TEXT, MK_BINARY, MK_DATE,
	MK_TIME, MK_DATETIME, MK_TIMESTAMP, MK_JSON, MK_JSON_TEXT,
};

/* a column as the catalogue declares it: what decides its JSON form */
struct my_col {
	char	*name;
	char	*data_type;	/* information_schema DATA_TYPE */
	char	*column_type;	/* COLUMN_TYPE, labels and "unsigned" */
	char	*charset;	/* CHARACTER_SET_NAME, NULL for none */
	enum my_kind kind;
	int	 scale;		/* decimal: NUMERIC_SCALE */
	int	 pad;		/* binary(n): n, the bytes every value holds */
	int	 nlabels;
	char	**labels;	/* enum/set, from column_type */
};

/*
 * Fill kind, scale and labels from data_type, column_type and charset
 * (json_check: MariaDB's JSON is a longtext with a json_valid check).
 * 0, or -1 with err (a column_type that does not parse).
 */
int	my_col_init(struct my_col *, const char *name, const char *data_type,
	    const char *column_type, const char *charset, int json_check,
	    struct p2o_err *);
void	my_col_release(struct my_col *);
/* 1 when a row image cell of binlog column bc can hold c's values */
int	myval_compatible(const struct my_col *c, const struct bl_col *bc);
/* a column's JSON value from a row image cell (bc: the binlog column):
 * 0; 1 a JSON document that did not decode, written as
 * "__mysql_json_hex:<hex>" (err says why); -1 a cell the declared type
 * cannot hold, or a decimal that does not decode (err) */
int	myval_binlog(const struct my_col *, const struct bl_col *bc,
	    const unsigned char *p, size_t n, struct sbuf *out,
	    struct p2o_err *);
/*
 * The same value from its text-protocol form (what a SELECT returns in
 * a session with time_zone '+00:00'): the loader's half, and the same
 * JSON as myval_binlog for the same stored value. NULL is the caller's.
 */
void	myval_text(const struct my_col *, const char *s, size_t n,
	    struct sbuf *out);
/*
 * The column as the SQL expression whose value is its document form, for
 * a row filter pushed into a SELECT: appended, 0; -1 when SQL cannot
 * produce that form exactly (myval.c says which and why).
 */
int	myval_filter_sql(const struct my_col *, struct sbuf *out);
/* the same, the column named alias.column (a statement that joins
 * tables whose columns may share its name) */
int	myval_filter_sql_as(const struct my_col *, const char *alias,
	    struct sbuf *out);

#endif
