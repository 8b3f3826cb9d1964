/*
 * t-loader-copy.c - the loader's COPY text rows (copytext.c): fields,
 * NULL, every escape COPY writes, what it never writes; and the copy row
 * frame one COPY row becomes (wave.c).
 */
#include <string.h>

#include "tap.h"
#include "msg.h"
#include "sbuf.h"
#include "../../loader/loader.h"

#define NF	8

/* split a copy of row; the fields rendered as "a|<NULL>|c" */
static int
split(const char *row, int nf, char *out, size_t outlen, char *err,
    size_t errlen)
{
	char buf[512];
	struct copy_field f[NF];
	size_t len = strlen(row), used = 0;
	int i;

	memcpy(buf, row, len + 1);
	err[0] = '\0';
	if (copy_split(buf, len, f, nf, err, errlen) == -1)
		return -1;
	out[0] = '\0';
	for (i = 0; i < nf; i++) {
		if (i > 0)
			out[used++] = '|';
		if (f[i].p == NULL) {
			memcpy(out + used, "<NULL>", 6);
			used += 6;
		} else {
			if (used + f[i].n >= outlen)
				return -1;
			memcpy(out + used, f[i].p, f[i].n);
			used += f[i].n;
		}
		out[used] = '\0';
	}
	return 0;
}

static const struct {
	const char *row;
	int nf;
	const char *want;
} good[] = {
	{ "a\tb\tc\n", 3, "a|b|c" },
	{ "\\N\tx\n", 2, "<NULL>|x" },
	{ "x\t\\N\n", 2, "x|<NULL>" },
	{ "\n", 1, "" },
	{ "\t\n", 2, "|" },
	{ "\\N\n", 1, "<NULL>" },
	/* every escape COPY TO writes */
	{ "\\b\\f\\n\\r\\t\\v\\\\\n", 1, "\b\f\n\r\t\v\\" },
	/* \\N is a backslash and an N, not NULL */
	{ "\\\\N\n", 1, "\\N" },
	/* octal, 1 to 3 digits */
	{ "\\101\\7\\0377\n", 1, "A\a\0377" },
	{ "\\377\n", 1, "\377" },
	/* hex, 1 or 2 digits */
	{ "\\x41\\x4g\\xA\n", 1, "A\x04g\n" },
	/* bytes COPY leaves alone: UTF-8, other control characters */
	{ "\xe6\x97\xa5\xe6\x9c\xac\t\x01\x1f\n", 2,
	    "\xe6\x97\xa5\xe6\x9c\xac|\x01\x1f" },
	/* unescaping in place leaves the next field alone */
	{ "\\\\\\\\\\t\tq\\n\n", 2, "\\\\\t|q\n" },
	{ "{\"a\": \"x\\\\ty\"}\t\\\\x00ff\n", 2, "{\"a\": \"x\\ty\"}|\\x00ff" },
	/* long values, read eight bytes at a time: escapes before, inside
	 * and after a run, the run moved back behind each escape */
	{ "0123456789abcdefghij\\tklmnopqrstuvwxyz\\\\ABCDEFGHIJKLMNOP\\n\tQ\n", 2,
	    "0123456789abcdefghij\tklmnopqrstuvwxyz\\ABCDEFGHIJKLMNOP\n|Q" },
	{ "\\n01234567\\n89abcdefg\\t\n", 1, "\n01234567\n89abcdefg\t" },
};

static const struct {
	const char *row;
	int nf;
	const char *why;
} bad[] = {
	{ "", 1, "does not end with a newline" },
	{ "abc", 1, "does not end with a newline" },
	{ "a\tb\n", 3, "has 2 fields, expected 3" },
	{ "a\n", 2, "has 1 field, expected 2" },
	{ "a\tb\tc\n", 2, "has more than 2 fields" },
	{ "abc\\\n", 1, "field 1: a backslash ends the field" },
	{ "x\tabc\\\tz\n", 3, "field 2: a backslash ends the field" },
	{ "a\\N\n", 1, "field 1: \\N inside a value" },
	{ "\\N\\N\n", 1, "field 1: \\N inside a value" },
	{ "\\q\n", 1, "field 1: an escape COPY does not write" },
	{ "\\8\n", 1, "field 1: an escape COPY does not write" },
	{ "\\.\n", 1, "field 1: an escape COPY does not write" },
	{ "\\x\n", 1, "field 1: \\x without a hex digit" },
	{ "\\xg\n", 1, "field 1: \\x without a hex digit" },
	{ "\\0\n", 1, "field 1: an escape for a NUL byte" },
	{ "\\000\n", 1, "field 1: an escape for a NUL byte" },
	{ "\\x00\n", 1, "field 1: an escape for a NUL byte" },
	{ "\\400\n", 1, "field 1: an octal escape above \\377" },
	{ "a\rb\n", 1, "field 1: a raw line break" },
	{ "a\nb\n", 1, "field 1: a raw line break" },
	{ "0123456789abcdef\rb\n", 1, "field 1: a raw line break" },
	{ "0123456\\n789abc\rdef\n", 1, "field 1: a raw line break" },
};

static void
frame_test(void)
{
	struct ld_column cols[] = {
		{ "id", 23 }, { "name", 25 }, { "price", 1700 },
		{ "raw", 17 }, { "doc", 3802 }, { "tags", 1009 },
		{ "gone", 25 }, { "at", 1184 },
	};
	struct ld_key keys[] = { { "id", "\"id\"", "integer" } };
	struct ld_table t = { .rel = "public.items", .ncols = 8, .cols = cols,
	    .nkeys = 1, .keys = keys };
	char row[] = "7\tlamp \\t\"q\"\t12.50\t\\\\x00ff10\t{\"a\": [1, 2]}\t"
	    "{x,\"y z\",NULL}\t\\N\t2026-11-30 08:00:00.5+00\n";
	struct copy_field f[8];
	struct sbuf out = SBUF_INIT;
	struct msg_in j = { 0, 0 };
	char err[128];
	const char *want = "{\"k\":\"row\",\"op\":\"c\",\"rel\":\"public.items\","
	    "\"v\":22817392,\"key\":[\"id\"],\"new\":{\"id\":7,"
	    "\"name\":\"lamp \\t\\\"q\\\"\",\"price\":\"12.50\","
	    "\"raw\":\"AP8Q\",\"doc\":{\"a\": [1, 2]},"
	    "\"tags\":[\"x\",\"y z\",null],\"gone\":null,"
	    "\"at\":\"2026-11-30T08:00:00.5Z\"}}";
	const char *sp;

	ok(copy_split(row, strlen(row), f, 8, err, sizeof(err)) == 0,
	    "a row of every kind of value splits");
	wave_row_frame(&out, &j, &t, 22817392, f, NULL);
	ok(out.len > 0 && out.buf[out.len - 1] == '\n', "one frame");
	out.buf[--out.len] = '\0';
	sp = strchr(out.buf, ' ');
	is_str(sp ? sp + 1 : "", want, "its copy row: op c, the version, the "
	    "key, every column as the stream maps it");
	ok(
	    (size_t)atoi(out.buf) == strlen(want) + 1,
	    "framed with its length");

	/* the table's template writes the very bytes the builders do, with
	 * a column hidden (a collection's member wins) and without */
	for (int hide = 0; hide < 2; hide++) {
		struct sbuf by_name = SBUF_INIT;

		cols[6].hidden = hide;
		/* f still holds the fields split above */
		sbuf_reset(&out);
		wave_row_frame(&by_name, &j, &t, 22817392, f, NULL);
		table_template(&t);
		wave_row_frame(&out, &j, &t, 22817392, f, NULL);
		is_str(out.buf, by_name.buf, "the template's frame is the "
		    "builders' (%s hidden column)", hide ? "a" : "no");
		msg_rowtpl_release(t.tpl);
		free(t.tpl);
		t.tpl = NULL;
		sbuf_release(&by_name);
	}
	sbuf_release(&out);
}

int
main(void)
{
	char out[512], err[256];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		rc = split(good[i].row, good[i].nf, out, sizeof(out), err,
		    sizeof(err));
		ok(rc == 0 && strcmp(out, good[i].want) == 0,
		    "row %zu splits and unescapes", i);
		if (rc != 0)
			diag("error: %s", err);
		else if (strcmp(out, good[i].want) != 0)
			diag("got '%s'", out);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = split(bad[i].row, bad[i].nf, out, sizeof(out), err,
		    sizeof(err));
		ok(rc == -1 && strstr(err, bad[i].why) != NULL,
		    "bad row %zu refused: %s", i, bad[i].why);
		if (rc != -1 || strstr(err, bad[i].why) == NULL)
			diag("got rc %d, '%s'", rc, err);
	}
	/* a raw NUL cannot be written as a C string literal */
	{
		char row[] = "a\0b\n";
		struct copy_field f[1];

		ok(copy_split(row, 4, f, 1, err, sizeof(err)) == -1 &&
		    strstr(err, "a NUL byte") != NULL, "a raw NUL is refused");
	}
	frame_test();
	return done_testing();
}
