/*
 * sbuf.h - a growable byte buffer, the only way pg2osync builds JSON text.
 * Out-of-memory aborts (xmalloc semantics): there is no sane recovery mid-frame.
 */
#ifndef SBUF_H
#define SBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sbuf {
	char	*buf;	/* always NUL-terminated when cap > 0 */
	size_t	 len;
	size_t	 cap;
};

#define SBUF_INIT { NULL, 0, 0 }

void	sbuf_init(struct sbuf *);
void	sbuf_release(struct sbuf *);
void	sbuf_reset(struct sbuf *);		/* len = 0, keeps memory */
/* room for extra more bytes and the NUL; inline, since the data path
 * appends a byte at a time and nearly always has room already */
void	sbuf_grow_slow(struct sbuf *, size_t extra);
static inline void
sbuf_grow(struct sbuf *sb, size_t extra)
{
	if (sb->cap - sb->len <= extra)
		sbuf_grow_slow(sb, extra);
}
/* inline: the frame builders add a few bytes at a time (a member name, a
 * quote, a colon), and a call cost more than the copy */
static inline void
sbuf_add(struct sbuf *sb, const void *p, size_t n)
{
	sbuf_grow(sb, n);
	if (n)
		memcpy(sb->buf + sb->len, p, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}
static inline void
sbuf_addc(struct sbuf *sb, char c)
{
	sbuf_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}
/* inline, so a literal's length is known where it is added (the frame
 * builders add member names a row at a time) */
static inline void
sbuf_adds(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}
void	sbuf_addf(struct sbuf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	sbuf_add_u64(struct sbuf *, uint64_t);
void	sbuf_add_i64(struct sbuf *, int64_t);
/* a JSON string literal with quotes, escaping per RFC 8259; invalid UTF-8
 * bytes are replaced by U+FFFD so the output is always valid JSON */
void	sbuf_add_jstr(struct sbuf *, const char *, size_t);
void	sbuf_add_base64(struct sbuf *, const unsigned char *, size_t);
/* remove the first n bytes */
void	sbuf_consume(struct sbuf *, size_t n);

/* xmalloc family: abort with a message on OOM */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);

#endif
