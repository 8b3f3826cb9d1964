/*
 * t-swar.c - the word-at-a-time scans of swar.h and their long-run halves
 * in swar.c land on the first byte they look for, never past it, on runs
 * of every length around the 16-, 64- and 128-byte steps, with the byte
 * at every place of a block and bytes of every value, the AVX2 and SSE2
 * halves alike (whichever this CPU takes; both are asked directly too).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "swar.h"
#include "tap.h"

static int
json_special(unsigned char c)
{
	return c == '"' || c == '\\' || c < 0x20 || c >= 0x80;
}

static int
of4(unsigned char c)
{
	return c == '\\' || c == '\n' || c == '\r' || c == '\0';
}

/* the first byte at or after p that is special, the way the callers use
 * the scans: the inline scan, then bytes one at a time */
static const unsigned char *
via_json(const unsigned char *p, const unsigned char *end)
{
	p = swar_json_plain(p, end);
	while (p < end && !json_special(*p))
		p++;
	return p;
}

static const unsigned char *
via_of4(const unsigned char *p, const unsigned char *end)
{
	p = swar_none_of4(p, end, '\\', '\n', '\r', '\0');
	while (p < end && !of4(*p))
		p++;
	return p;
}

int
main(void)
{
	enum { MAX = 700 };
	unsigned char *buf = malloc(MAX + 64);
	const unsigned char *p, *want, *got;
	size_t len, at, off;
	int c, bad_json = 0, bad_of4 = 0, overshoot = 0;

	srand(38);
	for (off = 0; off < 3; off++)
		for (len = 0; len <= MAX; len += len < 300 ? 1 : 7)
			for (at = 0; at <= len; at += at < 200 ? 1 : 13) {
				p = buf + off;
				memset(buf, 'a', MAX + 64);
				/* a byte past the end is special: never looked at */
				buf[off + len] = '"';
				buf[off + len + 1] = '\\';
				c = rand() % 256;
				if (at < len)
					buf[off + at] = (unsigned char)c;
				want = p + len;
				if (at < len && json_special((unsigned char)c))
					want = p + at;
				got = via_json(p, p + len);
				if (got != want)
					bad_json++;
				got = swar_json_plain(p, p + len);
				if (got > want)
					overshoot++;
				want = p + len;
				if (at < len && of4((unsigned char)c))
					want = p + at;
				got = via_of4(p, p + len);
				if (got != want)
					bad_of4++;
			}
	ok(bad_json == 0, "a JSON string's first special byte found (%d wrong)",
	    bad_json);
	ok(overshoot == 0, "the inline scan never passes it (%d did)",
	    overshoot);
	ok(bad_of4 == 0, "a COPY field's first special byte found (%d wrong)",
	    bad_of4);

	/* the long halves directly: every byte value at every place of the
	 * first and the second 64-byte block */
	bad_json = bad_of4 = 0;
	for (c = 0; c < 256; c++)
		for (at = 0; at < 192; at++) {
			memset(buf, 'a', MAX + 64);
			buf[at] = (unsigned char)c;
			want = buf + 192;
			if (json_special((unsigned char)c))
				want = buf + at;
			got = swar_json_plain_long(buf, buf + 192);
			if (want < buf + 192 ? got != want : got != buf + 192)
				bad_json++;
			want = buf + 192;
			if (of4((unsigned char)c))
				want = buf + at;
			got = swar_none_of4_long(buf, buf + 192, '\\', '\n', '\r',
			    '\0');
			if (want < buf + 192 ? got != want : got != buf + 192)
				bad_of4++;
		}
	ok(bad_json == 0 && bad_of4 == 0, "the long halves land on the byte "
	    "(%d, %d wrong)", bad_json, bad_of4);
	/* fewer than 64 bytes: nothing to do there */
	ok(swar_json_plain_long(buf, buf + 63) == buf &&
	    swar_none_of4_long(buf, buf + 63, 'x', 'y', 'z', 'w') == buf,
	    "under 64 bytes the long halves leave the run to the caller");
	free(buf);
	return done_testing();
}
