/*
 * t-transform.c - the transform operations on one value (converted, left
 * as they are when already in shape, and written as they arrived when
 * they cannot be converted), each giving a replay what it gave the row;
 * AES-SIV against the test vectors of RFC 5297 and the pseudonyms made
 * with it (deterministic, scoped, failing closed); lookups and their
 * misses; the canonical JSON an append-only row is hashed from; and the
 * same row from the stream (capture-pg's decoder) and from the load (the
 * loader's copy row) filed under one id.
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
	conv = xf_apply(&t, span(v), &out) == XF_CONVERTED;
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
		{ XF_SPLIT, ", ", "\"a, b,c, \"", "[\"a\",\"b,c\",\"\"]" },
		{ XF_SPLIT, "::", "\"x::y:::z\"", "[\"x\",\"y\",\":z\"]" },
		{ XF_SPLIT, "--", "\"--\"", "[\"\",\"\"]" },
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
		/* strptime-style directives */
		{ XF_DATE, "%d/%m/%Y", "\"05/03/1990\"", "\"1990-03-05\"" },
		{ XF_DATE, "%Y-%m-%d %H:%M:%S", "\"2024-01-05 10:00:07\"",
		    "\"2024-01-05T10:00:07\"" },
		{ XF_DATE, "%F %T", "\"2024-01-05 10:00:07\"",
		    "\"2024-01-05T10:00:07\"" },
		{ XF_DATE, "%d %b %Y", "\"5 MAR 1990\"", "\"1990-03-05\"" },
		{ XF_DATE, "%B %e, %Y", "\"March  5, 1990\"", "\"1990-03-05\"" },
		{ XF_DATE, "%a, %d %b %Y %H:%M:%S %z",
		    "\"Tue, 05 Mar 2024 10:00:00 +0100\"",
		    "\"2024-03-05T10:00:00+01:00\"" },
		{ XF_DATE, "%m/%d/%y %I:%M %p", "\"12/31/99 12:05 AM\"",
		    "\"1999-12-31T00:05\"" },
		{ XF_DATE, "%m/%d/%y %I:%M %p", "\"01/02/03 1:05 pm\"",
		    "\"2003-01-02T13:05\"" },
		{ XF_DATE, "%Y%m%dT%H%M%S.%f%z", "\"20240229T235959.125Z\"",
		    "\"2024-02-29T23:59:59.125Z\"" },
		{ XF_DATE, "%D", "\"02/29/24\"", "\"2024-02-29\"" },
		{ XF_DATE, "100%% %Y-%m-%d", "\"100% 2024-01-05\"",
		    "\"2024-01-05\"" },
		{ XF_DATE, "%d/%m/%Y", "\"31/02/2024\"",
		    "\"31/02/2024\" (unconverted)" },
		{ XF_DATE, "%m/%d/%y %I:%M %p", "\"01/02/03 13:05 pm\"",
		    "\"01/02/03 13:05 pm\" (unconverted)" },
		{ XF_DATE, "%d %b %Y", "\"5 Mrz 1990\"",
		    "\"5 Mrz 1990\" (unconverted)" },
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

/* bytes from hex */
static size_t
unhex(const char *h, unsigned char *out)
{
	size_t n = 0;
	unsigned v;

	for (; h[0] && h[1]; h += 2) {
		sscanf(h, "%2x", &v);
		out[n++] = (unsigned char)v;
	}
	return n;
}

static const char *
hex(const unsigned char *p, size_t n)
{
	static char buf[512];
	size_t i;

	for (i = 0; i < n && 2 * i + 2 < sizeof(buf); i++)
		sprintf(buf + 2 * i, "%02x", p[i]);
	buf[2 * i] = '\0';
	return buf;
}

/*
 * RFC 5297 appendix A (the RFC's 256-bit keys are OpenSSL's AES-128-SIV),
 * an AES-256-SIV vector (a 512-bit key, the pseudonym's), and an empty
 * plaintext (Wycheproof's "empty message"): sealed to the published SIV
 * and ciphertext, opened back, and a flipped bit refused.
 */
static void
test_siv(void)
{
	static const struct {
		const char *what, *key, *ad[3], *pt, *out;
	} v[] = {
		{ "RFC 5297 A.1 (deterministic)",
		    "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0f0f1f2f3f4f5f6f7f8f9fafbfc"
		    "fdfeff",
		    { "101112131415161718191a1b1c1d1e1f2021222324252627" },
		    "112233445566778899aabbccddee",
		    "85632d07c6e8f37f950acd320a2ecc93"
		    "40c02b9690c4dc04daef7f6afe5c" },
		{ "RFC 5297 A.2 (nonce-based: two headers and the nonce)",
		    "7f7e7d7c7b7a79787776757473727170404142434445464748494a4b4c"
		    "4d4e4f",
		    { "00112233445566778899aabbccddeeffdeaddadadeaddadaffeeddcc"
		    "bbaa99887766554433221100", "102030405060708090a0",
		    "09f911029d74e35bd84156c5635688c0" },
		    "7468697320697320736f6d6520706c61696e7465787420746f20656e63"
		    "72797074207573696e67205349562d414553",
		    "7bdb6e3b432667eb06f4d14bff2fbd0f"
		    "cb900f2fddbe404326601965c889bf17dba77ceb094fa663b7a3f748ba"
		    "8af829ea64ad544a272e9c485b62a3fd5c0d" },
		{ "AES-256-SIV, a 512-bit key",
		    "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0f0f1f2f3f4f5f6f7f8f9fafbfc"
		    "fdfefff0f1f2f3f4f5f6f7f8f9fafbfcfdfefffffefdfcfbfaf9f8f7f6"
		    "f5f4f3f2f1f0",
		    { "101112131415161718191a1b1c1d1e1f2021222324252627" },
		    "112233445566778899aabbccddee",
		    "724dfb2eaf94dbb19b0ba3a299a0801e"
		    "f3b05a55498ec2552690b89810e4" },
		{ "an empty plaintext",
		    "e40992eb4f649e5d49134652aecc24bafa6b45ce8dd9e9d371ede7d5de"
		    "84fa72",
		    { "8268c5194a71aed0fc1dafe3" }, "",
		    "92bc07ee200fbd488b7f70a10da26a21" },
		{ "an empty plaintext and an empty header",
		    "2b27e429fb6c02678e589ccc4437c5adfb44b331ab6d21ea321727e6ec"
		    "03d354", { "" }, "", "b2b2354e3724dcdaa85ecf029b49a90c" },
	};
	unsigned char key[64], ad[3][64], pt[64], out[128], back[128];
	struct siv_ad a[3];
	size_t i, klen, plen;
	int k, nad;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		klen = unhex(v[i].key, key);
		for (nad = 0; nad < 3 && v[i].ad[nad]; nad++) {
			a[nad].n = unhex(v[i].ad[nad], ad[nad]);
			a[nad].p = ad[nad];
		}
		plen = unhex(v[i].pt, pt);
		ok(siv_seal(key, klen, a, nad, pt, plen, out) == 0,
		    "%s: sealed", v[i].what);
		is_str(hex(out, 16 + plen), v[i].out, "%s: SIV and ciphertext",
		    v[i].what);
		ok(siv_open(key, klen, a, nad, out, 16 + plen, back) == 0 &&
		    memcmp(back, pt, plen) == 0, "%s: opened back", v[i].what);
		for (k = 0; k < 2; k++) {
			out[k ? 15 + plen : 0] ^= 1;
			ok(siv_open(key, klen, a, nad, out, 16 + plen,
			    back) == -1, "%s: a flipped bit in the %s is "
			    "refused", v[i].what, k ? "last byte" : "SIV");
			out[k ? 15 + plen : 0] ^= 1;
		}
	}
	ok(siv_seal(key, 48, a, 1, pt, 1, out) == -1,
	    "a key of another length is refused");
}

/* a pseudonym transform of key kb (a byte repeated) and scope */
static void
pseudonym_init(struct sync_transform *t, unsigned char *key, int kb,
    const char *scope)
{
	memset(t, 0, sizeof(*t));
	memset(key, kb, 64);
	t->name = "email";
	t->kind = XF_PSEUDONYM;
	t->pseudonym.key = key;
	t->pseudonym.ad = (char *)scope;
}

static const char *
pseudo(const struct sync_transform *t, const char *v, int *conv)
{
	static char buf[4][512];
	static int k;
	struct sbuf out = SBUF_INIT;

	k = (k + 1) % 4;
	*conv = xf_apply(t, span(v), &out) == XF_CONVERTED;
	snprintf(buf[k], sizeof(buf[k]), "%s", out.buf ? out.buf : "");
	sbuf_release(&out);
	return buf[k];
}

static void
test_pseudonym(void)
{
	struct sync_transform a, b, c, none;
	unsigned char ka[64], kb[64], kc[64], raw[256], pt[256];
	struct siv_ad ad = { (const unsigned char *)"public.people.email",
	    19 };
	const char *t2, *p;
	char tok[512], t1[512];
	size_t n, i;
	unsigned v;
	int conv;

	pseudonym_init(&a, ka, 0x11, "public.people.email");
	pseudonym_init(&b, kb, 0x11, "crm.customers.email");
	pseudonym_init(&c, kc, 0x22, "public.people.email");
	snprintf(t1, sizeof(t1), "%s", pseudo(&a, "\"ann@example.org\"",
	    &conv));
	ok(conv && t1[0] == '"', "a string becomes a token: %s", t1);
	t2 = pseudo(&a, "\"ann@example.org\"", &conv);
	is_str(t2, t1, "the same value, key and scope: the same token");
	ok(strcmp(pseudo(&a, "\"ann@example.\\u006frg\"", &conv), t1) == 0,
	    "the same text escaped otherwise: the same token");
	ok(strcmp(pseudo(&b, "\"ann@example.org\"", &conv), t1) != 0,
	    "another scope: another token");
	ok(strcmp(pseudo(&c, "\"ann@example.org\"", &conv), t1) != 0,
	    "another key: another token");
	ok(strcmp(pseudo(&a, "\"bob@example.org\"", &conv), t1) != 0,
	    "another value: another token");
	ok(strpbrk(t1 + 1, "=+/") == NULL && strchr(t1 + 1, '"') ==
	    t1 + strlen(t1) - 1, "base64url without padding");
	/* the token is SIV ‖ ciphertext, which the key opens to the text */
	snprintf(tok, sizeof(tok), "%.*s", (int)strlen(t1) - 2, t1 + 1);
	for (p = tok; *p; p++)
		;
	n = 0;
	{
		static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij"
		    "klmnopqrstuvwxyz0123456789-_";
		unsigned acc = 0;
		int bits = 0;

		for (i = 0; tok[i]; i++) {
			v = (unsigned)(strchr(al, tok[i]) - al);
			acc = acc << 6 | v;
			if ((bits += 6) >= 8) {
				bits -= 8;
				raw[n++] = (unsigned char)(acc >> bits);
			}
		}
	}
	ok(n == 16 + strlen("ann@example.org") && siv_open(ka, 64, &ad, 1,
	    raw, n, pt) == 0 && memcmp(pt, "ann@example.org", n - 16) == 0,
	    "its bytes are SIV and ciphertext, the scope its associated data");
	is_str(pseudo(&a, t1, &conv), t1, "a token of this key and scope "
	    "stays as it is (a replay or a stored copy is not sealed twice)");
	ok(conv, "and counts as converted");
	ok(strcmp(pseudo(&b, t1, &conv), t1) != 0,
	    "a token of another scope is only a string: it is sealed");
	snprintf(t1, sizeof(t1), "%s", pseudo(&a, "12.50", &conv));
	ok(conv && strcmp(t1, pseudo(&a, "\"12.50\"", &conv)) == 0,
	    "a number is sealed as its text, as the same text in a string");
	ok(strcmp(pseudo(&a, "true", &conv), pseudo(&a, "\"true\"",
	    &conv)) == 0, "a boolean too");
	ok(strcmp(pseudo(&a, "\"\"", &conv), "\"\"") != 0 && conv,
	    "an empty string is sealed");
	is_str(pseudo(&a, "null", &conv), "null", "NULL stays NULL");
	is_str(pseudo(&a, "[\"ann@example.org\"]", &conv),
	    "\"" XF_PSEUDONYM_MARKER "\"", "an array fails closed: the "
	    "marker, never the value");
	ok(!conv, "and counts as unconverted");
	is_str(pseudo(&a, "{\"a\":\"ann@example.org\"}", &conv),
	    "\"" XF_PSEUDONYM_MARKER "\"", "an object too");
	pseudonym_init(&none, kc, 0, "public.people.email");
	none.pseudonym.key = NULL;
	is_str(pseudo(&none, "\"ann@example.org\"", &conv),
	    "\"" XF_PSEUDONYM_MARKER "\"", "without its key (a program "
	    "that did not ask for it) it fails closed too");
}

static void
test_lookup(void)
{
	struct sync_pair map[] = {
		{ .name = "1", .json = "\"active\"" },
		{ .name = "2", .json = "\"closed\"" },
		{ .name = "GB", .json = "\"United Kingdom\"" },
		{ .name = "true", .json = "1" },
		{ .name = "x", .json = "false" },
	};
	static const struct {
		const char *in, *out;
		int missed;
	} c[] = {
		{ "1", "\"active\"", 0 },
		{ "\"1\"", "\"active\"", 0 },
		{ "\"GB\"", "\"United Kingdom\"", 0 },
		{ "\"G\\u0042\"", "\"United Kingdom\"", 0 },
		{ "true", "1", 0 },
		{ "\"x\"", "false", 0 },
		{ "\"gb\"", "\"gb\"", 1 },
		{ "1.0", "1.0", 1 },
		{ "\"1 \"", "\"1 \"", 1 },
		{ "[\"1\"]", "[\"1\"]", 1 },
		{ "{\"1\":1}", "{\"1\":1}", 1 },
		{ "null", "null", 0 },
	};
	struct sync_transform t;
	struct sbuf out = SBUF_INIT;
	enum xf_result r;
	size_t i;

	memset(&t, 0, sizeof(t));
	t.kind = XF_LOOKUP;
	t.lookup.map = map;
	t.lookup.nmap = sizeof(map) / sizeof(map[0]);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		sbuf_reset(&out);
		r = xf_apply(&t, span(c[i].in), &out);
		is_str(out.buf, c[i].out, "lookup %s", c[i].in);
		ok(r == (c[i].missed ? XF_MISSED : XF_CONVERTED), "%s",
		    c[i].missed ? "a miss" : "a hit");
	}
	t.lookup.def_json = "\"unknown\"";
	sbuf_reset(&out);
	r = xf_apply(&t, span("\"9\""), &out);
	ok(r == XF_MISSED && strcmp(out.buf, "\"unknown\"") == 0,
	    "with a default, a miss takes it: %s", out.buf);
	sbuf_reset(&out);
	r = xf_apply(&t, span("[1]"), &out);
	ok(r == XF_MISSED && strcmp(out.buf, "\"unknown\"") == 0,
	    "an array never matches: the default");
	sbuf_release(&out);
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
	struct sbuf stream = SBUF_INIT, load = SBUF_INIT;
	struct msg_in j = { 0, 0 };
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
}

int
main(void)
{
	test_ops();
	test_siv();
	test_pseudonym();
	test_lookup();
	test_canon();
	test_paths();
	return done_testing();
}
