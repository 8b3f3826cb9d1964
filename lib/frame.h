/*
 * frame.h - length-framed NDJSON (framing.md §1). The only code in the
 * project that knows the frame bytes. A reader validates each frame
 * completely before handing it out; an error names the stream and offset.
 */
#ifndef FRAME_H
#define FRAME_H

#include <stddef.h>
#include <stdint.h>
#include "jscan.h"
#include "sbuf.h"

#define P2O_FRAME_MAX	(64u * 1024 * 1024)

struct frame {
	struct jspan obj;	/* the JSON object, without prefix and LF */
	struct jspan kind;	/* the "k" string value (with quotes) */
	uint64_t offset;	/* stream offset of the frame's first byte */
	struct jtop top;	/* obj's members, noted while validating */
};

struct frame_reader {
	int	 fd;
	char	 name[64];	/* "stdin", "control fd 3", ... */
	char	*buf;
	size_t	 cap, start, end;	/* unread bytes are buf[start..end) */
	uint64_t base;		/* stream offset of buf[0] */
	size_t	 max;
	int	 eof;
	char	 err[256];	/* set when a call returns -1 */
};

void	frame_reader_init(struct frame_reader *, int fd, const char *name);
void	frame_reader_release(struct frame_reader *);
/* one read(2) into the buffer: >0 bytes, 0 at EOF, -1 on error (errno set;
 * EAGAIN on a non-blocking fd is -1 with errno == EAGAIN) */
ssize_t	frame_fill(struct frame_reader *);
/* the next complete frame from the buffer, without reading the fd:
 * 1 = *f is valid until the next call on this reader, 0 = need more bytes
 * (or, after EOF, the clean end), -1 = malformed: r->err says why */
int	frame_next(struct frame_reader *, struct frame *f);
/* blocking convenience: 1 frame, 0 clean EOF, -1 error (r->err) */
int	frame_read(struct frame_reader *, struct frame *f);
/* 1 if the frame's kind equals k */
int	frame_is(const struct frame *, const char *k);

/* append one frame (prefix, json, LF) to out; json must be one object
 * with no LF (not re-validated: producers build it with sbuf) */
void	frame_put(struct sbuf *out, const char *json, size_t len);
/* write out's bytes fully to fd and reset it; 0 or -1 with errno */
int	frame_flush(int fd, struct sbuf *out);

#endif
