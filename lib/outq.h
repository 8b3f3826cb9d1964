/*
 * outq.h - frames queued for a non-blocking descriptor and written as it
 * accepts them. Owns the unwritten bytes and the write offset; never
 * blocks and never decides what a full queue means (the caller stops
 * producing above its own cap: that is its back-pressure).
 */
#ifndef OUTQ_H
#define OUTQ_H

#include <stddef.h>

#include "sbuf.h"

struct outq {
	struct sbuf	 buf;	/* frames appended here */
	size_t		 off;	/* bytes of buf already written */
	int		 fd;	/* -1 once closed */
};

void	outq_init(struct outq *, int fd);
void	outq_close(struct outq *);
/* bytes appended but not yet written */
size_t	outq_pending(const struct outq *);
/* write what the descriptor takes now; 0, or -1 with errno on a write
 * error (EAGAIN is not one: the rest waits for POLLOUT) */
int	outq_write(struct outq *);

#endif
