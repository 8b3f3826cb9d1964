/*
 * myval.c - the document form of every MySQL / MariaDB column value,
 * decided by the column's declared type (information_schema), never by
 * what the wire happens to carry: a row image gives a string no charset
 * and an enum only its ordinal, the text protocol gives every value as
 * bytes. Two entry points, one output: myval_binlog for a row image cell
 * (the stream) and myval_text for a SELECT's text (the initial load).
 *
 * The table is in README.md. Never logs; never fails on a value's
 * content (a value that does not read as its type becomes a string),
 * only on a cell whose binlog type the declared type cannot hold.
 */
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "myval.h"
#include "p2o.h"
#include "mybytes.h"
#include "myconn.h"
#include "myjson.h"
#include "myscalar.h"

void
my_col_release(struct my_col *c)
{
	int i;

	free(c->name);
	free(c->data_type);
	free(c->column_type);
	free(c->charset);
	for (i = 0; i < c->nlabels; i++)
		free(c->labels[i]);
	free(c->labels);
	memset(c, 0, sizeof(*c));
}

/* the quoted labels of "enum('a','b''c')" / "set(...)" */
static int
parse_labels(struct my_col *c, const char *s)
{
	const char *p = strchr(s, '(');
	struct sbuf b = SBUF_INIT;
	int cap = 0;

	if (p == NULL)
		return -1;
	p++;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p == ')')
			break;
		if (*p != '\'')
			goto bad;
		p++;
		sbuf_reset(&b);
		sbuf_grow(&b, 1);
		for (;;) {
			if (*p == '\0')
				goto bad;
			if (*p == '\'' && p[1] == '\'') {
				sbuf_addc(&b, '\'');
				p += 2;
				continue;
			}
			if (*p == '\'')
				break;
			sbuf_addc(&b, *p++);
		}
		p++;
		if (c->nlabels == cap) {
			cap = cap ? cap * 2 : 8;
			c->labels = xrealloc(c->labels, cap * sizeof(char *));
		}
		c->labels[c->nlabels++] = xstrndup(b.buf, b.len);
		while (*p == ' ')
			p++;
		if (*p == ',')
			p++;
		else if (*p != ')')
			goto bad;
	}
	sbuf_release(&b);
	return 0;
bad:
	sbuf_release(&b);
	return -1;
}

static int
is(const char *dt, const char *const *names)
{
	for (; *names != NULL; names++)
		if (strcasecmp(dt, *names) == 0)
			return 1;
	return 0;
}

int
my_col_init(struct my_col *c, const char *name, const char *data_type,
    const char *column_type, const char *charset, int json_check,
    struct p2o_err *e)
{
	static const char *const ints[] = { "tinyint", "smallint",
	    "mediumint", "int", "integer", "bigint", NULL };
	static const char *const texts[] = { "char", "varchar", "tinytext",
	    "text", "mediumtext", "longtext", NULL };
	static const char *const binaries[] = { "binary", "varbinary",
	    "tinyblob", "blob", "mediumblob", "longblob", "geometry", "point",
	    "linestring", "polygon", "multipoint", "multilinestring",
	    "multipolygon", "geometrycollection", "geomcollection", NULL };
	const char *dt = data_type, *sc;

	memset(c, 0, sizeof(*c));
	c->name = xstrdup(name);
	c->data_type = xstrdup(data_type);
	c->column_type = xstrdup(column_type);
	c->charset = charset ? xstrdup(charset) : NULL;
	if (is(dt, ints))
		c->kind = strstr(column_type, "unsigned") ? MK_UINT : MK_INT;
	else if (strcasecmp(dt, "float") == 0)
		c->kind = MK_FLOAT;
	else if (strcasecmp(dt, "double") == 0 ||
	    strcasecmp(dt, "real") == 0)
		c->kind = MK_DOUBLE;
	else if (strcasecmp(dt, "decimal") == 0 ||
	    strcasecmp(dt, "numeric") == 0) {
		c->kind = MK_DECIMAL;
		sc = strchr(column_type, ',');
		c->scale = sc ? atoi(sc + 1) : 0;
	} else if (strcasecmp(dt, "year") == 0)
		c->kind = MK_YEAR;
	else if (strcasecmp(dt, "bit") == 0)
		c->kind = MK_BIT;
	else if (strcasecmp(dt, "enum") == 0 || strcasecmp(dt, "set") == 0) {
		c->kind = strcasecmp(dt, "enum") == 0 ? MK_ENUM : MK_SET;
		if (parse_labels(c, column_type) == -1)
			return p2o_fail(e, P2O_EXIT_DATA, "column '%s': cannot read the "
			    "labels of its type%.0d", name, 0);
	} else if (strcasecmp(dt, "date") == 0)
		c->kind = MK_DATE;
	else if (strcasecmp(dt, "time") == 0)
		c->kind = MK_TIME;
	else if (strcasecmp(dt, "datetime") == 0)
		c->kind = MK_DATETIME;
	else if (strcasecmp(dt, "timestamp") == 0)
		c->kind = MK_TIMESTAMP;
	else if (strcasecmp(dt, "json") == 0)
		c->kind = MK_JSON;
	else if (is(dt, texts)) {
		if (json_check)
			c->kind = MK_JSON_TEXT;
		else if (charset == NULL || strcasecmp(charset, "binary") == 0)
			c->kind = MK_BINARY;
		else
			c->kind = MK_TEXT;
	} else if (is(dt, binaries)) {
		c->kind = MK_BINARY;
		/* the binlog drops a binary(n)'s trailing zero bytes, which
		 * a SELECT returns: the value is n bytes either way */
		if (strcasecmp(dt, "binary") == 0 &&
		    sscanf(column_type, "binary(%d)", &c->pad) != 1)
			c->pad = 0;
	} else
		/* a type added after this was written: its bytes are kept */
		c->kind = MK_BINARY;
	return 0;
}

/* ---- dates and times ---- */

static void
put_frac(struct sbuf *out, unsigned long us, int fsp)
{
	char buf[8];

	if (fsp <= 0)
		return;
	if (fsp > 6)
		fsp = 6;
	snprintf(buf, sizeof(buf), "%06lu", us % 1000000);
	sbuf_addc(out, '.');
	sbuf_add(out, buf, (size_t)fsp);
}

/* fractional microseconds stored after a temporal's integer part */
static unsigned long
read_frac(const unsigned char *p, int fsp)
{
	switch ((fsp + 1) / 2) {
	case 1:
		return p[0] * 10000UL;
	case 2:
		return (p[0] << 8 | p[1]) * 100UL;
	case 3:
		return (unsigned long)p[0] << 16 | p[1] << 8 | p[2];
	default:
		return 0;
	}
}

static uint64_t
be_n(const unsigned char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void
put_datetime(struct sbuf *out, int y, int mo, int d, int h, int mi, int s,
    unsigned long us, int fsp, int zone)
{
	if (y == 0 && mo == 0 && d == 0 && h == 0 && mi == 0 && s == 0 &&
	    us == 0) {
		/* the zero date is no date */
		sbuf_adds(out, "null");
		return;
	}
	sbuf_addf(out, "\"%04d-%02d-%02dT%02d:%02d:%02d", y, mo, d, h, mi, s);
	put_frac(out, us, fsp);
	sbuf_adds(out, zone ? "Z\"" : "\"");
}

static void
put_timestamp(struct sbuf *out, uint64_t secs, unsigned long us, int fsp)
{
	struct tm tm;
	time_t t = (time_t)secs;

	if (secs == 0 && us == 0) {
		sbuf_adds(out, "null");
		return;
	}
	gmtime_r(&t, &tm);
	put_datetime(out, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	    tm.tm_hour, tm.tm_min, tm.tm_sec, us, fsp, 1);
}

static void
put_time(struct sbuf *out, int neg, unsigned long h, int m, int s,
    unsigned long us, int fsp)
{
	sbuf_addf(out, "\"%s%02lu:%02d:%02d", neg ? "-" : "", h, m, s);
	put_frac(out, us, fsp);
	sbuf_addc(out, '"');
}

/* TIME2: MySQL's packed form, sign and fraction folded together */
static void
put_time2(struct sbuf *out, const unsigned char *p, int fsp)
{
	int64_t packed, intpart, frac;
	unsigned long hms;
	int neg;

	switch ((fsp + 1) / 2) {
	case 0:
		intpart = (int64_t)be_n(p, 3) - 0x800000;
		packed = intpart * (1LL << 24);
		break;
	case 1:
		intpart = (int64_t)be_n(p, 3) - 0x800000;
		frac = p[3];
		if (intpart < 0 && frac) {
			intpart++;
			frac -= 0x100;
		}
		packed = intpart * (1LL << 24) + frac * 10000;
		break;
	case 2:
		intpart = (int64_t)be_n(p, 3) - 0x800000;
		frac = p[3] << 8 | p[4];
		if (intpart < 0 && frac) {
			intpart++;
			frac -= 0x10000;
		}
		packed = intpart * (1LL << 24) + frac * 100;
		break;
	default:
		packed = (int64_t)be_n(p, 6) - 0x800000000000LL;
		break;
	}
	neg = packed < 0;
	if (neg)
		packed = -packed;
	hms = (unsigned long)(packed >> 24);
	put_time(out, neg, (hms >> 12) & 0x3ff, (int)(hms >> 6) & 63,
	    (int)hms & 63, (unsigned long)(packed % (1LL << 24)), fsp);
}

/* ---- strings ---- */

/* cp1252, which is what MySQL calls latin1, for 0x80..0x9f */
static const unsigned short cp1252[32] = {
	0x20ac, 0x81, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021,
	0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8d, 0x017d, 0x8f,
	0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
	0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x9d, 0x017e, 0x0178,
};

static void
put_utf8(struct sbuf *b, unsigned c)
{
	if (c < 0x80)
		sbuf_addc(b, (char)c);
	else if (c < 0x800) {
		sbuf_addc(b, (char)(0xc0 | c >> 6));
		sbuf_addc(b, (char)(0x80 | (c & 0x3f)));
	} else {
		sbuf_addc(b, (char)(0xe0 | c >> 12));
		sbuf_addc(b, (char)(0x80 | ((c >> 6) & 0x3f)));
		sbuf_addc(b, (char)(0x80 | (c & 0x3f)));
	}
}

static const struct {
	const char *mysql, *iconv;
} charsets[] = {
	{ "utf16", "UTF-16BE" }, { "utf16le", "UTF-16LE" },
	{ "utf32", "UTF-32BE" }, { "ucs2", "UCS-2BE" },
	{ "latin2", "ISO-8859-2" }, { "latin5", "ISO-8859-9" },
	{ "latin7", "ISO-8859-13" }, { "greek", "ISO-8859-7" },
	{ "hebrew", "ISO-8859-8" }, { "cp1250", "CP1250" },
	{ "cp1251", "CP1251" }, { "cp1256", "CP1256" },
	{ "cp1257", "CP1257" }, { "cp850", "CP850" }, { "cp852", "CP852" },
	{ "cp866", "CP866" }, { "koi8r", "KOI8-R" }, { "koi8u", "KOI8-U" },
	{ "gbk", "GBK" }, { "gb2312", "GB2312" }, { "gb18030", "GB18030" },
	{ "big5", "BIG5" }, { "sjis", "SHIFT_JIS" }, { "cp932", "CP932" },
	{ "ujis", "EUC-JP" }, { "eucjpms", "EUC-JP-MS" },
	{ "euckr", "EUC-KR" }, { "tis620", "TIS-620" },
	{ "macroman", "MACINTOSH" }, { "armscii8", "ARMSCII-8" },
	{ "geostd8", "GEORGIAN-PS" }, { "keybcs2", "KEYBCS2" },
};

/* text in the column's charset -> a JSON string */
static void
put_text(struct sbuf *out, const char *charset, const unsigned char *p,
    size_t n)
{
	struct sbuf u = SBUF_INIT;
	const char *to = NULL;
	size_t i;

	if (charset == NULL || strncasecmp(charset, "utf8", 4) == 0 ||
	    strcasecmp(charset, "ascii") == 0) {
		sbuf_add_jstr(out, (const char *)p, n);
		return;
	}
	if (strcasecmp(charset, "latin1") == 0) {
		for (i = 0; i < n; i++)
			put_utf8(&u, p[i] >= 0x80 && p[i] < 0xa0 ?
			    cp1252[p[i] - 0x80] : p[i]);
		sbuf_add_jstr(out, u.buf ? u.buf : "", u.len);
		sbuf_release(&u);
		return;
	}
	for (i = 0; i < sizeof(charsets) / sizeof(charsets[0]); i++)
		if (strcasecmp(charset, charsets[i].mysql) == 0)
			to = charsets[i].iconv;
	if (to != NULL) {
		iconv_t cd = iconv_open("UTF-8", to);
		char *in = (char *)p, *o;
		size_t inleft = n, oleft;

		if (cd != (iconv_t)-1) {
			sbuf_grow(&u, n * 4 + 16);
			o = u.buf;
			oleft = u.cap - 1;
			while (inleft > 0 && iconv(cd, &in, &inleft, &o,
			    &oleft) == (size_t)-1) {
				if (oleft < 8)
					break;
				/* an invalid byte: a replacement, go on */
				memcpy(o, "\xef\xbf\xbd", 3);
				o += 3;
				oleft -= 3;
				in++;
				inleft--;
			}
			u.len = (size_t)(o - u.buf);
			iconv_close(cd);
			if (inleft == 0) {
				sbuf_add_jstr(out, u.buf, u.len);
				sbuf_release(&u);
				return;
			}
		}
		sbuf_release(&u);
	}
	/* a charset without a converter: invalid UTF-8 is replaced */
	sbuf_add_jstr(out, (const char *)p, n);
}

static void
put_hex_json(struct sbuf *out, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	sbuf_adds(out, "\"__mysql_json_hex:");
	for (i = 0; i < n; i++) {
		sbuf_addc(out, hex[p[i] >> 4]);
		sbuf_addc(out, hex[p[i] & 15]);
	}
	sbuf_addc(out, '"');
}

/* JSON text (MariaDB's JSON, or MySQL's JSON as SELECT prints it) */
static void
put_json_text(struct sbuf *out, const char *s, size_t n)
{
	if (json_compact(s, n, out) == -1)
		sbuf_add_jstr(out, s, n);
}

static void
put_set(struct sbuf *out, const struct my_col *c, uint64_t bits)
{
	int i, first = 1;

	sbuf_addc(out, '[');
	for (i = 0; i < c->nlabels && i < 64; i++) {
		if (!((bits >> i) & 1))
			continue;
		if (!first)
			sbuf_addc(out, ',');
		first = 0;
		sbuf_add_jstr(out, c->labels[i], strlen(c->labels[i]));
	}
	sbuf_addc(out, ']');
}

/* ---- row image cells ---- */

int
myval_compatible(const struct my_col *c, const struct bl_col *b)
{
	enum my_kind k = c->kind;

	switch (k) {
	case MK_INT: case MK_UINT:
		return b->type == FT_TINY || b->type == FT_SHORT ||
		    b->type == FT_INT24 || b->type == FT_LONG ||
		    b->type == FT_LONGLONG;
	case MK_FLOAT: case MK_DOUBLE:
		return b->type == FT_FLOAT || b->type == FT_DOUBLE;
	case MK_DECIMAL:
		return b->type == FT_NEWDECIMAL;
	case MK_YEAR:
		return b->type == FT_YEAR;
	case MK_BIT:
		return b->type == FT_BIT;
	case MK_ENUM:
		return b->real == FT_ENUM;
	case MK_SET:
		return b->real == FT_SET;
	case MK_TEXT: case MK_BINARY: case MK_JSON_TEXT:
		return (b->type == FT_STRING && b->real == FT_STRING) ||
		    b->type == FT_VARCHAR || b->type == FT_VAR_STRING ||
		    b->type == FT_BLOB || b->type == FT_TINY_BLOB ||
		    b->type == FT_MEDIUM_BLOB || b->type == FT_LONG_BLOB ||
		    (k == MK_BINARY && b->type == FT_GEOMETRY);
	case MK_JSON:
		return b->type == FT_JSON;
	case MK_DATE:
		return b->type == FT_DATE || b->type == FT_NEWDATE;
	case MK_TIME:
		return b->type == FT_TIME || b->type == FT_TIME2;
	case MK_DATETIME:
		return b->type == FT_DATETIME || b->type == FT_DATETIME2;
	case MK_TIMESTAMP:
		return b->type == FT_TIMESTAMP || b->type == FT_TIMESTAMP2;
	}
	return 0;
}

/* the bytes of a length-prefixed cell */
static void
payload(const struct bl_col *b, const unsigned char **p, size_t *n)
{
	unsigned k = 0;

	switch (b->type) {
	case FT_VARCHAR: case FT_VAR_STRING:
		k = b->meta < 256 ? 1 : 2;
		break;
	case FT_STRING:
		k = (((b->meta >> 8) & 0x30) != 0x30 ? ((b->meta & 0xff) |
		    ((((b->meta >> 8) & 0x30) ^ 0x30) << 4)) :
		    (b->meta & 0xff)) < 256 ? 1 : 2;
		break;
	case FT_BLOB: case FT_GEOMETRY: case FT_JSON: case FT_TINY_BLOB:
	case FT_MEDIUM_BLOB: case FT_LONG_BLOB:
		k = b->meta;
		break;
	default:
		return;
	}
	if (k > *n)
		k = (unsigned)*n;
	*p += k;
	*n -= k;
}

int
myval_binlog(const struct my_col *c, const struct bl_col *b,
    const unsigned char *p, size_t n, struct sbuf *out, struct p2o_err *e)
{
	uint64_t u;
	int64_t i;
	int fsp = b->meta;

	if (!myval_compatible(c, b))
		return p2o_fail(e, P2O_EXIT_DATA, "column '%s' holds binlog type %d, "
		    "which its declared type cannot", c->name, b->type);
	switch (c->kind) {
	case MK_INT:
	case MK_UINT:
		u = le_n(p, (int)n);
		if (c->kind == MK_UINT) {
			sbuf_add_u64(out, u);
			break;
		}
		/* sign-extend from n bytes */
		if (n < 8 && (u >> (n * 8 - 1)) & 1)
			u |= ~0ULL << (n * 8);
		sbuf_add_i64(out, (int64_t)u);
		break;
	case MK_FLOAT:
	case MK_DOUBLE:
		if (b->type == FT_FLOAT) {
			float f;
			uint32_t w = le32(p);

			memcpy(&f, &w, 4);
			my_put_float(out, f);
		} else {
			double d;

			u = le64(p);
			memcpy(&d, &u, 8);
			my_put_double(out, d);
		}
		break;
	case MK_DECIMAL:
		sbuf_addc(out, '"');
		if (my_decimal_text(p, n, b->meta >> 8, b->meta & 0xff,
		    out) == -1)
			return p2o_fail(e, P2O_EXIT_DATA, "column '%s': a decimal that "
			    "does not decode%.0d", c->name, 0);
		sbuf_addc(out, '"');
		break;
	case MK_YEAR:
		sbuf_add_u64(out, p[0] ? 1900u + p[0] : 0);
		break;
	case MK_BIT:
		sbuf_add_u64(out, be_n(p, (int)n));
		break;
	case MK_ENUM:
		u = le_n(p, (int)n);
		if (u == 0 || u > (uint64_t)c->nlabels)
			sbuf_adds(out, "\"\"");	/* the error value */
		else
			sbuf_add_jstr(out, c->labels[u - 1],
			    strlen(c->labels[u - 1]));
		break;
	case MK_SET:
		put_set(out, c, le_n(p, (int)n));
		break;
	case MK_TEXT:
		payload(b, &p, &n);
		put_text(out, c->charset, p, n);
		break;
	case MK_BINARY: {
		unsigned char padded[256];

		payload(b, &p, &n);
		if (b->type == FT_STRING && c->pad > 0 &&
		    (size_t)c->pad <= sizeof(padded) && n < (size_t)c->pad) {
			memcpy(padded, p, n);
			memset(padded + n, 0, c->pad - n);
			p = padded;
			n = c->pad;
		}
		sbuf_addc(out, '"');
		sbuf_add_base64(out, p, n);
		sbuf_addc(out, '"');
		break;
	}
	case MK_JSON_TEXT:
		payload(b, &p, &n);
		put_json_text(out, (const char *)p, n);
		break;
	case MK_JSON:
		payload(b, &p, &n);
		if (myjson_to_text(p, n, out, e->msg, sizeof(e->msg)) == -1) {
			e->code = P2O_EXIT_DATA;
			put_hex_json(out, p, n);
			return 1;
		}
		break;
	case MK_DATE:
		u = le24(p);
		if (u == 0)
			sbuf_adds(out, "null");
		else
			sbuf_addf(out, "\"%04u-%02u-%02u\"",
			    (unsigned)(u >> 9), (unsigned)(u >> 5) & 15,
			    (unsigned)u & 31);
		break;
	case MK_TIME:
		if (b->type == FT_TIME2) {
			put_time2(out, p, fsp);
			break;
		}
		i = (int32_t)(le24(p) << 8) >> 8;
		u = (uint64_t)(i < 0 ? -i : i);
		put_time(out, i < 0, (unsigned long)(u / 10000),
		    (int)(u / 100 % 100), (int)(u % 100), 0, 0);
		break;
	case MK_DATETIME:
		if (b->type == FT_DATETIME2) {
			uint64_t ip = be_n(p, 5) - 0x8000000000ULL;
			uint64_t ymd = ip >> 17, ym = ymd >> 5, hms;

			hms = ip & 0x1ffff;
			put_datetime(out, (int)(ym / 13), (int)(ym % 13),
			    (int)(ymd & 31), (int)(hms >> 12),
			    (int)(hms >> 6) & 63, (int)hms & 63,
			    read_frac(p + 5, fsp), fsp, 0);
			break;
		}
		u = le64(p);
		put_datetime(out, (int)(u / 10000000000ULL),
		    (int)(u / 100000000 % 100), (int)(u / 1000000 % 100),
		    (int)(u / 10000 % 100), (int)(u / 100 % 100),
		    (int)(u % 100), 0, 0, 0);
		break;
	case MK_TIMESTAMP:
		if (b->type == FT_TIMESTAMP2)
			put_timestamp(out, be_n(p, 4), read_frac(p + 4, fsp),
			    fsp);
		else
			put_timestamp(out, le32(p), 0, 0);
		break;
	}
	return 0;
}

/* ---- the text protocol ---- */

static int
all_digits(const char *s, size_t n, int sign)
{
	size_t i = 0;

	if (sign && n > 0 && s[0] == '-')
		i = 1;
	if (i == n)
		return 0;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static int
zero_temporal(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] >= '1' && s[i] <= '9')
			return 0;
	return 1;
}

void
myval_text(const struct my_col *c, const char *s, size_t n,
    struct sbuf *out)
{
	char buf[128];
	uint64_t u;
	size_t i, start;
	int first;

	switch (c->kind) {
	case MK_INT:
	case MK_UINT:
	case MK_YEAR:
		if (all_digits(s, n, c->kind == MK_INT)) {
			/* no leading zeros in JSON: YEAR prints 0000 */
			while (n > 1 && s[0] == '0')
				s++, n--;
			sbuf_add(out, s, n);
		} else
			sbuf_add_jstr(out, s, n);
		break;
	case MK_FLOAT:
	case MK_DOUBLE:
		if (n == 0 || n >= sizeof(buf)) {
			sbuf_add_jstr(out, s, n);
			break;
		}
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (c->kind == MK_FLOAT)
			my_put_float(out, strtof(buf, NULL));
		else
			my_put_double(out, strtod(buf, NULL));
		break;
	case MK_DECIMAL:
	case MK_ENUM:
	case MK_TEXT:
		sbuf_add_jstr(out, s, n);
		break;
	case MK_BIT:
		for (u = 0, i = 0; i < n && i < 8; i++)
			u = u << 8 | (unsigned char)s[i];
		sbuf_add_u64(out, u);
		break;
	case MK_SET:
		sbuf_addc(out, '[');
		for (i = 0, start = 0, first = 1; n > 0 && i <= n; i++) {
			if (i < n && s[i] != ',')
				continue;
			if (!first)
				sbuf_addc(out, ',');
			first = 0;
			sbuf_add_jstr(out, s + start, i - start);
			start = i + 1;
		}
		sbuf_addc(out, ']');
		break;
	case MK_BINARY:
		sbuf_addc(out, '"');
		sbuf_add_base64(out, (const unsigned char *)s, n);
		sbuf_addc(out, '"');
		break;
	case MK_JSON:
	case MK_JSON_TEXT:
		put_json_text(out, s, n);
		break;
	case MK_DATE:
	case MK_DATETIME:
	case MK_TIMESTAMP:
		if (zero_temporal(s, n)) {
			sbuf_adds(out, "null");
			break;
		}
		sbuf_addc(out, '"');
		for (i = 0; i < n; i++)
			sbuf_addc(out, s[i] == ' ' ? 'T' : s[i]);
		if (c->kind == MK_TIMESTAMP)
			sbuf_addc(out, 'Z');
		sbuf_addc(out, '"');
		break;
	case MK_TIME:
		sbuf_add_jstr(out, s, n);
		break;
	}
}

/* ---- the filter, as MySQL must compute it ---- */

/*
 * A column in the row filter the loader pushes into its SELECT
 * (lib/where.h), as the SQL expression whose value is the column's
 * document form: the shaper compares that form, byte-wise for a string,
 * exactly for a number, and the pushed-down filter must give the same
 * answer wherever the shaper's is TRUE or FALSE, or the load would leave
 * out rows the shaper keeps. So a string is compared as its UTF-8 bytes
 * (no collation folds case, no PAD SPACE equates "a " with "a"), a date
 * as its ISO 8601 text, a zero date as NULL. A value whose form SQL cannot
 * produce exactly (a float's shortest text, base64, JSON) has none: -1.
 */
int
myval_filter_sql(const struct my_col *c, struct sbuf *out)
{
	return myval_filter_sql_as(c, NULL, out);
}

int
myval_filter_sql_as(const struct my_col *c, const char *alias,
    struct sbuf *out)
{
	struct sbuf id = SBUF_INIT, text = SBUF_INIT;
	int rc = 0;

	if (alias != NULL) {
		sbuf_adds(&id, alias);
		sbuf_addc(&id, '.');
	}
	myconn_ident(&id, c->name);
	sbuf_addf(&text, "CONVERT(%s USING utf8mb4)", id.buf);
	switch (c->kind) {
	case MK_INT:
	case MK_UINT:
	case MK_YEAR:
	case MK_DECIMAL:
	case MK_SET:	/* an array: the shaper compares it with nothing */
		sbuf_adds(out, id.buf);
		break;
	case MK_BIT:
		sbuf_addf(out, "CAST(%s AS UNSIGNED)", id.buf);
		break;
	case MK_TEXT:
	case MK_ENUM:
	case MK_TIME:
		sbuf_addf(out, "CAST(%s AS BINARY)", text.buf);
		break;
	case MK_DATE:
	case MK_DATETIME:
	case MK_TIMESTAMP:
		/* myval_text: a zero date is null, a space becomes a T, a
		 * timestamp (read in UTC) ends in Z */
		sbuf_addf(out, "CAST(IF(%s REGEXP '[1-9]', ", text.buf);
		if (c->kind == MK_DATE)
			sbuf_adds(out, text.buf);
		else
			sbuf_addf(out, "CONCAT(REPLACE(%s, ' ', 'T'), '%s')",
			    text.buf, c->kind == MK_TIMESTAMP ? "Z" : "");
		sbuf_adds(out, ", NULL) AS BINARY)");
		break;
	default:
		rc = -1;
		break;
	}
	sbuf_release(&id);
	sbuf_release(&text);
	return rc;
}
