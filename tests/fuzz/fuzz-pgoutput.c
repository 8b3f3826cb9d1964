/*
 * fuzz-pgoutput.c - libFuzzer target for capture-pg's pgoutput decoder and
 * type mapping.
 *
 * Input: a sequence of messages, each a 2-byte big-endian length then that
 * many bytes (a short last one is fed as it is). Before them the decoder
 * has seen two Relation messages (OID 1: every mapped type, a key; OID 2:
 * replica identity full) and a Begin, so row messages reach the tuple and
 * value code at once. Whatever pgo_decode appends must be valid frames of
 * valid JSON objects without LF; a violation aborts.
 *
 *   clang -fsanitize=fuzzer,address,undefined -I lib -D_GNU_SOURCE \
 *       tests/fuzz/fuzz-pgoutput.c capture-pg/pgoutput.c \
 *       capture-pg/types.c lib/sbuf.c lib/frame.c lib/jscan.c ...
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "../../capture-pg/capture-pg.h"

static const struct {
	const char *name;
	uint32_t typoid;
} rel_cols[] = {
	{ "id", 23 }, { "b", 16 }, { "i2", 21 }, { "i8", 20 }, { "o", 26 },
	{ "f4", 700 }, { "f8", 701 }, { "num", 1700 }, { "by", 17 },
	{ "j", 114 }, { "jb", 3802 }, { "ts", 1114 }, { "tstz", 1184 },
	{ "d", 1082 }, { "t", 25 }, { "u", 2950 }, { "ai", 1007 },
	{ "at", 1009 }, { "ajb", 3807 }, { "aby", 1001 }, { "atz", 1185 },
	{ "an", 1231 }, { "ab", 1000 }, { "e", 16385 },
};
#define NCOLS	(sizeof(rel_cols) / sizeof(rel_cols[0]))

static size_t
put_u16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
	return 2;
}

static size_t
put_u32(unsigned char *p, uint32_t v)
{
	put_u16(p, v >> 16);
	put_u16(p + 2, v & 0xffff);
	return 4;
}

static size_t
put_str(unsigned char *p, const char *s)
{
	memcpy(p, s, strlen(s) + 1);
	return strlen(s) + 1;
}

static void
preamble(struct pgo_decoder *d, struct sbuf *out)
{
	unsigned char m[1024];
	size_t n, i;

	n = 0;
	m[n++] = 'R';
	n += put_u32(m + n, 1);
	n += put_str(m + n, "public");
	n += put_str(m + n, "t");
	m[n++] = 'd';
	n += put_u16(m + n, NCOLS);
	for (i = 0; i < NCOLS; i++) {
		m[n++] = i == 0;
		n += put_str(m + n, rel_cols[i].name);
		n += put_u32(m + n, rel_cols[i].typoid);
		n += put_u32(m + n, 0xffffffff);
	}
	if (pgo_decode(d, m, n, out) != 0)
		abort();

	n = 0;
	m[n++] = 'R';
	n += put_u32(m + n, 2);
	n += put_str(m + n, "s");
	n += put_str(m + n, "f");
	m[n++] = 'f';
	n += put_u16(m + n, 2);
	for (i = 0; i < 2; i++) {
		m[n++] = 1;
		n += put_str(m + n, rel_cols[i * 9].name);
		n += put_u32(m + n, rel_cols[i * 9].typoid);
		n += put_u32(m + n, 0xffffffff);
	}
	if (pgo_decode(d, m, n, out) != 0)
		abort();

	n = 0;
	m[n++] = 'B';
	memset(m + n, 0, 20);
	m[n + 7] = 0x10;
	n += 20;
	if (pgo_decode(d, m, n, out) != 0)
		abort();
}

/* the frames appended from offset 'from' must be well-formed */
static void
check_frames(const struct sbuf *out, size_t from)
{
	size_t i = from, len, off;
	const char *why;
	char *end;

	while (i < out->len) {
		len = strtoul(out->buf + i, &end, 10);
		if (end == out->buf + i || *end != ' ' || len < 3 ||
		    (size_t)(end + 1 - out->buf) + len > out->len ||
		    end[len] != '\n' || end[1] != '{')
			abort();
		if (memchr(end + 1, '\n', len - 1) != NULL)
			abort();
		if (jscan_validate(end + 1, len - 1, &off, &why) != 0)
			abort();
		i = (size_t)(end + 1 - out->buf) + len;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgo_decoder d;
	struct sbuf out = SBUF_INIT;
	size_t i = 0, n, before;
	unsigned char *msg;
	int rc;

	pgo_init(&d);
	preamble(&d, &out);
	sbuf_reset(&out);
	while (i < size) {
		if (size - i >= 2) {
			n = (size_t)data[i] << 8 | data[i + 1];
			i += 2;
		} else
			n = size - i;
		if (n > size - i)
			n = size - i;
		/* a copy of exactly n bytes: ASan catches any over-read */
		msg = malloc(n ? n : 1);
		memcpy(msg, data + i, n);
		i += n;
		before = out.len;
		rc = pgo_decode(&d, msg, n, &out);
		free(msg);
		if (rc < 0 && (out.len != before || d.err.msg[0] == '\0'))
			abort();
		if (rc == 0)
			check_frames(&out, before);
		if (out.len > (1u << 20))
			sbuf_reset(&out);
	}
	pgo_release(&d);
	sbuf_release(&out);
	return 0;
}
