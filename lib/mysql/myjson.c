/*
 * myjson.c - MySQL's binary JSON (what a JSON column holds, and what the
 * binlog carries verbatim) to compact JSON text, the same text a SELECT of
 * the column reads once its whitespace is removed: members in stored
 * order, scalars MySQL has no JSON type for (dates, times, decimals) as
 * MySQL prints them, any other opaque value as "base64:type<N>:<base64>".
 *
 * Every offset is checked against the bytes actually there, not against
 * the size a container states: a value is read or refused, never read
 * past. Nothing is appended on error.
 */
#include <stdio.h>
#include <string.h>

#include "myjson.h"
#include "mybytes.h"
#include "myscalar.h"
#include "jscan.h"

#define JSON_MAX_DEPTH	100	/* MySQL's own limit */

enum {
	JB_SMALL_OBJ = 0x00, JB_LARGE_OBJ = 0x01, JB_SMALL_ARR = 0x02,
	JB_LARGE_ARR = 0x03, JB_LITERAL = 0x04, JB_INT16 = 0x05,
	JB_UINT16 = 0x06, JB_INT32 = 0x07, JB_UINT32 = 0x08,
	JB_INT64 = 0x09, JB_UINT64 = 0x0a, JB_DOUBLE = 0x0b,
	JB_STRING = 0x0c, JB_OPAQUE = 0x0f,
};

struct jctx {
	char	*err;
	size_t	 errlen;
	size_t	 limit;	/* out->len past this: the values overlap */
};

static int
bad(struct jctx *c, const char *why)
{
	snprintf(c->err, c->errlen, "binary JSON: %s", why);
	return -1;
}

/* a variable-length length: 7 bits a byte, high bit = more */
static int
varlen(const unsigned char *p, size_t n, uint64_t *len, size_t *used)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n && i < 5; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*len = v;
			*used = i + 1;
			return 0;
		}
	}
	return -1;
}

static int value(struct jctx *, int type, const unsigned char *p, size_t n,
	    struct sbuf *out, int depth);

/* the MySQL packed datetime / time in 8 bytes */
static void
put_packed_datetime(struct sbuf *out, int64_t packed, int date_only)
{
	uint64_t u = packed < 0 ? 0 - (uint64_t)packed : (uint64_t)packed;
	uint64_t ymdhms = u >> 24, frac = u % (1ULL << 24);
	uint64_t ymd = ymdhms >> 17, ym = ymd >> 5, hms = ymdhms & 0x1ffff;

	if (date_only)
		sbuf_addf(out, "\"%04u-%02u-%02u\"", (unsigned)(ym / 13),
		    (unsigned)(ym % 13), (unsigned)(ymd & 31));
	else
		sbuf_addf(out, "\"%04u-%02u-%02u %02u:%02u:%02u.%06u\"",
		    (unsigned)(ym / 13), (unsigned)(ym % 13),
		    (unsigned)(ymd & 31), (unsigned)(hms >> 12),
		    (unsigned)(hms >> 6) & 63, (unsigned)hms & 63,
		    (unsigned)frac);
}

static void
put_packed_time(struct sbuf *out, int64_t packed)
{
	uint64_t u = packed < 0 ? 0 - (uint64_t)packed : (uint64_t)packed;
	uint64_t hms = u >> 24, frac = u % (1ULL << 24);

	sbuf_addf(out, "\"%s%02u:%02u:%02u.%06u\"", packed < 0 ? "-" : "",
	    (unsigned)(hms >> 12) & 0x3ff, (unsigned)(hms >> 6) & 63,
	    (unsigned)hms & 63, (unsigned)frac);
}

static int
opaque(struct jctx *c, const unsigned char *p, size_t n, struct sbuf *out)
{
	uint64_t len;
	size_t used;
	int ftype;

	if (n < 1)
		return bad(c, "opaque value without its type");
	ftype = p[0];
	if (varlen(p + 1, n - 1, &len, &used) == -1 || len > n - 1 - used)
		return bad(c, "opaque value longer than its bytes");
	p += 1 + used;
	n = (size_t)len;
	switch (ftype) {
	case FT_NEWDECIMAL: {
		int prec, scale, size;

		if (n < 2)
			return bad(c, "opaque decimal too short");
		prec = p[0];
		scale = p[1];
		size = my_decimal_bin_size(prec, scale);
		if (size < 0 || (size_t)size != n - 2 ||
		    my_decimal_text(p + 2, n - 2, prec, scale, out) == -1)
			return bad(c, "opaque decimal does not decode");
		return 0;
	}
	case FT_DATE: case FT_DATETIME: case FT_TIMESTAMP: case FT_TIME:
	case FT_DATETIME2: case FT_TIMESTAMP2: case FT_TIME2:
		if (n < 8)
			return bad(c, "opaque temporal value too short");
		if (ftype == FT_TIME || ftype == FT_TIME2)
			put_packed_time(out, (int64_t)le64(p));
		else
			put_packed_datetime(out, (int64_t)le64(p),
			    ftype == FT_DATE);
		return 0;
	default:
		sbuf_addf(out, "\"base64:type%d:", ftype);
		sbuf_add_base64(out, p, n);
		sbuf_addc(out, '"');
		return 0;
	}
}

static int
inlined(int type, int large)
{
	return type == JB_LITERAL || type == JB_INT16 || type == JB_UINT16 ||
	    (large && (type == JB_INT32 || type == JB_UINT32));
}

static int
container(struct jctx *c, int type, const unsigned char *p, size_t n,
    struct sbuf *out, int depth)
{
	int large = type == JB_LARGE_OBJ || type == JB_LARGE_ARR;
	int obj = type == JB_SMALL_OBJ || type == JB_LARGE_OBJ;
	size_t w = large ? 4 : 2, hdr, i, ke, ve;
	uint64_t count;

	if (depth > JSON_MAX_DEPTH)
		return bad(c, "nested deeper than 100");
	if (n < 2 * w)
		return bad(c, "container header truncated");
	count = le_n(p, (int)w);
	/* the stated size is not trusted: every offset is checked
	 * against n, the bytes that are really there */
	hdr = 2 * w;
	ke = obj ? w + 2 : 0;
	ve = 1 + w;
	if (count > (n - hdr) / (ke + ve))
		return bad(c, "more elements than bytes");
	sbuf_addc(out, obj ? '{' : '[');
	for (i = 0; i < count; i++) {
		const unsigned char *e = p + hdr + count * ke + i * ve;
		int vt = e[0];
		uint64_t voff;

		/* entries that point at one value again and again would
		 * print it exponentially often: a document whose text is
		 * longer than its bytes can account for is refused */
		if (out->len > c->limit)
			return bad(c, "values overlap");
		if (i > 0)
			sbuf_addc(out, ',');
		if (obj) {
			const unsigned char *k = p + hdr + i * ke;
			uint64_t koff = le_n(k, (int)w), klen = le16(k + w);

			if (koff > n || klen > n - koff)
				return bad(c, "key outside its object");
			sbuf_add_jstr(out, (const char *)p + koff, klen);
			sbuf_addc(out, ':');
		}
		if (inlined(vt, large)) {
			if (value(c, vt, e + 1, w, out, depth + 1) == -1)
				return -1;
			continue;
		}
		voff = le_n(e + 1, (int)w);
		if (voff > n)
			return bad(c, "value outside its container");
		if (value(c, vt, p + voff, n - voff, out, depth + 1) == -1)
			return -1;
	}
	sbuf_addc(out, obj ? '}' : ']');
	return 0;
}

static int
value(struct jctx *c, int type, const unsigned char *p, size_t n,
    struct sbuf *out, int depth)
{
	uint64_t len;
	size_t used;
	double d;

	switch (type) {
	case JB_SMALL_OBJ: case JB_LARGE_OBJ:
	case JB_SMALL_ARR: case JB_LARGE_ARR:
		return container(c, type, p, n, out, depth);
	case JB_LITERAL:
		if (n < 1)
			return bad(c, "literal truncated");
		if (p[0] > 2)
			return bad(c, "unknown literal");
		sbuf_adds(out, p[0] == 0 ? "null" : p[0] == 1 ? "true" :
		    "false");
		return 0;
	case JB_INT16: case JB_UINT16:
		if (n < 2)
			return bad(c, "int16 truncated");
		if (type == JB_INT16)
			sbuf_add_i64(out, (int16_t)le16(p));
		else
			sbuf_add_u64(out, le16(p));
		return 0;
	case JB_INT32: case JB_UINT32:
		if (n < 4)
			return bad(c, "int32 truncated");
		if (type == JB_INT32)
			sbuf_add_i64(out, (int32_t)le32(p));
		else
			sbuf_add_u64(out, le32(p));
		return 0;
	case JB_INT64: case JB_UINT64:
		if (n < 8)
			return bad(c, "int64 truncated");
		if (type == JB_INT64)
			sbuf_add_i64(out, (int64_t)le64(p));
		else
			sbuf_add_u64(out, le64(p));
		return 0;
	case JB_DOUBLE: {
		uint64_t u;

		if (n < 8)
			return bad(c, "double truncated");
		u = le64(p);
		memcpy(&d, &u, 8);
		if (d != d || d - d != 0)
			return bad(c, "a double that is not a number");
		my_put_double(out, d);
		return 0;
	}
	case JB_STRING:
		if (varlen(p, n, &len, &used) == -1 || len > n - used)
			return bad(c, "string longer than its bytes");
		sbuf_add_jstr(out, (const char *)p + used, (size_t)len);
		return 0;
	case JB_OPAQUE:
		return opaque(c, p, n, out);
	default:
		return bad(c, "unknown value type");
	}
}

int
myjson_to_text(const unsigned char *p, size_t n, struct sbuf *out,
    char *err, size_t errlen)
{
	struct jctx c = { err, errlen, 0 };
	size_t start = out->len;

	if (n == 0) {
		/* what MySQL logs for a JSON null in a NOT NULL column */
		sbuf_adds(out, "null");
		return 0;
	}
	/* no byte of a document prints as more than 16 (a control
	 * character in a key or a string is "\u00XX") */
	c.limit = start + 16 * n + 64;
	if (value(&c, p[0], p + 1, n - 1, out, 0) == -1) {
		out->len = start;
		if (out->cap)
			out->buf[start] = '\0';
		return -1;
	}
	return 0;
}

int
json_compact(const char *s, size_t n, struct sbuf *out)
{
	size_t off, i;
	const char *why;
	int in_str = 0;

	if (jscan_validate(s, n, &off, &why) == -1)
		return -1;
	sbuf_grow(out, n);
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (in_str) {
			sbuf_addc(out, ch);
			if (ch == '\\' && i + 1 < n)
				sbuf_addc(out, s[++i]);
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
			continue;
		if (ch == '"')
			in_str = 1;
		sbuf_addc(out, ch);
	}
	return 0;
}
