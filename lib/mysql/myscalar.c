/*
 * myscalar.c - MySQL's scalars in the binary forms a binlog row image
 * and a binary JSON document both carry: the packed decimal, and a float
 * or a double as the shortest text that reads back as the same number.
 * Below both myval.c (a column's value) and myjson.c (a JSON document's
 * members), which use it and never each other's internals. Pure: no I/O,
 * never logs; a decimal that does not decode is -1 with nothing appended.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "myscalar.h"

void
my_put_float(struct sbuf *out, float f)
{
	char buf[64];
	int prec;

	for (prec = 6; prec <= 9; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, (double)f);
		if (strtof(buf, NULL) == f)
			break;
	}
	sbuf_adds(out, buf);
}

void
my_put_double(struct sbuf *out, double d)
{
	char buf[64];
	int prec;

	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	sbuf_adds(out, buf);
}

static const int dig2bytes[10] = { 0, 1, 1, 2, 2, 3, 3, 4, 4, 4 };

int
my_decimal_bin_size(int precision, int scale)
{
	int intg = precision - scale;

	if (precision < 1 || precision > 65 || scale < 0 || scale > 30 ||
	    scale > precision)
		return -1;
	return intg / 9 * 4 + dig2bytes[intg % 9] + scale / 9 * 4 +
	    dig2bytes[scale % 9];
}

/* n big-endian bytes of a decimal, already sign-corrected */
static uint32_t
dec_be(const unsigned char *p, int n, unsigned char mask)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | (unsigned char)(p[i] ^ mask);
	return v;
}

int
my_decimal_text(const unsigned char *src, size_t n, int precision,
    int scale, struct sbuf *out)
{
	unsigned char buf[64], mask;
	int size = my_decimal_bin_size(precision, scale);
	int intg = precision - scale, off = 0, i, k, lead = 1;
	char digits[16];
	size_t start = out->len;
	uint32_t v;

	if (size < 0 || (size_t)size != n || n > sizeof(buf))
		return -1;
	memcpy(buf, src, n);
	/* the top bit is set for a positive value; a negative one has
	 * every byte inverted */
	mask = (buf[0] & 0x80) ? 0 : 0xff;
	buf[0] ^= 0x80;
	if (mask)
		sbuf_addc(out, '-');
	/* the integer part: a partial group, then whole groups of 9 */
	if (intg % 9) {
		k = dig2bytes[intg % 9];
		v = dec_be(buf, k, mask);
		off += k;
		if (v != 0) {
			sbuf_addf(out, "%u", v);
			lead = 0;
		}
	}
	for (i = 0; i < intg / 9; i++, off += 4) {
		v = dec_be(buf + off, 4, mask);
		if (lead && v == 0)
			continue;
		if (v > 999999999)
			goto bad;
		snprintf(digits, sizeof(digits), lead ? "%u" : "%09u", v);
		sbuf_adds(out, digits);
		lead = 0;
	}
	if (lead)
		sbuf_addc(out, '0');
	if (scale > 0) {
		sbuf_addc(out, '.');
		for (i = 0; i < scale / 9; i++, off += 4) {
			v = dec_be(buf + off, 4, mask);
			if (v > 999999999)
				goto bad;
			sbuf_addf(out, "%09u", v);
		}
		if (scale % 9) {
			k = dig2bytes[scale % 9];
			v = dec_be(buf + off, k, mask);
			snprintf(digits, sizeof(digits), "%0*u", scale % 9, v);
			if ((int)strlen(digits) != scale % 9)
				goto bad;
			sbuf_adds(out, digits);
		}
	}
	/* "-0.00" is what MySQL never prints */
	if (mask) {
		int nonzero = 0;

		for (i = (int)start + 1; i < (int)out->len; i++)
			if (out->buf[i] >= '1' && out->buf[i] <= '9')
				nonzero = 1;
		if (!nonzero) {
			memmove(out->buf + start, out->buf + start + 1,
			    out->len - start - 1);
			out->len--;
			out->buf[out->len] = '\0';
		}
	}
	return 0;
bad:
	out->len = start;
	out->buf[start] = '\0';
	return -1;
}
