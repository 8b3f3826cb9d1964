/*
 * t-transform.c - the six transform operations on one value (converted,
 * left as they are when already in shape, and written as they arrived
 * when they cannot be converted), each idempotent; the canonical JSON an
 * append-only row is hashed from; and the same row from the stream
 * (capture-pg's decoder) and from the load (the loader's copy row)
 * filed under one id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "jscan.h"
#include "sbuf.h"
#include "tap.h"
#include "../../capture-pg/capture-pg.h"
#include "../../loader/loader.h"
#include "../../shaper/shaper.h"

static struct jspan
span(const char *s)
{
	struct jspan j = { s, strlen(s) };
	return j;
}

/* the op applied to v: "<result>" or "<result> (unconverted)" */
static const char *
apply(enum xf_op kind, const char *param, const char *v)
{
	static char buf[512];
	struct sync_transform t;
	struct sbuf out = SBUF_INIT;
	int conv;

	memset(&t, 0, sizeof(t));
	t.kind = kind;
	t.param = param;
	conv = xf_apply(&t, span(v), &out);
	snprintf(buf, sizeof(buf), "%s%s", out.buf ? out.buf : "",
	    conv ? "" : " (unconverted)");
	sbuf_release(&out);
	return buf;
}

/* applying twice gives what applying once does */
static int
idempotent(enum xf_op kind, const char *param, const char *v)
{
	char once[512];
	const char *twice;

	snprintf(once, sizeof(once), "%s", apply(kind, param, v));
	if (strstr(once, " (unconverted)"))
		return 1;
	twice = apply(kind, param, once);
	return strcmp(once, twice) == 0;
}

static void
test_ops(void)
{
	static const struct {
		enum xf_op kind;
		const char *param, *in, *out;
	} c[] = {
		{ XF_HASH, NULL, "\"ann@example.org\"", "\"438c4c7afe600cdf1e455"
		    "c369bec76dc970fc8ca463447c7b387a347f3c79331\"" },
		{ XF_HASH, NULL, "42", "\"73475cb40a568e8da8a045ced110137e159f890"
		    "ac4da883b6b17dc651b3a8049\"" },
		{ XF_HASH, NULL, "null", "null" },
		{ XF_REDACT, "[redacted]", "\"secret\"", "\"[redacted]\"" },
		{ XF_REDACT, "***", "{\"a\":1}", "\"***\"" },
		{ XF_JSON, NULL, "\"{\\\"a\\\": [1, 2],\\n \\\"b\\\": \\\"x y\\\"}\"",
		    "{\"a\":[1,2],\"b\":\"x y\"}" },
		{ XF_JSON, NULL, "\"[1,\\t2]\"", "[1,2]" },
		{ XF_JSON, NULL, "{\"already\":true}", "{\"already\":true}" },
		{ XF_JSON, NULL, "\"not json\"", "\"not json\" (unconverted)" },
		{ XF_JSON, NULL, "\"\\\"scalar\\\"\"",
		    "\"\\\"scalar\\\"\" (unconverted)" },
		{ XF_SPLIT, ",", "\"a,b,,c\"", "[\"a\",\"b\",\"\",\"c\"]" },
		{ XF_SPLIT, ",", "\"\"", "[]" },
		{ XF_SPLIT, "|", "\"x|\\\"y\\\"\"", "[\"x\",\"\\\"y\\\"\"]" },
		{ XF_SPLIT, ",", "[\"a\"]", "[\"a\"]" },
		{ XF_SPLIT, ",", "5", "5 (unconverted)" },
		{ XF_NUMBER, NULL, "\"12.50\"", "12.50" },
		{ XF_NUMBER, NULL, "\"-1e-3\"", "-1e-3" },
		{ XF_NUMBER, NULL, "7", "7" },
		{ XF_NUMBER, NULL, "\"012\"", "\"012\" (unconverted)" },
		{ XF_NUMBER, NULL, "\"NaN\"", "\"NaN\" (unconverted)" },
		{ XF_NUMBER, NULL, "\" 5\"", "\" 5\" (unconverted)" },
		{ XF_NUMBER, NULL, "true", "true (unconverted)" },
		{ XF_DATE, "DD/MM/YYYY", "\"05/03/1990\"", "\"1990-03-05\"" },
		{ XF_DATE, "DD/MM/YYYY", "\"5/3/1990\"", "\"1990-03-05\"" },
		{ XF_DATE, "DD.MM.YYYY hh:mm", "\"31.12.2024 23:59\"",
		    "\"2024-12-31T23:59\"" },
		{ XF_DATE, "YYYYMMDDhhmmss", "\"20240229120000\"",
		    "\"2024-02-29T12:00:00\"" },
		{ XF_DATE, "DD/MM/YYYY", "\"29/02/2023\"",
		    "\"29/02/2023\" (unconverted)" },
		{ XF_DATE, "DD/MM/YYYY", "\"1990-03-05\"", "\"1990-03-05\"" },
		{ XF_DATE, NULL, "\"2024-01-05 10:00:00.5+01\"",
		    "\"2024-01-05T10:00:00.5+01\"" },
		{ XF_DATE, NULL, "\"2024-01-05T10:00:00Z\"",
		    "\"2024-01-05T10:00:00Z\"" },
		{ XF_DATE, NULL, "\"yesterday\"", "\"yesterday\" (unconverted)" },
		{ XF_DATE, NULL, "1700000000", "1700000000 (unconverted)" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		is_str(apply(c[i].kind, c[i].param, c[i].in), c[i].out,
		    "op %d (%s) %s", c[i].kind, c[i].param ? c[i].param : "-",
		    c[i].in);
		ok(idempotent(c[i].kind, c[i].param, c[i].in),
		    "and applied again, the same");
	}
}

static void
test_canon(void)
{
	struct sbuf c = SBUF_INIT;
	const char *in = " { \"b\" : [ 1 , {\"y\":1, \"x\":\"\\u0041\\n\"} ],"
	    "\"a\":null, \"ab\":true, \"\\u00e9\":1.50, \"z\":\"\\/\"} ";
	struct jspan v = { in, strlen(in) };

	while (*v.p == ' ')
		v.p++, v.n--;
	canon_json(v, &c);
	is_str(c.buf, "{\"a\":null,\"ab\":true,\"b\":[1,{\"x\":\"A\\n\","
	    "\"y\":1}],\"z\":\"/\",\"\xc3\xa9\":1.50}",
	    "members sorted by their bytes, one way of escaping, numbers as "
	    "written, no whitespace");
	sbuf_release(&c);
}

/* the id the shaper gives an append-only row frame */
static const char *
content_id(const char *frame)
{
	static char buf[80];
	static struct sync_section sec = { .name = "audit",
	    .schema = "public", .table = "audit", .rel = "public.audit",
	    .index = "audit", .append_only = 1 };
	static struct config cfg = { .syncs = &sec, .nsyncs = 1 };
	struct shaper sh;
	struct sbuf out = SBUF_INIT;
	struct jspan obj = span(frame), kind, op, id;
	const char *why, *nl;
	char err[256];
	size_t off;

	buf[0] = '\0';
	if (jscan_validate(frame, strlen(frame), &off, &why) == -1 ||
	    !jobj_get(obj, "k", &kind))
		return "BAD FRAME";
	shaper_init(&sh, &cfg);
	if (shape_event(&sh, strstr(frame, "\"op\":\"c\"") ? SHAPE_LOAD :
	    SHAPE_STREAM, obj, kind, NULL, &out, err, sizeof(err)) == 0 &&
	    out.len > 0 && (nl = strchr(out.buf, ' ')) != NULL) {
		op.p = nl + 1;
		op.n = strlen(op.p) - 1;
		if (jobj_get(op, "id", &id))
			jstr_copy(id, buf, sizeof(buf));
	}
	shaper_release(&sh);
	sbuf_release(&out);
	return buf;
}

/* the same row through capture-pg's decoder and the loader's copy row */
static void
test_paths(void)
{
	static const struct {
		const char *name;
		uint32_t typoid;
		const char *text;
	} cols[] = {
		{ "at", 1184, "2026-01-01 10:00:00+00" },
		{ "who", 25, "ann \"q\"\t\xc3\xa9" },
		{ "what", 3802, "{\"a\": [\"x\", \"y\"], \"b\": 1}" },
		{ "n", 1700, "12.50" },
		{ "tags", 1009, "{x,\"y z\",NULL}" },
	};
	enum { NC = sizeof(cols) / sizeof(cols[0]) };
	unsigned char m[1024];
	size_t n = 0, i, k;
	struct pgo_decoder d;
	struct sbuf stream = SBUF_INIT, load = SBUF_INIT, j = SBUF_INIT;
	struct ld_column lc[NC] = { 0 };
	struct ld_table t;
	struct copy_field f[NC];
	char sid[80], lid[80], *frame;

#define U8(v)	(m[n++] = (unsigned char)(v))
#define U16(v)	(U8((v) >> 8), U8((v) & 0xff))
#define U32(v)	(U16((uint32_t)(v) >> 16), U16((uint32_t)(v) & 0xffff))
#define STR(s)	(memcpy(m + n, (s), strlen(s) + 1), n += strlen(s) + 1)
	pgo_init(&d);
	pgo_allow_keyless(&d, "public.audit");
	/* Relation: no column flagged as key, the default identity */
	U8('R'); U32(16500); STR("public"); STR("audit"); U8('d'); U16(NC);
	for (i = 0; i < NC; i++) {
		U8(0); STR(cols[i].name); U32(cols[i].typoid); U32(0xffffffff);
	}
	ok(pgo_decode(&d, m, n, &stream) == 0, "a keyless relation");
	n = 0;
	U8('B'); U32(0); U32(1000); U32(0); U32(1); U32(7);
	ok(pgo_decode(&d, m, n, &stream) == 0, "begin");
	n = 0;
	U8('I'); U32(16500); U8('N'); U16(NC);
	for (i = 0; i < NC; i++) {
		U8('t'); U32(strlen(cols[i].text));
		memcpy(m + n, cols[i].text, strlen(cols[i].text));
		n += strlen(cols[i].text);
	}
	sbuf_reset(&stream);
	ok(pgo_decode(&d, m, n, &stream) == 0, "an insert of it");
	pgo_release(&d);

	memset(&t, 0, sizeof(t));
	t.rel = "public.audit";
	t.ncols = NC;
	t.cols = lc;
	for (i = 0; i < NC; i++) {
		lc[i].name = (char *)cols[i].name;
		lc[i].typoid = cols[i].typoid;
		f[i].p = cols[i].text;
		f[i].n = strlen(cols[i].text);
	}
	wave_row_frame(&load, &j, &t, 900, f, NULL);

	/* the frames without their length prefixes */
	for (k = 0; k < 2; k++) {
		struct sbuf *b = k ? &load : &stream;

		frame = strchr(b->buf, ' ') + 1;
		b->buf[b->len - 1] = '\0';
		snprintf(k ? lid : sid, 80, "%s", content_id(frame));
	}
	ok(strlen(sid) == 64, "the streamed row's id is a sha256 (%s)", sid);
	is_str(lid, sid, "the loaded row has the same id");
	/* a frame another capture could write: other member order, other
	 * escapes, whitespace */
	is_str(content_id("{\"k\":\"row\",\"op\":\"i\",\"rel\":\"public.audit\","
	    "\"v\":5,\"key\":[],\"new\":{\"tags\":[\"x\", \"y z\", null],"
	    "\"n\":\"12.50\",\"what\":{\"b\":1,\"a\":[\"x\",\"y\"]},"
	    "\"who\":\"\\u0061nn \\\"q\\\"\\t\\u00e9\","
	    "\"at\":\"2026-01-01T10:00:00Z\"}}"), sid,
	    "so does the same row written another way");
	ok(strcmp(content_id("{\"k\":\"row\",\"op\":\"i\","
	    "\"rel\":\"public.audit\",\"v\":5,\"key\":[],\"new\":{"
	    "\"tags\":[\"x\",\"y z\",null],\"n\":\"12.5\",\"what\":{\"b\":1,"
	    "\"a\":[\"x\",\"y\"]},\"who\":\"ann \\\"q\\\"\\t\\u00e9\","
	    "\"at\":\"2026-01-01T10:00:00Z\"}}"), sid) != 0,
	    "and a row that differs in a value (12.5, not 12.50) does not");
	sbuf_release(&stream);
	sbuf_release(&load);
	sbuf_release(&j);
}

int
main(void)
{
	test_ops();
	test_canon();
	test_paths();
	return done_testing();
}
