/*
 * myscalar.h - MySQL's column type codes and the binary forms of its
 * scalars that a binlog row image and a binary JSON value share: what
 * myval.c (a column's document form) and myjson.c (a JSON column's
 * text) both decode, so that neither needs the other's header.
 */
#ifndef MYSCALAR_H
#define MYSCALAR_H

#include <stddef.h>

#include "sbuf.h"

/* column types as the binlog writes them (MySQL's enum_field_types) */
enum my_ftype {
	FT_DECIMAL = 0, FT_TINY = 1, FT_SHORT = 2, FT_LONG = 3, FT_FLOAT = 4,
	FT_DOUBLE = 5, FT_NULL = 6, FT_TIMESTAMP = 7, FT_LONGLONG = 8,
	FT_INT24 = 9, FT_DATE = 10, FT_TIME = 11, FT_DATETIME = 12,
	FT_YEAR = 13, FT_NEWDATE = 14, FT_VARCHAR = 15, FT_BIT = 16,
	FT_TIMESTAMP2 = 17, FT_DATETIME2 = 18, FT_TIME2 = 19,
	FT_JSON = 245, FT_NEWDECIMAL = 246, FT_ENUM = 247, FT_SET = 248,
	FT_TINY_BLOB = 249, FT_MEDIUM_BLOB = 250, FT_LONG_BLOB = 251,
	FT_BLOB = 252, FT_VAR_STRING = 253, FT_STRING = 254, FT_GEOMETRY = 255,
};

/* myscalar.c */

/* shortest text that reads back as the same float / double */
void	my_put_float(struct sbuf *, float);
void	my_put_double(struct sbuf *, double);
/* a decimal in binlog binary form -> its digits with scale; -1 bad */
int	my_decimal_text(const unsigned char *p, size_t n, int precision,
	    int scale, struct sbuf *out);
/* the bytes of a decimal(precision, scale) in that form; -1 for a
 * precision or scale MySQL does not allow */
int	my_decimal_bin_size(int precision, int scale);

#endif
