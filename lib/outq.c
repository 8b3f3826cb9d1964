/*
 * outq.c - a non-blocking output queue (see outq.h). The written prefix is
 * dropped only when everything is written or once it is large, so a
 * stream of small writes does not move the buffer each time.
 */
#include <errno.h>
#include <unistd.h>

#include "outq.h"
#include "xio.h"

/* compact once this much has been written ahead of what is still owed */
#define OUTQ_COMPACT	(256 * 1024)

void
outq_init(struct outq *q, int fd)
{
	sbuf_init(&q->buf);
	q->off = 0;
	q->fd = fd;
}

void
outq_close(struct outq *q)
{
	sbuf_release(&q->buf);
	q->off = 0;
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
}

size_t
outq_pending(const struct outq *q)
{
	return q->buf.len - q->off;
}

int
outq_write(struct outq *q)
{
	ssize_t n;

	while (outq_pending(q) > 0) {
		n = xwrite(q->fd, q->buf.buf + q->off, outq_pending(q));
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -1;
		}
		q->off += n;
	}
	if (outq_pending(q) == 0) {
		sbuf_reset(&q->buf);
		q->off = 0;
	} else if (q->off >= OUTQ_COMPACT) {
		sbuf_consume(&q->buf, q->off);
		q->off = 0;
	}
	return 0;
}
