/*
 * pgtypes.h - the document form of a PostgreSQL value: a type's output
 * text, as pgoutput sends it and as COPY's text format holds it, to its
 * JSON value. The one mapping capture-pg's rows and the loader's copy
 * rows go through, so a streamed row and a copied row are the same bytes.
 */
#ifndef PGTYPES_H
#define PGTYPES_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

/* microseconds between 1970-01-01 and PostgreSQL's epoch 2000-01-01 */
#define PG_EPOCH_OFFSET_US	946684800000000LL

/*
 * The session settings the mapping reads the output text in. Sent in the
 * startup packet of every connection that reads values (pgconn.c), where
 * they win over ALTER ROLE/DATABASE ... SET.
 */
#define PGTYPES_SESSION_OPTIONS "-c DateStyle=ISO -c TimeZone=UTC " \
	"-c extra_float_digits=3 -c IntervalStyle=iso_8601 " \
	"-c bytea_output=hex"

/* pgtypes.c */

/*
 * Append the JSON value for a column of type typoid whose output-function
 * text is text[0..len) (in the session above). Never fails: text that does
 * not parse as its type becomes a JSON string. The table is in
 * capture-pg/README.md.
 */
void	pgtype_to_json(uint32_t typoid, const char *text, size_t len,
	    struct sbuf *out);
/* 1 for text, varchar and bpchar: the types whose comparisons follow a
 * collation, which may order bytes otherwise than the row filter does */
int	pgtype_is_string(uint32_t typoid);

#endif
