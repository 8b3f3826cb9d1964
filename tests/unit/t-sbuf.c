/*
 * t-sbuf.c - the byte buffer: JSON string escaping always yields valid
 * JSON that decodes back to the input (or U+FFFD for bytes that are not
 * UTF-8), base64 against RFC 4648's vectors, numbers and consume.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "tap.h"

static void
jstr_is(const char *in, size_t n, const char *want, const char *name)
{
	struct sbuf sb = SBUF_INIT;

	sbuf_add_jstr(&sb, in, n);
	is_str(sb.buf, want, "jstr %s", name);
	ok(jscan_validate(sb.buf, sb.len, NULL, NULL) == 0, "jstr %s validates",
	    name);
	sbuf_release(&sb);
}

static void
test_jstr(void)
{
	jstr_is("", 0, "\"\"", "empty");
	jstr_is("plain", 5, "\"plain\"", "plain");
	jstr_is("a\"b\\c", 5, "\"a\\\"b\\\\c\"", "quote and backslash");
	jstr_is("\b\f\n\r\t", 5, "\"\\b\\f\\n\\r\\t\"", "short escapes");
	jstr_is("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\x7f\"", "controls");
	jstr_is("a\0b", 3, "\"a\\u0000b\"", "NUL");
	jstr_is("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9,
	    "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "valid UTF-8 kept");
	jstr_is("a\xff" "b", 3, "\"a\xef\xbf\xbd" "b\"", "0xff replaced");
	jstr_is("\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"", "overlong");
	jstr_is("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
	    "encoded surrogate");
	jstr_is("\xf4\x90\x80\x80", 4,
	    "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
	    "past U+10FFFF");
	jstr_is("x\xe2\x82", 3, "\"x\xef\xbf\xbd\xef\xbf\xbd\"",
	    "truncated sequence at the end");
	/* past eight bytes, plain runs are taken eight at a time */
	jstr_is("0123456789abcdef\"ghijklmnop\nqrstuvwx\xc3\xa9yz0123456\x01",
	    48, "\"0123456789abcdef\\\"ghijklmnop\\nqrstuvwx\xc3\xa9yz0123456"
	    "\\u0001\"", "long: escapes and UTF-8 between runs");
	jstr_is("abcdefg\x80", 8, "\"abcdefg\xef\xbf\xbd\"",
	    "long: a stray byte at the eighth");
}

/* every byte string of a few random bytes escapes to valid JSON whose
 * unescaped form equals the input when the input was valid UTF-8 */
static void
test_jstr_random(void)
{
	static const unsigned char interesting[] = {
		'"', '\\', 0x00, 0x1f, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0,
		0x9f, 0xed, 0xa0, ' ', 'a',
	};
	struct sbuf sb = SBUF_INIT;
	unsigned char in[64];
	struct jspan sp;
	uint32_t seed = 12345;
	int i, bad = 0, roundtrip_bad = 0, valid_utf8 = 0;
	size_t n, j;
	char *d;

	for (i = 0; i < 20000; i++) {
		n = (seed = seed * 1103515245 + 12345) >> 16 & 63;
		for (j = 0; j < n; j++) {
			seed = seed * 1103515245 + 12345;
			/* favour the interesting bytes */
			in[j] = (seed >> 16) & 1 ? (seed >> 17) & 0xff :
			    interesting[(seed >> 17) % sizeof(interesting)];
		}
		sbuf_reset(&sb);
		sbuf_add_jstr(&sb, (char *)in, n);
		if (jscan_validate(sb.buf, sb.len, NULL, NULL) != 0) {
			bad++;
			continue;
		}
		sp.p = sb.buf;
		sp.n = sb.len;
		d = malloc(sb.len);
		if (jstr_copy(sp, d, sb.len) < 0) {
			roundtrip_bad++;
			free(d);
			continue;
		}
		/* the input was valid UTF-8 iff no U+FFFD was produced and
		 * then decoding must give it back */
		if (memmem(sb.buf, sb.len, "\xef\xbf\xbd", 3) == NULL &&
		    memmem(in, n, "\xef\xbf\xbd", 3) == NULL) {
			valid_utf8++;
			if (memcmp(d, in, n) != 0)
				roundtrip_bad++;
		}
		free(d);
	}
	is_int(bad, 0, "20000 random byte strings escape to valid JSON");
	is_int(roundtrip_bad, 0, "%d valid UTF-8 inputs decode back exactly",
	    valid_utf8);
	sbuf_release(&sb);
}

static void
b64_is(const char *in, const char *want)
{
	struct sbuf sb = SBUF_INIT;

	sbuf_adds(&sb, "x");
	sbuf_add_base64(&sb, (const unsigned char *)in, strlen(in));
	is_str(sb.buf + 1, want, "base64 '%s'", in);
	sbuf_release(&sb);
}

static void
test_base64(void)
{
	struct sbuf sb = SBUF_INIT;
	unsigned char all[3] = { 0xfb, 0xff, 0xbf };

	/* RFC 4648 §10 */
	b64_is("", "");
	b64_is("f", "Zg==");
	b64_is("fo", "Zm8=");
	b64_is("foo", "Zm9v");
	b64_is("foob", "Zm9vYg==");
	b64_is("fooba", "Zm9vYmE=");
	b64_is("foobar", "Zm9vYmFy");
	sbuf_add_base64(&sb, all, 3);
	is_str(sb.buf, "+/+/", "base64 uses + and /");
	sbuf_release(&sb);
}

static void
test_basics(void)
{
	struct sbuf sb = SBUF_INIT;
	int i;

	sbuf_add_u64(&sb, 0);
	sbuf_addc(&sb, ' ');
	sbuf_add_u64(&sb, UINT64_MAX);
	sbuf_addc(&sb, ' ');
	sbuf_add_i64(&sb, INT64_MIN);
	sbuf_addc(&sb, ' ');
	sbuf_add_i64(&sb, -7);
	is_str(sb.buf, "0 18446744073709551615 -9223372036854775808 -7",
	    "integers");
	{
		/* two digits a step: each count of digits, odd and even,
		 * each side of a power of ten, as printf writes them */
		uint64_t v, p10 = 1;
		char want[32];
		int bad = 0, k;

		for (k = 0; k < 20; k++, p10 *= 10)
			for (v = p10 > 2 ? p10 - 2 : 0; v < p10 + 3; v++) {
				sbuf_reset(&sb);
				sbuf_add_u64(&sb, v);
				snprintf(want, sizeof(want), "%llu",
				    (unsigned long long)v);
				bad += strcmp(sb.buf, want) != 0;
			}
		for (v = 0; v < 100000; v += 7) {
			sbuf_reset(&sb);
			sbuf_add_u64(&sb, v);
			snprintf(want, sizeof(want), "%llu",
			    (unsigned long long)v);
			bad += strcmp(sb.buf, want) != 0;
		}
		is_int(bad, 0, "u64: as printf writes them");
	}
	sbuf_reset(&sb);
	is_int(sb.len, 0, "reset");
	is_str(sb.buf, "", "reset leaves an empty string");
	for (i = 0; i < 1000; i++)
		sbuf_addf(&sb, "%04d,", i);
	is_int(sb.len, 5000, "addf grows");
	ok(memcmp(sb.buf + 4995, "0999,", 5) == 0, "addf content");
	sbuf_consume(&sb, 4995);
	is_str(sb.buf, "0999,", "consume keeps the tail");
	sbuf_consume(&sb, 100);
	is_int(sb.len, 0, "consume past the end empties");
	sbuf_release(&sb);
	ok(sb.buf == NULL && sb.cap == 0, "release");
}

int
main(void)
{
	test_jstr();
	test_jstr_random();
	test_base64();
	test_basics();
	return done_testing();
}
