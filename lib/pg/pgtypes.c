/*
 * pgtypes.c - the PostgreSQL type -> JSON value mapping for row frames. It
 * owns the document form of every value (the table in capture-pg/README.md)
 * and works only on the text of a type's output function, as pgoutput
 * and COPY send it; it never sees a connection. Text that does not look
 * like its type is never an error: it becomes a JSON string, so a value is
 * never lost and a surprise in the output format cannot stop the stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hex.h"
#include "jscan.h"
#include "pgtypes.h"

/* built-in type OIDs (pg_type.dat); stable across releases */
enum {
	OID_BOOL = 16, OID_BYTEA = 17, OID_INT8 = 20, OID_INT2 = 21,
	OID_INT4 = 23, OID_OID = 26, OID_JSON = 114, OID_FLOAT4 = 700,
	OID_FLOAT8 = 701, OID_TIMESTAMP = 1114, OID_TIMESTAMPTZ = 1184,
	OID_NUMERIC = 1700, OID_JSONB = 3802, OID_TEXT = 25,
	OID_VARCHAR = 1043, OID_BPCHAR = 1042, OID_DATE = 1082,
	OID_UUID = 2950,
};

static const struct {
	uint32_t array, elem;
} array_types[] = {
	{ 1000, OID_BOOL }, { 1005, OID_INT2 }, { 1007, OID_INT4 },
	{ 1016, OID_INT8 }, { 1009, OID_TEXT }, { 1015, OID_VARCHAR },
	{ 1021, OID_FLOAT4 }, { 1022, OID_FLOAT8 }, { 1231, OID_NUMERIC },
	{ 1115, OID_TIMESTAMP }, { 1185, OID_TIMESTAMPTZ }, { 1182, OID_DATE },
	{ 2951, OID_UUID }, { 3807, OID_JSONB }, { 199, OID_JSON },
	{ 1014, OID_BPCHAR }, { 1001, OID_BYTEA }, { 1028, OID_OID },
};

/* arrays nest at most 6 deep in PostgreSQL (MAXDIM) */
#define ARRAY_MAXDIM	6

static int
isdigit_(char c)
{
	return c >= '0' && c <= '9';
}

/* an RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int
is_json_number(const char *s, size_t n, int integer_only)
{
	size_t i = 0, d;

	if (i < n && s[i] == '-')
		i++;
	if (i >= n || !isdigit_(s[i]))
		return 0;
	if (s[i] == '0')
		i++;
	else
		while (i < n && isdigit_(s[i]))
			i++;
	if (integer_only)
		return i == n;
	if (i < n && s[i] == '.') {
		for (d = ++i; i < n && isdigit_(s[i]); i++)
			;
		if (i == d)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (d = i; i < n && isdigit_(s[i]); i++)
			;
		if (i == d)
			return 0;
	}
	return i == n;
}

static void
add_number_or_string(struct sbuf *out, const char *s, size_t n, int integer)
{
	if (is_json_number(s, n, integer))
		sbuf_add(out, s, n);
	else
		sbuf_add_jstr(out, s, n);
}

/* bytea_output=hex: "\x" then two hex digits a byte */
static int
add_bytea(struct sbuf *out, const char *s, size_t n)
{
	unsigned char *bin;
	size_t i, nbytes;
	int hi, lo;

	if (n < 2 || s[0] != '\\' || s[1] != 'x' || (n - 2) % 2)
		return -1;
	nbytes = (n - 2) / 2;
	bin = xmalloc(nbytes + 1);
	for (i = 0; i < nbytes; i++) {
		hi = hex_value(s[2 + 2 * i]);
		lo = hex_value(s[3 + 2 * i]);
		if (hi < 0 || lo < 0) {
			free(bin);
			return -1;
		}
		bin[i] = (unsigned char)(hi << 4 | lo);
	}
	sbuf_addc(out, '"');
	sbuf_add_base64(out, bin, nbytes);
	sbuf_addc(out, '"');
	free(bin);
	return 0;
}

/*
 * json is stored as the client sent it, so it may hold line breaks; a
 * frame may not. Validated JSON has control bytes only as whitespace
 * between tokens, never inside a string, so each one can become a space.
 */
static int
add_json(struct sbuf *out, const char *s, size_t n)
{
	size_t off, i, start;
	const char *why;

	if (jscan_validate(s, n, &off, &why) < 0)
		return -1;
	/* surrounding whitespace is valid JSON but useless in a document */
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n' ||
	    s[n - 1] == '\r' || s[n - 1] == '\t'))
		n--;
	for (i = 0; i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' ||
	    s[i] == '\t'); i++)
		;
	sbuf_grow(out, n - i);
	for (start = i; i < n; i++) {
		if (s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
			sbuf_add(out, s + start, i - start);
			sbuf_addc(out, ' ');
			start = i + 1;
		}
	}
	sbuf_add(out, s + start, n - start);
	return 0;
}

static size_t
digits(const char *s, size_t n, size_t i)
{
	size_t d = i;

	while (d < n && isdigit_(s[d]))
		d++;
	return d - i;
}

/*
 * DateStyle=ISO: "2026-11-30 08:00:00.123456" then, for timestamptz, an
 * offset "+00", "+05:30" or (historic zones) "+00:53:28". Years past 9999
 * have more digits; BC dates end in " BC" and stay as they are, as do
 * "infinity" and "-infinity", which fail the pattern.
 */
static int
add_timestamp(struct sbuf *out, const char *s, size_t n, int with_tz)
{
	size_t i = 0, y, body;
	const char *tz;
	size_t tzlen;

	y = digits(s, n, 0);
	if (y < 4)
		return -1;
	i = y;
	if (i + 15 > n || s[i] != '-' || digits(s, n, i + 1) != 2 ||
	    s[i + 3] != '-' || digits(s, n, i + 4) != 2 || s[i + 6] != ' ' ||
	    digits(s, n, i + 7) != 2 || s[i + 9] != ':' ||
	    digits(s, n, i + 10) != 2 || s[i + 12] != ':' ||
	    digits(s, n, i + 13) != 2)
		return -1;
	i += 15;
	if (i < n && s[i] == '.') {
		size_t f = digits(s, n, i + 1);

		if (f < 1 || f > 6)
			return -1;
		i += 1 + f;
	}
	body = i;
	tz = s + i;
	tzlen = n - i;
	if (!with_tz) {
		if (tzlen)
			return -1;
	} else if (tzlen == 3 || tzlen == 6 || tzlen == 9) {
		if ((tz[0] != '+' && tz[0] != '-') || digits(tz, tzlen, 1) != 2)
			return -1;
		if (tzlen >= 6 && (tz[3] != ':' || digits(tz, tzlen, 4) != 2))
			return -1;
		/* ISO 8601 offsets have no seconds */
		if (tzlen == 9 && (tz[6] != ':' || tz[7] != '0' || tz[8] != '0'))
			return -1;
	} else
		return -1;

	sbuf_addc(out, '"');
	sbuf_add(out, s, y + 6);
	sbuf_addc(out, 'T');
	sbuf_add(out, s + y + 7, body - (y + 7));
	if (with_tz) {
		if (memcmp(tz + 1, "00", 2) == 0 &&
		    (tzlen == 3 || memcmp(tz + 4, "00", 2) == 0))
			sbuf_addc(out, 'Z');
		else if (tzlen == 3) {
			sbuf_add(out, tz, 3);
			sbuf_adds(out, ":00");
		} else
			sbuf_add(out, tz, 6);
	}
	sbuf_addc(out, '"');
	return 0;
}

static uint32_t
array_elem_type(uint32_t typoid)
{
	size_t i;

	for (i = 0; i < sizeof(array_types) / sizeof(array_types[0]); i++)
		if (array_types[i].array == typoid)
			return array_types[i].elem;
	return 0;
}

static int
array_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	    c == '\f';
}

/*
 * One "{...}" level of an array literal starting at s[*pos] == '{'. Quoted
 * elements are unescaped into tmp (backslash takes the next byte as is);
 * an unquoted NULL is SQL NULL. Returns -1 on anything array_out would
 * never print.
 */
static int
add_array_level(struct sbuf *out, uint32_t elem, const char *s, size_t n,
    size_t *pos, int depth, struct sbuf *tmp)
{
	size_t i = *pos + 1;
	int first = 1;

	if (depth > ARRAY_MAXDIM)
		return -1;
	sbuf_addc(out, '[');
	while (i < n && array_space(s[i]))
		i++;
	if (i < n && s[i] == '}') {
		*pos = i + 1;
		sbuf_addc(out, ']');
		return 0;
	}
	for (;;) {
		while (i < n && array_space(s[i]))
			i++;
		if (i >= n)
			return -1;
		if (!first)
			sbuf_addc(out, ',');
		first = 0;
		if (s[i] == '{') {
			if (add_array_level(out, elem, s, n, &i, depth + 1,
			    tmp) < 0)
				return -1;
		} else if (s[i] == '"') {
			sbuf_reset(tmp);
			for (i++; i < n && s[i] != '"'; i++) {
				if (s[i] == '\\' && ++i >= n)
					return -1;
				sbuf_addc(tmp, s[i]);
			}
			if (i >= n)
				return -1;
			i++;
			pgtype_to_json(elem, tmp->buf ? tmp->buf : "", tmp->len,
			    out);
		} else {
			size_t start = i, end;

			while (i < n && s[i] != ',' && s[i] != '}' &&
			    s[i] != '{' && s[i] != '"' && s[i] != '\\')
				i++;
			for (end = i; end > start && array_space(s[end - 1]);
			    end--)
				;
			if (end == start)
				return -1;
			if (end - start == 4 &&
			    strncasecmp(s + start, "NULL", 4) == 0)
				sbuf_adds(out, "null");
			else
				pgtype_to_json(elem, s + start, end - start,
				    out);
		}
		while (i < n && array_space(s[i]))
			i++;
		if (i >= n)
			return -1;
		if (s[i] == '}') {
			*pos = i + 1;
			sbuf_addc(out, ']');
			return 0;
		}
		if (s[i] != ',')
			return -1;
		i++;
	}
}

static int
add_array(struct sbuf *out, uint32_t elem, const char *s, size_t n)
{
	struct sbuf tmp = SBUF_INIT;
	size_t i = 0;
	int rc;

	/* "[0:1]={...}": lower bounds other than 1; JSON has no place for them */
	if (n > 0 && s[0] == '[') {
		while (i < n && s[i] == '[') {
			for (i++; i < n && s[i] != ']'; i++)
				if (!isdigit_(s[i]) && s[i] != ':' &&
				    s[i] != '-' && s[i] != '+')
					return -1;
			if (i >= n)
				return -1;
			i++;
		}
		if (i >= n || s[i] != '=')
			return -1;
		i++;
	}
	if (i >= n || s[i] != '{')
		return -1;
	rc = add_array_level(out, elem, s, n, &i, 1, &tmp);
	sbuf_release(&tmp);
	if (rc == 0 && i != n)
		rc = -1;
	return rc;
}

void
pgtype_to_json(uint32_t typoid, const char *text, size_t len,
    struct sbuf *out)
{
	size_t mark = out->len;
	uint32_t elem;
	int rc = 0;

	switch (typoid) {
	case OID_BOOL:
		if (len == 1 && text[0] == 't')
			sbuf_adds(out, "true");
		else if (len == 1 && text[0] == 'f')
			sbuf_adds(out, "false");
		else
			sbuf_add_jstr(out, text, len);
		return;
	case OID_INT2:
	case OID_INT4:
	case OID_INT8:
	case OID_OID:
		add_number_or_string(out, text, len, 1);
		return;
	case OID_FLOAT4:
	case OID_FLOAT8:
		/* NaN, Infinity and -Infinity fail the grammar: strings */
		add_number_or_string(out, text, len, 0);
		return;
	case OID_BYTEA:
		rc = add_bytea(out, text, len);
		break;
	case OID_JSON:
	case OID_JSONB:
		rc = add_json(out, text, len);
		break;
	case OID_TIMESTAMP:
		rc = add_timestamp(out, text, len, 0);
		break;
	case OID_TIMESTAMPTZ:
		rc = add_timestamp(out, text, len, 1);
		break;
	case OID_TEXT:
	case OID_VARCHAR:
	case OID_BPCHAR:
	case OID_NUMERIC:
		/* the common strings, without looking for an array type */
		sbuf_add_jstr(out, text, len);
		return;
	default:
		elem = array_elem_type(typoid);
		if (elem == 0) {
			/* numeric and everything else: the text, every digit */
			sbuf_add_jstr(out, text, len);
			return;
		}
		rc = add_array(out, elem, text, len);
		break;
	}
	if (rc < 0) {
		out->len = mark;
		if (out->cap)
			out->buf[mark] = '\0';
		sbuf_add_jstr(out, text, len);
	}
}

int
pgtype_is_string(uint32_t typoid)
{
	return typoid == OID_TEXT || typoid == OID_VARCHAR ||
	    typoid == OID_BPCHAR;
}
