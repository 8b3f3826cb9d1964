/*
 * fuzz-frame.c - libFuzzer target for the frame reader. The input's first
 * two bytes choose the reader's size limit and the size of the writes that
 * deliver the rest through a non-blocking pipe, so frames split at every
 * possible place and the buffer compacts and grows. Every frame handed out
 * must be a valid JSON object with a string "k", inside the buffer, at a
 * plausible offset; an error must carry a message; nothing may crash.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I lib \
 *       tests/fuzz/fuzz-frame.c lib/frame.c lib/jscan.c lib/sbuf.c \
 *       lib/xio.c -o build/fuzz-frame
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "jscan.h"
#include "sbuf.h"
#include "xio.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
check_frame(const struct frame_reader *r, const struct frame *f,
    uint64_t *last_end, size_t stream_len)
{
	check(f->obj.p >= r->buf && f->obj.p + f->obj.n <= r->buf + r->end);
	check(f->obj.n >= 2 && f->obj.p[0] == '{' &&
	    f->obj.p[f->obj.n - 1] == '}');
	check(jscan_validate(f->obj.p, f->obj.n, NULL, NULL) == 0);
	check(memchr(f->obj.p, '\n', f->obj.n) == NULL);
	check(jspan_type(f->kind) == J_STRING);
	check(f->kind.p > f->obj.p &&
	    f->kind.p + f->kind.n <= f->obj.p + f->obj.n);
	check(f->offset == *last_end);
	*last_end = r->base + r->start;
	check(*last_end <= stream_len);
}

/* drain everything readable; -1 on a malformed frame, 1 at clean EOF */
static int
drain(struct frame_reader *r, uint64_t *last_end, size_t stream_len)
{
	struct frame f;
	ssize_t n;
	int rc;

	for (;;) {
		while ((rc = frame_next(r, &f)) == 1)
			check_frame(r, &f, last_end, stream_len);
		if (rc < 0) {
			check(r->err[0] != '\0');
			check(frame_next(r, &f) == -1);
			return -1;
		}
		if (r->eof)
			return 1;
		n = frame_fill(r);
		if (n < 0) {
			check(errno == EAGAIN);
			return 0;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_reader r;
	uint64_t last_end = 0;
	size_t chunk, off, stream_len, n;
	int fds[2], rc = 0;
	ssize_t w;

	if (size < 2)
		return 0;
	if (pipe2(fds, O_NONBLOCK) < 0)
		return 0;
	frame_reader_init(&r, fds[0], "stdin");
	/* small limits reach the size check with short inputs */
	if (data[0] & 1)
		r.max = 3 + (data[0] >> 1);
	chunk = 1 + data[1] % 64;
	if (data[1] >= 192)
		chunk = 4096;
	data += 2;
	size -= 2;
	stream_len = size;

	for (off = 0; off < size && rc == 0; off += n) {
		n = size - off < chunk ? size - off : chunk;
		w = write(fds[1], data + off, n);
		check(w > 0);
		n = w;
		rc = drain(&r, &last_end, stream_len);
	}
	close(fds[1]);
	if (rc == 0) {
		set_nonblock(fds[0], 0);
		rc = drain(&r, &last_end, stream_len);
		check(rc != 0);
	}
	/* a clean end means every byte belonged to a complete frame */
	if (rc == 1)
		check(last_end == stream_len);
	/* the buffer never outgrows what the stream could need */
	check(r.cap <= 256 * 1024 || r.cap <= stream_len);
	frame_reader_release(&r);
	close(fds[0]);
	return 0;
}
