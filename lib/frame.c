/*
 * frame.c - length-framed NDJSON, framing.md §1. Owns the frame bytes: the
 * only code in the project that parses or writes a "<len> <json>\n"
 * prefix. A reader hands out a frame only once it is complete and its JSON
 * fully validated, and keeps its buffer about the size of the largest frame
 * seen. Never logs and never exits: errors go to r->err.
 */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "xio.h"

/* what one read(2) may take: a pipe between stages holds 1 MiB
 * (supervisor/wire.c), and at 64 KiB a read the wide rows' load spent a
 * third of each stage's time in the wake-ups of the stage on the other end
 * (docs/benchmarks.md, "fourth round"); the pages a small stream never
 * fills are never touched */
#define FRAME_BUF_INIT	(256u * 1024)
#define FRAME_LEN_DIGITS 10
/* the smallest frame: "{}" and LF */
#define FRAME_LEN_MIN	3

void
frame_reader_init(struct frame_reader *r, int fd, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->max = P2O_FRAME_MAX;
}

void
frame_reader_release(struct frame_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->cap = r->start = r->end = 0;
}

static int
frame_error(struct frame_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int
frame_error(struct frame_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, sizeof(r->err), "%s: offset %llu: ", r->name,
	    (unsigned long long)(r->base + r->start));
	if (n < 0 || (size_t)n >= sizeof(r->err))
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Parse the length prefix at buf[start..end): 1 with the prefix size
 * (digits and space) in *hdr and the declared length in *len; 0 when more
 * bytes are needed (*len holds the digits so far); -1 when malformed (the
 * error is not set here, the caller decides whether to report it).
 */
static int
parse_prefix(const struct frame_reader *r, size_t *hdr, uint64_t *len)
{
	const unsigned char *p;
	size_t avail = r->end - r->start, i;
	uint64_t v = 0;

	*len = 0;
	/* an empty reader may have no buffer yet: no arithmetic on NULL */
	if (avail == 0)
		return 0;
	p = (const unsigned char *)r->buf + r->start;
	for (i = 0; i < avail; i++) {
		if (p[i] == ' ' && i > 0) {
			*hdr = i + 1;
			*len = v;
			return 1;
		}
		if (p[i] < '0' || p[i] > '9' || (i == 0 && p[i] == '0') ||
		    i == FRAME_LEN_DIGITS)
			return -1;
		v = v * 10 + (p[i] - '0');
		*len = v;
	}
	return 0;
}

ssize_t
frame_fill(struct frame_reader *r)
{
	size_t need = 0, hdr, cap;
	uint64_t len;
	ssize_t n;

	if (r->start == r->end) {
		r->base += r->start;
		r->start = r->end = 0;
	}
	/* the bytes the frame at start needs, once its prefix is known */
	if (parse_prefix(r, &hdr, &len) == 1 && len <= r->max)
		need = hdr + len;
	/* compact when the frame would not fit or the free tail is too small
	 * to read into efficiently */
	if (r->start > 0 && (r->start + need > r->cap ||
	    r->cap - r->end < FRAME_BUF_INIT / 16)) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->base += r->start;
		r->end -= r->start;
		r->start = 0;
	}
	/* grow only while the current frame's bytes are arriving, doubling
	 * up to its declared size, so a length whose bytes never come costs
	 * no memory and the buffer stays the size of the largest frame */
	cap = r->cap;
	if (cap < FRAME_BUF_INIT)
		cap = FRAME_BUF_INIT;
	else if (r->end == r->cap && need > r->cap)
		cap = need / 2 > r->cap ? r->cap * 2 : need;
	if (cap != r->cap) {
		r->buf = xrealloc(r->buf, cap);
		r->cap = cap;
	}
	if (r->end == r->cap) {
		/* the frame is complete in the buffer: frame_next's turn */
		return r->end - r->start;
	}
	n = xread(r->fd, r->buf + r->end, r->cap - r->end);
	if (n == 0)
		r->eof = 1;
	else if (n > 0)
		r->end += n;
	return n;
}

int
frame_next(struct frame_reader *r, struct frame *f)
{
	static const char *const kname = "k";
	size_t avail = r->end - r->start, hdr, jlen, erroff;
	const char *json, *why;
	uint64_t len;
	int rc;

	if (r->err[0])
		return -1;
	if (avail == 0)
		return 0;	/* after EOF: the clean end between frames */
	rc = parse_prefix(r, &hdr, &len);
	if (rc < 0)
		return frame_error(r, "bad frame length");
	if (rc == 0) {
		if (r->eof)
			return frame_error(r, "truncated frame: EOF after 0 of "
			    "%llu bytes", (unsigned long long)len);
		return 0;
	}
	if (len > r->max)
		return frame_error(r, "frame of %llu bytes exceeds the "
		    "%zu-byte limit", (unsigned long long)len, r->max);
	if (len < FRAME_LEN_MIN)
		return frame_error(r, "bad frame length");
	if (avail - hdr < len) {
		if (r->eof)
			return frame_error(r, "truncated frame: EOF after %zu of "
			    "%llu bytes", avail - hdr, (unsigned long long)len);
		return 0;
	}

	json = r->buf + r->start + hdr;
	jlen = len - 1;
	if (json[jlen] != '\n')
		return frame_error(r, "frame does not end with a newline");
	if (memchr(json, '\n', jlen) != NULL)
		return frame_error(r, "newline inside frame");
	if (jscan_validate_top(json, jlen, &f->top, &erroff, &why) < 0)
		return frame_error(r, "invalid JSON: %s at byte %zu", why,
		    erroff);

	/* validation allowed whitespace around the value; the span is the
	 * value itself */
	f->obj = f->top.obj;
	if (f->obj.p[0] != '{')
		return frame_error(r, "frame is not a JSON object");
	/* "k" comes first in every frame a stage writes */
	if (f->top.complete && f->top.n > 0 && f->top.key[0].n == 3 &&
	    f->top.key[0].p[1] == 'k')
		f->kind = f->top.val[0];
	else
		jtop_pick(&f->top, f->obj, &kname, 1, &f->kind);
	if (f->kind.p == NULL || jspan_type(f->kind) != J_STRING)
		return frame_error(r, "frame has no \"k\"");
	f->offset = r->base + r->start;
	r->start += hdr + len;
	return 1;
}

int
frame_read(struct frame_reader *r, struct frame *f)
{
	struct pollfd pfd;
	ssize_t n;
	int rc;

	for (;;) {
		rc = frame_next(r, f);
		if (rc != 0 || r->eof)
			return rc;
		n = frame_fill(r);
		if (n >= 0)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			pfd.fd = r->fd;
			pfd.events = POLLIN;
			if (poll(&pfd, 1, -1) >= 0 || errno == EINTR)
				continue;
		}
		snprintf(r->err, sizeof(r->err), "%s: read: %s", r->name,
		    strerror(errno));
		return -1;
	}
}

int
frame_is(const struct frame *f, const char *k)
{
	return jstr_eq(f->kind, k);
}

void
frame_put(struct sbuf *out, const char *json, size_t len)
{
	sbuf_grow(out, len + 22);
	sbuf_add_u64(out, (uint64_t)len + 1);
	sbuf_addc(out, ' ');
	sbuf_add(out, json, len);
	sbuf_addc(out, '\n');
}

int
frame_flush(int fd, struct sbuf *out)
{
	int rc = 0;

	if (out->len > 0)
		rc = write_in_full(fd, out->buf, out->len);
	if (rc == 0)
		sbuf_reset(out);
	return rc;
}
