/*
 * datepat.h - the date transform's patterns (docs/config.md "transform"):
 * which ones the configuration accepts and what a value read by one
 * becomes. One grammar for both, so that a pattern the file was allowed to
 * hold is never one the shaper reads otherwise. Two styles, told apart by
 * a '%': tokens (YYYY MM DD hh mm ss, any other byte matching itself) and
 * strptime-style directives (%Y, %m, %d, %H, ...). Pure: no I/O.
 */
#ifndef DATEPAT_H
#define DATEPAT_H

#include <stddef.h>

struct sbuf;

/* a pattern of either style: 0, or -1 with why ("must ...", "has ...") */
int	datepat_check(const char *pat, char *why, size_t len);

enum datepat_result {
	DATEPAT_NO,		/* neither ISO 8601 nor matching: nothing
				 * appended */
	DATEPAT_ISO,		/* ISO 8601 already: nothing appended, the
				 * value stays as it is */
	DATEPAT_CONVERTED	/* its ISO 8601 form appended, as a JSON
				 * string */
};

/* the text s (n bytes) read by pat (NULL: the SQL spelling
 * "YYYY-MM-DD hh:mm..." only) */
enum datepat_result datepat_convert(const char *pat, const char *s, size_t n,
	    struct sbuf *out);

#endif
