/*
 * myjson.h - MySQL's binary JSON format, and JSON text made compact: what
 * a JSON column becomes in a document.
 */
#ifndef MYJSON_H
#define MYJSON_H

#include <stddef.h>

#include "sbuf.h"

/* myjson.c */

/*
 * MySQL's binary JSON (a JSON column's bytes, without the length prefix)
 * -> compact JSON text appended to out; an empty value is JSON null.
 * 0, or -1 with err and nothing appended.
 */
int	myjson_to_text(const unsigned char *p, size_t n, struct sbuf *out,
	    char *err, size_t errlen);
/* JSON text with the whitespace between tokens removed; -1 invalid */
int	json_compact(const char *s, size_t n, struct sbuf *out);

#endif
