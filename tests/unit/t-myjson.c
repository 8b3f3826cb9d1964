/*
 * t-myjson.c - MySQL's binary JSON decoder (capture-mysql/myjson.c):
 * every vector of tests/fixtures/mysql/json-binary-vectors.tsv decodes to
 * its expected JSON text (the error rows fail); large containers, depth,
 * truncation at every length; and json_compact, the text half.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "jscan.h"
#include "mysql-fixtures.h"

static void
test_vectors(void)
{
	size_t len = 0, i = 0, e;
	unsigned char *t = fx_read("json-binary-vectors.tsv", &len);
	unsigned char bin[8192];
	struct sbuf out = SBUF_INIT;
	char err[256];
	int line = 0, n = 0, nerr = 0;

	if (!ok(t != NULL, "json-binary-vectors.tsv is readable"))
		return;
	while (i < len) {
		char *f[4] = { NULL, NULL, NULL, NULL };
		char *s;
		long blen;
		int k, rc;

		for (e = i; e < len && t[e] != '\n'; e++)
			;
		t[e] = '\0';
		s = (char *)t + i;
		i = e + 1;
		if (line++ == 0 || *s == '\0')
			continue;	/* the header row */
		for (k = 0; k < 4 && s != NULL; k++) {
			f[k] = s;
			if ((s = strchr(s, '\t')) != NULL)
				*s++ = '\0';
		}
		if (f[2] == NULL)
			continue;
		blen = fx_unhex(f[1], strlen(f[1]), bin);
		if (!ok(blen >= 0, "%s: hex parses", f[0]))
			continue;
		sbuf_reset(&out);
		sbuf_grow(&out, 1);
		rc = myjson_to_text(bin, (size_t)blen, &out, err, sizeof(err));
		if (*f[2] == '\0') {
			nerr++;
			ok(rc == -1 && out.len == 0, "%s: refused (%s)", f[0],
			    rc == -1 ? err : "decoded");
			continue;
		}
		n++;
		if (rc == -1)
			printf("# %s\n", err);
		is_str(out.buf, f[2], "%s", f[0]);
	}
	is_int(n, 42, "42 vectors decode");
	is_int(nerr, 3, "3 vectors are errors");
	free(t);
	sbuf_release(&out);
}

static void
put16(unsigned char *p, unsigned v)
{
	p[0] = v & 0xff;
	p[1] = (v >> 8) & 0xff;
}

static void
put32(unsigned char *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

/* a large object {"k": [-7, 70000]} and a large array, built by hand */
static void
test_large(void)
{
	unsigned char b[128];
	struct sbuf out = SBUF_INIT;
	char err[256];
	size_t o = 0, arr;

	/* large object: count 1, size, key entry (off 4, len 2), value
	 * entry (type 0x03 large array, offset 4) */
	b[o++] = 0x01;
	put32(b + o, 1), o += 4;
	put32(b + o, 0), o += 4;		/* size: not trusted */
	put32(b + o, 4 + 4 + 6 + 5), o += 4;	/* key offset */
	put16(b + o, 1), o += 2;
	b[o++] = 0x03;
	put32(b + o, 4 + 4 + 6 + 5 + 1), o += 4;
	b[o++] = 'k';
	arr = o;
	put32(b + o, 2), o += 4;
	put32(b + o, 0), o += 4;
	b[o++] = 0x07;				/* int32, inlined in large */
	put32(b + o, (uint32_t)-7), o += 4;
	b[o++] = 0x08;				/* uint32 */
	put32(b + o, 70000), o += 4;
	(void)arr;
	sbuf_grow(&out, 1);
	ok(myjson_to_text(b, o, &out, err, sizeof(err)) == 0, "large object "
	    "and array decode");
	is_str(out.buf, "{\"k\":[-7,70000]}", "large containers inline "
	    "int32/uint32");
	sbuf_release(&out);
}

/* every prefix of a valid document is refused or decoded, never read
 * past; a document nested 101 deep is refused */
static void
test_truncated(void)
{
	static const char *hex = "0004003c00200001002100010022000200240002000c"
	    "26000c28000c2a00022e00616361626263016201640361626302000e000c0a00"
	    "0c0c0001780179";
	unsigned char b[256], deep[1024];
	struct sbuf out = SBUF_INIT;
	char err[256];
	long n = fx_unhex(hex, strlen(hex), b), k;
	int refused = 0, i;
	size_t o = 0;

	for (k = 0; k < n; k++) {
		unsigned char *copy = xmalloc((size_t)k + 1);

		memcpy(copy, b, (size_t)k);
		sbuf_reset(&out);
		if (myjson_to_text(copy, (size_t)k, &out, err,
		    sizeof(err)) == -1)
			refused++;
		free(copy);
	}
	ok(refused >= n - 2, "truncated documents are refused (%d of %ld)",
	    refused, n);
	/* [[[[...1...]]]]: small arrays of one element, 101 deep */
	deep[o++] = 0x02;
	for (i = 0; i < 101; i++) {
		put16(deep + o, 1), o += 2;
		put16(deep + o, 0), o += 2;
		deep[o++] = 0x02;
		put16(deep + o, 7), o += 2;
	}
	put16(deep + o, 0), o += 2;
	put16(deep + o, 4), o += 2;
	sbuf_reset(&out);
	ok(myjson_to_text(deep + 0, o, &out, err, sizeof(err)) == -1 &&
	    strstr(err, "deeper") != NULL, "101 levels are refused");
	/* [[[...],[...]],[[...],[...]]]: two entries of every level point
	 * at the same next level, 60 levels: 2^60 elements if followed */
	o = 0;
	deep[o++] = 0x02;
	for (i = 0; i < 60; i++) {
		put16(deep + o, 2), o += 2;
		put16(deep + o, 0), o += 2;
		deep[o++] = 0x02;
		put16(deep + o, 10), o += 2;
		deep[o++] = 0x02;
		put16(deep + o, 10), o += 2;
	}
	put16(deep + o, 0), o += 2;
	put16(deep + o, 4), o += 2;
	sbuf_reset(&out);
	ok(myjson_to_text(deep, o, &out, err, sizeof(err)) == -1 &&
	    strstr(err, "overlap") != NULL, "entries that share one value "
	    "exponentially are refused, fast");
	sbuf_release(&out);
}

/* opaque temporals whose packed value is the most negative 64-bit
 * number: printed, never negated out of range (a fuzzer's find) */
static void
test_extremes(void)
{
	static const unsigned char dt[] = { 0x0f, 0x0c, 0x08, 0, 0, 0, 0, 0,
	    0, 0, 0x80 };
	static const unsigned char tm[] = { 0x0f, 0x0b, 0x08, 0, 0, 0, 0, 0,
	    0, 0, 0x80 };
	struct sbuf out = SBUF_INIT;
	char err[256];

	ok(myjson_to_text(dt, sizeof(dt), &out, err, sizeof(err)) == 0 &&
	    out.buf[0] == '"', "an opaque DATETIME of INT64_MIN is a string");
	sbuf_reset(&out);
	ok(myjson_to_text(tm, sizeof(tm), &out, err, sizeof(err)) == 0 &&
	    out.buf[0] == '"', "an opaque TIME of INT64_MIN is a string");
	sbuf_release(&out);
}

static void
test_compact(void)
{
	struct sbuf out = SBUF_INIT;
	const char *in = "{\"a\": [1, 2.5e3, \"x y\\\" z\"], \"b\" : {}}";

	ok(json_compact(in, strlen(in), &out) == 0, "json_compact takes "
	    "MySQL's spaced JSON text");
	is_str(out.buf, "{\"a\":[1,2.5e3,\"x y\\\" z\"],\"b\":{}}",
	    "json_compact keeps strings, drops the spaces between tokens");
	sbuf_reset(&out);
	ok(json_compact("{\"a\":", 5, &out) == -1, "json_compact refuses "
	    "invalid JSON");
	sbuf_release(&out);
}

int
main(void)
{
	test_vectors();
	test_large();
	test_truncated();
	test_extremes();
	test_compact();
	return done_testing();
}
