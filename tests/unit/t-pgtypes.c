/*
 * t-pgtypes.c - capture-pg's type mapping (types.c): PostgreSQL output
 * text -> the JSON value a document carries; LSN text.
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "jscan.h"
#include "sbuf.h"
#include "../../capture-pg/capture-pg.h"

static const struct {
	uint32_t oid;
	const char *text, *want;
} cases[] = {
	/* bool */
	{ 16, "t", "true" },
	{ 16, "f", "false" },
	{ 16, "x", "\"x\"" },
	/* integers and oid: numbers as printed */
	{ 21, "-32768", "-32768" },
	{ 23, "0", "0" },
	{ 23, "2147483647", "2147483647" },
	{ 20, "-9223372036854775808", "-9223372036854775808" },
	{ 20, "18446744073709551615", "18446744073709551615" },
	{ 26, "4294967295", "4294967295" },
	{ 23, "007", "\"007\"" },
	{ 23, "12a", "\"12a\"" },
	{ 23, "", "\"\"" },
	{ 23, "-", "\"-\"" },
	{ 23, "1.5", "\"1.5\"" },
	/* floats (extra_float_digits=3) */
	{ 701, "3.141592653589793", "3.141592653589793" },
	{ 701, "1e+300", "1e+300" },
	{ 701, "-1.5e-07", "-1.5e-07" },
	{ 700, "-0", "-0" },
	{ 700, "NaN", "\"NaN\"" },
	{ 701, "Infinity", "\"Infinity\"" },
	{ 701, "-Infinity", "\"-Infinity\"" },
	{ 701, "1.", "\"1.\"" },
	{ 701, ".5", "\".5\"" },
	{ 701, "1e", "\"1e\"" },
	/* numeric: a string with every digit */
	{ 1700, "1234567890123456789012345678901234567890",
	    "\"1234567890123456789012345678901234567890\"" },
	{ 1700, "-0.000000000000000000000000000000000000001",
	    "\"-0.000000000000000000000000000000000000001\"" },
	{ 1700, "12.50", "\"12.50\"" },
	{ 1700, "NaN", "\"NaN\"" },
	{ 1700, "Infinity", "\"Infinity\"" },
	/* bytea: hex in, base64 out */
	{ 17, "\\x", "\"\"" },
	{ 17, "\\x00ff10", "\"AP8Q\"" },
	{ 17, "\\xDEADBEEF", "\"3q2+7w==\"" },
	{ 17, "\\x0", "\"\\\\x0\"" },
	{ 17, "\\xzz", "\"\\\\xzz\"" },
	{ 17, "abc", "\"abc\"" },
	/* json / jsonb: embedded, line breaks outside strings become spaces */
	{ 3802, "{\"a\": 1, \"b\": [true, null]}",
	    "{\"a\": 1, \"b\": [true, null]}" },
	{ 114, "{\n\t\"a\": \"x\\ny\",\r\n\t\"b\": 2\n}\n",
	    "{  \"a\": \"x\\ny\",   \"b\": 2 }" },
	{ 114, "  [1, 2]  ", "[1, 2]" },
	{ 114, "\"just a string\"", "\"just a string\"" },
	{ 114, "42", "42" },
	{ 114, "{\"a\":", "\"{\\\"a\\\":\"" },
	{ 3802, "{bad}", "\"{bad}\"" },
	/* timestamptz */
	{ 1184, "2026-11-30 08:00:00.123456+00",
	    "\"2026-11-30T08:00:00.123456Z\"" },
	{ 1184, "2026-11-30 08:00:00+00", "\"2026-11-30T08:00:00Z\"" },
	{ 1184, "2026-11-30 13:30:00.5+05:30",
	    "\"2026-11-30T13:30:00.5+05:30\"" },
	{ 1184, "2026-11-30 00:00:00-08", "\"2026-11-30T00:00:00-08:00\"" },
	{ 1184, "2026-11-30 00:00:00+00:00", "\"2026-11-30T00:00:00Z\"" },
	{ 1184, "1850-01-01 00:00:00+00:53:28",
	    "\"1850-01-01 00:00:00+00:53:28\"" },
	{ 1184, "1850-01-01 00:00:00+01:00:00",
	    "\"1850-01-01T00:00:00+01:00\"" },
	{ 1184, "12026-01-01 00:00:00+00", "\"12026-01-01T00:00:00Z\"" },
	{ 1184, "infinity", "\"infinity\"" },
	{ 1184, "-infinity", "\"-infinity\"" },
	{ 1184, "0044-03-15 12:00:00+00 BC", "\"0044-03-15 12:00:00+00 BC\"" },
	{ 1184, "2026-11-30 08:00:00", "\"2026-11-30 08:00:00\"" },
	{ 1184, "2026-11-30 08:00:00.1234567+00",
	    "\"2026-11-30 08:00:00.1234567+00\"" },
	/* timestamp */
	{ 1114, "2026-11-30 08:00:00.123456", "\"2026-11-30T08:00:00.123456\"" },
	{ 1114, "2026-11-30 08:00:00", "\"2026-11-30T08:00:00\"" },
	{ 1114, "2026-11-30 08:00:00+00", "\"2026-11-30 08:00:00+00\"" },
	{ 1114, "infinity", "\"infinity\"" },
	{ 1114, "2026-11-30 08:00:00 BC", "\"2026-11-30 08:00:00 BC\"" },
	/* date, time, interval: strings as printed */
	{ 1082, "2026-11-30", "\"2026-11-30\"" },
	{ 1083, "08:00:00.5", "\"08:00:00.5\"" },
	{ 1266, "08:00:00+05:30", "\"08:00:00+05:30\"" },
	{ 1186, "P1Y2M3DT4H5M6.5S", "\"P1Y2M3DT4H5M6.5S\"" },
	/* strings */
	{ 25, "line1\nline2 \"q\" \\ \t", "\"line1\\nline2 \\\"q\\\" \\\\ \\t\"" },
	{ 1043, "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
	{ 1042, "ab  ", "\"ab  \"" },
	{ 19, "pg_class", "\"pg_class\"" },
	{ 18, "x", "\"x\"" },
	{ 2950, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
	    "\"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\"" },
	{ 869, "192.168.0.1/24", "\"192.168.0.1/24\"" },
	{ 829, "08:00:2b:01:02:03", "\"08:00:2b:01:02:03\"" },
	{ 142, "<a>b</a>", "\"<a>b</a>\"" },
	{ 790, "$1,000.00", "\"$1,000.00\"" },
	{ 3904, "[1,10)", "\"[1,10)\"" },
	{ 16385, "happy", "\"happy\"" },
	/* arrays */
	{ 1007, "{}", "[]" },
	{ 1007, "{1,2,NULL,-3}", "[1,2,null,-3]" },
	{ 1007, "{{1,2},{3,4}}", "[[1,2],[3,4]]" },
	{ 1007, "{{{1}},{{2}}}", "[[[1]],[[2]]]" },
	{ 1007, "[0:1]={7,8}", "[7,8]" },
	{ 1007, "[0:1][1:2]={{1,2},{3,4}}", "[[1,2],[3,4]]" },
	{ 1000, "{t,f,NULL}", "[true,false,null]" },
	{ 1005, "{1}", "[1]" },
	{ 1016, "{9223372036854775807}", "[9223372036854775807]" },
	{ 1009, "{a,\"b c\",\"NULL\",NULL,\"q\\\"x\",\"back\\\\slash\",\"\"}",
	    "[\"a\",\"b c\",\"NULL\",null,\"q\\\"x\",\"back\\\\slash\",\"\"]" },
	{ 1009, "{{\"a,b\",\"{x}\"},{c,d}}", "[[\"a,b\",\"{x}\"],[\"c\",\"d\"]]" },
	{ 1015, "{\"new\nline\"}", "[\"new\\nline\"]" },
	{ 1014, "{\"a  \",b}", "[\"a  \",\"b\"]" },
	{ 1021, "{1.5,NaN,-Infinity}", "[1.5,\"NaN\",\"-Infinity\"]" },
	{ 1022, "{1e+300}", "[1e+300]" },
	{ 1231, "{1.10,NaN,1234567890123456789012345678901234567890}",
	    "[\"1.10\",\"NaN\",\"1234567890123456789012345678901234567890\"]" },
	{ 1115, "{\"2026-11-30 08:00:00\",NULL}",
	    "[\"2026-11-30T08:00:00\",null]" },
	{ 1185, "{\"2026-11-30 08:00:00.25+00\",\"2026-11-30 09:00:00+01\"}",
	    "[\"2026-11-30T08:00:00.25Z\",\"2026-11-30T09:00:00+01:00\"]" },
	{ 1182, "{2026-11-30,infinity}", "[\"2026-11-30\",\"infinity\"]" },
	{ 2951, "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
	    "[\"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\"]" },
	{ 3807, "{\"{\\\"a\\\": 1}\",\"[1, 2]\",NULL}",
	    "[{\"a\": 1},[1, 2],null]" },
	{ 199, "{\"{\\\"a\\\":\n1}\"}", "[{\"a\": 1}]" },
	{ 1001, "{\"\\\\x00ff10\",NULL}", "[\"AP8Q\",null]" },
	/* malformed literals: the whole text as a string */
	{ 1007, "{1,2", "\"{1,2\"" },
	{ 1007, "{1,,2}", "\"{1,,2}\"" },
	{ 1007, "{1,2}x", "\"{1,2}x\"" },
	{ 1007, "1,2", "\"1,2\"" },
	{ 1007, "", "\"\"" },
	{ 1009, "{\"abc}", "\"{\\\"abc}\"" },
	{ 1009, "{\"a\\", "\"{\\\"a\\\\\"" },
	{ 1007, "[0:1={1}", "\"[0:1={1}\"" },
	{ 1007, "[0:1]{1}", "\"[0:1]{1}\"" },
	{ 1007, "{{{{{{{1}}}}}}}", "\"{{{{{{{1}}}}}}}\"" },
	{ 1007, "{{{{{{1}}}}}}", "[[[[[[1]]]]]]" },
	/* a custom array type is not parsed */
	{ 16390, "{happy,sad}", "\"{happy,sad}\"" },
};

/* the text for a TAP description: one line, control bytes as \n etc. */
static const char *
shown(const char *s)
{
	static char buf[256];
	size_t o = 0;

	for (; *s && o + 5 < sizeof(buf); s++) {
		if ((unsigned char)*s < 0x20)
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "\\x%02x",
			    (unsigned char)*s);
		else
			buf[o++] = *s;
	}
	buf[o] = '\0';
	return buf;
}

static void
test_lsn(void)
{
	uint64_t v;
	char buf[32];

	ok(lsn_parse("0/0", &v) == 0 && v == 0, "lsn 0/0");
	ok(lsn_parse("16/B374D848", &v) == 0 && v == 0x16B374D848ULL,
	    "lsn 16/B374D848");
	ok(lsn_parse("ffffffff/ffffffff", &v) == 0 && v == UINT64_MAX,
	    "lsn max, lowercase");
	ok(lsn_parse("1/", &v) < 0, "lsn without low half");
	ok(lsn_parse("/1", &v) < 0, "lsn without high half");
	ok(lsn_parse("1/2/3", &v) < 0, "lsn with two slashes");
	ok(lsn_parse("123456789/0", &v) < 0, "lsn with 9 digits");
	ok(lsn_parse("1/2 ", &v) < 0, "lsn with a trailing space");
	ok(lsn_parse("", &v) < 0, "empty lsn");
	lsn_format(0x16B374D848ULL, buf);
	is_str(buf, "16/B374D848", "lsn_format");
	lsn_format(0, buf);
	is_str(buf, "0/0", "lsn_format 0");
	lsn_format(UINT64_MAX, buf);
	is_str(buf, "FFFFFFFF/FFFFFFFF", "lsn_format max");
	ok(lsn_parse(buf, &v) == 0 && v == UINT64_MAX, "lsn round trip");
}

int
main(void)
{
	struct sbuf out = SBUF_INIT;
	size_t i, off;
	const char *why;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sbuf_reset(&out);
		sbuf_adds(&out, "pre");
		pgtype_to_json(cases[i].oid, cases[i].text,
		    strlen(cases[i].text), &out);
		is_str(out.buf + 3, cases[i].want, "oid %u '%s'",
		    cases[i].oid, shown(cases[i].text));
		ok(jscan_validate(out.buf + 3, out.len - 3, &off, &why) == 0 &&
		    memchr(out.buf, '\n', out.len) == NULL,
		    "  valid JSON without LF");
	}
	/* a length shorter than the text: nothing past it is read */
	sbuf_reset(&out);
	pgtype_to_json(1007, "{1,2}", 4, &out);
	is_str(out.buf, "\"{1,2\"", "length bounds the text");
	test_lsn();
	sbuf_release(&out);
	return done_testing();
}
