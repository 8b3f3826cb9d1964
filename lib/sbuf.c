/*
 * sbuf.c - the growable byte buffer JSON text is built in, and the xmalloc
 * family. Owns JSON string escaping (the only encoder of string literals
 * in the project) and base64. Out of memory aborts here: there is no sane
 * recovery in the middle of a frame.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbuf.h"
#include "swar.h"

static void __attribute__((noreturn))
oom(size_t n)
{
	char msg[128];
	int len;

	len = snprintf(msg, sizeof(msg), "out of memory allocating %zu bytes\n",
	    n);
	if (len > 0 && write(2, msg, (size_t)len) < 0) {
		/* nothing left to report it with */
	}
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom(n);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		oom(nmemb * size);
	return p;
}

void *
xrealloc(void *old, size_t n)
{
	void *p = realloc(old, n ? n : 1);

	if (p == NULL)
		oom(n);
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p;

	n = strnlen(s, n);
	p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
sbuf_init(struct sbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void
sbuf_release(struct sbuf *sb)
{
	free(sb->buf);
	sbuf_init(sb);
}

void
sbuf_reset(struct sbuf *sb)
{
	sb->len = 0;
	if (sb->cap)
		sb->buf[0] = '\0';
}

void
sbuf_grow_slow(struct sbuf *sb, size_t extra)
{
	size_t need, cap;

	if (extra > SIZE_MAX - 1 - sb->len)
		oom(SIZE_MAX);
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	sb->buf = xrealloc(sb->buf, cap);
	sb->cap = cap;
	sb->buf[sb->len] = '\0';
}

void
sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	sbuf_grow(sb, 64);
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();	/* only an invalid format does this */
	if ((size_t)n >= sb->cap - sb->len) {
		sbuf_grow(sb, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t)n;
}

void
sbuf_add_u64(struct sbuf *sb, uint64_t v)
{
	/* two digits a step: every frame carries a version of eight or more */
	static const char pairs[] =
	    "00010203040506070809101112131415161718192021222324252627282930"
	    "31323334353637383940414243444546474849505152535455565758596061"
	    "62636465666768697071727374757677787980818283848586878889909192"
	    "93949596979899";
	char tmp[20], *p = tmp + sizeof(tmp);

	while (v >= 100) {
		p -= 2;
		memcpy(p, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, pairs + 2 * v, 2);
	} else
		*--p = (char)('0' + v);
	sbuf_add(sb, p, tmp + sizeof(tmp) - p);
}

void
sbuf_add_i64(struct sbuf *sb, int64_t v)
{
	if (v < 0) {
		sbuf_addc(sb, '-');
		/* -(v + 1) + 1 keeps INT64_MIN representable */
		sbuf_add_u64(sb, (uint64_t)-(v + 1) + 1);
	} else
		sbuf_add_u64(sb, (uint64_t)v);
}

/* length of the valid UTF-8 sequence at p (2..4), or 0 when the bytes are
 * not one: overlong forms, surrogates and code points past U+10FFFF are
 * invalid (RFC 3629) */
static size_t
utf8_seq(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	size_t n, i;

	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if (avail < n || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

/* 0: copied as is; 1: needs the slow path (quote, backslash, control
 * character or a non-ASCII byte) */
static const unsigned char jstr_special[256] = {
	[0x00 ... 0x1F] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xFF] = 1,
};

void
sbuf_add_jstr(struct sbuf *sb, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	const unsigned char *run;
	size_t seq;
	char esc[6];

	/* worst case is six bytes per input byte; grow once for the usual
	 * case where little needs escaping */
	sbuf_grow(sb, n + 2);
	sbuf_addc(sb, '"');
	while (p < end) {
		run = p;
		p = swar_json_plain(p, end);
		while (p < end && !jstr_special[*p])
			p++;
		if (p > run)
			sbuf_add(sb, run, p - run);
		if (p == end)
			break;
		if (*p >= 0x80) {
			seq = utf8_seq(p, end - p);
			if (seq) {
				sbuf_add(sb, p, seq);
				p += seq;
			} else {
				sbuf_add(sb, "\xEF\xBF\xBD", 3);
				p++;
			}
			continue;
		}
		esc[0] = '\\';
		switch (*p) {
		case '"':	esc[1] = '"'; break;
		case '\\':	esc[1] = '\\'; break;
		case '\b':	esc[1] = 'b'; break;
		case '\f':	esc[1] = 'f'; break;
		case '\n':	esc[1] = 'n'; break;
		case '\r':	esc[1] = 'r'; break;
		case '\t':	esc[1] = 't'; break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[*p >> 4];
			esc[5] = hex[*p & 15];
			sbuf_add(sb, esc, 6);
			p++;
			continue;
		}
		sbuf_add(sb, esc, 2);
		p++;
	}
	sbuf_addc(sb, '"');
}

void
sbuf_add_base64(struct sbuf *sb, const unsigned char *p, size_t n)
{
	static const char alpha[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o;
	size_t i;
	uint32_t v;

	sbuf_grow(sb, (n + 2) / 3 * 4);
	o = sb->buf + sb->len;
	for (i = 0; i + 3 <= n; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = alpha[v >> 18];
		*o++ = alpha[(v >> 12) & 63];
		*o++ = alpha[(v >> 6) & 63];
		*o++ = alpha[v & 63];
	}
	if (n - i == 1) {
		v = (uint32_t)p[i] << 16;
		*o++ = alpha[v >> 18];
		*o++ = alpha[(v >> 12) & 63];
		*o++ = '=';
		*o++ = '=';
	} else if (n - i == 2) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		*o++ = alpha[v >> 18];
		*o++ = alpha[(v >> 12) & 63];
		*o++ = alpha[(v >> 6) & 63];
		*o++ = '=';
	}
	sb->len = o - sb->buf;
	sb->buf[sb->len] = '\0';
}

void
sbuf_consume(struct sbuf *sb, size_t n)
{
	if (n >= sb->len) {
		sbuf_reset(sb);
		return;
	}
	memmove(sb->buf, sb->buf + n, sb->len - n);
	sb->len -= n;
	sb->buf[sb->len] = '\0';
}
