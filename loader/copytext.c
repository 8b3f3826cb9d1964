/*
 * copytext.c - COPY's text format, the rows `COPY ... TO STDOUT` sends:
 * one row into its fields, unescaped in place. It owns that format and
 * nothing else: it never sees a connection, a type or a frame.
 *
 * Strict on purpose: the server writes only the escapes COPY FROM reads
 * back, so an escape it never writes means the bytes are not what we
 * asked for, and a row that is not understood must stop the load rather
 * than become a wrong document.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader.h"
#include "swar.h"

/* nonzero if any of the 8 bytes of x is one a field cannot hold as it is:
 * a backslash, a raw line break or a NUL. Long text values are mostly
 * plain bytes, skipped eight at a time. */
static inline uint64_t
copy_special8(uint64_t x)
{
	return swar_has8(x, '\\') | swar_has8(x, '\n') | swar_has8(x, '\r') |
	    swar_zero8(x);
}

static const unsigned char copy_special[256] = {
	['\0'] = 1, ['\n'] = 1, ['\r'] = 1, ['\\'] = 1,
};

static int
bad(char *err, size_t errlen, int field, const char *what)
{
	snprintf(err, errlen, "COPY row: field %d: %s", field, what);
	return -1;
}

/* the value of digit c in base 8 or 16, or -1 */
static int
digit(char c, int base)
{
	if (c >= '0' && c <= '9')
		return c - '0' < base ? c - '0' : -1;
	c |= 0x20;
	return base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * The escape after a backslash at *pp (end: the field's end): the byte it
 * stands for, *pp moved past it; -1 with why set when it is not one COPY
 * writes. A byte value of 0 is refused: no text value holds a NUL.
 */
static int
unescape(const char **pp, const char *end, const char **why)
{
	const char *p = *pp;
	int v, d, i;

	if (p == end) {
		*why = "a backslash ends the field";
		return -1;
	}
	switch (*p++) {
	case 'b': v = '\b'; break;
	case 'f': v = '\f'; break;
	case 'n': v = '\n'; break;
	case 'r': v = '\r'; break;
	case 't': v = '\t'; break;
	case 'v': v = '\v'; break;
	case '\\': v = '\\'; break;
	case 'N':
		*why = "\\N inside a value (NULL is a whole field)";
		return -1;
	case 'x':
		v = 0;
		for (i = 0; i < 2 && p < end && (d = digit(*p, 16)) >= 0; i++, p++)
			v = v * 16 + d;
		if (i == 0) {
			*why = "\\x without a hex digit";
			return -1;
		}
		break;
	default:
		if ((v = digit(p[-1], 8)) < 0) {
			*why = "an escape COPY does not write";
			return -1;
		}
		for (i = 1; i < 3 && p < end && (d = digit(*p, 8)) >= 0; i++, p++)
			v = v * 8 + d;
		if (v > 0377) {
			*why = "an octal escape above \\377";
			return -1;
		}
		break;
	}
	if (v == 0) {
		*why = "an escape for a NUL byte";
		return -1;
	}
	*pp = p;
	return v;
}

int
copy_split(char *row, size_t len, struct copy_field *f, int nf, char *err,
    size_t errlen)
{
	const char *end, *fend, *r, *run, *why;
	char *w, *start;
	uint64_t x, m;
	int i, c;

	if (len == 0 || row[len - 1] != '\n') {
		snprintf(err, errlen, "COPY row does not end with a newline");
		return -1;
	}
	end = row + len - 1;
	r = row;
	for (i = 0;; i++) {
		if (i == nf) {
			snprintf(err, errlen, "COPY row has more than %d "
			    "fields", nf);
			return -1;
		}
		fend = memchr(r, '\t', end - r);
		if (fend == NULL)
			fend = end;
		if (fend - r == 2 && r[0] == '\\' && r[1] == 'N') {
			f[i].p = NULL;
			f[i].n = 0;
			r = fend;
		} else {
			/* unescaping never lengthens: write where we read;
			 * a run of plain bytes moves only once an escape has
			 * put the writing behind the reading */
			start = w = (char *)r;
			while (r < fend) {
				run = r;
				r = (const char *)swar_none_of4(
				    (const unsigned char *)r,
				    (const unsigned char *)fend, '\\', '\n',
				    '\r', '\0');
				while (fend - r >= 8) {
					memcpy(&x, r, 8);
					if ((m = copy_special8(x)) != 0) {
						r += swar_first(m);
						break;
					}
					r += 8;
				}
				while (r < fend && !copy_special[(unsigned char)*r])
					r++;
				if (w != run)
					memmove(w, run, r - run);
				w += r - run;
				if (r == fend)
					break;
				c = (unsigned char)*r++;
				if (c != '\\')
					return bad(err, errlen, i + 1, c == '\0' ?
					    "a NUL byte" : "a raw line break");
				if ((c = unescape(&r, fend, &why)) < 0)
					return bad(err, errlen, i + 1, why);
				*w++ = (char)c;
			}
			f[i].p = start;
			f[i].n = w - start;
		}
		if (r == end)
			break;
		r++;	/* the tab */
	}
	if (i + 1 != nf) {
		snprintf(err, errlen, "COPY row has %d field%s, expected %d",
		    i + 1, i ? "s" : "", nf);
		return -1;
	}
	return 0;
}
